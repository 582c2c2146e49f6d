"""JSONL reading for the agent importers that also tolerates JSON objects glued onto one line.

:func:`iter_objects` is :func:`~ctxengine.importers._build.iter_jsonl` plus one repair: a line
holding several complete JSON objects one after the other (``{…}{…}``, written by an agent
that lost a newline between two appends, as in Qwen Code's fixture of that case) yields each
object under that line's number, counted as ``report.repair("glued JSON objects", …)``.
"""

from __future__ import annotations

import io
import json
from collections.abc import Iterable, Iterator
from pathlib import Path
from typing import Any

import orjson

from ctxengine.importers._build import (
    BOM,
    INT_LIMIT,
    is_object_line,
    parse_json,
    read_file,
    too_complex,
)
from ctxengine.importers.report import ImportReport

_DECODER = json.JSONDecoder()
#: Lines at the start of a file that format detection looks past to find JSON lines
#: (:func:`after_bad_lines`).
SKIPPED_HEAD_LINES = 3
_WS = " \t\r\n"


def split_glued(raw: bytes) -> list[dict[str, Any]] | None:
    """The objects of a line made of two or more complete JSON objects with nothing but
    whitespace between them; ``None`` for any other line."""
    try:
        text = raw.decode("utf-8")
    except UnicodeDecodeError:
        return None
    found: list[dict[str, Any]] = []
    pos = 0
    while True:
        while pos < len(text) and text[pos] in _WS:
            pos += 1
        if pos >= len(text):
            break
        try:
            value, pos = _DECODER.raw_decode(text, pos)
        except ValueError:
            return None
        if not isinstance(value, dict):
            return None
        found.append(value)
    return found if len(found) > 1 else None


def iter_objects(
    path: Path, report: ImportReport, data: bytes | None = None
) -> Iterator[tuple[int, dict[str, Any], bytes]]:
    """The ``(line_number, object, line_bytes)`` of each non-blank line of a JSONL file
    (1-based); a UTF-8 byte order mark before the first line is dropped. The bytes identify
    the record cheaply (:class:`~ctxengine.importers._log.Rows` hashes them for entry ids).
    ``data``: the file's bytes when the caller has already read them (``path`` is then only
    named in errors).

    Tolerated (counted in ``report``): glued objects (repaired, see the module docstring), a
    partial last line, a line that is not JSON or not an object, bytes that are not UTF-8 and
    lone surrogate escapes (as :func:`~ctxengine.importers._build.iter_jsonl`).

    Raises:
        TranscriptError: the file cannot be read (raised by the call); while iterating, a
            line nested too deeply or with an integer too long to convert, and in strict
            mode the first line skipped or repaired.
    """
    if data is None:
        # read whole: iterating a file's lines costs about six times as much as iterating
        # the lines of its bytes in memory
        data = read_file(path)
    # the reading generator itself, not one that delegates to it: a row costs one resume
    return _objects(path, io.BytesIO(data), report)


def _objects(
    path: Path, lines: Iterable[bytes], report: ImportReport
) -> Iterator[tuple[int, dict[str, Any], bytes]]:
    """:func:`iter_objects` over ``lines`` (each with its newline, the last one perhaps
    without)."""
    for number, raw in enumerate(lines, start=1):
        if number == 1:
            raw = raw.removeprefix(BOM)
        if not raw or raw.isspace():
            continue
        try:  # the common case, a JSON object; anything else is read again below
            value = orjson.loads(raw)
        except (ValueError, RecursionError):
            value = None
        if type(value) is dict:
            yield number, value, raw
            continue
        try:
            value, error = parse_json(raw, report, line=number)
            glued = split_glued(raw) if error is not None else None
        except (RecursionError, orjson.JSONEncodeError) as exc:
            raise too_complex(path, exc, line=number) from None
        except ValueError as exc:
            if str(exc).startswith(INT_LIMIT):
                raise too_complex(path, exc, line=number) from None
            raise
        if glued is not None:
            report.repair(
                "glued JSON objects",
                f"expected one JSON object per line, got {len(glued)} on one line",
                line=number,
            )
            for obj in glued:
                yield number, obj, raw
            continue
        if not is_object_line(raw, number, value, error, report):
            continue
        yield number, value, raw


def first_line(head: bytes) -> bytes:
    """The first line of ``head`` (without its newline), stripped of whitespace (``head``
    itself, not a copy, when it is one line without surrounding whitespace: sniffers call
    this on every head, of up to 64 KiB)."""
    end = head.find(b"\n")
    return (head if end < 0 else head[:end]).strip()


def after_bad_lines(head: bytes, most: int = SKIPPED_HEAD_LINES) -> bytes | None:
    """The rest of ``head`` after its first lines when they hide JSON lines from the
    sniffers: at most ``most`` lines (a torn record, a line of text, a record of no known
    shape; the importer skips and counts them), after which come two JSON object lines
    (or one that ends ``head``). ``None`` otherwise: a pretty-printed JSON document, whose
    lines are not whole objects, is never cut."""
    rest = head
    for _ in range(most):
        _, newline, rest = rest.partition(b"\n")
        if not newline:
            return None
        lines = rest.lstrip().split(b"\n", 2)
        if _is_object_line(lines[0]) and (
            len(lines) < 2 or not lines[1].strip() or _is_object_line(lines[1])
        ):
            return rest.lstrip()
    return None


def _is_object_line(line: bytes) -> bool:
    """True for a line that holds one JSON object."""
    if not line.lstrip().startswith(b"{"):
        return False
    try:
        return isinstance(orjson.loads(line), dict)
    except orjson.JSONDecodeError:
        return False
