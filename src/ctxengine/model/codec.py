"""Wire form of entries: plain dicts and canonical JSON, and content hashes.

The canonical JSON of a value is ``orjson`` with sorted keys and no extra whitespace; the
content hash is ``"b2:" + blake2b-128(canonical JSON)``. The prefix names the algorithm so a
later change is detectable.
"""

from __future__ import annotations

import hashlib
from collections.abc import Callable
from dataclasses import fields, is_dataclass
from typing import Any

import orjson

from ctxengine.model.entries import (
    Body,
    CompactionRecord,
    Entry,
    PinRecord,
    PruneRecord,
    SupersedeRecord,
    UnpinRecord,
)
from ctxengine.model.ledgers import Ledgers
from ctxengine.model.messages import Message
from ctxengine.model.parts import (
    DocumentPart,
    ImagePart,
    NativeCompactionPart,
    Part,
    ReasoningPart,
    TextPart,
    ToolCallPart,
    ToolResultPart,
)
from ctxengine.model.usage import Usage

HASH_PREFIX = "b2:"

_PART_TYPES: dict[str, type[Any]] = {
    "text": TextPart,
    "image": ImagePart,
    "document": DocumentPart,
    "tool_call": ToolCallPart,
    "tool_result": ToolResultPart,
    "reasoning": ReasoningPart,
    "native_compaction": NativeCompactionPart,
}
_RECORD_TYPES: dict[str, type[Any]] = {
    "compaction": CompactionRecord,
    "prune": PruneRecord,
    "pin": PinRecord,
    "unpin": UnpinRecord,
    "supersede": SupersedeRecord,
}


#: How :func:`_plain` writes a value of each type it has met: the field names of a
#: dataclass (in definition order), ``"seq"`` (a list), ``"map"`` (a dict), or ``None`` (as
#: it is). A value's type alone decides it.
_SHAPES: dict[type[Any], tuple[str, ...] | str | None] = {}


def _shape(value: Any) -> tuple[str, ...] | str | None:
    if is_dataclass(value) and not isinstance(value, type):
        return tuple(f.name for f in fields(value))
    if isinstance(value, tuple | list):
        return "seq"
    if isinstance(value, dict):
        return "map"
    return None


def _plain(value: Any) -> Any:
    """``value`` as plain data: a dataclass instance as a dict of its fields (``None`` fields
    and an empty ``meta`` left out), tuples and lists as lists, dicts with their values made
    plain; anything else as it is."""
    cls = type(value)
    if cls is str or value is None:
        return value
    if cls in _SHAPES:
        shape = _SHAPES[cls]
    else:
        shape = _SHAPES[cls] = _shape(value)
    if shape is None:
        return value
    if shape == "seq":
        return [_plain(v) for v in value]
    if shape == "map":
        return {k: _plain(v) for k, v in value.items()}
    out: dict[str, Any] = {}
    for name in shape:
        v = getattr(value, name)
        if v is None or (name == "meta" and not v):
            continue
        out[name] = v if type(v) is str else _plain(v)
    return out


def part_to_dict(part: Part) -> dict[str, Any]:
    """A part as a plain dict tagged by ``kind``; ``None`` fields and empty meta omitted."""
    result: dict[str, Any] = _plain(part)
    return result


def part_from_dict(data: dict[str, Any]) -> Part:
    """Inverse of :func:`part_to_dict`. Raises ``ValueError`` on an unknown ``kind``."""
    kind = data.get("kind")
    cls = _PART_TYPES.get(kind) if isinstance(kind, str) else None
    if cls is None:
        raise ValueError(f"unknown part kind {kind!r}")
    kwargs = dict(data)
    if cls is ToolResultPart:
        kwargs["content"] = tuple(part_from_dict(p) for p in kwargs.get("content", ()))
    result: Part = cls(**kwargs)
    return result


def message_to_dict(message: Message) -> dict[str, Any]:
    """A message as a plain dict (``kind: "message"``)."""
    out: dict[str, Any] = {
        "kind": "message",
        "role": message.role,
        "parts": [part_to_dict(p) for p in message.parts],
    }
    if message.usage is not None:
        out["usage"] = _plain(message.usage)
    if message.model is not None:
        out["model"] = message.model
    if message.stop_reason is not None:
        out["stop_reason"] = message.stop_reason
    if message.meta:
        out["meta"] = dict(message.meta)
    return out


def message_from_dict(data: dict[str, Any]) -> Message:
    """Inverse of :func:`message_to_dict`."""
    usage = data.get("usage")
    return Message(
        role=data["role"],
        parts=tuple(part_from_dict(p) for p in data.get("parts", ())),
        usage=Usage(**usage) if usage else None,
        model=data.get("model"),
        stop_reason=data.get("stop_reason"),
        meta=data.get("meta") or {},
    )


def body_to_dict(body: Body) -> dict[str, Any]:
    """An entry body (message or record) as a plain dict tagged by ``kind``."""
    if isinstance(body, Message):
        return message_to_dict(body)
    result: dict[str, Any] = _plain(body)
    return result


def body_from_dict(data: dict[str, Any]) -> Body:
    """Inverse of :func:`body_to_dict`. Raises ``ValueError`` on an unknown ``kind``."""
    kind = data.get("kind")
    if kind == "message":
        return message_from_dict(data)
    cls = _RECORD_TYPES.get(kind) if isinstance(kind, str) else None
    if cls is None:
        raise ValueError(f"unknown entry kind {kind!r}")
    kwargs = dict(data)
    if cls is CompactionRecord:
        kwargs["ledgers"] = Ledgers.from_plain(kwargs.get("ledgers", {}))
        kwargs.setdefault("first_kept_id", None)  # the wire form omits it when None
        if kwargs.get("lead_ids") is not None:
            kwargs["lead_ids"] = tuple(kwargs["lead_ids"])
        for name in ("retained_ids", "reinjected"):
            if kwargs.get(name) is not None:
                kwargs[name] = tuple(kwargs[name])
    if cls is PruneRecord:
        kwargs["call_ids"] = tuple(kwargs.get("call_ids", ()))
    if cls is SupersedeRecord:
        kwargs["entry_ids"] = tuple(kwargs.get("entry_ids", ()))
    if cls is UnpinRecord:
        kwargs["pin_ids"] = tuple(kwargs.get("pin_ids", ()))
    result: Body = cls(**kwargs)
    return result


def entry_to_dict(entry: Entry) -> dict[str, Any]:
    """An entry as a plain dict: ``id, session_id, seq, parent_id, created_at, body, meta``."""
    out: dict[str, Any] = {
        "id": entry.id,
        "session_id": entry.session_id,
        "seq": entry.seq,
        "parent_id": entry.parent_id,
        "created_at": entry.created_at,
        "body": body_to_dict(entry.body),
    }
    if entry.meta:
        out["meta"] = dict(entry.meta)
    return out


def entry_from_dict(data: dict[str, Any]) -> Entry:
    """Inverse of :func:`entry_to_dict`."""
    return Entry(
        id=data["id"],
        session_id=data["session_id"],
        seq=data["seq"],
        body=body_from_dict(data["body"]),
        parent_id=data.get("parent_id"),
        created_at=data.get("created_at"),
        meta=data.get("meta") or {},
    )


def _message_dict(msg: Message) -> dict[str, Any]:
    """The wire dict of ``msg`` one level deep (:func:`message_to_dict` but with ``parts``
    and ``usage`` as they are: :func:`wire` gives theirs)."""
    out: dict[str, Any] = {"kind": "message", "role": msg.role, "parts": msg.parts}
    if msg.usage is not None:
        out["usage"] = msg.usage
    if msg.model is not None:
        out["model"] = msg.model
    if msg.stop_reason is not None:
        out["stop_reason"] = msg.stop_reason
    if msg.meta:
        out["meta"] = dict(msg.meta)
    return out


def _field_encoder(cls: type) -> Callable[[Any], dict[str, Any]]:
    """A function giving the wire dict of a value of the dataclass ``cls`` one level deep:
    its fields by name, without ``None`` ones and an empty ``meta`` (as :func:`_plain`
    writes it), each value as it is. Generated once per type with
    one statement per field (as :mod:`dataclasses` generates ``__init__``), since a loop over
    the field names costs as much as the rest of the hash."""
    lines = ["def encode(v):", "    out = {}"]
    for f in fields(cls):
        test = "x" if f.name == "meta" else "x is not None"
        lines += [f"    x = v.{f.name}", f"    if {test}:", f"        out[{f.name!r}] = x"]
    lines.append("    return out")
    scope: dict[str, Any] = {}
    exec("\n".join(lines), scope)  # the source holds only the field names
    encode: Callable[[Any], dict[str, Any]] = scope["encode"]
    return encode


#: The one-level wire dict function of each dataclass type met by :func:`wire`.
_ENCODERS: dict[type, Callable[[Any], dict[str, Any]]] = {Message: _message_dict}


def wire(value: Any) -> Any:
    """orjson's ``default`` (with ``OPT_PASSTHROUGH_DATACLASS``) that writes a body as
    :func:`body_to_dict` does in one pass: the wire dict of a dataclass one level deep (orjson
    serialises the values in it, calling back for nested dataclasses), a list for a sequence
    type orjson does not know.

    Raises:
        TypeError: any other value (orjson reports it as not serialisable, as it would for
            the dict of :func:`body_to_dict`).
    """
    encode = _ENCODERS.get(type(value))
    if encode is not None:
        return encode(value)
    if is_dataclass(value) and not isinstance(value, type):
        encode = _ENCODERS[type(value)] = _field_encoder(type(value))
        return encode(value)
    if isinstance(value, tuple | list):
        return list(value)
    raise TypeError(f"Type is not JSON serializable: {type(value).__name__}")


def body_json(body: Body) -> bytes:
    """``orjson.dumps(body_to_dict(body))`` (the same bytes, keys in field order) in one pass:
    orjson walks the body and asks :func:`wire` only for the dict of each dataclass, so no
    intermediate dicts of the whole body are built. The same for every body whose message
    ``meta`` holds JSON values, as every imported and appended body does (a dataclass in a
    message's ``meta`` would be written without its ``None`` fields).

    Raises:
        TypeError: a value that is not serialisable (``orjson.JSONEncodeError``, with
            orjson's message: ``"Type is not JSON serializable: object"``).
    """
    return orjson.dumps(body, default=wire, option=orjson.OPT_PASSTHROUGH_DATACLASS)


def canonical_json(value: Any) -> bytes:
    """Canonical JSON bytes: sorted keys, compact separators, UTF-8."""
    return orjson.dumps(value, option=orjson.OPT_SORT_KEYS)


def content_hash(value: Any) -> str:
    """``"b2:"`` + hex blake2b (16-byte digest) of the canonical JSON of ``value``."""
    return HASH_PREFIX + hashlib.blake2b(canonical_json(value), digest_size=16).hexdigest()


def body_hash(body: Body, parent_id: str | None = None) -> str:
    """Content address of an entry body chained to its parent (same body after a different
    parent gets a different id, so repeated identical messages stay distinct)."""
    return content_hash({"parent": parent_id, "body": body_to_dict(body)})
