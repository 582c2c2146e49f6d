"""A session log under construction for importers whose compaction markers name the messages
they keep by position (count kept, a later message) rather than by entry id.

Rows are appended as the file is read; a :class:`Cut` (a native compaction or truncation)
names the row where its verbatim tail starts by index. :meth:`Rows.build` turns the rows into
parent-linked entries and each cut into a :class:`~ctxengine.model.CompactionRecord` whose
``first_kept_id`` is the entry of that row.

Entry ids: the source's own id when the row has one (and it is not used yet), else, for a row
given the source it came from as ``key`` (the bytes of its line, or a parsed record),
``"b2:"`` + a blake2b hash of the previous entry's id and the digest of that source (of its
canonical JSON for a parsed record), else the hash of the converted body
(:class:`~ctxengine.importers._build.LogBuilder`). Hashing the source is as stable across
re-imports of the file as hashing the body, and several times cheaper; only its 16-byte
digest is kept until the log is built.
"""

from __future__ import annotations

import hashlib
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

import orjson

from ctxengine.importers._build import LogBuilder
from ctxengine.model import CompactionRecord, Entry, Message

_blake2b = hashlib.blake2b


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
    meta: Mapping[str, Any] | None = None
    key: bytes | None = None


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
        *,
        key: Any = None,
    ) -> int:
        """Append ``body`` (``key``: the parsed source it came from, for its id); returns its
        row index."""
        if key is None or source_id is not None:
            digest = None
        elif type(key) is bytes:
            digest = source_digest(key)
        else:
            digest = key_digest(key)
        rows = self.rows
        rows.append(Row(body, created_at, source_id, meta, digest))
        return len(rows) - 1

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
        add, entries = builder.add, builder.entries
        ids: list[str | None] = []
        for index, row in enumerate(self.rows):
            body = row.body
            if isinstance(body, Cut):
                start = index if body.kept is None else body.kept
                kept = next((ids[j] for j in range(start, index) if ids[j] is not None), None)
                record = CompactionRecord(
                    summary=body.summary,
                    first_kept_id=kept,
                    tokens_before=body.tokens_before,
                    tokens_after=body.tokens_after,
                    policy=body.policy,
                    summarizer="imported",
                    reason="imported",
                )
                add(record, source_id=row.source_id, created_at=row.created_at, meta=row.meta)
                ids.append(None)
                continue
            if row.source_id is None and row.key is not None:
                entry = builder.add_keyed(body, row.key, created_at=row.created_at, meta=row.meta)
            else:
                entry = add(body, source_id=row.source_id, created_at=row.created_at, meta=row.meta)
            ids.append(entry.id)
        return tuple(entries)


def _conversation(body: Message | Cut) -> bool:
    return isinstance(body, Message) and body.role in ("user", "assistant", "tool")


def key_digest(key: Any) -> bytes | None:
    """blake2b digest (16 bytes) of ``key`` (bytes as they are, anything else as canonical
    JSON), as :class:`Rows` keeps it; ``None`` when it cannot be serialised (integers over
    64 bits)."""
    if isinstance(key, bytes):
        return hashlib.blake2b(key, digest_size=16).digest()
    try:
        data = orjson.dumps(key, option=orjson.OPT_SORT_KEYS)
    except orjson.JSONEncodeError:
        return None
    return hashlib.blake2b(data, digest_size=16).digest()


def source_digest(line: bytes) -> bytes:
    """The 16-byte blake2b digest of a source line, as :class:`Rows` keeps it."""
    return _blake2b(line, digest_size=16).digest()
