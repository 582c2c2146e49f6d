"""Hand-off across sessions: instead of compacting a long session in place, continue it in a
fresh session that starts from what the old one's next context needs (Amp's hand-off, which
replaced compaction by a new thread seeded with the work so far; the old thread stays
readable).

:meth:`~ctxengine.engine.Session.handoff` compacts a copy of the old session in memory (the
old session is left as it is), then stores a new session, linked to the old one (relation
``"handoff"``), holding only the entries that copy's context is projected from: the head, the
entries the compaction retains, its continuation state (summary, ledgers, re-injected durable
state), the kept tail, and the pin and prune records still in force. The new session's
context is the old one's compacted context; its ledgers carry on from the state, so its own
compactions keep them growing; and the ``recall`` tool it is given says, in the state, that
the whole history can still be searched.

Pure helpers: the session method does the I/O.
"""

from __future__ import annotations

from collections.abc import Collection, Iterable
from dataclasses import dataclass, replace
from typing import TYPE_CHECKING, TypeAlias

from ctxengine.model import Entry, Message, PinRecord, PruneRecord, TextPart, ToolResultPart
from ctxengine.projection.handoff import SESSION_ENDED_RESULT

from .children import COPIED_FROM
from .history import History

if TYPE_CHECKING:
    from .session import Session


#: What recall searches of the sessions before a hand-off: their entries (the oldest
#: session's first) and the positions among them it skips.
RecallBase: TypeAlias = tuple[tuple[Entry, ...], set[int]]


@dataclass(frozen=True, slots=True)
class HandedOff:
    """What :meth:`~ctxengine.engine.Session.handoff` made.

    Attributes:
        session: the new session (stored beside the old one when it has a store).
        compaction_id: the entry id of the continuation state the new session starts from,
            or ``None`` when it carries the old context verbatim.
        summarized: a compaction was made for the hand-off (``False``: the old session's
            newest entry was a compaction already, or nothing could be summarized).
        note: why nothing was summarized, else ``""``.
        closed: ids of the old session's calls left unanswered, closed in the new session by
            a synthetic error result.
        tokens_before: the old session's context, in tokens.
    """

    session: Session
    compaction_id: str | None
    summarized: bool
    note: str
    closed: tuple[str, ...]
    tokens_before: int


def carried(history: History) -> list[Entry]:
    """The entries a new session needs to project ``history``'s current context: those of
    :meth:`History.epoch_entries <ctxengine.engine.history.History.epoch_entries>` and the
    shown pin and prune records, in log order."""
    where = history.index
    picked: set[int] = {where[e.id] for e in history.epoch_entries()}
    picked.update(
        i
        for i, e in enumerate(history.entries)
        if i not in history.hidden and isinstance(e.body, PinRecord | PruneRecord)
    )
    return [history.entries[i] for i in sorted(picked)]


def renamed(entries: Iterable[Entry], session_id: str) -> list[Entry]:
    """A hand-off's entries as those of the session ``session_id`` (ids, parents, bodies,
    times and meta unchanged): what stores a new session made in memory under another id
    when the one it was made with was taken meanwhile. A hand-off's entries name their
    session only in ``session_id`` (no body names it, unlike a fork's fork-point results)."""
    return [replace(e, session_id=session_id) for e in entries]


def closing(calls: Collection[str]) -> Message:
    """A tool message answering ``calls`` (sorted) with the session-ended error result the
    CLI's hand-off bodies give them (:data:`~ctxengine.projection.handoff.
    SESSION_ENDED_RESULT`)."""
    results = tuple(
        ToolResultPart(cid, (TextPart(SESSION_ENDED_RESULT),), is_error=True)
        for cid in sorted(calls)
    )
    return Message("tool", results, meta={"synthetic": "session_ended"})


def recall_segment(history: History, source: str | None) -> RecallBase:
    """One session of a hand-off chain as recall searches it: every entry of ``history``
    (the session up to its hand-off point), skipping the withdrawn ones (not those of the
    branches a checkout left: their work is history) and the copies of the entries of
    ``source``, the session it was itself handed off from (they are searched there)."""
    skip = history.hidden - history.left
    if source is not None:
        skip |= {i for i, e in enumerate(history.entries) if e.meta.get(COPIED_FROM) == source}
    return tuple(history.entries), skip


def joined(segments: Iterable[RecallBase]) -> RecallBase:
    """``segments`` (oldest session first) as one log: their entries one after the other,
    the skipped positions shifted to match."""
    entries: list[Entry] = []
    skip: set[int] = set()
    for seg_entries, seg_skip in segments:
        skip.update(len(entries) + i for i in seg_skip)
        entries.extend(seg_entries)
    return tuple(entries), skip
