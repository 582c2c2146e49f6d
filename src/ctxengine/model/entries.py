"""Entries: the immutable records of a session log (history)."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Literal, TypeAlias

from ctxengine.model._fast_init import fast_eq, fast_init
from ctxengine.model.ledgers import Ledgers
from ctxengine.model.messages import Message
from ctxengine.model.parts import Meta, _no_meta

EntryKind: TypeAlias = Literal["message", "compaction", "prune", "pin", "unpin", "supersede"]


@dataclass(frozen=True, slots=True)
class CompactionRecord:
    """A compaction: the old prefix is replaced by continuation state in every later projection.

    Attributes:
        summary: the continuation-state text shown to the model (ledgers already rendered in).
        first_kept_id: id of the first message entry kept verbatim; ``None`` keeps no tail
            (only entries appended after this record are shown).
        tokens_before / tokens_after: context size in tokens before and after (estimated).
        policy: name of the policy that ran it.
        summarizer: ``"extractive"``, ``"llm"``, ``"hybrid"`` or ``"imported"``.
        reason: ``"threshold"``, ``"overflow"``, ``"manual"`` or ``"imported"``.
        ledgers: cumulative ledgers after this compaction.
        splits_turn: the cut fell inside a turn (at an assistant boundary).
        truncate_tokens: per-tool-result cap (tokens) applied to every later projection of
            this epoch, when the compaction had to tighten it; ``None`` keeps the policy cap.
        lead_ids: ids of entries logged after this record that are shown before its kept
            tail, right after the continuation state: what an agent sent between its summary
            and the segment it kept verbatim (Claude Code's attachments logged between a
            compact boundary and its summary, sent before ``preservedSegment``); ``None``
            when there are none.
        retained_ids: message entries before the cut shown verbatim before the continuation
            state, in log order (Codex's kept user messages, OpenHands ``keep_first``);
            ``None``: none.
        injection: how the state is shown (``"acknowledged"``, ``"handoff"``,
            ``"assistant_reply"``); ``None``: one user message (``"checkpoint"``).
        continuation: a synthetic user message asking to go on follows the messages this
            compaction saw; ``None``: no.
        reinjected: durable state shown after the continuation state, one user message each
            (rules, plan, recent files); ``None``: none.
        snapshot_id: the newest entry of the history this compaction was computed from, when
            entries were logged between it and this record (a compaction computed in the
            background and adopted later, :mod:`ctxengine.engine.precompute`): the entries
            after it are projected as entries logged after this record (their signed
            reasoning kept, a continuation message before them). ``None``: the entry just
            before this record.
        native: the provider that compacted (``"anthropic"``, ``"openai"``): the first entry
            of ``lead_ids`` holds its opaque compaction item (a ``native_compaction`` part,
            exactly as returned), which requests to that provider send first in place of the
            continuation state; every other request shows ``summary``, a continuation state
            written locally from the same range. ``None``: a local compaction.
    """

    summary: str
    first_kept_id: str | None
    tokens_before: int
    tokens_after: int
    policy: str
    summarizer: str
    reason: str = "threshold"
    ledgers: Ledgers = field(default_factory=Ledgers)
    splits_turn: bool = False
    truncate_tokens: int | None = None
    lead_ids: tuple[str, ...] | None = None
    retained_ids: tuple[str, ...] | None = None
    injection: str | None = None
    continuation: bool | None = None
    reinjected: tuple[str, ...] | None = None
    snapshot_id: str | None = None
    native: str | None = None
    kind: Literal["compaction"] = "compaction"


@dataclass(frozen=True, slots=True)
class PruneRecord:
    """A batched prune: these tool results are shown as one-line placeholders from now on.

    Attributes:
        call_ids: ids of the tool calls whose results are pruned.
        tokens_saved: estimated tokens freed.
        policy: name of the policy that ran it.
    """

    call_ids: tuple[str, ...]
    tokens_saved: int
    policy: str
    kind: Literal["prune"] = "prune"


@dataclass(frozen=True, slots=True)
class PinRecord:
    """An item pinned to the session: shown verbatim in every later projection, as a standing
    instruction (in place while its entry is in the context, then after the continuation
    state of every compaction).

    Attributes:
        text: the pinned text, verbatim (a pinned entry's text as it was when pinned).
        entry_id: the history entry pinned, or ``None`` for a text; while that entry is
            shown verbatim the pin adds nothing to the context.
        reason: why it was pinned, in words (shown with it); ``None``: none given.
    """

    text: str
    entry_id: str | None = None
    reason: str | None = None
    kind: Literal["pin"] = "pin"


@dataclass(frozen=True, slots=True)
class UnpinRecord:
    """Pins withdrawn: from this record on, every projection reads the log as if the pin
    records it names, and this record, were not there (history is append-only: they stay
    stored). Appended by :meth:`~ctxengine.engine.Session.unpin`.

    Attributes:
        pin_ids: entry ids of the withdrawn :class:`PinRecord` entries, in log order.
        reason: why, in words; ``None``: none given.
    """

    pin_ids: tuple[str, ...]
    reason: str | None = None
    kind: Literal["unpin"] = "unpin"


@dataclass(frozen=True, slots=True)
class SupersedeRecord:
    """Earlier entries withdrawn from the session's current log: every projection, replay
    and breakdown reads the log as if they and this record were not there. They stay stored
    (history is append-only); the entries appended after this record stand in their place.

    A store appends one when a transcript is imported again and the entries an earlier
    import stored from its end no longer match it: the agent was still writing them (a
    reply whose later blocks were not written yet, a usage count logged after its reply).
    :meth:`~ctxengine.engine.Session.revert` appends one to undo a compaction, and
    :meth:`~ctxengine.engine.Session.checkout` one to leave a branch (``checkout`` set).

    Attributes:
        entry_ids: ids of the withdrawn entries, in log order.
        reason: why, in words.
        checkout: the entry the conversation's head moved back to (a checkout: the withdrawn
            entries are the branch left, every entry after it in the log); the next entry
            appended continues the conversation from it (its ``parent_id``). ``None``: not a
            checkout.
    """

    entry_ids: tuple[str, ...]
    reason: str = ""
    checkout: str | None = None
    kind: Literal["supersede"] = "supersede"


Body: TypeAlias = (
    Message | CompactionRecord | PruneRecord | PinRecord | UnpinRecord | SupersedeRecord
)
#: The record types an entry's body may be besides a :class:`Message`.
RECORD_TYPES: tuple[type, ...] = (
    CompactionRecord,
    PruneRecord,
    PinRecord,
    UnpinRecord,
    SupersedeRecord,
)


@fast_eq
@fast_init
@dataclass(frozen=True, slots=True)
class Entry:
    """One immutable record of a session log.

    Attributes:
        id: unique within the session: the source's own id when it has one, else a content hash.
        session_id: the session this entry belongs to.
        seq: 0-based position in the session log (append order).
        parent_id: id of the previous entry on this branch, or ``None`` for the first.
        created_at: ISO-8601 time from the source, or ``None``.
        body: a :class:`Message` or a record.
        meta: source fields we do not model.
    """

    id: str
    session_id: str
    seq: int
    body: Body
    parent_id: str | None = None
    created_at: str | None = None
    meta: Meta = field(default_factory=_no_meta, compare=False)

    @property
    def kind(self) -> EntryKind:
        """``"message"`` for messages, else the record's kind."""
        if isinstance(self.body, Message):
            return "message"
        return self.body.kind

    @property
    def message(self) -> Message | None:
        """The message, or ``None`` for records."""
        return self.body if isinstance(self.body, Message) else None


#: Records that withdraw earlier entries from the current log.
WITHDRAWING = (SupersedeRecord, UnpinRecord)


def withdrawn_ids(entries: Sequence[Entry]) -> frozenset[str]:
    """Ids of the entries withdrawn by the :class:`SupersedeRecord` and
    :class:`UnpinRecord` entries of ``entries``."""
    found: set[str] = set()
    for e in entries:
        if isinstance(e.body, SupersedeRecord):
            found.update(e.body.entry_ids)
        elif isinstance(e.body, UnpinRecord):
            found.update(e.body.pin_ids)
    return frozenset(found)


def current_entries(entries: Sequence[Entry]) -> list[Entry]:
    """The current log of ``entries``: without the entries a :class:`SupersedeRecord`
    withdrew or an :class:`UnpinRecord` unpinned, and without those records themselves
    (the same list, copied, when there are none). Seqs keep their stored values, so they
    may have gaps."""
    if not any(isinstance(e.body, WITHDRAWING) for e in entries):
        return list(entries)
    gone = withdrawn_ids(entries)
    return [e for e in entries if e.id not in gone and not isinstance(e.body, WITHDRAWING)]
