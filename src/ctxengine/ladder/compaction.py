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

from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, replace
from typing import Any

from ctxengine.boundaries.cut import find_cut, valid_cut_points
from ctxengine.errors import NEWEST_USER_MESSAGE, SummaryRejected
from ctxengine.model import (
    Message,
    ReasoningPart,
    TextPart,
    ToolCallPart,
    ToolResultPart,
)
from ctxengine.model.roles import is_real_user_message
from ctxengine.policy import Budget, Policy
from ctxengine.policy.defaults import (
    ATTEMPT_SHRINK_DIVISOR,
    COMPACTION_ATTEMPTS,
    FLOOR_FREE_HEADROOM_SHARE,
    MIN_FIRST_KEEP_SHARE,
    MIN_TRUNCATE_TOKENS,
    STATE_HEADROOM_SHARE,
    SUMMARY_GROWTH_MAX_RATIO,
    SUMMARY_GROWTH_MAX_TOKENS,
    SUMMARY_ROOM_MARGIN_RATIO,
)
from ctxengine.projection.context import Context
from ctxengine.tokens.base import Estimator

from .plan import Attempt, CompactionPlan, Cut, Reason, Requirement
from .prune import PrunePlan
from .reinject import DurableItem, DurableState, fit

#: The candidate durable-state items of a compaction whose first kept entry is the given id
#: (``None``: nothing kept verbatim): :func:`~.reinject.durable_items` of the history that
#: leaves the context and the history kept.
DurableFn = Callable[[str | None], Sequence[DurableItem]]


@dataclass(frozen=True, slots=True)
class Conversation:
    """The part of a context a compaction may summarize.

    Attributes:
        messages / sources: the messages after the head and the previous continuation
            state, with their entry ids (``None`` for synthetic messages).
        start: position of ``messages[0]`` in the context.
        fixed: tokens of the head messages and the tool schemas.
        retained / retained_sources: the messages the previous compaction kept verbatim
            before its continuation state, with their entry ids (log order).
        tools_tokens: tokens of the tool schemas (part of ``fixed``).
    """

    messages: tuple[Message, ...]
    sources: tuple[str | None, ...]
    start: int
    fixed: int
    retained: tuple[Message, ...] = ()
    retained_sources: tuple[str, ...] = ()
    tools_tokens: int = 0


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
    tools_tokens = estimator.tools(tools) if tools else 0
    fixed += tools_tokens
    retained: list[Message] = []
    retained_sources: list[str] = []
    if ctx.compaction_id is not None:
        if ctx.preamble is None:
            start += 1  # the continuation-state message
        else:
            for pos in range(start, ctx.preamble):
                src = ctx.sources[pos]
                if src is not None:
                    retained.append(ctx.messages[pos])
                    retained_sources.append(src)
            start = ctx.preamble
    messages, sources = tuple(ctx.messages[start:]), tuple(ctx.sources[start:])
    if pending:
        messages, sources = without_stand_ins(messages, sources, pending)
    return Conversation(
        messages, sources, start, fixed, tuple(retained), tuple(retained_sources), tools_tokens
    )


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
    message and the margin: :func:`summary_room` under :func:`state_target`) up to
    :func:`summary_cap`. The state may fill the room up to that size, never past it, so half
    the plan's headroom stays free."""
    base = base_summary_budget(budget, goal_tokens, room)
    return max(base, min(room, summary_cap(budget)))


def state_target(budget: Budget) -> int:
    """The context size up to which a continuation state may grow, in tokens: the target
    plus :data:`~ctxengine.policy.defaults.STATE_HEADROOM_SHARE` of the headroom, so that
    facts are not left out while the room just under the trigger is free."""
    return budget.target + int((budget.trigger - budget.target) * STATE_HEADROOM_SHARE)


def floor_free(budget: Budget) -> int:
    """Tokens a compaction leaves free under the trigger when what it can never drop crowds
    it: :data:`~ctxengine.policy.defaults.FLOOR_FREE_HEADROOM_SHARE` of the headroom
    (``budget.trigger - budget.target``)."""
    return int((budget.trigger - budget.target) * FLOOR_FREE_HEADROOM_SHARE)


def summary_room(budget: Budget, target: int, fixed: int, kept: int, overhead: int) -> int:
    """Tokens left under ``target`` for the continuation state, beside the ``fixed`` part,
    the kept tail (``kept``), the continuation message's ``overhead`` and a margin of
    :data:`~ctxengine.policy.defaults.SUMMARY_ROOM_MARGIN_RATIO` of the window."""
    margin = int(budget.window * SUMMARY_ROOM_MARGIN_RATIO)
    return target - fixed - kept - overhead - margin


def first_keep(
    budget: Budget, fixed: int, overhead: int, goal_tokens: int, reserved: int = 0
) -> int:
    """The keep-recent budget of a plan's first attempt, in tokens: ``budget.keep_recent``,
    lowered so that the fixed part, the continuation message (its ``overhead`` and a summary
    at its base budget, :func:`base_summary_budget`), the ``reserved`` tokens (the durable
    state re-injected whatever the cut) and the tail fit under ``budget.target``; never below
    a quarter of ``budget.keep_recent`` (a continuation state alone loses the thread of the
    newest turn).
    """
    summary = base_summary_budget(budget, goal_tokens, budget.target)
    margin = int(budget.window * SUMMARY_ROOM_MARGIN_RATIO)
    fits = budget.target - fixed - overhead - summary - margin - reserved
    return max(int(budget.keep_recent * MIN_FIRST_KEEP_SHARE), min(budget.keep_recent, fits))


def message_chars(message: Message) -> int:
    """Characters of ``message`` as a keep-recent budget counts them (Gemini CLI measures the
    history by the length of its content): text, reasoning, tool-call names and arguments,
    tool-result text."""
    total = 0
    for part in message.parts:
        if isinstance(part, TextPart | ReasoningPart):
            total += len(part.text)
        elif isinstance(part, ToolCallPart):
            total += len(part.name) + len(part.arguments)
        elif isinstance(part, ToolResultPart):
            total += len(part.text)
    return total


def cut_of(
    conversation: Conversation,
    estimator: Estimator,
    keep_recent_tokens: int,
    *,
    allow_split_turn: bool,
    sizes: Sequence[int] | None = None,
    first: int = 0,
    no_tail: bool = False,
) -> Cut | None:
    """The cut keeping about ``keep_recent_tokens`` of ``conversation`` verbatim, or
    ``None`` when no valid cut leaves a non-empty prefix to summarize (or the first kept
    message is synthetic).

    Args:
        sizes: per message, what the budget counts when not tokens (characters, or 1 per
            message); ``keep_recent_tokens`` is then in that unit.
        first: messages before this index are retained, never summarized: the cut must lie
            after it (:attr:`~.plan.Cut.summarize_from`).
        no_tail: keep nothing verbatim: the cut is at the end of the conversation
            (``first_kept_id`` ``None``), or, while the newest calls await their results,
            at the latest valid point before them.
    """
    messages = conversation.messages
    n = len(messages)
    if no_tail and n in valid_cut_points(messages):
        if n <= first:
            return None
        return Cut(n, None, n, 0, False, 0, summarize_from=first)
    found = find_cut(
        messages,
        keep_recent_tokens,
        estimator,
        per_message=sizes,
        allow_split_turn=allow_split_turn,
    )
    if found is None or found.index <= max(0, first) or found.index >= len(messages):
        return None
    first_kept = conversation.sources[found.index]
    if first_kept is None:
        return None
    kept = found.kept_tokens
    if sizes is not None:
        kept = sum(estimator.message(m) for m in messages[found.index :])
    if found.splits_turn and found.turn_start >= first:
        summarize, prefix = found.turn_start, found.index - found.turn_start
    else:
        summarize, prefix = found.index, 0
    return Cut(
        found.index, first_kept, summarize, prefix, found.splits_turn, kept, summarize_from=first
    )


def first_retained(conversation: Conversation, k: int) -> int:
    """How many messages at the start of ``conversation`` a compaction keeps verbatim before
    its continuation state (OpenHands ``keep_first``): ``k`` raised to the next valid cut
    point (a tool exchange stays whole); 0 when the previous compaction already retained
    them (they are no longer in the conversation)."""
    if k <= 0 or conversation.retained_sources:
        return 0
    valid = valid_cut_points(conversation.messages)
    n = len(conversation.messages)
    return next((c for c in range(min(k, n), n + 1) if c in valid), n)


def retained_ids(
    conversation: Conversation,
    cut: Cut,
    estimator: Estimator,
    *,
    keep_first: int,
    user_tokens: int,
) -> tuple[tuple[str, ...], int]:
    """The entry ids a compaction at ``cut`` keeps verbatim before its continuation state, in
    log order, and their tokens (in the conversation's projection).

    * With ``keep_first`` > 0 (a policy's ``retain_first_messages``): the first messages up to
      ``cut.summarize_from`` (:func:`first_retained`), or those the previous compaction kept
      first.
    * With ``user_tokens`` > 0: the real user messages among those the previous compaction
      retained and those this one summarizes, newest first while their tokens fit
      ``user_tokens`` (Codex ``COMPACT_USER_MESSAGE_MAX_TOKENS``; a message that does not
      fit whole ends the selection, where Codex would truncate it).
    """
    ids: list[str] = []
    tokens = 0
    carried = list(zip(conversation.retained, conversation.retained_sources, strict=True))
    first = cut.summarize_from
    if keep_first > 0:
        if first:
            for m, src in zip(
                conversation.messages[:first], conversation.sources[:first], strict=True
            ):
                if src is not None:
                    ids.append(src)
                    tokens += estimator.message(m)
        else:
            for m, src in carried:
                ids.append(src)
                tokens += estimator.message(m)
    if user_tokens > 0:
        end = cut.summarize + cut.turn_prefix
        pool = [(m, src) for m, src in carried if is_real_user_message(m)]
        pool += [
            (m, src)
            for m, src in zip(
                conversation.messages[first:end], conversation.sources[first:end], strict=True
            )
            if src is not None and is_real_user_message(m)
        ]
        chosen: list[str] = []
        used = 0
        for m, src in reversed(pool):
            size = estimator.message(m)
            if used + size > user_tokens:
                break
            chosen.append(src)
            used += size
        taken = set(ids)
        for src in reversed(chosen):
            if src not in taken:
                ids.append(src)
        tokens += used
    return tuple(ids), tokens


def keep_of(
    conversation: Conversation,
    estimator: Estimator,
    budget: Budget,
    policy: Policy,
    continuation_overhead: int,
    goal_tokens: int,
    reserved: int = 0,
) -> tuple[int, list[int] | None]:
    """The first attempt's keep-recent budget and the per-message sizes it counts (``None``
    for tokens): ``policy.keep_recent_messages`` messages; else ``keep_recent_share`` of the
    conversation in ``keep_recent_unit``; else :func:`first_keep` tokens (``reserved``: the
    durable state re-injected whatever the cut)."""
    messages = conversation.messages
    if policy.keep_recent_messages is not None:
        return policy.keep_recent_messages, [1] * len(messages)
    if policy.keep_recent_share is not None:
        if policy.keep_recent_unit == "chars":
            sizes = [message_chars(m) for m in messages]
        else:
            sizes = [estimator.message(m) for m in messages]
        return int(sum(sizes) * policy.keep_recent_share), sizes
    return (
        first_keep(budget, conversation.fixed, continuation_overhead, goal_tokens, reserved),
        None,
    )


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
    durable: DurableFn | None = None,
    pinned_tokens: int = 0,
    state_tokens: int = 0,
) -> CompactionPlan:
    """Plan a compaction of ``conversation`` to ``budget``.

    Args:
        conversation: what may be summarized (:func:`conversation_of`).
        estimator: token estimator.
        requirement: why it runs (:func:`~.trigger.requirement`).
        budget: the budget to compact to.
        policy: the session's policy: split turns (the last attempt may split with
            ``split_turn_last_resort``), what the keep-recent budget counts
            (:func:`keep_of`), retained messages (:func:`retained_ids`).
        tokens_before: the context size now, in tokens.
        continuation_overhead: tokens of the continuation-state message around its summary.
        goal_tokens: tokens of the first real user request (kept verbatim up to
            ``budget.goal_max``).
        cap: the truncate-at-source cap the schedule starts from, in tokens (``None``: the
            budget's).
        focus: what the summary should focus on.
        prune: a prune planned before the compaction, if any.
        durable: the durable state each cut re-injects (``policy.reinject``), or ``None``.
            Its required items (rules, todo list, background tasks) come out of the
            summary's room and count in every attempt's expected size; the others (plan,
            files) fill what the summary leaves under the trigger.
        pinned_tokens: the part of ``continuation_overhead`` that shows pinned items (named
            apart in the floor).
        state_tokens: the smallest continuation state that can be written, in tokens
            (:func:`~ctxengine.summarizers.extractive_state.minimum_state_tokens`), counted in the
            floor.

    Returns:
        The :class:`~.plan.CompactionPlan`; its :attr:`~.plan.CompactionPlan.cut` is
        ``None`` when no valid cut leaves anything to summarize.
    """
    target = budget.target
    free = floor_free(budget)
    states: dict[str | None, Sequence[DurableItem]] = {}

    def items_at(first_kept: str | None) -> Sequence[DurableItem]:
        if durable is None:
            return ()
        if first_kept not in states:
            states[first_kept] = durable(first_kept)
        return states[first_kept]

    reserved = _required(items_at(None))
    keep, sizes = keep_of(
        conversation, estimator, budget, policy, continuation_overhead, goal_tokens, reserved
    )
    no_tail = keep == 0
    first = first_retained(conversation, policy.retain_first_messages)
    # ctxengine caps the retained user messages like the kept tail, so small windows work.
    user_tokens = min(policy.retain_user_tokens, int(budget.window * policy.keep_recent_max_ratio))
    truncate = cap
    attempts: list[Attempt] = []
    for n in range(COMPACTION_ATTEMPTS):
        last = n == COMPACTION_ATTEMPTS - 1
        cut = cut_of(
            conversation,
            estimator,
            keep,
            allow_split_turn=policy.split_turn or (last and policy.split_turn_last_resort),
            sizes=sizes,
            first=first,
            no_tail=no_tail,
        )
        summary = 0
        expected = tokens_before
        state = DurableState()
        if cut is not None:
            retained = 0
            if policy.retain_first_messages or user_tokens:
                ids, retained = retained_ids(
                    conversation,
                    cut,
                    estimator,
                    keep_first=policy.retain_first_messages,
                    user_tokens=user_tokens,
                )
                cut = replace(cut, retained=ids)
            items = items_at(cut.first_kept_id)
            required = _required(items)
            # The state grows into the room under its own target only when the context is
            # over the target: a context already under it (a manual compaction) must shrink.
            grows = tokens_before > target
            room = summary_room(
                budget,
                state_target(budget) if grows else target,
                conversation.fixed,
                cut.kept_tokens + retained + required,
                continuation_overhead,
            )
            summary = (summary_budget if grows else base_summary_budget)(budget, goal_tokens, room)
            extra = summary_room(
                budget,
                budget.trigger - free,
                conversation.fixed,
                cut.kept_tokens + retained + required,
                continuation_overhead,
            )
            if required:
                # The state that is never cut comes first: the summary gets what it leaves
                # under the trigger less the free room, so re-injection cannot put the
                # context back over it nor leave it a call away.
                summary = max(1, min(summary, extra))
            state = fit(items, max(0, extra - summary), policy.reinject_max_tokens)
            expected = (
                conversation.fixed
                + continuation_overhead
                + summary
                + cut.kept_tokens
                + retained
                + state.tokens
            )
        attempts.append(Attempt(keep, truncate, cut, summary, expected, state))
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
        fallback=fallback_attempt(conversation, estimator, budget, policy, goal_tokens, items_at),
        injection=policy.injection,
        continuation=policy.continuation_message and requirement.reason != "manual",
        floor_free=free,
        floor=floor_parts(
            conversation,
            estimator,
            continuation_overhead,
            items_at,
            pinned_tokens,
            cap=attempts[-1].truncate_tokens or budget.truncate_tokens,
            state_tokens=state_tokens,
            margin=int(budget.window * SUMMARY_ROOM_MARGIN_RATIO),
            keeps_tail=not no_tail,
        ),
    )


def _required(items: Sequence[DurableItem]) -> int:
    """Tokens of the required items (never cut) among ``items``."""
    return sum(i.tokens for i in items if i.required)


def floor_parts(
    conversation: Conversation,
    estimator: Estimator,
    continuation_overhead: int,
    items_at: DurableFn,
    pinned_tokens: int = 0,
    *,
    cap: int | None = None,
    state_tokens: int = 0,
    margin: int = 0,
    keeps_tail: bool = False,
) -> tuple[tuple[str, int], ...]:
    """The parts of the smallest context a compaction of ``conversation`` can leave
    (:attr:`~.plan.CompactionPlan.floor`), largest first, each ``(name, tokens)`` with
    tokens > 0: the system prompt (head messages), the tool schemas, the continuation
    message (``continuation_overhead`` less ``pinned_tokens``), the pinned items
    (``pinned_tokens``), the smallest continuation state (``state_tokens``), each required
    kind of durable state re-injected at the latest valid cut (a rules block named by the
    rules file it carries, :func:`~.reinject.item_label`), the kept tail and the ``margin``
    the summary's room keeps under the trigger (:func:`summary_room`). The kept tail is
    what no cut can drop: the messages after the latest valid cut (calls awaiting their
    results, an unfinished tool exchange), each tool result counted at most at ``cap``
    tokens (the last attempt's truncate-at-source cap; ``None``: uncapped). With
    ``keeps_tail`` (the plan keeps a verbatim tail: every cut keeps at least the newest
    message) a conversation that ends with a real user message has that message in the
    floor whole, as ``"newest user message"``: a user's text is never truncated, so a
    request whose newest message cannot fit is refused (:class:`~ctxengine.errors.
    ContextFloorError`) instead of compacted to no avail. (A cut also keeps the newest
    finished exchange unless the plan keeps nothing verbatim; that is left to the room
    :attr:`~.plan.CompactionPlan.floor_free` keeps, so that small windows whose compactions
    do fit are not refused.)"""
    messages = conversation.messages
    n = len(messages)
    last = max(valid_cut_points(messages), default=0)
    tail = sum(_capped(m, estimator, cap) for m in messages[last:])
    newest = 0
    if keeps_tail and last == n and n and is_real_user_message(messages[-1]):
        newest = estimator.message(messages[-1])
    first_kept = conversation.sources[last] if last < n else None
    state = fit(items_at(first_kept), 0, 0)
    parts = [
        ("system prompt", conversation.fixed - conversation.tools_tokens),
        ("tool schemas", conversation.tools_tokens),
        ("continuation message", continuation_overhead - pinned_tokens),
        ("pinned items", pinned_tokens),
        ("continuation state", state_tokens),
        *state.labelled(required=True),
        ("kept tail", tail),
        (NEWEST_USER_MESSAGE, newest),
        ("margin", margin),
    ]
    return tuple(sorted((p for p in parts if p[1] > 0), key=lambda p: -p[1]))


def _capped(message: Message, estimator: Estimator, cap: int | None) -> int:
    """Tokens of ``message`` with each tool result counted at most at ``cap`` tokens."""
    size = estimator.message(message)
    if cap is None:
        return size
    for r in message.tool_results:
        part = estimator.part(r)
        size -= max(0, part - cap)
    return size


def fallback_attempt(
    conversation: Conversation,
    estimator: Estimator,
    budget: Budget,
    policy: Policy,
    goal_tokens: int,
    durable: DurableFn | None = None,
) -> Attempt | None:
    """The attempt a failed model summary falls back to when ``policy.fallback_keep_share``
    is set: a cut keeping that share of the conversation's messages (Roo Code
    ``truncateConversation(messages, 0.5)``), the first ``policy.fallback_retain_first``
    messages retained, the durable state ``durable`` gives re-injected; ``None``
    otherwise."""
    share = policy.fallback_keep_share
    if share is None:
        return None
    n = len(conversation.messages)
    keep = int(n * share)
    first = first_retained(conversation, policy.fallback_retain_first)
    cut = cut_of(
        conversation,
        estimator,
        keep,
        allow_split_turn=policy.split_turn,
        sizes=[1] * n,
        first=first,
    )
    if cut is None:
        return Attempt(keep, None, None, 0, 0)
    retained = 0
    if policy.fallback_retain_first:
        ids, retained = retained_ids(
            conversation, cut, estimator, keep_first=policy.fallback_retain_first, user_tokens=0
        )
        cut = replace(cut, retained=ids)
    summary = base_summary_budget(budget, goal_tokens, budget.target)
    items = durable(cut.first_kept_id) if durable is not None else ()
    used = cut.kept_tokens + retained + _required(items)
    extra = summary_room(budget, budget.trigger, conversation.fixed, used, 0) - summary
    state = fit(items, max(0, extra), policy.reinject_max_tokens)
    expected = conversation.fixed + summary + cut.kept_tokens + retained + state.tokens
    return Attempt(keep, None, cut, summary, expected, state)


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
