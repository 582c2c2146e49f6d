"""Checks both stores make before they write, and the wording of an ambiguous lookup."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from ctxengine.errors import StoreConflict, StoreError
from ctxengine.model import Entry


def check_continues(fresh: Sequence[Entry], session_id: str, next_seq: int, where: str) -> None:
    """Raise ``StoreError`` unless ``fresh`` belong to ``session_id`` and carry the seqs
    ``next_seq, next_seq + 1, …``; ``StoreConflict`` when the first one's seq is already
    taken (the writer had not seen the newest entries: another writer appended first)."""
    for offset, entry in enumerate(fresh):
        if entry.session_id != session_id:
            raise StoreError(f"{where}: entry {entry.id!r} belongs to session {entry.session_id!r}")
        if offset == 0 and entry.seq < next_seq:
            raise StoreConflict(session_id, entry.seq - 1, next_seq - 1)
        if entry.seq != next_seq + offset:
            raise StoreError(
                f"{where}: entry {entry.id!r} has seq {entry.seq}, expected "
                f"{next_seq + offset}: new entries must continue the log without gaps"
            )


def check_unique(entries: list[Entry], where: str) -> None:
    """Raise ``StoreError`` when an id occurs twice in ``entries``."""
    seen: set[str] = set()
    for entry in entries:
        if entry.id in seen:
            raise StoreError(f"{where}: entry id {entry.id!r} occurs twice")
        seen.add(entry.id)


def ambiguous(prefix: str, ids: list[Any]) -> str:
    """The message for a session id prefix that matches several ``ids``."""
    shown = ", ".join(str(i) for i in ids[:5])
    more = f", … ({len(ids) - 5} more)" if len(ids) > 5 else ""
    return (
        f"session prefix {prefix!r} is ambiguous: it matches {len(ids)} sessions "
        f"({shown}{more}); give more characters"
    )
