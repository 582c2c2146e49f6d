"""Which existing files an ``-o`` may replace: only what the command itself writes.

A command that writes a file (``compact``, ``handoff``, ``export``, ``report``) replaces an
existing one only when that file holds the same kind of output: a request body, a ctxengine
log export, an HTML page, a PNG image (written by an earlier run, or regenerable from its
source). Anything else at that path, a transcript, a store, a data file of another program,
is refused unless ``--force`` is given: a mistyped ``-o`` never destroys data. An empty file
may always be replaced.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any, Literal

import orjson

#: What a command writes with ``-o``.
OutputKind = Literal["request", "log", "html", "png"]
#: Top-level keys of a provider request body (chat completions, Responses, Anthropic
#: messages) as ctxengine and other clients write one.
REQUEST_BODY_KEYS = frozenset(
    {
        "model",
        "messages",
        "input",
        "instructions",
        "system",
        "tools",
        "tool_choice",
        "parallel_tool_calls",
        "max_tokens",
        "max_completion_tokens",
        "max_output_tokens",
        "metadata",
        "temperature",
        "top_p",
        "top_k",
        "stop",
        "stop_sequences",
        "stream",
        "thinking",
        "reasoning",
        "reasoning_effort",
        "response_format",
        "text",
        "store",
        "include",
        "previous_response_id",
        "user",
    }
)
#: Keys of one line of a ctxengine log export (``ctxengine export --format jsonl``).
LOG_LINE_KEYS = frozenset({"id", "session_id", "seq", "parent_id", "created_at", "body", "meta"})
#: Largest file read to tell whether it is a request body, in bytes (a larger one is not).
MAX_REQUEST_BYTES = 64 * 1024 * 1024
#: Bytes read from the start of a file for the other kinds.
HEAD_BYTES = 1024 * 1024
_WHAT = {
    "request": "a request body",
    "log": "a ctxengine log export",
    "html": "an HTML page",
    "png": "a PNG image",
}


def holds(path: Path, kind: OutputKind) -> bool:
    """True when the existing file ``path`` is empty or holds output of ``kind``: a request
    body (a JSON object with ``messages`` or ``input`` and only :data:`REQUEST_BODY_KEYS`),
    a log export (its first line a JSON object with ``id``, ``session_id``, ``seq`` and
    ``body`` and only :data:`LOG_LINE_KEYS`), an HTML page (``<!doctype html`` or ``<html``
    first, case and leading blanks aside), a PNG image (its signature first). A file that
    cannot be read holds nothing of it.
    """
    try:
        size = path.stat().st_size
        if size == 0:
            return True
        if kind == "request":
            if size > MAX_REQUEST_BYTES:
                return False
            return _is_request(path.read_bytes())
        with path.open("rb") as fh:
            head = fh.read(HEAD_BYTES)
    except OSError:
        return False
    if kind == "log":
        first = head.split(b"\n", 1)[0]
        return _is_log_line(first)
    if kind == "html":
        return head.lstrip()[:14].lower().startswith((b"<!doctype html", b"<html"))
    return head.startswith(b"\x89PNG\r\n\x1a\n")


def _object(raw: bytes) -> dict[str, Any] | None:
    """``raw`` parsed when it is one JSON object, else ``None``."""
    try:
        data = orjson.loads(raw)
    except orjson.JSONDecodeError:
        return None
    return data if isinstance(data, dict) else None


def _is_request(raw: bytes) -> bool:
    data = _object(raw)
    return (
        data is not None
        and ("messages" in data or "input" in data)
        and REQUEST_BODY_KEYS.issuperset(data)
    )


def _is_log_line(line: bytes) -> bool:
    data = _object(line)
    return (
        data is not None
        and {"id", "session_id", "seq", "body"}.issubset(data)
        and LOG_LINE_KEYS.issuperset(data)
    )


def refusal(path: Path, kind: OutputKind) -> str:
    """Why ``path`` is not replaced: it is not ``kind``'s output, and what it reads as when
    an importer knows it (``a claude-code transcript``)."""
    found = _format_of(path)
    read_as = f" (it reads as a {found} transcript)" if found else ""
    return f"it exists and is not {_WHAT[kind]}{read_as}; pass --force to replace it"


def _format_of(path: Path) -> str | None:
    """The transcript format an importer finds in ``path``, else ``None``."""
    from ctxengine.errors import TranscriptError  # loaded only to explain a refusal
    from ctxengine.importers import detect

    try:
        return detect(path).name
    except TranscriptError:  # unreadable, or no format we know
        return None


__all__ = ["OutputKind", "holds", "refusal"]
