"""A faster ``__init__`` and ``__eq__`` for the frozen, slotted dataclasses built in bulk
(parts, messages, usage, entries).

``@dataclass(frozen=True)`` generates an ``__init__`` that sets every field with
``object.__setattr__(self, name, value)`` (the class's own ``__setattr__`` refuses), which
looks the method up and wraps it once per field. :func:`fast_init` replaces that ``__init__``
with one that sets each slot through the slot's own descriptor (``Class.name.__set__``, looked
up once), with the same parameters, defaults and default factories. Building a part, a
message or an entry, done thousands of times per imported transcript, then takes about a
third less time. Nothing else changes: the class stays what ``dataclass`` made it (assignment
still raises ``FrozenInstanceError``; ``__eq__``, ``__hash__``, ``__repr__``,
``dataclasses.replace`` and pickling are dataclass's own).

Python 3.11 and 3.12's dataclass ``__eq__`` builds a tuple of every field of each side and
compares the tuples; :func:`fast_eq` replaces it with the one Python 3.13's dataclass
generates: ``self is other``, else the same class and each field compared in turn
(``self.a == other.a and self.b == other.b ...``), stopping at the first that differs. No
tuples are built: comparing equal messages (a stateless call compares every message of a
request with those of a checkpoint) takes about a quarter less time. The results are those
of dataclass's ``__eq__`` but for a field holding the same object on both sides that is not
equal to itself (a float NaN: equal as an element of two tuples, not by ``==``), as on
Python 3.13.
"""

from __future__ import annotations

import inspect
from dataclasses import MISSING, fields, is_dataclass
from typing import Any, TypeVar

T = TypeVar("T")


class _Factory:
    """The default of a parameter whose field has a default factory (shown as ``<factory>``,
    as dataclass shows its own)."""

    def __repr__(self) -> str:
        return "<factory>"


_FACTORY = _Factory()


def fast_init(cls: type[T]) -> type[T]:
    """Give the frozen, slotted dataclass ``cls`` the faster ``__init__`` (see the module
    docstring); returns ``cls``. Use it as the decorator above ``@dataclass``.

    Raises:
        TypeError: ``cls`` is not a slotted dataclass, has a ``__post_init__``, or its
            ``__init__`` takes other parameters than its fields in order (an ``InitVar``, a
            field with ``init=False`` or ``kw_only``): those need dataclass's own ``__init__``.
    """
    if not is_dataclass(cls) or "__slots__" not in cls.__dict__:
        raise TypeError(f"{cls.__name__} is not a slotted dataclass")
    if hasattr(cls, "__post_init__"):
        raise TypeError(f"{cls.__name__} has a __post_init__")
    found = fields(cls)
    expected = [inspect.Parameter(f.name, inspect.Parameter.POSITIONAL_OR_KEYWORD) for f in found]
    given = list(inspect.signature(cls.__init__).parameters.values())[1:]
    if [(p.name, p.kind) for p in given] != [(p.name, p.kind) for p in expected]:
        raise TypeError(f"{cls.__name__}.__init__ takes other parameters than its fields")
    scope: dict[str, Any] = {"_FACTORY": _FACTORY}
    params: list[str] = []
    body: list[str] = []
    for f in found:
        name = f.name
        scope[f"_set_{name}"] = cls.__dict__[name].__set__
        value = name
        if f.default is not MISSING:
            scope[f"_default_{name}"] = f.default
            params.append(f"{name}=_default_{name}")
        elif f.default_factory is not MISSING:
            scope[f"_factory_{name}"] = f.default_factory
            params.append(f"{name}=_FACTORY")
            value = f"_factory_{name}() if {name} is _FACTORY else {name}"
        else:
            params.append(name)
        body.append(f"    _set_{name}(self, {value})")
    source = f"def __init__(self, {', '.join(params)}):\n" + "\n".join(body) + "\n"
    exec(source, scope)  # the source holds only the field names
    init = scope["__init__"]
    old = cls.__dict__["__init__"]
    init.__qualname__ = old.__qualname__
    init.__module__ = old.__module__
    init.__doc__ = old.__doc__
    init.__annotations__ = dict(old.__annotations__)
    type.__setattr__(cls, "__init__", init)
    return cls


def fast_eq(cls: type[T]) -> type[T]:
    """Give the dataclass ``cls`` the field-by-field ``__eq__`` (see the module docstring);
    returns ``cls``. ``__hash__`` is left as dataclass made it.

    Raises:
        TypeError: ``cls`` is not a dataclass with a generated ``__eq__`` (``eq=True``, no
            ``__eq__`` of its own).
    """
    params = getattr(cls, "__dataclass_params__", None)
    if not is_dataclass(cls) or params is None or not params.eq:
        raise TypeError(f"{cls.__name__} is not a dataclass with a generated __eq__")
    old: Any = cls.__dict__.get("__eq__")
    code = getattr(old, "__code__", None)
    if code is None or code.co_filename != "<string>":  # not the one dataclass generated
        raise TypeError(f"{cls.__name__} is not a dataclass with a generated __eq__")
    names = [f.name for f in fields(cls) if f.compare]
    compared = " and ".join(f"self.{name} == other.{name}" for name in names) or "True"
    source = (
        "def __eq__(self, other):\n"
        "    if self is other:\n"
        "        return True\n"
        "    if other.__class__ is self.__class__:\n"
        f"        return {compared}\n"
        "    return NotImplemented\n"
    )
    scope: dict[str, Any] = {}
    exec(source, scope)  # the source holds only the field names
    eq = scope["__eq__"]
    eq.__qualname__ = old.__qualname__
    eq.__module__ = old.__module__
    type.__setattr__(cls, "__eq__", eq)
    return cls
