"""Code run in child processes by the store race tests (importable by ``spawn`` children).

Each worker opens its own :class:`SQLiteStore` on the shared file and reports what happened
through a queue as plain tuples, so the parent asserts on exact values.
"""

from __future__ import annotations

from ctxengine.model import Entry, Message, TextPart

SESSION = "s"


def message(session_id: str, seq: int, entry_id: str, parent_id: str | None) -> Entry:
    """A user message entry with text ``entry_id`` at ``seq``."""
    body = Message("user", (TextPart(entry_id),))
    return Entry(entry_id, session_id, seq, body, parent_id=parent_id, created_at="2026-01-01")
