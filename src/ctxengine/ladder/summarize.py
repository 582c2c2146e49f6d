"""Ladder step 3, summarize: plan which prefix of the current epoch becomes continuation state.

A pure planner: it picks the cut point on the epoch's conversation (pi ``findCutPoint``: walk
back until the keep-recent budget is met, slide to a valid boundary, split an oversized turn)
and returns the messages to summarize. The engine calls the summarizer and records the result.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

from ctxengine.boundaries.cut import find_cut
from ctxengine.model import Message
from ctxengine.tokens.base import Estimator


@dataclass(frozen=True, slots=True)
class CompactionPlan:
    """Where to cut and what to summarize.

    Attributes:
        cut: index into the conversation where the verbatim tail starts.
        first_kept_id: entry id of ``conversation[cut]``.
        to_summarize: conversation messages before the cut (before the turn start when the
            cut splits a turn).
        turn_prefix: when the cut splits a turn, the part of that turn before the cut.
        splits_turn: the cut falls inside a turn, at an assistant boundary.
        kept_tokens: estimated tokens of the verbatim tail.
    """

    cut: int
    first_kept_id: str
    to_summarize: tuple[Message, ...]
    turn_prefix: tuple[Message, ...]
    splits_turn: bool
    kept_tokens: int


def plan_compaction(
    conversation: Sequence[Message],
    sources: Sequence[str | None],
    estimator: Estimator,
    *,
    keep_recent_tokens: int,
    allow_split_turn: bool = True,
    per_message: Sequence[int] | None = None,
) -> CompactionPlan | None:
    """Plan a compaction of ``conversation`` (the epoch's messages after the head and the
    previous continuation state), keeping about ``keep_recent_tokens`` verbatim.

    Args:
        conversation: messages in context order.
        sources: entry id per message (``None`` for synthetic messages).
        estimator: token estimator.
        keep_recent_tokens: keep-recent budget in tokens.
        allow_split_turn: a cut may fall inside a turn larger than the budget.
        per_message: cached token estimates per message, if the caller has them.

    Returns:
        The plan, or ``None`` when no valid cut leaves a non-empty prefix to summarize.
    """
    cut = find_cut(
        conversation,
        keep_recent_tokens,
        estimator,
        per_message=per_message,
        allow_split_turn=allow_split_turn,
    )
    if cut is None or cut.index <= 0 or cut.index >= len(conversation):
        return None
    first_kept = sources[cut.index]
    if first_kept is None:
        return None
    if cut.splits_turn:
        head, prefix = conversation[: cut.turn_start], conversation[cut.turn_start : cut.index]
    else:
        head, prefix = conversation[: cut.index], ()
    return CompactionPlan(
        cut=cut.index,
        first_kept_id=first_kept,
        to_summarize=tuple(head),
        turn_prefix=tuple(prefix),
        splits_turn=cut.splits_turn,
        kept_tokens=cut.kept_tokens,
    )
