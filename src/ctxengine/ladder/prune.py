"""Ladder step 2, prune: old tool results become one-line placeholders.

A pure planner. It walks the projected context from newest to oldest, protects the last
``protect_turns`` user turns and then the newest ``protect_tokens`` of tool output, and proposes
every older, not yet pruned, non-exempt tool result — but only when the total saving reaches
``minimum_tokens`` (OpenCode ``prune``: protect 40,000, minimum 20,000, last 2 user turns).
The engine records an accepted plan as a ``prune`` entry; the projection shows the placeholders.
"""

from __future__ import annotations

from collections.abc import Collection, Sequence
from dataclasses import dataclass

from ctxengine.ladder.timing import seconds_between
from ctxengine.model import Message, ToolResultPart
from ctxengine.model.roles import is_real_user_message
from ctxengine.policy.defaults import PRUNE_PLACEHOLDER_TOKENS
from ctxengine.tokens.base import Estimator


@dataclass(frozen=True, slots=True)
class PrunePlan:
    """Tool results to prune.

    Attributes:
        call_ids: call ids whose results become placeholders, oldest first.
        tokens_saved: estimated tokens freed (result tokens minus placeholder tokens).
    """

    call_ids: tuple[str, ...]
    tokens_saved: int


def plan_prune(
    messages: Sequence[Message],
    estimator: Estimator,
    *,
    protect_tokens: int,
    minimum_tokens: int,
    protect_turns: int,
    exempt_tools: Collection[str] = (),
    already_pruned: Collection[str] = (),
    protect_results: int = 0,
    tail_tokens: int = 0,
) -> PrunePlan | None:
    """Plan a prune over the projected ``messages``.

    Args:
        messages: the current context's messages (head, continuation state, tail).
        estimator: token estimator.
        protect_tokens: newest tool-output tokens never pruned.
        minimum_tokens: smallest total saving worth a prune (else ``None``).
        protect_turns: the last N real user turns are never pruned (a real user message:
            :func:`~ctxengine.model.roles.is_real_user_message`, so injected reminders do not
            count).
        exempt_tools: tool names whose results are never pruned (skills, plans).
        already_pruned: call ids pruned by earlier prune entries (skipped).
        protect_results: the newest N prunable tool results are never pruned, whatever
            their size (Claude Code's time-based microcompact keeps 5; observation masking).
        tail_tokens: tokens a pruned result still shows after its placeholder (its tail:
            Gemini CLI), counted against the saving.

    Returns:
        A :class:`PrunePlan`, or ``None`` when the saving would be below ``minimum_tokens``.
    """
    names: dict[str, str] = {}
    for m in messages:
        for call in m.tool_calls:
            names[call.id] = call.name
    user_seen = 0
    boundary = len(messages)
    if protect_turns > 0:
        for i in range(len(messages) - 1, -1, -1):
            if is_real_user_message(messages[i]):
                user_seen += 1
                if user_seen == protect_turns:
                    boundary = i
                    break
        else:
            return None
    pruned = set(already_pruned)
    protected = 0
    kept_results = 0
    chosen: list[str] = []
    saved = 0
    for i in range(boundary - 1, -1, -1):
        for part in reversed(messages[i].parts):
            if not isinstance(part, ToolResultPart) or part.call_id in pruned:
                continue
            if names.get(part.call_id, part.name or "") in exempt_tools:
                continue  # never pruned, and not counted as protected output (OpenCode)
            cost = estimator.part(part)
            if protected < protect_tokens:
                protected += cost
                continue
            if kept_results < protect_results:
                kept_results += 1
                continue
            gain = cost - PRUNE_PLACEHOLDER_TOKENS - min(tail_tokens, cost)
            if gain > 0:
                chosen.append(part.call_id)
                saved += gain
    if not chosen or saved < minimum_tokens:
        return None
    chosen.reverse()
    return PrunePlan(tuple(chosen), saved)


def cache_cold(last_reply_at: str | None, now_at: str | None, ttl_seconds: float) -> bool:
    """True when the provider's prompt cache has expired: ``now_at`` (the newest entry's
    ISO-8601 time) is at least ``ttl_seconds`` after ``last_reply_at`` (the latest reply's,
    when the prefix was last read). Unknown or unreadable times count as warm: a prune that
    waits for a cold cache does not run on a guess."""
    elapsed = seconds_between(last_reply_at, now_at)
    return elapsed is not None and elapsed >= ttl_seconds
