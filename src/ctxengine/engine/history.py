"""The session log in memory, with the indexes the engine keeps up to date as entries arrive
(so that a call's work follows the current epoch, never the whole history).

An *epoch* is the stretch of history a context is projected from: the entries from the
latest compaction's first kept entry onward (the whole log before any compaction).
"""

from __future__ import annotations

from bisect import bisect_left
from collections.abc import Mapping, Sequence
from datetime import UTC, datetime
from typing import Any

from ctxengine.boundaries.pending import pending_calls_newest_first
from ctxengine.model import (
    CompactionRecord,
    Entry,
    Message,
    PinRecord,
    PruneRecord,
    SupersedeRecord,
    UnpinRecord,
)
from ctxengine.model.codec import body_hash
from ctxengine.model.entries import Body
from ctxengine.model.roles import is_goal_candidate, is_real_user_message, user_text
from ctxengine.tokens.base import Estimator


def _now() -> str:
    return datetime.now(UTC).isoformat(timespec="milliseconds")


class History:
    """An append-only list of entries plus incremental indexes over it.

    Args:
        estimator: sizes the goal (the first real user request), in tokens.

    Attributes:
        entries: the log, in append order.
        index: entry id → position in ``entries``.
        prunes: positions of the prune records.
        pruned_ids: every call id pruned so far.
        compaction: position of the latest compaction record, or ``None``.
        compactions: number of compaction records.
        epoch_start: position of the current epoch's first entry.
        head_end: end of the head (the system/developer messages the log starts with).
        goal / goal_id / goal_tokens: the first real user request (text, entry id, tokens).
        pin_positions: positions of the pin records still pinned.
        unpins: positions of the unpin records.
        withdrawals: positions of the supersede records (a re-import, a revert, a
            checkout): each changes the context before its tail.
        left: positions of the message entries on the branches checkouts left (withdrawn:
            they are in :attr:`hidden` too, but still history for recall).
        leaf_id: the entry the next one continues from (its ``parent_id``): the newest
            entry, or the entry a checkout moved the head back to.
        hidden: positions left out of every projection: the entries a
            :class:`~ctxengine.model.SupersedeRecord` withdrew, the pin records an
            :class:`~ctxengine.model.UnpinRecord` withdrew, and those records themselves
            (the indexes above skip them).
    """

    def __init__(self, estimator: Estimator) -> None:
        self._estimator = estimator
        self.entries: list[Entry] = []
        self.index: dict[str, int] = {}
        self.prunes: list[int] = []
        self._pruned: set[str] = set()
        self.pruned_ids: frozenset[str] = frozenset()
        self.compaction: int | None = None
        self.compactions = 0
        self.epoch_start = 0
        self.head_end = 0
        self.goal: str | None = None
        self.goal_id: str | None = None
        self.goal_tokens = 0
        self._requests: list[tuple[int, str]] = []  # (index, text) of real user requests
        self.pin_positions: list[int] = []
        self.unpins: list[int] = []
        self.withdrawals: list[int] = []
        self.left: set[int] = set()
        self.hidden: set[int] = set()
        self.leaf_id: str | None = None

    def __len__(self) -> int:
        return len(self.entries)

    def __contains__(self, entry_id: object) -> bool:
        return entry_id in self.index

    @property
    def last_id(self) -> str | None:
        """Id of the newest entry (the parent of the next one), or ``None`` when empty."""
        return self.entries[-1].id if self.entries else None

    def new_entry(
        self,
        body: Body,
        session_id: str,
        *,
        entry_id: str | None = None,
        created_at: str | None = None,
        meta: Mapping[str, Any] | None = None,
    ) -> Entry:
        """The entry that appending ``body`` would add (not adopted yet).

        Args:
            entry_id: id to use; default is the content hash chained to the parent. An id
                already in the log gets a ``#2``, ``#3``, … suffix.
            created_at: ISO-8601 time; default now (UTC).
            meta: extra fields kept with the entry.
        """
        parent = self.leaf_id
        eid = entry_id or body_hash(body, parent)
        if eid in self.index:
            n = 2
            while f"{eid}#{n}" in self.index:
                n += 1
            eid = f"{eid}#{n}"
        return Entry(
            id=eid,
            session_id=session_id,
            seq=len(self.entries),
            body=body,
            parent_id=parent,
            created_at=created_at or _now(),
            meta=dict(meta) if meta else {},
        )

    def tentative(self, record: CompactionRecord, session_id: str) -> Entry:
        """``record`` as the next entry would hold it (hash id, no time), for measuring."""
        parent = self.leaf_id
        return Entry(
            id=body_hash(record, parent),
            session_id=session_id,
            seq=len(self.entries),
            body=record,
            parent_id=parent,
        )

    def adopt(self, entry: Entry) -> bool:
        """Add ``entry`` at the end and update the indexes.

        Returns:
            True when ``entry`` is a compaction record (a new epoch starts), a supersede
            or an unpin record (the indexes were rebuilt without the entries it withdrew).
        """
        i = len(self.entries)
        self.entries.append(entry)
        self.index[entry.id] = i
        body = entry.body
        checkout = body.checkout if isinstance(body, SupersedeRecord) else None
        self.leaf_id = checkout if checkout is not None else entry.id
        if isinstance(body, SupersedeRecord | UnpinRecord):
            ids = body.entry_ids if isinstance(body, SupersedeRecord) else body.pin_ids
            if isinstance(body, UnpinRecord):
                self.unpins.append(i)
            else:
                self.withdrawals.append(i)
            if checkout is not None:
                self.left.update(
                    p
                    for w in ids
                    if (p := self.index.get(w)) is not None and self.entries[p].kind == "message"
                )
            self.hidden.add(i)
            self.hidden.update(self.index[w] for w in ids if w in self.index)
            self._reindex()
            return True
        return self._index_entry(i, entry)

    def _reindex(self) -> None:
        """Rebuild every index but :attr:`index` from the entries not :attr:`hidden`."""
        self.prunes, self._pruned, self.pruned_ids = [], set(), frozenset()
        self.compaction, self.compactions, self.epoch_start, self.head_end = None, 0, 0, 0
        self.goal, self.goal_id, self.goal_tokens = None, None, 0
        self._requests, self.pin_positions = [], []
        for i, entry in enumerate(self.entries):
            if i in self.hidden:
                if self.head_end == i:
                    self.head_end = i + 1
                continue
            self._index_entry(i, entry)

    def _index_entry(self, i: int, entry: Entry) -> bool:
        """Index ``entry`` at position ``i``; True when it is a compaction record."""
        body = entry.body
        if isinstance(body, Message):
            if self.head_end == i and body.role in ("system", "developer"):
                self.head_end = i + 1
            if is_real_user_message(body):
                text = user_text(body)
                self._requests.append((i, text))
                if self.goal is None and is_goal_candidate(body):
                    self.goal, self.goal_id = text, entry.id
                    self.goal_tokens = self._estimator.text(text)
        elif isinstance(body, PruneRecord):
            self.prunes.append(i)
            self._pruned.update(body.call_ids)
            self.pruned_ids = frozenset(self._pruned)
        elif isinstance(body, PinRecord):
            self.pin_positions.append(i)
        elif isinstance(body, CompactionRecord):
            self.compaction = i
            self.compactions += 1
            first = body.first_kept_id
            self.epoch_start = self.index.get(first, i) if first is not None else i
            return True
        return False

    def _retained(self, record: CompactionRecord, before: int) -> list[Entry]:
        """The entries ``record`` retains before the cut (its ``retained_ids``) that lie
        after the head and before position ``before``, in log order."""
        positions = sorted(self.index[i] for i in record.retained_ids or () if i in self.index)
        return [
            self.entries[i]
            for i in positions
            if self.head_end <= i < before and i not in self.hidden
        ]

    def epoch_entries(self, extra: Sequence[Entry] = ()) -> list[Entry]:
        """Head + the entries the latest compaction retains + the latest compaction record +
        the epoch (+ ``extra`` records), in seq order. Prune records are not included: the
        pruned call ids are :attr:`pruned_ids`."""
        start = max(self.epoch_start, self.head_end)
        picked = self._shown(0, self.head_end)
        latest = self.previous_compaction()
        if latest is not None and latest.retained_ids:
            picked += self._retained(latest, start)
        if self.compaction is not None and self.compaction < start:
            picked.append(self.entries[self.compaction])
        picked += self._shown(start, len(self.entries))
        picked += list(extra)
        return picked

    def _shown(self, start: int, end: int) -> list[Entry]:
        """``entries[start:end]`` without the :attr:`hidden` positions."""
        if not self.hidden:
            return self.entries[start:end]
        return [e for i, e in enumerate(self.entries[start:end], start) if i not in self.hidden]

    def entries_after(self, tentative: Entry) -> list[Entry]:
        """What the log would project from once ``tentative`` (a compaction record not yet
        appended) is the latest compaction: head, the entries it retains, its first kept
        entry onward, itself."""
        body = tentative.body
        assert isinstance(body, CompactionRecord)
        first = body.first_kept_id
        start = self.index[first] if first is not None else len(self.entries)
        picked = self._shown(0, self.head_end)
        if body.retained_ids:
            picked += self._retained(body, start)
        picked += self._shown(max(start, self.head_end), len(self.entries))
        picked.append(tentative)
        return picked

    def previous_compaction(self) -> CompactionRecord | None:
        """The latest compaction record, or ``None``."""
        body = self.entries[self.compaction].body if self.compaction is not None else None
        return body if isinstance(body, CompactionRecord) else None

    def anchor_floor(self) -> int:
        """Position of the latest compaction, prune, unpin or supersede record (-1 when
        none): a usage older than it does not describe the current context."""
        return max(
            [
                self.compaction or -1,
                *(self.prunes[-1:] or [-1]),
                *self.unpins[-1:],
                *self.withdrawals[-1:],
            ]
        )

    def request_entries(self) -> tuple[tuple[str, str], ...]:
        """Each real user request of the log as ``(text, entry id)``, in log order."""
        return tuple((text, self.entries[i].id) for i, text in self._requests)

    def prior_user_messages(self) -> tuple[str, ...]:
        """Real user requests before the current epoch (oldest first, verbatim)."""
        end = bisect_left(self._requests, (self.epoch_start, ""))
        return tuple(text for _i, text in self._requests[:end])

    def pins(self) -> tuple[PinRecord, ...]:
        """The pin records, in append order."""
        out: list[PinRecord] = []
        for i in self.pin_positions:
            body = self.entries[i].body
            assert isinstance(body, PinRecord)
            out.append(body)
        return tuple(out)

    def real_user_positions(self) -> list[int]:
        """Positions of the real user requests, in log order."""
        return [i for i, _text in self._requests]

    def originals(
        self, messages: Sequence[Message], sources: Sequence[str | None]
    ) -> tuple[Message, ...]:
        """The full history messages behind projected ones (untruncated, unpruned)."""
        out: list[Message] = []
        for m, src in zip(messages, sources, strict=True):
            idx = self.index.get(src) if src is not None else None
            body = self.entries[idx].body if idx is not None else None
            out.append(body if isinstance(body, Message) else m)
        return tuple(out)

    def pending_call_ids(self) -> frozenset[str]:
        """Calls of the newest reply that no later message answers while only tool results
        follow it: running, or awaiting a human confirmation
        (:func:`~ctxengine.boundaries.pending.pending_calls`). O(size of the newest reply)."""
        hidden = self.hidden
        return pending_calls_newest_first(
            m
            for i in range(len(self.entries) - 1, -1, -1)
            if i not in hidden and (m := self.entries[i].message) is not None
        )
