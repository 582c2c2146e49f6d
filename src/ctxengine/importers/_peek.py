"""A structural look at the start of a JSON document, for sniffing.

Sniffers see only the first :data:`~ctxengine.importers.base.SNIFF_BYTES` of a file, which
usually cuts a JSON document in the middle. :func:`peek` decodes what fits: the top-level
keys in order, the values that are complete, and the leading complete elements of a list
value that is cut. Sniffers then check shapes (``role`` and ``content`` of the first
messages …) instead of searching for strings, which would match JSON nested anywhere.
"""

from __future__ import annotations

import json
from collections.abc import Mapping
from dataclasses import dataclass, field
from functools import lru_cache
from typing import Any, Literal

_DECODER = json.JSONDecoder()
#: What decoding a head can raise besides a cut document: nesting too deep for the stdlib
#: decoder (``RecursionError``) and integers too long to convert (``ValueError``, of which
#: ``JSONDecodeError`` is a subclass). Decoding stops there, as at a cut.
_UNDECODABLE = (ValueError, RecursionError)
_WS = " \t\r\n"
#: Characters kept of the raw text at the start of each list (for lists whose first element
#: does not fit in the head).
_SNIPPET_CHARS = 200


@dataclass(frozen=True, slots=True)
class Peek:
    """What the head of a JSON document shows.

    Attributes:
        kind: ``"object"``, ``"array"`` or ``"other"`` (not JSON, or a scalar).
        keys: top-level keys in document order (objects), as far as the head reaches.
        values: top-level values that are complete in the head, by key.
        lists: leading complete elements of each list value, by key; a top-level array is
            under the key ``""``.
        snippets: the first characters of each list's raw text, by key (``""`` for a
            top-level array), so a sniffer can look at an element too large to decode.
    """

    kind: Literal["object", "array", "other"]
    keys: tuple[str, ...] = ()
    values: Mapping[str, Any] = field(default_factory=dict)
    lists: Mapping[str, tuple[Any, ...]] = field(default_factory=dict)
    snippets: Mapping[str, str] = field(default_factory=dict)

    def items(self, key: str) -> tuple[Any, ...]:
        """Leading complete elements of the list under ``key`` (``()`` when none)."""
        return self.lists.get(key, ())

    def records(self, key: str) -> tuple[dict[str, Any], ...] | None:
        """The leading elements under ``key`` when every one is a JSON object, else ``None``."""
        found = self.lists.get(key, ())
        if all(isinstance(item, dict) for item in found):
            return tuple(found)
        return None


def _skip(text: str, pos: int) -> int:
    while pos < len(text) and text[pos] in _WS:
        pos += 1
    return pos


def _list_items(text: str, pos: int) -> tuple[Any, ...]:
    """Complete elements of the list starting at ``text[pos] == "["``."""
    return _list_scan(text, pos)[0]


def _list_scan(text: str, pos: int) -> tuple[tuple[Any, ...], int | None]:
    """Complete elements of the list starting at ``text[pos] == "["``, and the position after
    its closing bracket when the whole list is in ``text`` and valid JSON (else ``None``): one
    pass over the list, where decoding the whole value first would scan a cut list twice."""
    found: list[Any] = []
    end = len(text)
    valid = True
    after_comma = False
    pos = _skip(text, pos + 1)
    while pos < end and text[pos] != "]":
        try:
            value, pos = _DECODER.raw_decode(text, pos)
        except _UNDECODABLE:
            return tuple(found), None
        found.append(value)
        after_comma = False
        pos = _skip(text, pos)
        if pos < end and text[pos] == ",":
            pos = _skip(text, pos + 1)
            after_comma = True
        elif pos < end and text[pos] != "]":
            valid = False  # elements without a comma between them: read on, as before
    if pos < end and valid and not after_comma:
        return tuple(found), pos + 1
    return tuple(found), None


def _object(text: str, pos: int) -> Peek:
    keys: list[str] = []
    values: dict[str, Any] = {}
    lists: dict[str, tuple[Any, ...]] = {}
    snippets: dict[str, str] = {}
    pos = _skip(text, pos + 1)
    while pos < len(text) and text[pos] == '"':
        try:
            key, pos = _DECODER.raw_decode(text, pos)
        except _UNDECODABLE:
            break
        pos = _skip(text, pos)
        if pos >= len(text) or text[pos] != ":":
            break
        pos = _skip(text, pos + 1)
        keys.append(key)
        if pos < len(text) and text[pos] == "[":
            snippets[key] = text[pos : pos + _SNIPPET_CHARS]
            items, after = _list_scan(text, pos)
            lists[key] = items
            if after is None:
                break
            values[key], pos = list(items), after
        else:
            try:
                value, pos = _DECODER.raw_decode(text, pos)
            except _UNDECODABLE:
                break
            values[key] = value
        pos = _skip(text, pos)
        if pos < len(text) and text[pos] == ",":
            pos = _skip(text, pos + 1)
    return Peek("object", tuple(keys), values, lists, snippets)


@lru_cache(maxsize=8)
def peek(head: bytes) -> Peek:
    """Decode what the head of a JSON document shows (cached: every sniffer calls it on the
    same head). Never raises."""
    text = head.decode("utf-8", errors="replace").lstrip("\ufeff")
    pos = _skip(text, 0)
    if pos >= len(text):
        return Peek("other")
    if text[pos] == "{":
        return _object(text, pos)
    if text[pos] == "[":
        snippet = text[pos : pos + _SNIPPET_CHARS]
        return Peek("array", lists={"": _list_items(text, pos)}, snippets={"": snippet})
    return Peek("other")
