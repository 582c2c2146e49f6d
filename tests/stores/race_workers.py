"""Code run in child processes by the store race tests (importable by ``spawn`` children).

Each worker opens its own :class:`SQLiteStore` on the shared file and reports what happened
through a queue as plain tuples, so the parent asserts on exact values.
"""

from __future__ import annotations

from typing import Any

from ctxengine.errors import StoreConflict
from ctxengine.model import Entry, Message, TextPart
from ctxengine.stores import SQLiteStore

SESSION = "s"


def message(session_id: str, seq: int, entry_id: str, parent_id: str | None) -> Entry:
    """A user message entry with text ``entry_id`` at ``seq``."""
    body = Message("user", (TextPart(entry_id),))
    return Entry(entry_id, session_id, seq, body, parent_id=parent_id, created_at="2026-01-01")


def cas_rounds(db: str, name: str, rounds: int, barrier: Any, out: Any) -> None:
    """Race the other workers once per round: all wait at ``barrier``, then append one entry on
    top of seq ``round - 1``. Even rounds state ``expect_last_seq``; odd rounds use the plain
    append with the entry's seq alone. Puts ``(round, name, "won" | "lost", expected, actual)``.
    """
    with SQLiteStore(db) as store:
        for r in range(rounds):
            barrier.wait()
            parent = store.entries(SESSION, after_seq=r - 2)[0].id if r else None
            entry = message(SESSION, r, f"{name}-{r}", parent)
            try:
                if r % 2 == 0:
                    store.append(SESSION, [entry], expect_last_seq=r - 1)
                else:
                    store.append(SESSION, [entry])
            except StoreConflict as conflict:
                out.put((r, name, "lost", conflict.expected, conflict.actual))
            else:
                out.put((r, name, "won", r - 1, r))
