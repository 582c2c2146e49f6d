"""Replay a recorded session as a live agent under ctxengine would have run it.

Every message entry of the source log is appended to a fresh :class:`~ctxengine.Session`
with the time the source recorded for it;
before each assistant message the context is ``prepare()``-d (running the ladder when the
trigger is reached), rendered for each provider and validated. The source's own compactions
are not replayed: the session is compacted by ctxengine's policy alone. A summary the session
started from is the exception (:func:`leading_summaries`: a session continued from a
summary, a chat share written after a compression): the history it replaced is not in the
log, so it is appended where the log holds it, and the replay starts from it as the agent did.

Validation is incremental within an epoch (:mod:`ctxengine.replay.render`): each request's
new tail is rendered and checked, and a compaction or prune checks the whole request once,
so a replay costs time in proportion to the session. ``sample=N`` instead validates every
Nth request in full and leaves the others unchecked (``sample=1``: every request in full).

With a :class:`CacheSetup` every request is also fed to a simulated prompt cache
(:class:`~ctxengine.cost.PrefixCache`) at the time the transcript recorded for its reply,
and each step carries what the cache read and wrote and why it broke.

Provider usage recorded in the source is dropped by default: it measured the source agent's
context, not ours, and would make a wrong usage anchor after our first compaction.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass, field, replace
from datetime import datetime

from ctxengine.cost import CacheOutcome, CacheRequest, CacheRules, PrefixCache, break_cause
from ctxengine.engine import LadderEvent, Session
from ctxengine.errors import ConfigError
from ctxengine.model import CompactionRecord, Entry, Message, current_entries
from ctxengine.policy import DEFAULT_POLICY, Policy
from ctxengine.projection.context import Context
from ctxengine.replay.render import (
    RENDERERS,
    VALIDATED_PROVIDERS,
    Checked,
    RenderedRequest,
    session_tools,
)
from ctxengine.summarizers.base import Summarizer
from ctxengine.tokens.base import Estimator
from ctxengine.tokens.cache import CachingEstimator
from ctxengine.tokens.estimate import HeuristicEstimator

__all__ = [
    "RENDERERS",
    "VALIDATED_PROVIDERS",
    "CacheSetup",
    "ReplayResult",
    "ReplayStep",
    "parse_time",
    "replay",
    "request_times",
    "source_messages",
]


@dataclass(frozen=True, slots=True)
class CacheSetup:
    """The prompt cache a replay simulates.

    Attributes:
        rules: the provider's cache rules.
        long_ttl: prefixes are written with the long lifetime.
    """

    rules: CacheRules
    long_ttl: bool = False

    @property
    def render_as(self) -> str:
        """The renderer whose requests the cache sees: Anthropic's for a cache with
        breakpoints, OpenAI's for an automatic one."""
        return "anthropic" if self.rules.mode == "breakpoints" else "openai"


@dataclass(frozen=True, slots=True)
class ReplayStep:
    """One model call of the replay.

    Attributes:
        call: 1-based call number.
        entries: history entries (source messages) seen before this call.
        tokens: estimated context size in tokens sent on this call.
        messages: number of messages in the context.
        epoch: compactions so far.
        events: ladder steps taken while preparing this call.
        problems: per provider, the protocol violations found (empty when valid or not
            checked).
        checked: ``"tail"`` (the new tail validated), ``"full"`` or ``"none"``.
        at: when the reply was recorded (seconds since the epoch), or ``None``.
        output_tokens: estimated tokens of the reply this call received.
        cache: what the simulated prompt cache did (``None`` without a :class:`CacheSetup`).
        cause: why the cache broke on this call (``"compaction"``, ``"prune"``,
            ``"head change"``, ``"edit"``, ``"expired"``, ``"lookback"``), or ``None``.
        idle_s: seconds from the latest reply to the newest message before this call, by
            the transcript's times (:attr:`~ctxengine.engine.Session.idle_seconds`): how long the
            provider's cache went unused; ``None`` before the first reply or without times.
    """

    call: int
    entries: int
    tokens: int
    messages: int
    epoch: int
    events: tuple[LadderEvent, ...]
    problems: dict[str, list[str]]
    checked: Checked = "full"
    at: float | None = None
    output_tokens: int = 0
    cache: CacheOutcome | None = None
    cause: str | None = None
    idle_s: float | None = None

    @property
    def changes_prefix(self) -> bool:
        """The ladder changed the context before its tail for this call (a prune or a
        compaction): the provider's cached prefix is lost."""
        return any(e.step in PREFIX_STEPS for e in self.events)


#: Ladder steps that change the context before its tail.
PREFIX_STEPS = frozenset({"prune", "compaction"})


@dataclass(slots=True)
class ReplayResult:
    """A whole replay.

    Attributes:
        steps: one per model call.
        session: the session after the last message (its history holds the ladder's records).
        window: the window replayed under, in tokens.
        final: the context of the last call (``None`` without calls).
    """

    steps: list[ReplayStep] = field(default_factory=list)
    session: Session | None = None
    window: int = 0
    final: Context | None = None

    @property
    def compactions(self) -> int:
        """Compactions recorded during the replay."""
        return sum(1 for s in self.steps for e in s.events if e.step == "compaction")

    @property
    def prunes(self) -> int:
        """Prunes recorded during the replay."""
        return sum(1 for s in self.steps for e in s.events if e.step == "prune")

    def prefix_changes(self, ttl_s: float) -> tuple[int, int]:
        """``(calls whose context the ladder changed before its tail, those of them that
        came at least ``ttl_s`` seconds after the previous reply)``: how many prefix-changing
        steps (prunes, compactions) landed on a prompt cache already cold, by the
        transcript's times (a call without times counts as warm)."""
        changed = [s for s in self.steps if s.changes_prefix]
        cold = sum(1 for s in changed if s.idle_s is not None and s.idle_s >= ttl_s)
        return len(changed), cold

    @property
    def invalid(self) -> int:
        """Calls whose request failed validation for at least one provider."""
        return sum(1 for s in self.steps if any(s.problems.values()))

    @property
    def max_tokens(self) -> int:
        """Largest context sent, in tokens."""
        return max((s.tokens for s in self.steps), default=0)


def source_messages(entries: Iterable[Entry], *, keep_usage: bool = False) -> list[Message]:
    """The message entries of a log, without its compaction/prune records and the entries a
    supersede record withdrew (and without provider usage unless ``keep_usage``)."""
    out: list[Message] = []
    for e in current_entries(list(entries)):
        m = e.message
        if m is None:
            continue
        out.append(m if keep_usage or m.usage is None else replace(m, usage=None))
    return out


def leading_summaries(
    entries: Iterable[Entry],
) -> dict[int, list[tuple[CompactionRecord, str | None]]]:
    """The compaction records written by another system (summarizer ``imported``) that come
    before the log's first assistant message: summaries of a history the log does not hold
    (a Claude Code session continued from a summary, a Gemini CLI chat share written after a
    compression), by the index in :func:`source_messages` of the message each precedes (the
    number of messages when none does), in log order, each with its ``created_at``."""
    out: dict[int, list[tuple[CompactionRecord, str | None]]] = {}
    n = 0
    for e in current_entries(list(entries)):
        m = e.message
        if m is not None:
            if m.role == "assistant":
                break
            n += 1
        elif isinstance(e.body, CompactionRecord) and e.body.summarizer == "imported":
            out.setdefault(n, []).append((e.body, e.created_at))
    return out


def request_times(entries: Iterable[Entry]) -> list[float | None]:
    """Per message of :func:`source_messages` (records and withdrawn entries skipped), its
    ``created_at`` in seconds since the epoch, ``None`` where it is missing or not
    ISO-8601."""
    out: list[float | None] = []
    for e in current_entries(list(entries)):
        if e.message is None:
            continue
        out.append(parse_time(e.created_at))
    return out


def source_stamps(entries: Iterable[Entry]) -> list[str | None]:
    """Per message of :func:`source_messages`, its recorded ``created_at`` as written (the
    replayed session's entries keep it, so that cache-aware timing reads the transcript's
    own gaps; ``None`` where it is missing: the time of the replay)."""
    return [e.created_at or None for e in current_entries(list(entries)) if e.message is not None]


def parse_time(text: str | None) -> float | None:
    """An ISO-8601 time (``Z`` allowed) in seconds since the epoch, or ``None``."""
    if not text:
        return None
    try:
        return datetime.fromisoformat(text).timestamp()
    except ValueError:
        return None


def replay(
    entries: Sequence[Entry],
    *,
    window: int,
    policy: Policy = DEFAULT_POLICY,
    estimator: Estimator | None = None,
    providers: Sequence[str] = VALIDATED_PROVIDERS,
    keep_usage: bool = False,
    on_step: Callable[[ReplayStep], None] | None = None,
    sample: int = 0,
    cache: CacheSetup | None = None,
    summarizer: Summarizer | None = None,
    cwd: str = "",
) -> ReplayResult:
    """Replay ``entries`` under ``policy`` with a ``window``-token model.

    Args:
        entries: a session log (e.g. ``ImportedSession.entries``).
        window: the model's context window in tokens.
        policy: ladder configuration.
        estimator: token estimator (default heuristic).
        providers: providers to render and validate each request for (a subset of
            :data:`VALIDATED_PROVIDERS`).
        keep_usage: keep the source's usage on assistant messages as usage anchors.
        on_step: called after each model call (progress bars).
        sample: 0 (default): validate every request, its new tail within an epoch and the
            whole request after a compaction or prune; N ≥ 1: validate every Nth request
            (calls N, 2N, …; and the first) in full and leave the others unchecked.
        cache: simulate this prompt cache over the requests (rendered for
            :attr:`CacheSetup.render_as`, with every tool the session calls declared from the
            first request on, as an agent declares its tools).
        summarizer: the session's summarizer (default the one the policy names; a policy
            naming a model summarizer needs one here, e.g. the extractive one standing in).
        cwd: the session's working directory, when known (``ImportedSession.meta["cwd"]``):
            the session's summarizer gets it (see :class:`~ctxengine.engine.Session`).

    Returns:
        The :class:`ReplayResult`.

    Raises:
        ConfigError: the policy's reserve leaves no room in ``window``; a negative
            ``sample``; a provider that is not validated.
        CompactionLoopError: the ladder failed repeatedly.
    """
    if sample < 0:
        raise ConfigError(f"sample must be 0 or a positive number of calls, got {sample}")
    unknown = sorted(set(providers) - set(VALIDATED_PROVIDERS))
    if unknown:
        raise ConfigError(f"cannot validate for {unknown}; known: {list(VALIDATED_PROVIDERS)}")
    counter = CachingEstimator(estimator or HeuristicEstimator())
    session = Session(window, policy=policy, estimator=estimator, summarizer=summarizer, cwd=cwd)
    result = ReplayResult(session=session, window=window)
    renders = {p: RenderedRequest(p, counter) for p in providers}
    sim: PrefixCache | None = None
    messages = source_messages(entries, keep_usage=keep_usage)
    if cache is not None:
        target = renders.setdefault(cache.render_as, RenderedRequest(cache.render_as, counter))
        target.blocks = True
        target.tools = session_tools(messages, cache.render_as)
        sim = PrefixCache(cache.rules, long_ttl=cache.long_ttl)
    times = request_times(entries)
    stamps = source_stamps(entries)
    leading = leading_summaries(entries)
    source_ids = [e.id for e in current_entries(list(entries)) if e.message is not None]
    #: source entry id -> replayed entry id, for the messages a leading summary names (those
    #: before the last one)
    renamed: dict[str, str] = {}
    last_leading = max(leading, default=0)
    seen_user = False
    previous_role = ""
    for i, message in enumerate(messages):
        # A reply written as several assistant messages is one model call: prepare before
        # its first piece only.
        if message.role == "assistant" and previous_role != "assistant" and seen_user:
            n_events = len(session.events)
            idle_s = session.idle_seconds
            ctx = session.prepare()
            call = len(result.steps) + 1
            events = tuple(session.events[n_events:])
            full = sample > 0 and (call == 1 or call % sample == 0)
            checked: Checked = "none"
            problems: dict[str, list[str]] = {}
            outcome: CacheOutcome | None = None
            cause: str | None = None
            for provider, rendered in renders.items():
                check = provider in providers and (sample == 0 or full)
                if not check and not rendered.blocks:
                    continue
                update = rendered.update(ctx, check=check, full=full)
                if check:
                    problems[provider] = update.problems
                    checked = update.checked if checked != "full" else checked
                if rendered.blocks and sim is not None:
                    outcome = sim.send(
                        CacheRequest(
                            update.blocks, update.head_blocks, at=times[i], reuse=update.reuse
                        )
                    )
                    cause = _cause(outcome, events)
            for provider in providers:
                problems.setdefault(provider, [])
            step = ReplayStep(
                call=call,
                entries=i,
                tokens=ctx.tokens,
                messages=len(ctx.messages),
                epoch=ctx.epoch,
                events=events,
                problems={p: problems[p] for p in providers},
                checked=checked,
                at=times[i],
                output_tokens=_reply_tokens(messages, i, counter),
                cache=outcome,
                cause=cause,
                idle_s=idle_s,
            )
            result.steps.append(step)
            result.final = ctx
            if on_step is not None:
                on_step(step)
        if message.role == "user":
            seen_user = True
        previous_role = message.role
        for record, created_at in leading.get(i, ()):
            session.append(_renamed(record, renamed), created_at=created_at)
        entry = session.append(message, created_at=stamps[i])
        if i < last_leading:
            renamed[source_ids[i]] = entry.id
    session.close()  # a background compaction still held is given up (its thread joined)
    return result


def _renamed(record: CompactionRecord, renamed: dict[str, str]) -> CompactionRecord:
    """A leading summary's record (:func:`leading_summaries`) naming the replayed entries
    instead of the source's: the messages it keeps verbatim before or after it that were
    replayed already; those that were not are left out."""

    def ids(names: tuple[str, ...] | None) -> tuple[str, ...] | None:
        if names is None:
            return None
        return tuple(renamed[n] for n in names if n in renamed) or None

    first = record.first_kept_id
    return replace(
        record,
        first_kept_id=renamed.get(first) if first is not None else None,
        retained_ids=ids(record.retained_ids),
        lead_ids=ids(record.lead_ids),
    )


def _cause(outcome: CacheOutcome, events: Sequence[LadderEvent]) -> str | None:
    """Why the cache broke: what the ladder did before this call when the change lies
    after the head, else the cache's own reason (:func:`~ctxengine.cost.break_cause`)."""
    cause = break_cause(outcome)
    if cause == "edit":
        steps = {e.step for e in events}
        if "compaction" in steps:
            return "compaction"
        if "prune" in steps:
            return "prune"
    return cause


def _reply_tokens(messages: Sequence[Message], start: int, estimator: Estimator) -> int:
    """Estimated tokens of the reply starting at ``messages[start]``: its consecutive
    assistant messages."""
    total = 0
    for m in messages[start:]:
        if m.role != "assistant":
            break
        total += estimator.message(m)
    return total
