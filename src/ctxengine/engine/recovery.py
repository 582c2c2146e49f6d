"""Sizing an overflow recovery: how much room a request leaves for history, and the context
size a recovery compaction aims at.

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

Pure functions: no I/O.
"""

from __future__ import annotations

from ctxengine.errors import ConfigError, ContextOverflow
from ctxengine.policy import Budget, Policy
from ctxengine.policy.defaults import DEFAULT_SUMMARY_MAX_RATIO

#: Share of the window (or reported limit) kept free for the error of our token estimate when
#: sizing a request (the summarizers keep the same 5 % on their own requests).
OVERFLOW_MARGIN_RATIO = 0.05
#: Smallest room for history worth sending a request for, in tokens: a continuation state
#: with the task and one short turn. Less than this beside the fixed part, the output budget
#: and the margin is a configuration problem.
MIN_HISTORY_ROOM_TOKENS = 256
#: With no limit in the provider's error and nothing new since the last compaction, the
#: recovery aims at this share of the context that overflowed.
UNKNOWN_LIMIT_SHRINK = 0.7


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
) -> int:
    """The context size in tokens an overflow recovery compacts to.

    ``min(trigger, limit − output − margin)`` with the provider's limit when it gave one
    (else the window); with no reported limit and nothing new since the last compaction,
    also at most :data:`UNKNOWN_LIMIT_SHRINK` of ``tokens`` (the size that overflowed).

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
    return max(target, fixed + MIN_HISTORY_ROOM_TOKENS)


def recovery_budget(budget: Budget, policy: Policy, target: int) -> Budget:
    """``budget`` with ``target`` as its trigger and the kept tail, summary, truncate and goal
    caps no larger than ``policy`` gives a window whose trigger is ``target`` (all tokens).
    ``budget`` itself when ``target`` is not below its trigger."""
    if target >= budget.trigger:
        return budget
    scaled_window = target * budget.window // budget.trigger
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
            "goal_max": min(budget.goal_max, int(target * policy.goal_max_ratio)),
        }
    )
