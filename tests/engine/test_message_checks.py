"""Messages a user hands in are type-checked where they enter a session
(``Session.append`` / ``record``, ``PrefixCache.serve`` / ``prepare``): a wrong field is a
TypeError naming it, raised before anything is stored, not a failure in ``prepare()``."""

from __future__ import annotations

from typing import Any

import pytest

from ctxengine.engine import Session
from ctxengine.engine.stateless import PrefixCache, prepare
from ctxengine.model import (
    DocumentPart,
    ImagePart,
    Message,
    NativeCompactionPart,
    ReasoningPart,
    TextPart,
    ToolCallPart,
    ToolResultPart,
    Usage,
    assistant,
    tool_result,
    user,
)
from ctxengine.model.checks import check_message

WINDOW = 100_000
ARGS = "str (JSON text: json.dumps a dict)"


def bad(*parts: Any, role: Any = "assistant", **fields: Any) -> Message:
    return Message(role, parts, **fields)


#: (message, error type, error text when appended as ``message``)
CASES: list[tuple[Message, type[Exception], str]] = [
    (
        bad(ToolCallPart("c1", "bash", {"cmd": "ls"})),  # type: ignore[arg-type]
        TypeError,
        f"message.parts[0]: ToolCallPart.arguments must be {ARGS}, got dict",
    ),
    (
        bad(TextPart("x"), ToolCallPart("c1", None, "{}")),  # type: ignore[arg-type]
        TypeError,
        "message.parts[1]: ToolCallPart.name must be str, got NoneType",
    ),
    (
        bad(TextPart(5), role="user"),  # type: ignore[arg-type]
        TypeError,
        "message.parts[0]: TextPart.text must be str, got int",
    ),
    (
        Message("user", [TextPart("x")]),  # type: ignore[arg-type]
        TypeError,
        "message: Message.parts must be a tuple of parts, got list",
    ),
    (
        bad("hi", role="user"),
        TypeError,
        "message.parts[0] is a str, not a ctxengine part (TextPart, ToolCallPart, "
        "ToolResultPart …)",
    ),
    (
        bad(TextPart("x"), role="wizard"),
        ValueError,
        "message: Message.role 'wizard' is not one of system, developer, user, assistant, tool",
    ),
    (
        bad(TextPart("x"), role=None),
        TypeError,
        "message: Message.role must be str, got NoneType",
    ),
    (
        bad(ToolResultPart("c1", "out"), role="tool"),  # type: ignore[arg-type]
        TypeError,
        "message.parts[0]: ToolResultPart.content must be a tuple of TextPart, ImagePart or "
        "DocumentPart, got str",
    ),
    (
        bad(ToolResultPart("c1", (TextPart("a"), "b")), role="tool"),  # type: ignore[arg-type]
        TypeError,
        "message.parts[0].content[1] is a str, not a TextPart, ImagePart or DocumentPart",
    ),
    (
        bad(ToolResultPart("c1", (TextPart(b"a"),)), role="tool"),  # type: ignore[arg-type]
        TypeError,
        "message.parts[0].content[0]: TextPart.text must be str, got bytes",
    ),
    (
        bad(TextPart("x"), meta=None),
        TypeError,
        "message: Message.meta must be a mapping, got NoneType",
    ),
    (
        bad(TextPart("x"), usage={"input": 1}),
        TypeError,
        "message: Message.usage must be Usage or None, got dict",
    ),
    (
        bad(ReasoningPart("t", signature=5)),  # type: ignore[arg-type]
        TypeError,
        "message.parts[0]: ReasoningPart.signature must be str or None, got int",
    ),
    (
        bad(ImagePart("image/png", width="10"), role="user"),  # type: ignore[arg-type]
        TypeError,
        "message.parts[0]: ImagePart.width must be int or None, got str",
    ),
]


@pytest.mark.parametrize(("message", "error", "text"), CASES)
def test_append_names_the_field_and_stores_nothing(
    message: Message, error: type[Exception], text: str
) -> None:
    session = Session(WINDOW)
    session.append(user("hi"))
    with pytest.raises(error) as info:
        session.append(message)
    assert str(info.value) == text
    assert len(session.entries) == 1
    session.prepare()  # the session is still usable


def test_record_names_the_reply() -> None:
    session = Session(WINDOW)
    session.append(user("hi"))
    reply = bad(ToolCallPart("c1", "bash", {"cmd": "ls"}))  # type: ignore[arg-type]
    with pytest.raises(TypeError) as info:
        session.record(reply)
    assert str(info.value) == f"reply.parts[0]: ToolCallPart.arguments must be {ARGS}, got dict"
    assert len(session.entries) == 1


@pytest.mark.parametrize(
    ("usage", "error", "text"),
    [
        (
            Usage(input_tokens="100"),  # type: ignore[arg-type]
            TypeError,
            "reply.usage: Usage.input_tokens must be int (tokens), got str",
        ),
        (
            Usage(cache_read_tokens=None),  # type: ignore[arg-type]
            TypeError,
            "reply.usage: Usage.cache_read_tokens must be int (tokens), got NoneType",
        ),
        (
            Usage(output_tokens=True),
            TypeError,
            "reply.usage: Usage.output_tokens must be int (tokens), got bool",
        ),
        (
            Usage(input_tokens=-3),
            ValueError,
            "reply.usage: Usage.input_tokens must be at least 0, got -3",
        ),
    ],
)
def test_a_usage_that_is_not_token_counts_is_refused_before_it_is_stored(
    usage: Usage, error: type[Exception], text: str, tmp_path: Any
) -> None:
    # A stored usage is read by every later call (the usage anchor): a wrong one would make
    # the stored session unusable for good, since the log is append-only.
    db = str(tmp_path / "s.db")
    with Session(WINDOW, store=db, session_id="p") as session:
        session.append(user("hi"))
        with pytest.raises(error) as info:
            session.record(assistant("ok", usage=usage))
        assert str(info.value) == text
        session.record(assistant("ok", usage=Usage(input_tokens=100, output_tokens=3)))
    with Session(WINDOW, store=db, session_id="p") as session:
        assert len(session.entries) == 2
        session.prepare()


@pytest.mark.parametrize(
    ("message", "text"),
    [
        (
            Message("assistant", (ToolResultPart("c1", (TextPart("x"),)),)),
            "message.parts[0]: a ToolResultPart belongs in a tool message "
            "(ctxengine.model.tool_result builds one), not in a 'assistant' message (no "
            "request would carry it)",
        ),
        (
            Message("user", (TextPart("see"), ToolResultPart("c1", (TextPart("x"),)))),
            "message.parts[1]: a ToolResultPart belongs in a tool message "
            "(ctxengine.model.tool_result builds one), not in a 'user' message (no request "
            "would carry it)",
        ),
        (
            Message("user", (ToolCallPart("c1", "bash", "{}"),)),
            "message.parts[0]: a ToolCallPart belongs in an assistant message, not in a "
            "'user' message (no request would carry it)",
        ),
    ],
)
def test_a_part_in_a_role_no_request_carries_it_in_is_refused(message: Message, text: str) -> None:
    session = Session(WINDOW)
    with pytest.raises(ValueError) as info:
        session.append(message)
    assert str(info.value) == text
    assert len(session.entries) == 0
    # the same parts in their roles are taken
    session.append(assistant("", ToolCallPart("c1", "bash", "{}")))
    session.append(tool_result("c1", "x"))
    assert len(session.entries) == 2


def test_a_body_that_is_neither_a_message_nor_a_record_is_refused() -> None:
    session = Session(WINDOW)
    with pytest.raises(TypeError) as info:
        session.append({"role": "user", "content": "hi"})  # type: ignore[arg-type]
    assert str(info.value) == (
        "Session.append: expected a Message or a record, got dict (build messages with "
        "ctxengine.model.user, assistant, tool_result)"
    )
    assert len(session.entries) == 0


def test_serve_and_prepare_name_the_message_by_index() -> None:
    reply = bad(ToolCallPart("c1", "bash", {"cmd": "ls"}))  # type: ignore[arg-type]
    text = f"messages[1].parts[0]: ToolCallPart.arguments must be {ARGS}, got dict"
    with pytest.raises(TypeError) as info:
        PrefixCache().serve([user("hi"), reply], window=WINDOW)
    assert str(info.value) == text
    with pytest.raises(TypeError) as info:
        prepare([user("hi"), reply], window=WINDOW)
    assert str(info.value) == text


def test_every_kind_of_well_formed_message_passes() -> None:
    call = ToolCallPart("c1", "bash", '{"cmd": "ls"}')
    image = ImagePart("image/png", data="aGk=", byte_size=2, width=1, height=1)
    document = DocumentPart("application/pdf", title="a.pdf", data="aGk=")
    messages = [
        Message("system", (TextPart("be brief", meta={"cache_control": {}}),)),
        Message("developer", ()),
        user("hi"),
        Message("user", (TextPart("see"), image, document)),
        assistant("ok", call, usage=Usage(10, 2), reasoning=ReasoningPart("t", "sig")),
        tool_result("c1", "a.py", is_error=True, name="bash"),
        Message("tool", (ToolResultPart("c1", (TextPart("x"), image, document)),)),
        Message(
            "assistant", (NativeCompactionPart("anthropic", "{}"),), model="m", stop_reason="stop"
        ),
        Message("user", (TextPart("x"),), meta=MappingProxy({"a": 1})),
    ]
    for m in messages:
        check_message(m)


class MappingProxy(dict[str, Any]):
    """A mapping that is not exactly a dict (takes the detailed path)."""
