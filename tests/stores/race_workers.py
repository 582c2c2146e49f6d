"""Code run in child processes by the store race tests (importable by ``spawn`` children).

Each worker opens its own store on the shared location (a SQLite file or a PostgreSQL URL)
and reports what happened through a queue as plain tuples, so the parent asserts on exact
values.
"""

from __future__ import annotations

import os
import time
from typing import Any

from ctxengine.errors import StoreConflict
from ctxengine.model import CompactionRecord, Entry, Message, TextPart
from ctxengine.stores.location import open_store

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
    with open_store(db) as store:
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


def single_flight(db: str, name: str, local_last: int, barrier: Any, out: Any) -> None:
    """The single-flight protocol of ``Store.compaction_lock``: take the lock, catch up, use a
    compaction another worker stored, else "summarize" (sleep 0.2 s) and append a record
    with the expected parent. Puts ``(name, "compacted" | "reused", record id, start, end)``
    with the monotonic times the lock was held."""
    with open_store(db) as store:
        barrier.wait()
        with store.compaction_lock(SESSION, timeout_s=30):
            start = time.monotonic()
            new = store.entries(SESSION, after_seq=local_last)
            done = [e for e in new if isinstance(e.body, CompactionRecord)]
            if done:
                out.put((name, "reused", done[0].id, start, time.monotonic()))
                return
            time.sleep(0.2)
            seen = new[-1] if new else store.entries(SESSION, after_seq=local_last - 1)[0]
            record = CompactionRecord(f"summary by {name}", "e5", 1000, 100, "default", "x")
            entry = Entry(f"compaction-{name}", SESSION, seen.seq + 1, record, parent_id=seen.id)
            store.append(SESSION, [entry], expect_last_seq=seen.seq)
            out.put((name, "compacted", entry.id, start, time.monotonic()))


def hold_lock(db: str, session_id: str, out: Any) -> None:
    """Take the session's compaction lock, report ``("held", pid)``, then sleep until killed."""
    with open_store(db) as store, store.compaction_lock(session_id, timeout_s=5):
        out.put(("held", os.getpid()))
        time.sleep(120)
