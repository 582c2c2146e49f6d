"""ctxengine's own JSONL: what ``ctxengine export SESSION --format jsonl`` writes.

One entry per line, as :func:`ctxengine.model.codec.entry_to_dict` gives it: an object with
exactly the keys ``id``, ``session_id``, ``seq``, ``parent_id``, ``created_at``, ``body`` and,
when the entry has meta, ``meta``; ``body`` is a tagged body (``kind`` ``message``,
``compaction``, ``prune``, ``pin`` or ``supersede``). Reading it back gives the exported
entries unchanged (same ids, seqs, parents, bodies and meta), so an export can be re-imported
into another store.

Every line must belong to the first line's session and carry ``seq`` 0, 1, 2 … in order. The
session id is the entries' ``session_id``; the title is the first user request.
"""

from __future__ import annotations

import re
from pathlib import Path
from typing import Any

import orjson

from ctxengine.errors import TranscriptError
from ctxengine.importers._build import file_digest, iter_jsonl
from ctxengine.importers._parts import title_of
from ctxengine.importers.base import SNIFF_BYTES, ImportedSession, start_report
from ctxengine.importers.report import ImportReport
from ctxengine.model import Entry
from ctxengine.model.codec import entry_from_dict

#: Keys of an exported entry, in the order ``entry_to_dict`` writes them; ``meta`` is optional.
KEYS = ("id", "session_id", "seq", "parent_id", "created_at", "body")
#: Body kinds of an exported entry.
KINDS = ("message", "compaction", "prune", "pin", "unpin", "supersede")

_STR = r'"(?:[^"\\]|\\.)*"'
#: The start of a compact ``entry_to_dict`` line, for a first line longer than the sniff head.
_LINE_START = re.compile(
    rf'\{{"id":{_STR},"session_id":{_STR},"seq":0,"parent_id":(?:null|{_STR}),'
    rf'"created_at":(?:null|{_STR}),"body":\{{"kind":"(?:{"|".join(KINDS)})"'.encode()
)


def _is_entry(obj: Any) -> bool:
    """True when ``obj`` has exactly the keys of an exported entry and a tagged body."""
    if not isinstance(obj, dict):
        return False
    keys = tuple(obj)
    if keys not in (KEYS, (*KEYS, "meta")):
        return False
    body = obj["body"]
    return isinstance(body, dict) and body.get("kind") in KINDS


class NativeImporter:
    """Importer for ctxengine's JSONL export (see the module docstring)."""

    name = "ctxengine"
    label = "a ctxengine export"

    def sniff(self, path: Path, head: bytes) -> bool:
        """True when the first line is an exported entry with ``seq`` 0 (decoded when it fits
        in the head, else matched on the compact form ``entry_to_dict`` lines take)."""
        first, newline, _ = head.partition(b"\n")
        if newline or len(head) < SNIFF_BYTES:
            try:
                obj = orjson.loads(first)
            except orjson.JSONDecodeError:
                return False
            return _is_entry(obj) and obj["seq"] == 0
        return _LINE_START.match(first) is not None

    def read(self, path: Path, report: ImportReport | None = None) -> ImportedSession:
        """Import the whole file. Lines that are not JSON (a partial last line) are skipped
        into ``report`` (:func:`~ctxengine.importers._build.iter_jsonl`); an entry is never
        repaired: its own export must come back unchanged.

        Raises:
            TranscriptError: a line that is not an exported entry, belongs to another
                session, breaks the seq order or repeats an id (names the line); in strict
                mode also a skipped line.
        """
        report = start_report(path, report)
        entries: list[Entry] = []
        ids: set[str] = set()
        for number, obj in iter_jsonl(path, report):
            entry = _entry(path, number, obj)
            _check_order(path, number, entry, entries, ids)
            ids.add(entry.id)
            entries.append(entry)
        session_id = entries[0].session_id if entries else file_digest(path)
        return ImportedSession(
            session_id=session_id,
            format=self.name,
            source_path=str(path),
            entries=tuple(entries),
            title=title_of(entries),
            report=report,
        )


def _entry(path: Path, number: int, obj: dict[str, Any]) -> Entry:
    """The entry of one line, or a ``TranscriptError`` naming the line."""
    expected = "expected a ctxengine entry {" + ", ".join(KEYS) + "[, meta]}"
    if not _is_entry(obj):
        raise TranscriptError(str(path), expected, line=number)
    typed = (
        isinstance(obj["id"], str)
        and bool(obj["id"])
        and isinstance(obj["session_id"], str)
        and bool(obj["session_id"])
        and isinstance(obj["seq"], int)
        and not isinstance(obj["seq"], bool)
        and isinstance(obj["parent_id"], str | None)
        and isinstance(obj["created_at"], str | None)
        and isinstance(obj.get("meta", {}), dict)
    )
    if not typed:
        raise TranscriptError(
            str(path),
            f"{expected}: string id and session_id, integer seq, string or null "
            "parent_id and created_at, object meta",
            line=number,
        )
    try:
        return entry_from_dict(obj)
    except (KeyError, TypeError, ValueError, AttributeError) as exc:
        raise TranscriptError(
            str(path), f"expected a valid entry body ({type(exc).__name__}: {exc})", line=number
        ) from None


def _check_order(path: Path, number: int, entry: Entry, before: list[Entry], ids: set[str]) -> None:
    """Raise unless ``entry`` continues ``before``: same session, next seq, new id."""
    if before and entry.session_id != before[0].session_id:
        raise TranscriptError(
            str(path),
            f"expected session_id {before[0].session_id!r} (the first line's), "
            f"got {entry.session_id!r}",
            line=number,
        )
    if entry.seq != len(before):
        raise TranscriptError(
            str(path), f"expected seq {len(before)}, got {entry.seq}", line=number
        )
    if entry.id in ids:
        raise TranscriptError(str(path), f"entry id {entry.id!r} occurs twice", line=number)


IMPORTER = NativeImporter()
