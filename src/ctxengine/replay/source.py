"""The cache model checked against the cache reads a transcript recorded.

Claude Code, Codex and pi record, per reply, the prompt tokens their provider read from its
prompt cache. :func:`check_cache` rebuilds the requests the source agent itself sent — its
own log projected before each reply, with its own compactions and no ladder of ours — renders
them, feeds them to the simulated cache (:class:`~ctxengine.cost.PrefixCache`) at the times
the transcript recorded, and sets the simulated reads beside the recorded ones.

Two things the transcript does not hold are taken from its usage: the part of every request it
never records (the agent's system prompt and tool schemas: a head of
``first recorded prompt - first simulated prompt`` tokens, put before every request), and
the state of the provider's cache before the session began. So the first call is left out of
the comparison (it can only read what another session wrote), and a session with fewer than
two calls that record usage has nothing to compare.

A recorded break is a call that read at least the provider's minimum cacheable prefix less
than the previous call's prompt held (smaller differences are the cache's granularity). Newer
Claude Code transcripts say why a read missed (``message.diagnostics.cache_miss_reason``, kept
by the importer as ``meta["cache_diagnostics"]``): that cause is shown beside the simulated
one.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

from ctxengine.cost import (
    Block,
    CacheOutcome,
    CacheRequest,
    CacheRules,
    PrefixCache,
    break_cause,
)
from ctxengine.engine import Session
from ctxengine.model import Entry, Message, Usage, current_entries
from ctxengine.policy import Policy
from ctxengine.replay.loop import CacheSetup, parse_time
from ctxengine.replay.render import RenderedRequest, session_tools
from ctxengine.tokens.base import Estimator
from ctxengine.tokens.cache import CachingEstimator
from ctxengine.tokens.estimate import HeuristicEstimator

#: A window no request reaches, so that the source's own projection is not truncated.
_UNBOUNDED = 10**12
#: The key of the block that stands for the head the transcript does not record.
_HIDDEN_HEAD = 0x4EAD


@dataclass(frozen=True, slots=True)
class SourceCall:
    """One reply of the source and its request.

    Attributes:
        call: 1-based number among the replies that record usage.
        at: when the reply was recorded (seconds), or ``None``.
        recorded: the usage the provider reported.
        simulated: what the cache model did with the rebuilt request.
        recorded_break: the recorded read fell short of the previous prompt (module doc).
        recorded_cause: the transcript's own reason for a missed read (``None`` without one).
        recorded_missed: the tokens it says missed, when it says.
        simulated_cause: the cache model's reason (``compaction`` when the source compacted
            before this call, else :func:`~ctxengine.cost.break_cause`), or ``None``.
    """

    call: int
    at: float | None
    recorded: Usage
    simulated: CacheOutcome
    recorded_break: bool
    recorded_cause: str | None
    recorded_missed: int | None
    simulated_cause: str | None


@dataclass(slots=True)
class CacheCheck:
    """Simulated against recorded cache reads over one session.

    Attributes:
        rules: the cache rules simulated.
        head_tokens: the unrecorded head put before every request (tokens).
        calls: every reply that records usage, in order.
    """

    rules: CacheRules
    head_tokens: int
    calls: list[SourceCall] = field(default_factory=list)

    @property
    def compared(self) -> list[SourceCall]:
        """The calls compared: all but the first."""
        return self.calls[1:]

    @property
    def recorded_read(self) -> int:
        """Recorded cache reads of the compared calls (tokens)."""
        return sum(c.recorded.cache_read_tokens for c in self.compared)

    @property
    def simulated_read(self) -> int:
        """Simulated cache reads of the compared calls (tokens)."""
        return sum(c.simulated.read for c in self.compared)

    @property
    def recorded_prompt(self) -> int:
        """Recorded prompt tokens of the compared calls."""
        return sum(c.recorded.prompt_tokens for c in self.compared)

    @property
    def simulated_prompt(self) -> int:
        """Simulated prompt tokens of the compared calls."""
        return sum(c.simulated.prompt for c in self.compared)

    @property
    def read_ratio(self) -> float | None:
        """Simulated over recorded cache reads (``None`` when nothing was recorded read)."""
        return self.simulated_read / self.recorded_read if self.recorded_read else None

    @property
    def recorded_share(self) -> float | None:
        """Share of the recorded prompt tokens read from the cache."""
        return self.recorded_read / self.recorded_prompt if self.recorded_prompt else None

    @property
    def simulated_share(self) -> float | None:
        """Share of the simulated prompt tokens read from the cache."""
        return self.simulated_read / self.simulated_prompt if self.simulated_prompt else None

    @property
    def share_ratio(self) -> float | None:
        """Simulated over recorded share: how well the model predicts the cache-read ratio,
        free of the token estimate's own error."""
        rec, sim = self.recorded_share, self.simulated_share
        return sim / rec if rec and sim is not None else None

    @property
    def breaks(self) -> list[SourceCall]:
        """Compared calls where either the record or the model shows a break."""
        return [c for c in self.compared if c.recorded_break or c.simulated_cause is not None]

    def to_dict(self) -> dict[str, Any]:
        """JSON view: rules, head, totals, ratios, and the breaks with both causes."""

        def r(value: float | None) -> float | None:
            return None if value is None else round(value, 4)

        return {
            "provider": self.rules.provider,
            "head_tokens": self.head_tokens,
            "calls": len(self.calls),
            "compared": len(self.compared),
            "recorded_read": self.recorded_read,
            "simulated_read": self.simulated_read,
            "recorded_prompt": self.recorded_prompt,
            "simulated_prompt": self.simulated_prompt,
            "read_ratio": r(self.read_ratio),
            "recorded_share": r(self.recorded_share),
            "simulated_share": r(self.simulated_share),
            "share_ratio": r(self.share_ratio),
            "breaks": [
                {
                    "call": c.call,
                    "at": c.at,
                    "recorded_read": c.recorded.cache_read_tokens,
                    "recorded_prompt": c.recorded.prompt_tokens,
                    "recorded_break": c.recorded_break,
                    "recorded_cause": c.recorded_cause,
                    "recorded_missed": c.recorded_missed,
                    "simulated_read": c.simulated.read,
                    "simulated_cause": c.simulated_cause,
                }
                for c in self.breaks
            ],
        }


def diagnosis(message: Message) -> tuple[str | None, int | None]:
    """The reason and missed tokens a Claude Code reply records for its cache read
    (``meta["cache_diagnostics"]``: ``{"cache_miss_reason": {"type": …,
    "cache_missed_input_tokens": n}}``, the count also accepted beside the reason), or
    ``(None, None)``."""
    diag = message.meta.get("cache_diagnostics")
    if not isinstance(diag, Mapping):
        return None, None
    reason = diag.get("cache_miss_reason")
    kind = reason.get("type") if isinstance(reason, Mapping) else None
    missed = reason.get("cache_missed_input_tokens") if isinstance(reason, Mapping) else None
    if missed is None:
        missed = diag.get("cache_missed_input_tokens")
    return (
        kind if isinstance(kind, str) else None,
        missed if isinstance(missed, int) and not isinstance(missed, bool) else None,
    )


def records_cache_reads(entries: Sequence[Entry]) -> bool:
    """Some reply of ``entries`` records a cache read."""
    return any(
        e.message is not None and e.message.usage is not None and e.message.usage.cache_read_tokens
        for e in entries
    )


def check_cache(
    entries: Sequence[Entry],
    rules: CacheRules,
    *,
    long_ttl: bool = False,
    estimator: Estimator | None = None,
) -> CacheCheck | None:
    """Simulate the source's own requests under ``rules`` and set them beside the recorded
    usage (module doc).

    Returns:
        The :class:`CacheCheck`, or ``None`` when no reply records a cache read or fewer than
        two record usage.
    """
    entries = current_entries(entries)
    if not records_cache_reads(entries):
        return None
    counter = CachingEstimator(estimator or HeuristicEstimator())
    policy = Policy(
        truncate_max_chars=_UNBOUNDED, truncate_max_window_ratio=1.0, prune_enabled=False
    )
    session = Session(_UNBOUNDED, policy=policy, estimator=estimator)
    render_as = CacheSetup(rules, long_ttl).render_as
    messages = [e.message for e in entries if e.message is not None]
    rendered = RenderedRequest(
        render_as, counter, blocks=True, tools=session_tools(messages, render_as)
    )
    cache = PrefixCache(rules, long_ttl=long_ttl)
    check: CacheCheck | None = None
    previous: Usage | None = None
    compacted = False
    previous_role = ""
    for entry in entries:
        message = entry.message
        if message is None:
            compacted = compacted or entry.kind == "compaction"
            session.append(entry.body, entry_id=entry.id, created_at=entry.created_at)
            continue
        first_piece = message.role == "assistant" and previous_role != "assistant"
        usage = message.usage
        if first_piece and usage is not None and not usage.is_zero:
            update = rendered.update(session.project(), check=False)
            if check is None:
                head = max(0, usage.prompt_tokens - sum(b.tokens for b in update.blocks))
                check = CacheCheck(rules, head)
            blocks = [Block(_HIDDEN_HEAD, check.head_tokens), *update.blocks]
            outcome = cache.send(
                CacheRequest(
                    blocks,
                    head_blocks=update.head_blocks + 1,
                    at=parse_time(entry.created_at),
                    reuse=update.reuse + 1,
                )
            )
            cause = _simulated_cause(outcome, compacted)
            kind, missed = diagnosis(message)
            check.calls.append(
                SourceCall(
                    call=len(check.calls) + 1,
                    at=parse_time(entry.created_at),
                    recorded=usage,
                    simulated=outcome,
                    recorded_break=_recorded_break(previous, usage, rules),
                    recorded_cause=kind,
                    recorded_missed=missed,
                    simulated_cause=cause,
                )
            )
            previous, compacted = usage, False
        previous_role = message.role
        session.append(message, entry_id=entry.id, created_at=entry.created_at)
    if check is None or len(check.calls) < 2:
        return None
    return check


def _recorded_break(previous: Usage | None, usage: Usage, rules: CacheRules) -> bool:
    if previous is None:
        return False
    return previous.prompt_tokens - usage.cache_read_tokens >= rules.min_prefix_tokens


def _simulated_cause(outcome: CacheOutcome, compacted: bool) -> str | None:
    cause = break_cause(outcome)
    if cause == "edit" and compacted:
        return "compaction"
    return cause
