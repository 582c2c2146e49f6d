"""Ladder step 4, recover: the pure decisions behind overflow recovery, the summarizer's
circuit breaker and the one rule for falling back to the extractive summarizer. The engine
holds the state and does the calls.

* :class:`SummarizerBreaker`: consecutive failures of a model summarizer; at the threshold
  (Claude Code ``MAX_CONSECUTIVE_AUTOCOMPACT_FAILURES=3``) it opens, and compactions use the
  extractive summarizer until a manual compaction or a successful model call closes it
  (Gemini CLI's ``hasFailedCompressionAttempt`` latch works the same way).
* :func:`fallback_reason`: when a failed model summary gives way to the extractive one.
* :class:`OverflowLatch`: pi's one-shot recovery. The first overflow compacts and retries;
  a second one before a good reply is final.
* :func:`check_output_room`: the fixed part of every request (system prompt, tool schemas),
  the output budget and a margin for estimate error, against the window (or the limit the
  provider reported). Too little room left for history is a configuration problem that no
  compaction can fix, so it is a :class:`~ctxengine.errors.ConfigError`.
* :func:`recovery_target`: the provider said the request does not fit; a compaction at the
  ordinary trigger may not be enough (the context was just compacted, or the provider's
  limit is below our window), so the recovery aims at ``limit − output − margin`` when the
  provider gave its limit.
* :func:`recovery_budget`: the session's budget resolved as if the target were the trigger
  (tail, summary and truncate caps scaled by the policy's own ratios).

The fitting of a summary request's own input (degrade, shrink 85/70/50/35 %, chunk) lives
with the summarizers: :mod:`ctxengine.summarizers.fit`.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Literal, TypeAlias

from ctxengine.errors import ConfigError, ContextOverflow
from ctxengine.policy import Budget, Policy
from ctxengine.policy.defaults import (
    DEFAULT_SUMMARY_MAX_RATIO,
    MIN_HISTORY_ROOM_TOKENS,
    OVERFLOW_MARGIN_RATIO,
    UNKNOWN_LIMIT_SHRINK,
)

#: When a failed model summary gives way to the extractive summarizer: ``"breaker"`` only
#: when the breaker is (or just became) open or the context cannot be sent as it is;
#: ``"on_failure"`` on any summarizer failure too (a summarizer the user did not choose).
FallbackMode: TypeAlias = Literal["breaker", "on_failure"]


@dataclass(slots=True)
class SummarizerBreaker:
    """Consecutive model-summarizer failures.

    Attributes:
        threshold: failures in a row that open the breaker (≥ 1).
        failures: the current run of failures.
        open: while True, compactions do not call the model.
    """

    threshold: int
    failures: int = 0
    open: bool = False

    def failure(self) -> bool:
        """Count a failure; returns True when this one opened the breaker."""
        self.failures += 1
        if not self.open and self.failures >= self.threshold:
            self.open = True
            return True
        return False

    def success(self) -> None:
        """A model summary was accepted: close the breaker and forget the failures."""
        self.failures = 0
        self.open = False

    def reset(self) -> None:
        """A manual compaction: try the model again."""
        self.success()


def fallback_reason(
    *, opened_breaker: bool, hard: bool, mode: FallbackMode, retryable: bool
) -> str | None:
    """The one fallback rule: why a failed model summary gives way to the extractive
    summarizer, or ``None`` when the failure stands (it is counted and the context kept).

    Args:
        opened_breaker: this failure opened the breaker.
        hard: the context cannot be sent as it is (over the window, or an overflow).
        mode: the session's :data:`FallbackMode`.
        retryable: another summarizer could help (not an authentication or request error).

    Returns:
        ``"breaker"``, ``"must_fit"`` or ``"on_failure"``; ``None``.
    """
    if opened_breaker:
        return "breaker"
    if hard:
        return "must_fit"
    if mode == "on_failure" and retryable:
        return "on_failure"
    return None


@dataclass(slots=True)
class OverflowLatch:
    """Overflow recoveries per request: one by default (pi ``_overflowRecoveryAttempted``),
    ``limit`` in all (Roo Code ``MAX_CONTEXT_WINDOW_RETRIES=3``; 0: none).

    Attributes:
        limit: recoveries allowed before the next good reply.
        used: a recovery ran and no good reply has arrived since.
        count: recoveries run since the last good reply.
    """

    used: bool = False
    limit: int = 1
    count: int = 0

    def try_recover(self) -> bool:
        """True (and count it) while fewer than ``limit`` recoveries ran since the last good
        reply; False after that."""
        if self.count >= self.limit:
            return False
        self.count += 1
        self.used = True
        return True

    def clear(self) -> None:
        """A good reply arrived: the next overflow may be recovered again."""
        self.used = False
        self.count = 0


def margin_of(limit: int) -> int:
    """Tokens kept free for estimate error in a ``limit``-token window."""
    return int(limit * OVERFLOW_MARGIN_RATIO)


def check_output_room(limit: int, fixed: int, output: int, *, reported: bool = False) -> int:
    """The tokens a request leaves for history: ``limit − output − margin − fixed``.

    Args:
        limit: the window in tokens (ours, or the one the provider reported).
        fixed: tokens every request carries (system prompt, tool schemas).
        output: the output budget of the call in tokens.
        reported: ``limit`` is what the provider said (named in the error message).

    Raises:
        ConfigError: fewer than :data:`MIN_HISTORY_ROOM_TOKENS` are left.
    """
    margin = margin_of(limit)
    room = limit - output - margin - fixed
    if room < MIN_HISTORY_ROOM_TOKENS:
        whose = "the provider's reported" if reported else "the"
        raise ConfigError(
            f"the system prompt and tools ({fixed} tokens) plus the output reserve ({output} "
            f"tokens) and a {margin}-token margin leave {room} tokens of {whose} {limit}-token "
            f"window for history (at least {MIN_HISTORY_ROOM_TOKENS} needed): no history fits; "
            "lower the reserve or the output budget, or use a model with a larger window"
        )
    return room


def recovery_target(
    overflow: ContextOverflow,
    *,
    trigger: int,
    window: int,
    tokens: int,
    fixed: int,
    output: int,
    just_compacted: bool,
    shrink: float | None = None,
) -> int:
    """The context size in tokens an overflow recovery compacts to.

    ``min(trigger, limit − output − margin)`` with the provider's limit when it gave one
    (else the window); with no reported limit and nothing new since the last compaction,
    also at most :data:`UNKNOWN_LIMIT_SHRINK` of ``tokens`` (the size that overflowed);
    with ``shrink`` (a policy's ``overflow_shrink_ratio``: Roo Code forces 75 %), also at
    most that share of ``tokens``.

    Args:
        overflow: the overflow signalled (its ``limit`` is 0 when not reported).
        trigger / window: the session's budget, in tokens.
        tokens: the context size that overflowed (our measure).
        fixed: tokens of the head messages and tool schemas.
        output: the output budget of the call.
        just_compacted: the newest entry is a compaction.

    Raises:
        ConfigError: the output budget leaves no room for history (:func:`check_output_room`).
    """
    reported = overflow.limit > 0
    limit = overflow.limit if reported else window
    room = check_output_room(limit, fixed, output, reported=reported)
    target = min(trigger, fixed + room)
    if not reported and just_compacted:
        target = min(target, int(tokens * UNKNOWN_LIMIT_SHRINK))
    if shrink is not None:
        target = min(target, int(tokens * shrink))
    return max(target, fixed + MIN_HISTORY_ROOM_TOKENS)


def recovery_budget(budget: Budget, policy: Policy, target: int) -> Budget:
    """``budget`` with ``target`` as its trigger and the kept tail, summary, truncate and goal
    caps no larger than ``policy`` gives a window whose trigger is ``target`` (all tokens).
    ``budget`` itself when ``target`` is not below its trigger."""
    if target >= budget.trigger:
        return budget
    scaled_window = target * budget.window // budget.trigger
    headroom = int(target * policy.headroom_ratio)
    return budget.model_copy(
        update={
            "trigger": target,
            "keep_recent": min(
                budget.keep_recent, int(scaled_window * policy.keep_recent_max_ratio)
            ),
            "summary_max": max(
                1, min(budget.summary_max, int(scaled_window * DEFAULT_SUMMARY_MAX_RATIO))
            ),
            "truncate_tokens": max(
                1,
                min(budget.truncate_tokens, int(scaled_window * policy.truncate_max_window_ratio)),
            ),
            "goal_max": min(budget.goal_max, int((target - headroom) * policy.goal_max_ratio)),
            "headroom": headroom,
        }
    )
