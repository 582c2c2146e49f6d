"""Measuring the session's context: projection settings from the policy, the context size
against the usage anchor, the fixed part of a request, and the check that a context only
grows at its tail within one epoch."""

from __future__ import annotations

from ctxengine.errors import InvariantError
from ctxengine.policy import Budget, Policy
from ctxengine.projection import ProjectionSettings
from ctxengine.projection.context import Context
from ctxengine.tokens.base import Estimator
from ctxengine.tokens.correction import UsageCorrection
from ctxengine.tokens.size import find_anchor

from .history import History

#: Identifies one epoch of one prune generation: (latest compaction id, number of prune,
#: unpin and supersede records: each changes the context before its tail).
EpochKey = tuple[str | None, int]


def settings(
    policy: Policy,
    budget: Budget,
    truncate_tokens: int | None = None,
    *,
    recall_note: bool = False,
) -> ProjectionSettings:
    """Projection settings of ``policy`` resolved as ``budget``.

    Args:
        truncate_tokens: a tighter truncate-at-source cap in tokens; default the budget's.
        recall_note: the agent has the recall tool (the continuation state says so).
    """
    return ProjectionSettings(
        truncate_tokens=truncate_tokens or budget.truncate_tokens,
        truncate_max_chars=policy.truncate_max_chars,
        truncate_head_ratio=policy.truncate_head_ratio,
        prune_tail_tokens=policy.prune_keep_tail_tokens,
        whole_rules="rules" in policy.reinject,
        recall_note=recall_note,
    )


def epoch_key(ctx: Context, history: History) -> EpochKey:
    """The epoch ``ctx`` belongs to, with the current number of prune, unpin and supersede
    records."""
    return (
        ctx.compaction_id,
        len(history.prunes) + len(history.unpins) + len(history.withdrawals),
    )


def context_tokens(
    ctx: Context,
    history: History,
    estimator: Estimator,
    correction: UsageCorrection | None = None,
    window: int | None = None,
) -> int:
    """Size of ``ctx`` in tokens: the usage anchor plus the estimate of what follows it; the
    full estimate (``ctx.tokens``) when there is no usable anchor. The anchor rule is
    :func:`ctxengine.tokens.size.find_anchor` (a reply reporting prompt tokens, not aborted,
    and, once ``history`` holds a compaction, not more prompt tokens than ``window``, the
    model's window in tokens, holds) over the messages newer than the latest compaction and
    prune in ``history``: an older usage measured a context that no longer exists.

    With a ``correction`` the estimated part is scaled by its ratio, and a new anchor's
    growth over the previous one (:func:`ctxengine.tokens.correction.anchor_growth`) is
    pooled into it first."""
    fresh_from = len(ctx.messages)
    floor = history.anchor_floor()
    for pos in range(len(ctx.messages) - 1, -1, -1):
        src = ctx.sources[pos]
        if ctx.messages[pos].role != "assistant" or src is None:
            continue
        if history.index.get(src, -1) <= floor:
            break
        fresh_from = pos
    # after a compaction every request built fits the window, so a reply reporting more
    # prompt tokens answered another conversation (before one, it may measure this very
    # history sent to a model with a larger window than this session's)
    anchor = find_anchor(
        ctx.messages, fresh_from=fresh_from, window=window if history.compactions else None
    )
    usage = ctx.messages[anchor].usage if anchor is not None else None
    if anchor is None or usage is None:
        return correction.scale(ctx.tokens) if correction is not None else ctx.tokens
    tail = sum(estimator.message(m) for m in ctx.messages[anchor + 1 :])
    if correction is None:
        return usage.context_tokens + tail
    key = ctx.sources[anchor]
    if key is not None:
        correction.observe_anchor(key, ctx.messages, anchor, estimator, fresh_from=fresh_from)
    return usage.context_tokens + correction.scale(tail)


def fixed_tokens(ctx: Context, estimator: Estimator) -> int:
    """Tokens every request carries whatever the history: head messages and tools."""
    fixed = estimator.tools(ctx.tools) if ctx.tools else 0
    for m in ctx.messages:
        if m.role not in ("system", "developer"):
            break
        fixed += estimator.message(m)
    return fixed


class TailGuard:
    """Checks that successive contexts of one epoch only grow at the tail."""

    def __init__(self) -> None:
        self._last: Context | None = None
        self._last_key: EpochKey | None = None
        self._last_skip = 0

    def check(self, ctx: Context, key: EpochKey, *, provisional: bool, skip: int = 0) -> None:
        """Compare ``ctx`` with the previous baseline of the same ``key``.

        Args:
            provisional: calls still await their results, so a result arriving later
                takes the place of its synthetic stand-in: ``ctx`` is checked but does not
                become the baseline of the next check.
            skip: leading messages of ``ctx`` left out of the comparison: an assembled head,
                whose changes within an epoch are reported as cache breaks instead.

        Raises:
            InvariantError: ``ctx`` changed before its tail within one epoch.
        """
        last = self._last
        if last is not None and self._last_key == key:
            before = last.messages[self._last_skip :]
            after = ctx.messages[skip:]
            n = len(before)
            ok = len(after) >= n and all(
                a is b or a == b for a, b in zip(before, after[:n], strict=False)
            )
            if not ok:
                raise InvariantError("projection changed before its tail within one epoch")
        if not provisional:
            self._last, self._last_key, self._last_skip = ctx, key, skip
