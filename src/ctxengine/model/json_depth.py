"""JSON text with a bound on its nesting: parse tool-call arguments (and JSON tool output)
without a recursion that arbitrary input can exhaust.

Tool-call arguments are kept verbatim as JSON text (:attr:`ToolCallPart.arguments`), but
several steps read their structure: truncation cuts long string values and re-dumps the
object, the Anthropic renderer sends them as the ``input`` object, summaries list them as
``key=value``. The ``json`` module parses and dumps recursively (a ``RecursionError`` past
about 1,000 levels), orjson refuses to parse more than 1,024 levels and to dump more than
254, and a request body wraps the arguments in five more levels
(``body.messages[i].content[j].input``). So arguments nested deeper than
:data:`MAX_JSON_DEPTH` are never parsed: they are opaque text, carried as the JSON string
they are (OpenAI ``arguments`` is a string anyway) or, where an object is required
(Anthropic ``input``), as :func:`opaque_arguments`.
"""

from __future__ import annotations

import json
import re
from typing import Any

#: Deepest nesting of arrays and objects parsed as structure (a scalar is depth 0, ``{}``
#: depth 1). orjson.dumps refuses 255 levels and a request body adds five above the
#: arguments, so 128 leaves room for any envelope; real tool arguments stay under 10.
MAX_JSON_DEPTH = 128
#: Key of the object that carries arguments as text where an object is required.
RAW_ARGUMENTS_KEY = "_raw"
#: Key of the note in that object saying why the arguments are text.
NOTE_KEY = "_note"
#: The note itself.
DEEP_ARGUMENTS_NOTE = (
    f"arguments nested deeper than {MAX_JSON_DEPTH} levels; carried as their JSON text"
)

#: A complete JSON string literal (escapes included), matched without backtracking blowup.
_STRING = re.compile(r'"[^"\\]*(?:\\.[^"\\]*)*"', re.DOTALL)
_NOT_BRACKET = re.compile(r"[^\[\]{}]+")


class JsonTooDeep(ValueError):
    """JSON text nested deeper than the limit it was read under (a ``ValueError``, so a
    caller that treats invalid JSON as text treats over-deep JSON the same way)."""

    def __init__(self, limit: int) -> None:
        super().__init__(f"JSON nested deeper than {limit} levels")
        self.limit = limit


def exceeds_depth(text: str, limit: int = MAX_JSON_DEPTH) -> bool:
    """True when ``text`` opens more than ``limit`` arrays or objects inside one another.

    Brackets inside string literals do not count; text that is not valid JSON is measured
    the same way up to where a parser would stop. Iterative (any depth), linear in
    ``len(text)``; text with at most ``limit`` opening brackets in all is not scanned.
    """
    if text.count("[") + text.count("{") <= limit:
        return False
    brackets = _NOT_BRACKET.sub("", _STRING.sub("", text))
    depth = 0
    for char in brackets:
        if char in "[{":
            depth += 1
            if depth > limit:
                return True
        else:
            depth -= 1
    return False


def loads_bounded(text: str, limit: int = MAX_JSON_DEPTH) -> Any:
    """``json.loads(text)`` for text nested at most ``limit`` levels deep.

    Raises:
        JsonTooDeep: deeper than ``limit`` (checked before parsing, so no recursion runs).
        ValueError: not valid JSON (``json.JSONDecodeError``).
    """
    if exceeds_depth(text, limit):
        raise JsonTooDeep(limit)
    return json.loads(text)


def opaque_arguments(text: str) -> dict[str, str]:
    """The object that stands for over-deep arguments where an object is required:
    ``{"_raw": text, "_note": DEEP_ARGUMENTS_NOTE}``."""
    return {RAW_ARGUMENTS_KEY: text, NOTE_KEY: DEEP_ARGUMENTS_NOTE}
