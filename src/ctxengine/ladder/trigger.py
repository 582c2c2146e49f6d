"""When a compaction must run: the trigger, "never compact twice without new entries"
(invariant 5) and "must fit" in one function.

Pure: the caller measures the context and counts the new entries.
"""

from __future__ import annotations

from ctxengine.errors import NothingToCompact
from ctxengine.policy import Budget

from .plan import Reason, Requirement


def requirement(
    tokens: int,
    budget: Budget,
    *,
    reason: Reason,
    output_tokens: int,
    new_entries: bool,
    limit: int = 0,
    messages: int = 0,
    max_messages: int | None = None,
    check_point: bool = True,
) -> Requirement | None:
    """Whether a compaction of a ``tokens``-token context must run, and how hard.

    * ``"threshold"``: only at or over ``budget.trigger`` (or, with ``max_messages``, at a
      context of that many ``messages``: OpenHands' event-count trigger) and only when
      entries arrived since the ladder last ran; else ``None``. Away from a check point
      (``check_point`` False) only a hard requirement is returned.
    * ``"manual"``: always, unless nothing arrived since the latest compaction while the
      context is under the trigger (then :class:`NothingToCompact`).
    * ``"overflow"``: always, hard (the provider said the request does not fit; ``limit`` is
      the limit it reported, 0 when it gave none).

    A threshold requirement is ``hard`` when the context and ``output_tokens`` together
    exceed the window: it cannot be sent as it is. A manual one is always ``soft``: its
    failure is reported to the user who asked, never papered over.

    Args:
        tokens: the context size, in tokens (usage anchor plus estimate).
        budget: the session's resolved budget.
        reason: why the caller asks.
        output_tokens: the coming call's output budget, in tokens.
        new_entries: for ``"threshold"``, entries were appended since the ladder last ran;
            for ``"manual"``, since the latest compaction.
        limit: for ``"overflow"``, the provider's reported limit in tokens (0: unknown).
        messages: the number of messages in the context.
        max_messages: compact at this many messages too (``None``: tokens only).
        check_point: the policy checks the trigger at this call.

    Returns:
        The :class:`Requirement`, or ``None`` when no compaction is due.

    Raises:
        NothingToCompact: a manual compaction with no new entries since the latest one and a
            context under the trigger.
    """
    over_window = tokens + output_tokens > budget.window
    if reason == "overflow":
        detail = (
            f"the provider reported an overflow (limit {limit:,})"
            if limit
            else ("the provider reported an overflow")
        )
        return Requirement("hard", reason, detail, tokens, limit)
    if reason == "manual":
        if not new_entries and tokens < budget.trigger:
            raise NothingToCompact("already compacted: no new entries since the last compaction")
        return Requirement("soft", reason, "requested by the caller", tokens)
    by_count = max_messages is not None and messages >= max_messages
    if (tokens < budget.trigger and not by_count) or not new_entries:
        return None
    if not over_window and not check_point:
        return None
    if tokens >= budget.trigger:
        detail = f"context {tokens:,} ≥ trigger {budget.trigger:,}"
    else:
        detail = f"context holds {messages:,} messages ≥ {max_messages:,}"
    if over_window:
        detail += f"; over the {budget.window:,}-token window beside {output_tokens:,} of output"
    return Requirement("hard" if over_window else "soft", reason, detail, tokens)
