"""A session log under construction for importers whose compaction markers name the messages
they keep by position (count kept, a later message) rather than by entry id.

Rows are appended as the file is read; a :class:`Cut` (a native compaction or truncation)
names the row where its verbatim tail starts by index. :meth:`Rows.build` turns the rows into
parent-linked entries and each cut into a :class:`~ctxengine.model.CompactionRecord` whose
``first_kept_id`` is the entry of that row.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any

from ctxengine.importers._build import LogBuilder
from ctxengine.model import CompactionRecord, Entry, Message


@dataclass(frozen=True, slots=True)
class Cut:
    """A compaction or truncation the agent performed.

    Attributes:
        summary: what stands for the removed prefix (the agent's summary, or a marker text
            naming what a truncation removed).
        policy: the agent (``CompactionRecord.policy``).
        kept: index of the row where the verbatim tail starts (``None``: only later rows).
        tokens_before / tokens_after: the agent's own counts, 0 when unknown.
    """

    summary: str
    policy: str
    kept: int | None = None
    tokens_before: int = 0
    tokens_after: int = 0


@dataclass(slots=True)
class Row:
    body: Message | Cut
    created_at: str | None = None
    source_id: str | None = None
    meta: dict[str, Any] = field(default_factory=dict)


class Rows:
    """Messages and cuts in log order."""

    def __init__(self) -> None:
        self.rows: list[Row] = []

    def __len__(self) -> int:
        return len(self.rows)

    def add(
        self,
        body: Message | Cut,
        created_at: str | None = None,
        source_id: str | None = None,
        meta: Mapping[str, Any] | None = None,
    ) -> int:
        """Append ``body``; returns its row index."""
        self.rows.append(Row(body, created_at, source_id, dict(meta or {})))
        return len(self.rows) - 1

    def truncate(self, size: int) -> int:
        """Drop the rows from index ``size`` on (a rewind); returns how many were dropped."""
        dropped = max(0, len(self.rows) - size)
        del self.rows[size:]
        return dropped

    def last_message(self, role: str | None = None) -> tuple[int, Message] | None:
        """The last message row (of ``role`` when given) as ``(index, message)``."""
        for i in range(len(self.rows) - 1, -1, -1):
            body = self.rows[i].body
            if isinstance(body, Message) and (role is None or body.role == role):
                return i, body
        return None

    def replace(self, index: int, body: Message) -> None:
        """Put ``body`` in place of the message at row ``index``."""
        self.rows[index].body = body

    def tail_start(self) -> int:
        """Index of the first row the agent still sends: the kept row of the latest cut, or
        the row after it; 0 without a cut."""
        for i in range(len(self.rows) - 1, -1, -1):
            body = self.rows[i].body
            if isinstance(body, Cut):
                return body.kept if body.kept is not None else i + 1
        return 0

    def keep_last(self, count: int) -> int | None:
        """Index of the row where a tail of the last ``count`` conversation messages (user,
        assistant, tool) of the current tail starts, moved forward past tool messages so it
        never starts inside a tool exchange; ``None`` when ``count`` is 0 or the tail has no
        such row left."""
        if count <= 0:
            return None
        rows = [
            i for i in range(self.tail_start(), len(self.rows)) if _conversation(self.rows[i].body)
        ]
        if count >= len(rows):
            return rows[0] if rows else None
        start = rows[-count]
        while start < len(self.rows):
            body = self.rows[start].body
            if isinstance(body, Message) and body.role != "tool":
                return start
            start += 1
        return None

    def build(self, session_id: str) -> tuple[Entry, ...]:
        """The entries, ``seq`` 0..n-1 and parent-linked (ids: the rows' source ids when
        unique, else content hashes)."""
        builder = LogBuilder(session_id)
        ids: list[str | None] = []
        for index, row in enumerate(self.rows):
            if isinstance(row.body, Cut):
                cut = row.body
                start = index if cut.kept is None else cut.kept
                kept = next((ids[j] for j in range(start, index) if ids[j] is not None), None)
                record = CompactionRecord(
                    summary=cut.summary,
                    first_kept_id=kept,
                    tokens_before=cut.tokens_before,
                    tokens_after=cut.tokens_after,
                    policy=cut.policy,
                    summarizer="imported",
                    reason="imported",
                )
                builder.add(
                    record, source_id=row.source_id, created_at=row.created_at, meta=row.meta
                )
                ids.append(None)
            else:
                entry = builder.add(
                    row.body, source_id=row.source_id, created_at=row.created_at, meta=row.meta
                )
                ids.append(entry.id)
        return tuple(builder.entries)


def _conversation(body: Message | Cut) -> bool:
    return isinstance(body, Message) and body.role in ("user", "assistant", "tool")
