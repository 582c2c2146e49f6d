"""The faster ``__init__`` and ``__eq__`` of the model's bulk-built dataclasses behave as
dataclass's own."""

from __future__ import annotations

import dataclasses
import inspect
import pickle
from dataclasses import InitVar, dataclass, field
from typing import Any

import pytest

from ctxengine.model import (
    DocumentPart,
    Entry,
    ImagePart,
    Message,
    NativeCompactionPart,
    ReasoningPart,
    TextPart,
    ToolCallPart,
    ToolResultPart,
    Usage,
)
from ctxengine.model._fast_init import fast_eq, fast_init

FAST = (
    TextPart,
    ImagePart,
    DocumentPart,
    ToolCallPart,
    ToolResultPart,
    ReasoningPart,
    NativeCompactionPart,
    Message,
    Usage,
    Entry,
)


def twin(cls: type[Any]) -> type[Any]:
    """A plain frozen, slotted dataclass with the same fields as ``cls`` (dataclass's own
    ``__init__``)."""
    spec = []
    for f in dataclasses.fields(cls):
        if f.default is not dataclasses.MISSING:
            spec.append((f.name, f.type, field(default=f.default)))
        elif f.default_factory is not dataclasses.MISSING:
            spec.append((f.name, f.type, field(default_factory=f.default_factory)))
        else:
            spec.append((f.name, f.type))
    made: type[Any] = dataclasses.make_dataclass(cls.__name__, spec, frozen=True, slots=True)
    return made


def values(obj: Any) -> dict[str, Any]:
    return {f.name: getattr(obj, f.name) for f in dataclasses.fields(obj)}


@pytest.mark.parametrize("cls", FAST, ids=lambda c: c.__name__)
class TestSameAsDataclass:
    def test_parameters_and_defaults_are_dataclass_ones(self, cls: type[Any]) -> None:
        ours = inspect.signature(cls.__init__).parameters
        theirs = inspect.signature(twin(cls).__init__).parameters
        assert [(p.name, p.kind, repr(p.default)) for p in ours.values()] == [
            (p.name, p.kind, repr(p.default)) for p in theirs.values()
        ]

    def test_required_values_only_give_the_same_fields(self, cls: type[Any]) -> None:
        required = [
            f.name
            for f in dataclasses.fields(cls)
            if f.default is dataclasses.MISSING and f.default_factory is dataclasses.MISSING
        ]
        args = [f"v{i}" for i in range(len(required))]
        ours, theirs = cls(*args), twin(cls)(*args)
        assert values(ours) == values(theirs)
        if "meta" in values(ours):  # a default factory gives each value its own dict
            assert cls(*args).meta is not ours.meta

    def test_every_value_given_by_keyword_is_kept(self, cls: type[Any]) -> None:
        given = {f.name: f"x-{f.name}" for f in dataclasses.fields(cls)}
        assert values(cls(**given)) == given

    def test_still_frozen_and_replaceable_and_picklable(self, cls: type[Any]) -> None:
        given = {f.name: f"x-{f.name}" for f in dataclasses.fields(cls)}
        obj = cls(**given)
        name = dataclasses.fields(cls)[0].name
        with pytest.raises(dataclasses.FrozenInstanceError):
            setattr(obj, name, "changed")
        assert getattr(dataclasses.replace(obj, **{name: "other"}), name) == "other"
        assert pickle.loads(pickle.dumps(obj)) == obj

    def test_eq_and_hash_are_those_of_dataclass(self, cls: type[Any]) -> None:
        names = [f.name for f in dataclasses.fields(cls)]
        given = {name: f"x-{name}" for name in names}
        ours, theirs = cls(**given), twin(cls)(**given)
        assert cls.__eq__.__qualname__ == f"{cls.__qualname__}.__eq__"
        assert ours == cls(**given)
        assert (ours != cls(**given)) is False
        assert ours == ours
        assert hash(ours) == hash(cls(**given))
        assert cls.__hash__ is not None and cls.__hash__ is not object.__hash__
        for name in [f.name for f in dataclasses.fields(cls) if f.compare]:
            other = cls(**{**given, name: "changed"})
            assert (ours == other, ours != other) == (False, True)
        assert ours.__eq__(theirs) is NotImplemented
        assert (ours == theirs, ours == given) == (False, False)
        if cls is Entry:  # meta is not compared
            assert ours == cls(**{**given, "meta": "changed"})


def test_eq_compares_field_by_field_as_python_3_13() -> None:
    nan = float("nan")
    usage = Usage(input_tokens=1)
    assert Usage(input_tokens=1) == Usage(input_tokens=True)
    assert TextPart("a", meta={"n": nan}) == TextPart("a", meta={"n": nan})
    assert (
        usage == usage,
        Message("user", (), usage=usage) == Message("user", (), usage=usage),
    ) == (
        True,
        True,
    )
    assert Message("user", (TextPart("a"),)) == Message("user", (TextPart("a"),))
    assert Message("user", (TextPart("a"),)) != Message("user", (TextPart("b"),))
    odd = ImagePart("image/png", width=nan)  # type: ignore[arg-type]
    assert (odd == odd, odd == ImagePart("image/png", width=nan)) == (True, False)  # type: ignore[arg-type]


class TestRefused:
    def test_eq_of_a_class_that_is_not_a_dataclass_or_has_its_own(self) -> None:
        class Plain:
            a: int

        @dataclass(frozen=True, slots=True, eq=False)
        class NoEq:
            a: int

        @dataclass(frozen=True, slots=True)
        class OwnEq:
            a: int

            def __eq__(self, other: object) -> bool:
                return True

            def __hash__(self) -> int:
                return 0

        for cls in (Plain, NoEq, OwnEq):
            with pytest.raises(TypeError, match="not a dataclass with a generated __eq__"):
                fast_eq(cls)

    def test_a_class_without_slots(self) -> None:
        @dataclass(frozen=True)
        class Plain:
            a: int

        with pytest.raises(TypeError, match="not a slotted dataclass"):
            fast_init(Plain)

    def test_a_post_init(self) -> None:
        @dataclass(frozen=True, slots=True)
        class Checked:
            a: int

            def __post_init__(self) -> None:
                pass

        with pytest.raises(TypeError, match="__post_init__"):
            fast_init(Checked)

    @pytest.mark.parametrize("kind", ["initvar", "no_init", "kw_only"])
    def test_parameters_other_than_the_fields(self, kind: str) -> None:
        if kind == "initvar":

            @dataclass(frozen=True, slots=True)
            class Odd:
                a: int
                b: InitVar[int] = 0

        elif kind == "no_init":

            @dataclass(frozen=True, slots=True)
            class Odd:  # type: ignore[no-redef]
                a: int
                b: int = field(default=0, init=False)

        else:

            @dataclass(frozen=True, slots=True)
            class Odd:  # type: ignore[no-redef]
                a: int
                b: int = field(default=0, kw_only=True)

        with pytest.raises(TypeError, match="other parameters than its fields"):
            fast_init(Odd)
