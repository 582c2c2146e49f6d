"""The compaction search: cut the conversation, summarize what lies before the cut, and
measure the context the compaction would leave; up to four attempts, each keeping less of
the recent tail (and, from the third on, truncating tool output harder), until the context
fits under the trigger. Nothing here appends to history: the session does that with the
result.

The summarizer and the measuring are given as callables, so the search itself only reads
its inputs.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, replace
from typing import Any

from ctxengine.errors import NothingToCompact, SummaryRejected
from ctxengine.ladder.summarize import CompactionPlan, plan_compaction
from ctxengine.model import CompactionRecord, Entry, Message
from ctxengine.policy import Budget, Policy
from ctxengine.projection.context import Context
from ctxengine.summarizers.base import LiveRequest, Summary, SummaryRequest
from ctxengine.tokens.base import Estimator

from .events import Reason
from .history import History

#: Attempts of one compaction (each halves the kept tail).
ATTEMPTS = 4
#: Lowest truncate-at-source cap the later attempts go down to, in tokens.
MIN_TRUNCATE_TOKENS = 64

#: ``(request, room)`` → summary; ``room`` is the tokens left under the trigger beside the
#: head and the kept tail.
SummarizeFn = Callable[[SummaryRequest, int], Summary]
#: ``(record, truncate cap or None)`` → the tentative entry and the context it would give.
MeasureFn = Callable[[CompactionRecord, int | None], tuple[Entry, Context]]


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


@dataclass(frozen=True, slots=True)
class CompactionJob:
    """What one compaction search reads besides the history.

    Attributes:
        conversation: what may be summarized (:func:`conversation_of`).
        tokens_before: estimated context size in tokens before the compaction.
        reason: why it runs; ``"overflow"`` accepts a result no smaller than before.
        focus: what the user asked the summary to focus on, if anything.
        budget / policy: the session's resolved budget and its policy.
        live: the latest request sent for this epoch and how many of the context's
            messages it holds, or ``None``.
        continuation_overhead: tokens of the continuation-state message around its summary.
        reuse_summaries: keep a summary per cut so that a retry at the same cut does not pay
            for it again (a model summarizer).
        cap: the truncate-at-source cap in tokens the search starts from (``None``: the
            projection's own, ``budget.truncate_tokens`` of the session).
    """

    conversation: Conversation
    tokens_before: int
    reason: Reason
    focus: str | None
    budget: Budget
    policy: Policy
    live: tuple[int, LiveRequest] | None
    continuation_overhead: int
    reuse_summaries: bool
    cap: int | None = None


@dataclass(frozen=True, slots=True)
class Candidate:
    """The best compaction found: the tentative entry (not appended), the context it gives,
    that context's size in tokens, and the summarizer's notes on how it was written."""

    entry: Entry
    context: Context
    tokens: int
    notes: tuple[str, ...] = ()


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


def summary_budget(budget: Budget, goal_tokens: int, room: int) -> int:
    """Tokens for the continuation state: ``budget.summary_max``, raised (within ``room``,
    the tokens left under the trigger beside the head and the kept tail) so that the first
    user request (``goal_tokens``) fits verbatim beside the ledgers, up to ``goal_max``."""
    base = budget.summary_max
    goal = min(goal_tokens, budget.goal_max)
    if goal + base // 2 <= base:
        return base
    return max(base, min(room, goal + base))


def room_for_summary(job: CompactionJob, kept_tokens: int) -> int:
    """Tokens left under the trigger for the continuation state, beside the fixed part, the
    kept tail (``kept_tokens``), the continuation message's own overhead and a margin of 1 %
    of the window."""
    budget = job.budget
    return (
        budget.trigger
        - job.conversation.fixed
        - kept_tokens
        - job.continuation_overhead
        - budget.window // 100
    )


def find_compaction(
    job: CompactionJob,
    history: History,
    estimator: Estimator,
    *,
    summarize: SummarizeFn,
    measure: MeasureFn,
) -> Candidate:
    """Search for the compaction that leaves the smallest context; stop at the first one
    under the trigger that shrinks the context (any size under the trigger for an
    overflow).

    Args:
        job: the inputs of this search.
        history: the log (previous compaction, goal, prior requests, pins, originals).
        estimator: token estimator.
        summarize: writes the continuation state (may raise ``SummaryRejected``).
        measure: projects a tentative compaction record.

    Returns:
        The best :class:`Candidate` (possibly still over the trigger).

    Raises:
        SummaryRejected: the summarizer refused for a reason other than ``over_budget``, or
            refused ``over_budget`` at every cut found.
        NothingToCompact: no valid cut point leaves anything to summarize.
    """
    conv, budget = job.conversation, job.budget
    keep = budget.keep_recent
    cap = job.cap
    best: Candidate | None = None
    rejected: SummaryRejected | None = None
    written: dict[tuple[str, bool], Summary] = {}
    for attempt in range(ATTEMPTS):
        plan = plan_compaction(
            conv.messages,
            conv.sources,
            estimator,
            keep_recent_tokens=keep,
            allow_split_turn=job.policy.split_turn,
        )
        if plan is not None:
            room = room_for_summary(job, plan.kept_tokens)
            key = (plan.first_kept_id, plan.splits_turn)
            try:
                summary = written.get(key) or summarize(_request(job, history, plan, room), room)
            except SummaryRejected as exc:
                if exc.reason != "over_budget":
                    raise
                rejected = exc
                keep //= 2
                continue
            if job.reuse_summaries:
                written[key] = summary
            entry, after_ctx = measure(_record(job, plan, summary, cap), cap)
            after = after_ctx.tokens
            if best is None or after < best.tokens:
                best = Candidate(entry, after_ctx, after, summary.notes)
            if after < budget.trigger and (after < job.tokens_before or job.reason == "overflow"):
                break
        keep //= 2
        if attempt >= 1:
            cap = max(MIN_TRUNCATE_TOKENS, (cap or budget.truncate_tokens) // 2)
    if best is None:
        if rejected is not None:
            raise rejected
        raise NothingToCompact("no valid cut point leaves anything to summarize")
    return best


def accept(candidate: Candidate, job: CompactionJob) -> CompactionRecord:
    """The record to append for ``candidate``, with its measured ``tokens_after``.

    Raises:
        SummaryRejected: ``"inflated"``: the context would not shrink (allowed for an
            overflow, where any fit is worth it).
    """
    after, before = candidate.tokens, job.tokens_before
    if after >= before and job.reason != "overflow":
        raise SummaryRejected("inflated", tokens_before=before, tokens_after=after)
    body = candidate.entry.body
    assert isinstance(body, CompactionRecord)
    return replace(body, tokens_after=after)


def _request(
    job: CompactionJob, history: History, plan: CompactionPlan, room: int
) -> SummaryRequest:
    sources = job.conversation.sources
    n_sum, n_prefix = len(plan.to_summarize), len(plan.turn_prefix)
    covered = job.conversation.start + n_sum + n_prefix
    live = job.live[1] if job.live is not None and job.live[0] >= covered else None
    return SummaryRequest(
        messages=history.originals(plan.to_summarize, sources[:n_sum]),
        previous=history.previous_compaction(),
        goal=history.goal or "",
        budget_tokens=summary_budget(job.budget, history.goal_tokens, room),
        focus=job.focus,
        turn_prefix=history.originals(plan.turn_prefix, sources[n_sum : n_sum + n_prefix]),
        prior_user_messages=history.prior_user_messages(),
        pinned=history.pins(),
        live_request=live,
    )


def _record(
    job: CompactionJob, plan: CompactionPlan, summary: Summary, cap: int | None
) -> CompactionRecord:
    return CompactionRecord(
        summary=summary.text,
        first_kept_id=plan.first_kept_id,
        tokens_before=job.tokens_before,
        tokens_after=0,
        policy=job.policy.name,
        summarizer=summary.summarizer,
        reason=job.reason,
        ledgers=summary.ledgers,
        splits_turn=plan.splits_turn,
        truncate_tokens=cap,
    )
