"""When a prefix-changing step should run: the prompt cache's lifetime, the idle gap read
from entry times, and the tail a precomputed compaction may still be adopted with.

Pure. A prune or a compaction changes the context before its tail, so the provider's
cached prefix is lost either way; done when the cache has gone cold (the newest message came
more than the cache's lifetime after the latest reply), it costs no cache that was still
warm (Claude Code clears old tool results only then, and may compact an idle session then;
seed 000 §1.3, §5.4).
"""

from __future__ import annotations

from collections.abc import Sequence
from datetime import datetime

from ctxengine.model import Entry
from ctxengine.policy.defaults import (
    CACHE_TTL_SECONDS_BY_PROVIDER,
    DEFAULT_CACHE_TTL_SECONDS,
    PRECOMPUTE_TAIL_KEEP_FACTOR,
    PRECOMPUTE_TAIL_MIN_TOKENS,
    PRECOMPUTE_TAIL_SHARE,
)


def cache_ttl(provider: str | None, *, extended: bool = False) -> float:
    """The prompt-cache lifetime of ``provider`` (a model profile's ``provider``:
    ``"anthropic"``, ``"openai"``, ``"gemini"`` …), in seconds: its extended lifetime when
    ``extended`` (Anthropic 1 hour, OpenAI 24 hours), else its default one
    (:data:`~ctxengine.policy.defaults.CACHE_TTL_SECONDS_BY_PROVIDER`); an unknown or missing
    provider gets :data:`~ctxengine.policy.defaults.DEFAULT_CACHE_TTL_SECONDS`."""
    found = CACHE_TTL_SECONDS_BY_PROVIDER.get(provider or "")
    if found is None:
        return DEFAULT_CACHE_TTL_SECONDS
    return found[1] if extended else found[0]


def seconds_between(earlier: str | None, later: str | None) -> float | None:
    """Seconds from ``earlier`` to ``later`` (ISO-8601 times), or ``None`` when either is
    missing or unreadable (or one has a time zone and the other none)."""
    if earlier is None or later is None:
        return None
    try:
        return (datetime.fromisoformat(later) - datetime.fromisoformat(earlier)).total_seconds()
    except (TypeError, ValueError):
        return None


def reply_gap(entries: Sequence[Entry]) -> float | None:
    """Seconds from the latest assistant reply to the newest message of ``entries`` (the
    log in append order): how long the provider's cache has gone unused when the next
    request is sent. Records (prunes, compactions, pins) are skipped: their times are when
    the ladder wrote them, not when the conversation moved. ``None`` when there is no reply,
    no message after it, or a time is missing or unreadable. O(entries since that reply)."""
    newest: str | None = None
    for entry in reversed(entries):
        message = entry.message
        if message is None:
            continue
        if message.role == "assistant":
            return seconds_between(entry.created_at, newest) if newest is not None else None
        if newest is None:
            newest = entry.created_at
    return None


def tail_limit(keep_recent: int, budget_tokens: int) -> int:
    """The most tokens of entries appended after a precomputed compaction's snapshot that
    it may still be adopted with: OpenCode's ``min(max(keep * 2, 30,000), floor(budget *
    0.25))`` (:data:`~ctxengine.policy.defaults.PRECOMPUTE_TAIL_MIN_TOKENS`), with
    ``keep_recent`` the keep-recent budget and ``budget_tokens`` the trigger, in tokens."""
    wide = max(keep_recent * PRECOMPUTE_TAIL_KEEP_FACTOR, PRECOMPUTE_TAIL_MIN_TOKENS)
    return min(wide, int(budget_tokens * PRECOMPUTE_TAIL_SHARE))


__all__ = ["cache_ttl", "reply_gap", "seconds_between", "tail_limit"]
