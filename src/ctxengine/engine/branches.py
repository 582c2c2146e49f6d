"""Branches: moving the head of a conversation back to an earlier entry (pi's session tree).

pi keeps a session as a tree: every entry names its parent, and ``/tree`` moves the current
position (the *leaf*) to any earlier entry; what is appended next continues from there, and
the branch left stays in the file. On leaving a branch pi can write a summary of it into the
new position (pi's branch summarization), so the work done there is not lost; its
``branch_summary`` entry is sent to the model as a user-role message.

ctxengine's log is append-only, so a checkout is a record: a
:class:`~ctxengine.model.SupersedeRecord` with ``checkout`` set, withdrawing every entry after
the target from every later projection (they stay stored, and searchable by recall), then an
optional summary message of the branch left, whose parent is the target. Entries appended
afterwards continue from it. The context is then what it was right after the target was
appended (plus the summary): a compaction, prune or pin recorded on the branch left is
withdrawn with it; a withdrawal recorded there (a revert, an unpin, an earlier checkout)
stays in force.

A checkout to the same point (or an earlier one) as an earlier checkout leaves that one's
branch summary behind too; its summary carries the earlier summaries it leaves forward,
verbatim, after its own text (:data:`BRANCH_SUMMARY_CARRIED`), so what was learnt on every
branch left stays in the context, as ledgers only grow across compactions.

Pure helpers: :meth:`~ctxengine.engine.Session.checkout` does the I/O.
"""

from __future__ import annotations

from collections.abc import Collection, Sequence
from dataclasses import dataclass

from ctxengine.boundaries.pending import pending_calls_newest_first
from ctxengine.model import Entry, Message, TextPart

from .history import History

#: ``Message.meta["synthetic"]`` of a branch summary (as the pi importer marks pi's
#: ``branch_summary`` entries).
SYNTHETIC_BRANCH_SUMMARY = "branch_summary"
#: The line above a branch summary's text.
BRANCH_SUMMARY_HEADER = (
    "The conversation went back to an earlier point. Summary of the branch it left "
    "({count} entries, {first} to {last}):"
)
#: The line above the earlier branch summaries a branch summary carries forward.
BRANCH_SUMMARY_CARRIED = (
    "Summaries of the branches left before it, written when they were left (oldest first):"
)


@dataclass(frozen=True, slots=True)
class Checkout:
    """What :meth:`~ctxengine.engine.Session.checkout` appended.

    Attributes:
        record: the checkout record's entry (a :class:`~ctxengine.model.SupersedeRecord`).
        summary: the branch summary's entry, or ``None``.
        abandoned: ids of the entries withdrawn (the branch left), in log order.
        carried: ids of the earlier branch summaries among them, whose text the summary
            carries forward, in log order.
    """

    record: Entry
    summary: Entry | None
    abandoned: tuple[str, ...]
    carried: tuple[str, ...] = ()


def abandoned_ids(history: History, entry_id: str) -> tuple[str, ...]:
    """Ids of the shown entries after ``entry_id`` in the log: the branch a checkout of
    ``entry_id`` leaves.

    Raises:
        ValueError: no such entry, an entry withdrawn already, or the newest shown entry (no
            branch to leave); an assistant message whose calls are answered after it (the
            checkout would leave them unanswered: check out its last result instead).
    """
    pos = history.index.get(entry_id)
    if pos is None:
        raise ValueError(f"checkout: no entry {entry_id!r} in this session")
    hidden = history.hidden
    if pos in hidden:
        raise ValueError(
            f"checkout: entry {entry_id!r} is withdrawn (on a branch left before, or "
            "superseded); check out a shown entry"
        )
    left = tuple(e.id for i, e in enumerate(history.entries[pos + 1 :], pos + 1) if i not in hidden)
    if not left:
        raise ValueError(f"checkout: entry {entry_id!r} is the newest entry already")
    pending = pending_at(history.entries[: pos + 1], hidden)
    if pending:
        calls = ", ".join(sorted(pending))
        raise ValueError(
            f"checkout: entry {entry_id!r} leaves tool calls unanswered ({calls}); check out "
            "the entry of their last result, or an entry before the call"
        )
    return left


def pending_at(entries: Sequence[Entry], hidden: Collection[int]) -> frozenset[str]:
    """The calls pending when ``entries`` (a log's first entries; ``hidden``: positions
    withdrawn from it) end: the newest reply's calls that no later shown message answers
    (:func:`~ctxengine.boundaries.pending.pending_calls`)."""
    return pending_calls_newest_first(
        m
        for i in range(len(entries) - 1, -1, -1)
        if i not in hidden and (m := entries[i].message) is not None
    )


def abandoned_messages(history: History, ids: tuple[str, ...]) -> tuple[Message, ...]:
    """The messages of the entries ``ids``, in log order, but the branch summaries among
    them (:func:`earlier_summaries`: carried forward verbatim, not summarized again)."""
    return tuple(
        m
        for i in ids
        if (m := history.entries[history.index[i]].message) is not None
        and m.meta.get("synthetic") != SYNTHETIC_BRANCH_SUMMARY
    )


def earlier_summaries(history: History, ids: tuple[str, ...]) -> tuple[Entry, ...]:
    """The branch summaries (:data:`SYNTHETIC_BRANCH_SUMMARY`) among the entries ``ids``, in
    log order: those of earlier checkouts to the point checked out now, or to a later one."""
    return tuple(
        e
        for i in ids
        if (m := (e := history.entries[history.index[i]]).message) is not None
        and m.meta.get("synthetic") == SYNTHETIC_BRANCH_SUMMARY
    )


def summary_message(
    text: str | None, abandoned: tuple[str, ...], carried: Sequence[Entry] = ()
) -> Message:
    """The branch summary message: :data:`BRANCH_SUMMARY_HEADER`, then ``text`` (when
    given), then :data:`BRANCH_SUMMARY_CARRIED` and the text of each earlier summary in
    ``carried`` (each whole, header included, so one carried before is carried again);
    user role, marked synthetic (:data:`SYNTHETIC_BRANCH_SUMMARY`: not a person's
    request)."""
    header = BRANCH_SUMMARY_HEADER.format(
        count=len(abandoned), first=abandoned[0], last=abandoned[-1]
    )
    blocks = [header]
    if text is not None and text.strip():
        blocks.append(text.strip())
    earlier = [m.text for e in carried if (m := e.message) is not None]
    if earlier:
        blocks.append(BRANCH_SUMMARY_CARRIED)
        blocks.extend(earlier)
    return Message(
        "user",
        (TextPart("\n\n".join(blocks)),),
        meta={"synthetic": SYNTHETIC_BRANCH_SUMMARY},
    )
