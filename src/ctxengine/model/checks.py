"""Type checks of the messages a user hands in, where they enter a session.

The model's dataclasses do not check their fields (they are built in every importer's hot
loop, and from the store), so a wrong type given by hand, such as a tool call's
``arguments`` as a dict instead of JSON text, would otherwise be stored and fail much later,
far from its cause (``prepare()`` reading the arguments as text). :func:`check_message` is
called where a user's message enters a session (``Session.append`` / ``record``, and
``PrefixCache.serve`` / ``prepare`` for the messages not already checkpointed) and names
the field, the type it must have and the one it has.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from typing import Any

from ctxengine.model.messages import ROLES, Message
from ctxengine.model.parts import (
    DocumentPart,
    ImagePart,
    NativeCompactionPart,
    ReasoningPart,
    TextPart,
    ToolCallPart,
    ToolResultPart,
)
from ctxengine.model.usage import Usage

#: The types a field may hold (errors name them).
_STR = (str,)
_OPT_STR = (str, type(None))
_OPT_INT = (int, type(None))


def check_message(message: Message, where: str = "message") -> None:
    """Check the types of ``message``'s fields and of its parts' fields.

    Args:
        message: the message to check.
        where: how errors name it (``"messages[3]"``).

    Raises:
        TypeError: ``message`` is not a :class:`Message`, or a field has the wrong type
            (``parts`` not a tuple, a part of no known kind, ``text`` not a ``str``, a tool
            call's ``arguments`` not JSON text …); the message names the field, e.g.
            ``message.parts[1]: ToolCallPart.arguments must be str (JSON text: json.dumps a
            dict), got dict``.
        ValueError: ``role`` is a string but not one of :data:`~ctxengine.model.ROLES`; a
            tool call outside an assistant message or a tool result outside a tool message
            (every request would leave it out).
    """
    if type(message) is not Message or not _fine(message):
        _explain(message, where)


def _fine(m: Message) -> bool:
    """True when ``m`` passes the checks on the common path: text, tool calls and text
    results with plain dict meta (about half a microsecond for a message of a few parts); False
    sends it to :func:`_explain`, which checks every kind of part and raises on a wrong
    field."""
    if m.role not in ROLES or type(m.parts) is not tuple or type(m.meta) is not dict:
        return False
    if not (m.usage is None or (type(m.usage) is Usage and _counts_fine(m.usage))):
        return False
    if not (m.model is None or type(m.model) is str):
        return False
    if not (m.stop_reason is None or type(m.stop_reason) is str):
        return False
    part: Any
    for part in m.parts:
        kind = type(part)
        if kind is TextPart:
            if type(part.text) is not str:
                return False
        elif kind is ToolCallPart:
            if m.role != "assistant":
                return False
            if not (type(part.id) is type(part.name) is type(part.arguments) is str):
                return False
        elif kind is ToolResultPart:
            if m.role != "tool":
                return False
            if type(part.call_id) is not str or type(part.content) is not tuple:
                return False
            if type(part.is_error) is not bool or not (part.name is None or type(part.name) is str):
                return False
            for item in part.content:
                if type(item) is not TextPart or type(item.text) is not str:
                    return False
                if type(item.meta) is not dict:
                    return False
        else:
            return False
        if type(part.meta) is not dict:
            return False
    return True


def _explain(message: Any, where: str) -> None:
    """The detailed checks of :func:`check_message`: raise naming the first wrong field (or
    return, when every field is right)."""
    if not isinstance(message, Message):
        raise TypeError(f"{where} is a {type(message).__name__}, not a ctxengine Message")
    role = message.role
    if role not in ROLES:
        if not isinstance(role, str):
            raise TypeError(_wrong(where, "Message.role", "str", role))
        raise ValueError(f"{where}: Message.role {role!r} is not one of {', '.join(ROLES)}")
    parts = message.parts
    if not isinstance(parts, tuple):
        raise TypeError(_wrong(where, "Message.parts", "a tuple of parts", parts))
    _each(
        parts,
        _CHECKS,
        f"{where}.parts",
        "a ctxengine part (TextPart, ToolCallPart, ToolResultPart …)",
    )
    for n, part in enumerate(parts):
        _in_its_role(part, role, f"{where}.parts[{n}]")
    if message.usage is not None and not isinstance(message.usage, Usage):
        raise TypeError(_wrong(where, "Message.usage", "Usage or None", message.usage))
    if message.usage is not None:
        _usage(message.usage, f"{where}.usage")
    _fields(message, where, "Message", ("model", "stop_reason"), _OPT_STR)
    _meta(message.meta, where, "Message")


def _in_its_role(part: Any, role: str, where: str) -> None:
    """Raise for a tool call outside an assistant message or a tool result outside a tool
    message: every request leaves such a part out (providers take calls from the assistant
    and results from tool messages), so it would be stored and never sent."""
    if isinstance(part, ToolCallPart) and role != "assistant":
        raise ValueError(
            f"{where}: a ToolCallPart belongs in an assistant message, not in a {role!r} "
            "message (no request would carry it)"
        )
    if isinstance(part, ToolResultPart) and role != "tool":
        raise ValueError(
            f"{where}: a ToolResultPart belongs in a tool message (ctxengine.model.tool_result "
            f"builds one), not in a {role!r} message (no request would carry it)"
        )


#: The token counts of a :class:`Usage`.
_USAGE_COUNTS = ("input_tokens", "output_tokens", "cache_read_tokens", "cache_write_tokens")


def _counts_fine(usage: Usage) -> bool:
    """Every token count of ``usage`` is an int (not a bool) of at least 0."""
    for name in _USAGE_COUNTS:
        value = getattr(usage, name)
        if type(value) is not int or value < 0:
            return False
    return True


def _usage(usage: Usage, where: str) -> None:
    """Raise for a token count of ``usage`` that is not an int, or is negative: a reply's
    usage is stored with it and read by every later call (the usage anchor)."""
    for name in _USAGE_COUNTS:
        value = getattr(usage, name)
        if not isinstance(value, int) or isinstance(value, bool):
            raise TypeError(_wrong(where, f"Usage.{name}", "int (tokens)", value))
        if value < 0:
            raise ValueError(f"{where}: Usage.{name} must be at least 0, got {value}")


def _each(
    items: tuple[Any, ...],
    checks: Mapping[type, Callable[[Any, str], None]],
    where: str,
    expected: str,
) -> None:
    """Check each of ``items`` (named ``where[n]``) with the check of its class; raise for
    one of no class ``checks`` knows, saying it should be ``expected``."""
    for n, item in enumerate(items):
        check = checks.get(type(item)) or _subclass_check(item, checks)
        if check is None:
            raise TypeError(f"{where}[{n}] is a {type(item).__name__}, not {expected}")
        check(item, f"{where}[{n}]")


def _subclass_check(
    value: Any, checks: Mapping[type, Callable[[Any, str], None]]
) -> Callable[[Any, str], None] | None:
    """The check of the part class ``value`` is an instance of (a subclass), or ``None``."""
    for cls, check in checks.items():
        if isinstance(value, cls):
            return check
    return None


def _wrong(where: str, field: str, expected: str, value: Any) -> str:
    return f"{where}: {field} must be {expected}, got {type(value).__name__}"


def _fields(
    obj: Any, where: str, name: str, fields: tuple[str, ...], types: tuple[type, ...]
) -> None:
    for field in fields:
        value = getattr(obj, field)
        if not isinstance(value, types):
            expected = " or ".join("None" if t is type(None) else t.__name__ for t in types)
            raise TypeError(_wrong(where, f"{name}.{field}", expected, value))


def _meta(meta: Any, where: str, name: str) -> None:
    if type(meta) is not dict and not isinstance(meta, Mapping):
        raise TypeError(_wrong(where, f"{name}.meta", "a mapping", meta))


def _text(part: TextPart, where: str) -> None:
    if not isinstance(part.text, str):
        raise TypeError(_wrong(where, "TextPart.text", "str", part.text))
    _meta(part.meta, where, "TextPart")


def _image(part: ImagePart, where: str) -> None:
    _fields(part, where, "ImagePart", ("media_type",), _STR)
    _fields(part, where, "ImagePart", ("data", "url"), _OPT_STR)
    _fields(part, where, "ImagePart", ("byte_size", "width", "height"), _OPT_INT)
    _meta(part.meta, where, "ImagePart")


def _document(part: DocumentPart, where: str) -> None:
    _fields(part, where, "DocumentPart", ("media_type",), _STR)
    _fields(part, where, "DocumentPart", ("title", "text", "data", "url"), _OPT_STR)
    _fields(part, where, "DocumentPart", ("byte_size",), _OPT_INT)
    _meta(part.meta, where, "DocumentPart")


def _call(part: ToolCallPart, where: str) -> None:
    _fields(part, where, "ToolCallPart", ("id", "name"), _STR)
    if not isinstance(part.arguments, str):
        raise TypeError(
            _wrong(
                where,
                "ToolCallPart.arguments",
                "str (JSON text: json.dumps a dict)",
                part.arguments,
            )
        )
    _meta(part.meta, where, "ToolCallPart")


def _result(part: ToolResultPart, where: str) -> None:
    _fields(part, where, "ToolResultPart", ("call_id",), _STR)
    content = part.content
    if not isinstance(content, tuple):
        raise TypeError(
            _wrong(
                where,
                "ToolResultPart.content",
                "a tuple of TextPart, ImagePart or DocumentPart",
                content,
            )
        )
    _each(content, _CONTENT, f"{where}.content", "a TextPart, ImagePart or DocumentPart")
    if not isinstance(part.is_error, bool):
        raise TypeError(_wrong(where, "ToolResultPart.is_error", "bool", part.is_error))
    _fields(part, where, "ToolResultPart", ("name",), _OPT_STR)
    _meta(part.meta, where, "ToolResultPart")


def _reasoning(part: ReasoningPart, where: str) -> None:
    _fields(part, where, "ReasoningPart", ("text",), _STR)
    _fields(part, where, "ReasoningPart", ("signature",), _OPT_STR)
    if not isinstance(part.redacted, bool):
        raise TypeError(_wrong(where, "ReasoningPart.redacted", "bool", part.redacted))
    _meta(part.meta, where, "ReasoningPart")


def _native(part: NativeCompactionPart, where: str) -> None:
    _fields(part, where, "NativeCompactionPart", ("provider", "payload"), _STR)
    _meta(part.meta, where, "NativeCompactionPart")


_CONTENT: dict[type, Callable[[Any, str], None]] = {
    TextPart: _text,
    ImagePart: _image,
    DocumentPart: _document,
}
_CHECKS: dict[type, Callable[[Any, str], None]] = {
    **_CONTENT,
    ToolCallPart: _call,
    ToolResultPart: _result,
    ReasoningPart: _reasoning,
    NativeCompactionPart: _native,
}
