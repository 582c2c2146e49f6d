"""Ladder step 3, summarize: plan which prefix of the current epoch becomes continuation state.

:func:`plan_compaction` is pure. It takes the conversation (the context's messages after the
head and the previous continuation state), the budget and the history facts as plain data,
and returns a :class:`~.plan.CompactionPlan`: the cut of each attempt (pi ``findCutPoint``:
walk back until the keep-recent budget is met, slide to a valid boundary, split an oversized
turn), each attempt keeping half the tail of the one before and, from the third on, halving
the truncate-at-source cap; the summary budget; the size expected after.

:func:`accept` is the acceptance check the executor runs on a measured result.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from ctxengine.boundaries.cut import find_cut
from ctxengine.errors import SummaryRejected
from ctxengine.model import Message
from ctxengine.policy import Budget, Policy
from ctxengine.policy.defaults import (
    ATTEMPT_SHRINK_DIVISOR,
    COMPACTION_ATTEMPTS,
    MIN_FIRST_KEEP_SHARE,
    MIN_TRUNCATE_TOKENS,
    SUMMARY_GROWTH_MAX_RATIO,
    SUMMARY_GROWTH_MAX_TOKENS,
    SUMMARY_ROOM_MARGIN_RATIO,
)
from ctxengine.projection.context import Context
from ctxengine.tokens.base import Estimator

from .plan import Attempt, CompactionPlan, Cut, Reason, Requirement
from .prune import PrunePlan


@dataclass(frozen=True, slots=True)
class Conversation:
    """The part of a context a compaction may summarize.

    Attributes:
        messages / sources: the messages after the head and the previous continuation
            state, with their entry ids (``None`` for synthetic messages).
        start: position of ``messages[0]`` in the context.
        fixed: tokens of the head messages and the tool schemas.
    """

    messages: tuple[Message, ...]
    sources: tuple[str | None, ...]
    start: int
    fixed: int


def without_stand_ins(
    messages: Sequence[Message], sources: Sequence[str | None], pending: frozenset[str]
) -> tuple[tuple[Message, ...], tuple[str | None, ...]]:
    """``messages`` without the synthetic results the sanitizer gave to ``pending`` calls
    (an earlier piece of the newest reply needs a result in front of the next piece): the
    cut must see those calls unanswered, so that it keeps them in the tail."""
    shown = [
        k
        for k, (m, src) in enumerate(zip(messages, sources, strict=True))
        if not (src is None and m.tool_results and {r.call_id for r in m.tool_results} <= pending)
    ]
    return tuple(messages[k] for k in shown), tuple(sources[k] for k in shown)


def conversation_of(
    ctx: Context,
    estimator: Estimator,
    tools: Sequence[Mapping[str, Any]],
    pending: frozenset[str],
) -> Conversation:
    """Split ``ctx`` into its fixed part and the conversation after the head (and after
    the continuation state, when ``ctx`` has one). The synthetic results of ``pending``
    calls are left out. ``tools``: the session's tool schemas (counted in ``fixed``)."""
    start = 0
    while start < len(ctx.messages) and ctx.messages[start].role in ("system", "developer"):
        start += 1
    fixed = sum(estimator.message(m) for m in ctx.messages[:start])
    if tools:
        fixed += estimator.tools(tools)
    if ctx.compaction_id is not None:
        start += 1  # the continuation-state message
    messages, sources = tuple(ctx.messages[start:]), tuple(ctx.sources[start:])
    if pending:
        messages, sources = without_stand_ins(messages, sources, pending)
    return Conversation(messages, sources, start, fixed)


def base_summary_budget(budget: Budget, goal_tokens: int, room: int) -> int:
    """The continuation state's budget before it grows into free room: ``budget.summary_max``,
    raised (within ``room``) so that the first user request (``goal_tokens``) fits verbatim
    beside the ledgers, up to ``goal_max``."""
    base = budget.summary_max
    goal = min(goal_tokens, budget.goal_max)
    if goal + base // 2 <= base:
        return base
    return max(base, min(room, goal + base))


def summary_cap(budget: Budget) -> int:
    """The most a continuation state's budget grows to, in tokens:
    :data:`~ctxengine.policy.defaults.SUMMARY_GROWTH_MAX_RATIO` of the window, at most
    :data:`~ctxengine.policy.defaults.SUMMARY_GROWTH_MAX_TOKENS`, never below
    ``budget.summary_max``."""
    grown = min(SUMMARY_GROWTH_MAX_TOKENS, int(budget.window * SUMMARY_GROWTH_MAX_RATIO))
    return max(budget.summary_max, grown)


def summary_budget(budget: Budget, goal_tokens: int, room: int) -> int:
    """Tokens for the continuation state: :func:`base_summary_budget`, grown into ``room``
    (the tokens left under the target beside the head, the kept tail, the continuation
    message and the margin: :func:`summary_room`) up to :func:`summary_cap`. The state may
    fill the room up to the target, never past it, so the plan's headroom stays free."""
    base = base_summary_budget(budget, goal_tokens, room)
    return max(base, min(room, summary_cap(budget)))


def summary_room(budget: Budget, target: int, fixed: int, kept: int, overhead: int) -> int:
    """Tokens left under ``target`` for the continuation state, beside the ``fixed`` part,
    the kept tail (``kept``), the continuation message's ``overhead`` and a margin of
    :data:`~ctxengine.policy.defaults.SUMMARY_ROOM_MARGIN_RATIO` of the window."""
    margin = int(budget.window * SUMMARY_ROOM_MARGIN_RATIO)
    return target - fixed - kept - overhead - margin


def first_keep(budget: Budget, fixed: int, overhead: int, goal_tokens: int) -> int:
    """The keep-recent budget of a plan's first attempt, in tokens: ``budget.keep_recent``,
    lowered so that the fixed part, the continuation message (its ``overhead`` and a summary
    at its base budget, :func:`base_summary_budget`) and the tail fit under
    ``budget.target``; never below a quarter of ``budget.keep_recent`` (a continuation state
    alone loses the thread of the newest turn).
    """
    summary = base_summary_budget(budget, goal_tokens, budget.target)
    margin = int(budget.window * SUMMARY_ROOM_MARGIN_RATIO)
    fits = budget.target - fixed - overhead - summary - margin
    return max(int(budget.keep_recent * MIN_FIRST_KEEP_SHARE), min(budget.keep_recent, fits))


def cut_of(
    conversation: Conversation,
    estimator: Estimator,
    keep_recent_tokens: int,
    *,
    allow_split_turn: bool,
) -> Cut | None:
    """The cut keeping about ``keep_recent_tokens`` of ``conversation`` verbatim, or
    ``None`` when no valid cut leaves a non-empty prefix to summarize (or the first kept
    message is synthetic)."""
    messages = conversation.messages
    found = find_cut(messages, keep_recent_tokens, estimator, allow_split_turn=allow_split_turn)
    if found is None or found.index <= 0 or found.index >= len(messages):
        return None
    first_kept = conversation.sources[found.index]
    if first_kept is None:
        return None
    if found.splits_turn:
        summarize, prefix = found.turn_start, found.index - found.turn_start
    else:
        summarize, prefix = found.index, 0
    return Cut(found.index, first_kept, summarize, prefix, found.splits_turn, found.kept_tokens)


def plan_compaction(
    conversation: Conversation,
    estimator: Estimator,
    *,
    requirement: Requirement,
    budget: Budget,
    policy: Policy,
    tokens_before: int,
    continuation_overhead: int,
    goal_tokens: int,
    cap: int | None = None,
    focus: str | None = None,
    prune: PrunePlan | None = None,
) -> CompactionPlan:
    """Plan a compaction of ``conversation`` to ``budget``.

    Args:
        conversation: what may be summarized (:func:`conversation_of`).
        estimator: token estimator.
        requirement: why it runs (:func:`~.trigger.requirement`).
        budget: the budget to compact to.
        policy: the session's policy (split turns).
        tokens_before: the context size now, in tokens.
        continuation_overhead: tokens of the continuation-state message around its summary.
        goal_tokens: tokens of the first real user request (kept verbatim up to
            ``budget.goal_max``).
        cap: the truncate-at-source cap the schedule starts from, in tokens (``None``: the
            budget's).
        focus: what the summary should focus on.
        prune: a prune planned before the compaction, if any.

    Returns:
        The :class:`~.plan.CompactionPlan`; its :attr:`~.plan.CompactionPlan.cut` is
        ``None`` when no valid cut leaves anything to summarize.
    """
    target = budget.target
    keep = first_keep(budget, conversation.fixed, continuation_overhead, goal_tokens)
    truncate = cap
    attempts: list[Attempt] = []
    for n in range(COMPACTION_ATTEMPTS):
        cut = cut_of(conversation, estimator, keep, allow_split_turn=policy.split_turn)
        summary = 0
        expected = tokens_before
        if cut is not None:
            room = summary_room(
                budget, target, conversation.fixed, cut.kept_tokens, continuation_overhead
            )
            # The state grows into the room under the target only when the context is over
            # the target: a context already under it (a manual compaction) must still shrink.
            grows = tokens_before > target
            summary = (summary_budget if grows else base_summary_budget)(budget, goal_tokens, room)
            expected = conversation.fixed + continuation_overhead + summary + cut.kept_tokens
        attempts.append(Attempt(keep, truncate, cut, summary, expected))
        keep //= ATTEMPT_SHRINK_DIVISOR
        if n >= 1:
            truncate = max(
                MIN_TRUNCATE_TOKENS, (truncate or budget.truncate_tokens) // ATTEMPT_SHRINK_DIVISOR
            )
    return CompactionPlan(
        requirement=requirement,
        focus=focus,
        prune=prune,
        attempts=tuple(attempts),
        budget=budget,
        target=target,
        tokens_before=tokens_before,
        fixed_tokens=conversation.fixed,
        conversation=len(conversation.messages),
        policy=policy.name,
    )


def accept(tokens_after: int, tokens_before: int, reason: Reason, window: int) -> None:
    """The acceptance check of a measured compaction (all sizes in tokens).

    Raises:
        SummaryRejected: ``"too_large"``: the context would not fit the ``window`` at all
            (whatever the reason: such a compaction helps nobody); ``"inflated"``: the
            context would not shrink (allowed for an overflow, where any fit is worth it).
    """
    if tokens_after > window:
        raise SummaryRejected(
            "too_large",
            f"the compacted context would be {tokens_after:,} tokens, over the "
            f"{window:,}-token window",
            tokens_before=tokens_before,
            tokens_after=tokens_after,
        )
    if tokens_after >= tokens_before and reason != "overflow":
        raise SummaryRejected("inflated", tokens_before=tokens_before, tokens_after=tokens_after)
