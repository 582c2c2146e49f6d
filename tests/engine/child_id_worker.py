"""A worker for the cross-process child-id tests: it opens its own store and session on a
shared SQLite file, waits for the others at a barrier, then spawns a child with the default
id and reports ``(i, "ok", child id)`` or ``(i, "error", message)``.

Module level so that ``multiprocessing`` (spawn) can import it in a child process.
"""

from __future__ import annotations

from typing import Any

from ctxengine.engine import Session
from ctxengine.stores.sqlite import SQLiteStore

PARENT = "parent"


def spawn_child(db: str, i: int, barrier: Any, out: Any) -> None:
    """Spawn ``task i`` from :data:`PARENT` once every worker is ready."""
    p = Session(64_000, store=SQLiteStore(db), session_id=PARENT)
    barrier.wait()
    try:
        child = p.spawn(f"task {i}")
    except Exception as exc:  # reported, for the parent to assert on
        out.put((i, "error", f"{type(exc).__name__}: {exc}"))
    else:
        out.put((i, "ok", child.session_id))
