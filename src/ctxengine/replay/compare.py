"""Several policies replayed over the same session, side by side, with cost and prompt-cache
accounting.

For each policy, :func:`compare` replays the session (:func:`~ctxengine.replay.replay`) with a
simulated prompt cache and sums, per policy: model calls, compactions, prunes, summarizer
calls and their tokens, peak and mean context, the input tokens billed (uncached, read from
the cache, written to it), cache breaks by cause, the estimated cost, and which key facts the
final context still holds (:mod:`~ctxengine.replay.survival`).

A policy that names a model summarizer (``llm``, ``hybrid``) is replayed offline: the
extractive summarizer writes its continuation state, and the model call it stands for is
estimated — input: the summarized history (context before less context after, plus the new
state) and the summary prompt (:data:`~ctxengine.summarizers.prompts.SYSTEM_PROMPT` and
:data:`~ctxengine.summarizers.prompts.TEMPLATE`); output: the state written. A policy that
verifies its summary (``summary_verify``, Gemini CLI) makes a second call per compaction: the
same input plus the draft and :data:`~ctxengine.summarizers.prompts.VERIFY`, the state again
as output. Reports say so.

JSON (:meth:`Comparison.to_dict`, ``ctxengine replay --policy … --json``), schema
``ctxengine.replay.comparison/1``; tokens are counted as ``tokenizer`` names
(:func:`~ctxengine.tokens.names.counter_name` of the replay's estimator: ``"estimate"``, the
default estimate; ``"estimate:<encoding>"``; ``"exact:<encoding>"``), costs USD::

    {"schema": "ctxengine.replay.comparison/1",
     "source": str, "window": int, "sample": int, "tokenizer": str,
     "model": {"requested": str|null, "priced_as": str, "matched": "exact"|"prefix"|"default",
               "source": str, "checked": str},
     "cache": {"provider": str, "mode": "breakpoints"|"automatic", "min_prefix_tokens": int,
               "granularity_tokens": int, "max_breakpoints": int, "lookback_blocks": int,
               "ttl_s": float, "timed": bool},
     "notes": [str],
     "facts": {"first_request": str|null, "constraints": int, "modified_files": int,
               "last_error": str|null},
     "policies": [{
         "name": str, "calls": int, "compactions": int, "prunes": int, "invalid": int,
         "summarizer": {"name": str, "stand_in": bool, "calls": int, "input_tokens": int,
                        "output_tokens": int},
         "context": {"peak": int, "mean": int, "overflow_call": int|null},
         "input_tokens": {"billed": int, "uncached": int, "cache_read": int,
                          "cache_write": int},
         "output_tokens": int,
         "cache_breaks": {cause: int}, "cache_lost_tokens": int,
         "prefix_changes": {"steps": int, "on_cold_cache": int},
         "cost_usd": {"requests": float, "summarizer": float, "total": float},
         "survival": {"first_request": bool|null, "constraints": [int, int],
                      "modified_files": [int, int], "last_error": bool|null},
         "seconds": float,
         "steps": [...]            # only with steps=True: one object per call
     }],
     "cache_check": {...}|null}   # ctxengine.replay.source.CacheCheck.to_dict()

A step (``steps=True``): ``{"call", "entries", "tokens", "messages", "epoch", "checked",
"at", "output_tokens", "events": [step names], "cache": {"prompt", "read", "write",
"expected", "common", "changed_block", "head_changed", "expired"}|null, "cause", "invalid",
"idle_s"}``.

``prefix_changes``: the calls whose context the ladder changed before its tail (a prune or a
compaction) and how many of them came at least the cache's lifetime (``cache.ttl_s``) after
the previous reply, by the transcript's times: prefix-changing steps that landed on a cache
already cold, which cost no cached prefix (:meth:`~ctxengine.replay.ReplayResult.
prefix_changes`). Cache-aware timing (``Policy.prune_cache_cold_only``,
``idle_compact_seconds``) moves them there.
"""

from __future__ import annotations

import gc
import multiprocessing
import threading
import time
from collections.abc import Callable, Iterator, Sequence
from concurrent.futures import ProcessPoolExecutor, as_completed
from contextlib import ExitStack, contextmanager
from dataclasses import dataclass, field, replace
from functools import partial
from typing import Any

from ctxengine.cost import CacheRules, PriceChoice, PriceTable
from ctxengine.model import CompactionRecord, Entry, current_entries
from ctxengine.policy import Policy
from ctxengine.policy.defaults import MODEL_SUMMARIZER_NAMES
from ctxengine.replay.loop import CacheSetup, ReplayResult, ReplayStep, replay
from ctxengine.replay.survival import SessionFacts, Survival, session_facts, survival
from ctxengine.summarizers.extractive import ExtractiveSummarizer
from ctxengine.summarizers.prompts import SYSTEM_PROMPT, TEMPLATE, VERIFY
from ctxengine.tokens.base import Estimator
from ctxengine.tokens.estimate import HeuristicEstimator
from ctxengine.tokens.names import DEFAULT_COUNTER, counter_name

SCHEMA = "ctxengine.replay.comparison/1"
#: The causes of a cache break, in the order reports list them.
CAUSES: tuple[str, ...] = ("compaction", "prune", "head change", "edit", "expired", "lookback")


@dataclass(frozen=True, slots=True)
class SummaryCalls:
    """The model summary calls a policy makes (estimated when offline).

    Attributes:
        name: the summarizer the policy names.
        stand_in: the extractive summarizer wrote the states in its place.
        calls: model calls (0 for the extractive summarizer, which calls no model).
        input_tokens / output_tokens: their estimated size in tokens.
    """

    name: str
    stand_in: bool
    calls: int
    input_tokens: int
    output_tokens: int


@dataclass(slots=True)
class PolicyRun:
    """One policy's replay and its accounting.

    Attributes:
        name: the policy's name as asked for.
        result: the replay.
        summary: its summarizer calls.
        survival: key facts present in its final context.
        price: the model prices used.
        long_ttl: cache writes priced at the long lifetime.
        seconds: wall time of the replay.
        trigger: the policy's trigger at the replayed window, in tokens (``None`` without
            a session).
    """

    name: str
    result: ReplayResult
    summary: SummaryCalls
    survival: Survival
    price: PriceChoice
    long_ttl: bool = False
    seconds: float = 0.0
    trigger: int | None = None

    @property
    def steps(self) -> list[ReplayStep]:
        """The replay's model calls."""
        return self.result.steps

    @property
    def peak_context(self) -> int:
        """Largest context sent (tokens)."""
        return self.result.max_tokens

    @property
    def mean_context(self) -> int:
        """Mean context sent (tokens, rounded down)."""
        steps = self.steps
        return sum(s.tokens for s in steps) // len(steps) if steps else 0

    @property
    def overflow_call(self) -> int | None:
        """The first call whose context exceeds the window, or ``None``."""
        return next((s.call for s in self.steps if s.tokens > self.result.window), None)

    def _sum(self, field_name: str) -> int:
        return sum(getattr(s.cache, field_name) for s in self.steps if s.cache is not None)

    @property
    def billed_input(self) -> int:
        """Input tokens of every request (uncached, read and written)."""
        return self._sum("prompt")

    @property
    def cache_read(self) -> int:
        """Input tokens read from the cache."""
        return self._sum("read")

    @property
    def cache_write(self) -> int:
        """Input tokens written to the cache."""
        return self._sum("write")

    @property
    def uncached(self) -> int:
        """Input tokens neither read nor written."""
        return self.billed_input - self.cache_read - self.cache_write

    @property
    def output_tokens(self) -> int:
        """Estimated tokens of every reply."""
        return sum(s.output_tokens for s in self.steps)

    @property
    def breaks(self) -> dict[str, int]:
        """Cache breaks by cause (only the causes seen)."""
        out: dict[str, int] = {}
        for s in self.steps:
            if s.cause is not None:
                out[s.cause] = out.get(s.cause, 0) + 1
        return {c: out[c] for c in (*CAUSES, *sorted(set(out) - set(CAUSES))) if c in out}

    @property
    def ttl_s(self) -> float:
        """The simulated cache's lifetime, in seconds (the long one when written so)."""
        rules = self.price.rules
        return rules.long_ttl_s if self.long_ttl else rules.ttl_s

    @property
    def lost_tokens(self) -> int:
        """Tokens the cache held for a call that the call did not read, summed."""
        return sum(s.cache.lost for s in self.steps if s.cache is not None)

    @property
    def request_cost(self) -> float:
        """USD of the requests."""
        price = self.price.price
        return price.cost(
            uncached=self.uncached,
            cache_read=self.cache_read,
            cache_write=self.cache_write,
            output=self.output_tokens,
            long_ttl=self.long_ttl,
        )

    @property
    def summary_cost(self) -> float:
        """USD of the model summary calls (sent uncached: a summary request shares no prefix
        with the conversation's)."""
        s = self.summary
        return self.price.price.cost(
            uncached=s.input_tokens, cache_read=0, cache_write=0, output=s.output_tokens
        )

    @property
    def cost(self) -> float:
        """USD in all."""
        return self.request_cost + self.summary_cost

    def to_dict(self, *, steps: bool = False) -> dict[str, Any]:
        """The JSON view described in the module docstring."""
        out: dict[str, Any] = {
            "name": self.name,
            "calls": len(self.steps),
            "compactions": self.result.compactions,
            "prunes": self.result.prunes,
            "invalid": self.result.invalid,
            "summarizer": {
                "name": self.summary.name,
                "stand_in": self.summary.stand_in,
                "calls": self.summary.calls,
                "input_tokens": self.summary.input_tokens,
                "output_tokens": self.summary.output_tokens,
            },
            "context": {
                "peak": self.peak_context,
                "mean": self.mean_context,
                "overflow_call": self.overflow_call,
            },
            "input_tokens": {
                "billed": self.billed_input,
                "uncached": self.uncached,
                "cache_read": self.cache_read,
                "cache_write": self.cache_write,
            },
            "output_tokens": self.output_tokens,
            "cache_breaks": self.breaks,
            "cache_lost_tokens": self.lost_tokens,
            "prefix_changes": dict(
                zip(("steps", "on_cold_cache"), self.result.prefix_changes(self.ttl_s), strict=True)
            ),
            "cost_usd": {
                "requests": round(self.request_cost, 6),
                "summarizer": round(self.summary_cost, 6),
                "total": round(self.cost, 6),
            },
            "survival": self.survival.to_dict(),
            "seconds": round(self.seconds, 3),
        }
        if steps:
            out["steps"] = [step_dict(s) for s in self.steps]
        return out


def step_dict(step: ReplayStep) -> dict[str, Any]:
    """One call as JSON (see the module docstring)."""
    cache = step.cache
    return {
        "call": step.call,
        "entries": step.entries,
        "tokens": step.tokens,
        "messages": step.messages,
        "epoch": step.epoch,
        "checked": step.checked,
        "at": step.at,
        "output_tokens": step.output_tokens,
        "events": [e.step for e in step.events],
        "cache": None
        if cache is None
        else {
            "prompt": cache.prompt,
            "read": cache.read,
            "write": cache.write,
            "expected": cache.expected,
            "common": cache.common,
            "changed_block": cache.changed_block,
            "head_changed": cache.head_changed,
            "expired": cache.expired,
        },
        "cause": step.cause,
        "invalid": any(step.problems.values()),
        "idle_s": step.idle_s,
    }


@dataclass(slots=True)
class Comparison:
    """Every policy's run over one session.

    Attributes:
        source: what was replayed (a path or a session id).
        window: the model window, in tokens.
        price: the prices used and the cache rules they name.
        long_ttl: cache writes at the long lifetime.
        sample: the replays' ``sample`` (0: every request validated).
        timed: the transcript records times (cache lifetimes applied).
        facts: the session's key facts.
        tokenizer: what counted the tokens (:func:`~ctxengine.tokens.names.counter_name`).
        runs: one per policy, in the order asked.
        notes: what a reader must know (stand-in summarizers, default prices, no times).
        cache_check: the cache model checked against recorded usage (set by the caller),
            as JSON, or ``None``.
    """

    source: str
    window: int
    price: PriceChoice
    long_ttl: bool
    sample: int
    timed: bool
    facts: SessionFacts
    tokenizer: str = DEFAULT_COUNTER
    runs: list[PolicyRun] = field(default_factory=list)
    notes: list[str] = field(default_factory=list)
    cache_check: dict[str, Any] | None = None

    def to_dict(self, *, steps: bool = False) -> dict[str, Any]:
        """The JSON view described in the module docstring."""
        price, rules = self.price.price, self.price.rules
        return {
            "schema": SCHEMA,
            "source": self.source,
            "window": self.window,
            "sample": self.sample,
            "tokenizer": self.tokenizer,
            "model": {
                "requested": self.price.requested,
                "priced_as": price.name,
                "matched": self.price.matched,
                "source": price.source,
                "checked": price.checked,
            },
            "cache": {
                "provider": rules.provider,
                "mode": rules.mode,
                "min_prefix_tokens": rules.min_prefix_tokens,
                "granularity_tokens": rules.granularity_tokens,
                "max_breakpoints": rules.max_breakpoints,
                "lookback_blocks": rules.lookback_blocks,
                "ttl_s": rules.long_ttl_s if self.long_ttl else rules.ttl_s,
                "timed": self.timed,
            },
            "notes": list(self.notes),
            "facts": {
                "first_request": self.facts.first_request,
                "constraints": len(self.facts.constraints),
                "modified_files": len(self.facts.modified_files),
                "last_error": self.facts.last_error,
            },
            "policies": [r.to_dict(steps=steps) for r in self.runs],
            "cache_check": self.cache_check,
        }


def recorded_model(entries: Sequence[Entry]) -> str | None:
    """The model most assistant messages of ``entries`` name (the first such on a tie), or
    ``None`` when none names one."""
    counts: dict[str, int] = {}
    for e in current_entries(entries):
        m = e.message
        if m is not None and m.role == "assistant" and m.model:
            counts[m.model] = counts.get(m.model, 0) + 1
    return max(counts, key=counts.__getitem__) if counts else None


def comparison_setup(
    entries: Sequence[Entry],
    prices: PriceTable,
    *,
    model: str | None = None,
    provider: str | None = None,
    rules: CacheRules | None = None,
) -> tuple[PriceChoice, bool]:
    """What every policy's replay of ``entries`` shares: the prices (of ``model``, else the
    model the transcript records, :func:`recorded_model`; ``rules`` laid over the priced
    model's cache rules when given) and whether the transcript records times.

    Raises:
        ConfigError: no prices for the model and no default.
    """
    choice = prices.lookup(model or recorded_model(entries), provider)
    if rules is not None:
        choice = replace(choice, rules=rules)
    timed = any(e.created_at for e in entries if e.message is not None)
    return choice, timed


def start_comparison(
    *,
    source: str,
    window: int,
    choice: PriceChoice,
    long_ttl: bool,
    sample: int,
    timed: bool,
    facts: SessionFacts,
    tokenizer: str = DEFAULT_COUNTER,
) -> Comparison:
    """A :class:`Comparison` with no run yet and the notes every comparison of these
    settings carries (the prices chosen, untimed transcripts, sampled validation, tokens
    estimated for or counted by an encoding; ``tokenizer``: :func:`~ctxengine.tokens.names.
    counter_name` of the replays' estimator)."""
    comparison = Comparison(
        source=source,
        window=window,
        price=choice,
        long_ttl=long_ttl,
        sample=sample,
        timed=timed,
        facts=facts,
        tokenizer=tokenizer,
    )
    comparison.notes.append(choice.note)
    kind, _, encoding = tokenizer.partition(":")
    if kind == "estimate" and encoding:
        comparison.notes.append(f"tokens are estimated for {encoding} ({tokenizer})")
    elif kind == "exact" and encoding:
        comparison.notes.append(
            f"text tokens are counted exactly by {encoding} ({tokenizer}), the rest estimated"
        )
    if not timed:
        comparison.notes.append("the transcript records no times: cached prefixes never expire")
    if sample:
        comparison.notes.append(
            f"--sample {sample}: every {sample}th request was validated in full and the others "
            "not at all; invalid requests counts those checked"
        )
    return comparison


def add_run(comparison: Comparison, name: str, replayed: PolicyReplay, held: Survival) -> None:
    """Append the run of policy ``name`` (its replay and the key facts its final context
    ``held``) to ``comparison``, and the note its summarizer adds."""
    comparison.runs.append(
        PolicyRun(
            name=name,
            result=replayed.result,
            summary=replayed.summary,
            survival=held,
            price=comparison.price,
            long_ttl=comparison.long_ttl,
            seconds=replayed.seconds,
            trigger=replayed.trigger,
        )
    )
    if replayed.note:
        comparison.notes.append(replayed.note)


def compare(
    entries: Sequence[Entry],
    policies: Sequence[tuple[str, Policy]],
    *,
    window: int,
    prices: PriceTable,
    source: str = "",
    model: str | None = None,
    provider: str | None = None,
    rules: CacheRules | None = None,
    long_ttl: bool = False,
    sample: int = 0,
    estimator: Estimator | None = None,
    on_step: Callable[[str, ReplayStep], None] | None = None,
    jobs: int = 1,
    cwd: str = "",
    on_error: Callable[[str, Exception], None] | None = None,
    on_run: Callable[[str, PolicyReplay], None] | None = None,
) -> Comparison:
    """Replay ``entries`` under every policy of ``policies`` (``(name, policy)`` pairs).

    Args:
        entries: the session log.
        policies: the policies, in the order to report them.
        window: the model window in tokens (the same for every policy).
        prices: the price table.
        source: the session's label for reports.
        model: the model to price (default: the one the transcript records,
            :func:`recorded_model`).
        provider: whose default model prices an unknown model (default: the one its name
            suggests).
        rules: the cache rules to simulate (default: those of the priced model's provider).
        long_ttl: cache writes use the long lifetime.
        sample: the replays' ``sample`` (see :func:`~ctxengine.replay.replay`).
        estimator: token estimator (default heuristic).
        on_step: called with the policy's name after each of its model calls (with
            ``jobs`` > 1: for each call of a policy once its replay has come back).
        jobs: policies replayed at once, each in its own process (``1``: one after another
            in this process); the results are the same either way, only the timings differ.
        cwd: the session's working directory, when known (see :func:`~ctxengine.replay.replay`).
        on_error: when given, a policy whose replay raises an :class:`Exception` is handed
            to it with the exception and left out of the comparison (the others go on);
            without it the exception propagates.
        on_run: called with the policy's name and its replay as each replay ends (with
            ``jobs`` > 1: in the order they end).

    Returns:
        The :class:`Comparison` (its ``cache_check`` left for the caller).

    Raises:
        ConfigError: a policy's reserve leaves no room in ``window``; no prices for the
            model and no default; a negative ``sample``.
        CompactionLoopError: a policy's ladder failed repeatedly.
    """
    choice, timed = comparison_setup(entries, prices, model=model, provider=provider, rules=rules)
    setup = CacheSetup(choice.rules, long_ttl=long_ttl)
    run = partial(
        run_policy, window=window, estimator=estimator, sample=sample, setup=setup, cwd=cwd
    )
    runs: list[PolicyReplay | None] = []
    with ExitStack() as stack:
        stack.enter_context(_relaxed_gc())
        # Reading the session's facts reads every message once, which fills the caches of
        # the fact readers (decisions, identifiers, rules) that every policy's compactions
        # use; a forked worker starts with them filled.
        facts = session_facts(entries)
        if jobs > 1 and len(policies) > 1:
            pool = stack.enter_context(_pool(entries, min(jobs, len(policies))))
            futures = [pool.submit(_worker_run, run, name, policy) for name, policy in policies]
            order = {f: i for i, f in enumerate(futures)}
            for future in as_completed(futures):  # told of as each policy comes back
                name = policies[order[future]][0]
                error = future.exception()
                if error is not None:
                    if on_error is None or not isinstance(error, Exception):
                        raise error
                    on_error(name, error)
                    continue
                if on_step is not None:
                    for step in future.result().result.steps:
                        on_step(name, step)
                if on_run is not None:
                    on_run(name, future.result())
            runs = [None if f.exception() is not None else f.result() for f in futures]
        else:
            for name, policy in policies:
                try:
                    replayed = run(
                        entries,
                        name,
                        policy,
                        on_step=None if on_step is None else partial(on_step, name),
                    )
                except Exception as exc:
                    if on_error is None:
                        raise
                    on_error(name, exc)
                    runs.append(None)
                    continue
                runs.append(replayed)
                if on_run is not None:
                    on_run(name, replayed)
    comparison = start_comparison(
        source=source,
        window=window,
        choice=choice,
        long_ttl=long_ttl,
        sample=sample,
        timed=timed,
        facts=facts,
        tokenizer=counter_name(estimator),
    )
    for (name, _), kept in zip(policies, runs, strict=True):
        if kept is not None:
            add_run(comparison, name, kept, survival(facts, kept.result.final))
    return comparison


@dataclass(slots=True)
class PolicyReplay:
    """One policy's replay as :func:`run_policy` returns it.

    Attributes:
        result: the replay.
        summary: its model summary calls (estimated offline).
        seconds: wall time of the replay.
        trigger: the policy's trigger at the window, in tokens (``None`` for a policy that
            never compacts).
        note: what a report must say of its summarizer (``""`` for nothing).
    """

    result: ReplayResult
    summary: SummaryCalls
    seconds: float
    trigger: int | None
    note: str


def run_policy(
    entries: Sequence[Entry],
    name: str,
    policy: Policy,
    *,
    window: int,
    estimator: Estimator | None,
    sample: int,
    setup: CacheSetup,
    on_step: Callable[[ReplayStep], None] | None = None,
    cwd: str = "",
) -> PolicyReplay:
    """One policy's replay and its summarizer calls (see :func:`compare`), with the note a
    stand-in summarizer adds to the report (``""`` for none).

    Raises:
        ConfigError, CompactionLoopError: as :func:`~ctxengine.replay.replay`.
    """
    counter = estimator or HeuristicEstimator()
    prompt_tokens = counter.text(SYSTEM_PROMPT) + counter.text(TEMPLATE)
    stand_in = policy.summarizer in MODEL_SUMMARIZER_NAMES
    summarizer = (
        ExtractiveSummarizer(user_messages_budget=policy.user_messages_budget_tokens)
        if stand_in
        else None
    )
    started = time.perf_counter()
    result = replay(
        entries,
        window=window,
        policy=policy,
        estimator=estimator,
        sample=sample,
        cache=setup,
        summarizer=summarizer,
        on_step=on_step,
        cwd=cwd,
    )
    seconds = time.perf_counter() - started
    summary = _summary_calls(policy, result, counter, prompt_tokens, stand_in)
    note = ""
    if stand_in and summary.calls:
        written = result.compactions
        states = "state" if written == 1 else "states"
        note = (
            f"{name}: the {policy.summarizer} summarizer needs a model; offline the "
            f"extractive one wrote its {written} continuation {states} and the model "
            "calls are estimated"
        )
    # A policy that never compacts has no trigger to draw.
    trigger = (
        result.session.budget.trigger if result.session is not None and policy.enabled else None
    )
    return PolicyReplay(result, summary, seconds, trigger, note)


#: Collector thresholds while policies are replayed (generation 0 objects, then passes of
#: the younger generation before an older one is collected): a replay allocates millions of
#: small objects that live until its end, so the default (2,000, 10, 10) spends its time
#: walking them again; restored when :func:`compare` returns.
REPLAY_GC_THRESHOLD = (100_000, 50, 100)


@contextmanager
def _relaxed_gc() -> Iterator[None]:
    old = gc.get_threshold()
    gc.set_threshold(*REPLAY_GC_THRESHOLD)
    try:
        yield
    finally:
        gc.set_threshold(*old)


#: The session a worker process replays (set once per worker by :func:`_worker_start`).
_WORKER_ENTRIES: Sequence[Entry] = ()


def _worker_start(entries: Sequence[Entry]) -> None:
    global _WORKER_ENTRIES
    _WORKER_ENTRIES = entries
    # What the worker inherited or was handed lives as long as it does: the collector need
    # not walk it again on every pass.
    gc.freeze()
    gc.set_threshold(*REPLAY_GC_THRESHOLD)


def _worker_run(run: Callable[..., PolicyReplay], name: str, policy: Policy) -> PolicyReplay:
    """:func:`run_policy` in a worker, its session left behind (a session holds its store
    and caches; what a report needs of it is copied out first)."""
    replayed = run(_WORKER_ENTRIES, name, policy)
    replayed.result.session = None
    return replayed


def _pool(entries: Sequence[Entry], workers: int) -> ProcessPoolExecutor:
    """``workers`` processes, each holding ``entries``: forked from this one (with its warm
    caches) where the platform forks and this process runs no other thread (a thread's
    held lock would stay held in the child), else started fresh (``spawn``)."""
    forks = "fork" in multiprocessing.get_all_start_methods() and threading.active_count() == 1
    return ProcessPoolExecutor(
        max_workers=workers,
        mp_context=multiprocessing.get_context("fork" if forks else "spawn"),
        initializer=_worker_start,
        initargs=(entries,),
    )


def _summary_calls(
    policy: Policy, result: ReplayResult, estimator: Estimator, prompt_tokens: int, stand_in: bool
) -> SummaryCalls:
    """The model summary calls ``policy`` makes in ``result`` (none for the extractive
    summarizer); see the module docstring for the estimate."""
    if not policy.enabled:
        return SummaryCalls("none", False, 0, 0, 0)
    if not stand_in or result.session is None:
        return SummaryCalls(policy.summarizer, stand_in, 0, 0, 0)
    records = {e.id: e.body for e in result.session.entries if isinstance(e.body, CompactionRecord)}
    verify_tokens = estimator.text(VERIFY)
    calls = inputs = outputs = 0
    for step in result.steps:
        for event in step.events:
            record = records.get(event.entry_id or "")
            if event.step != "compaction" or record is None:
                continue
            written = estimator.text(record.summary)
            asked = max(0, event.tokens_before - event.tokens_after) + written + prompt_tokens
            calls += 1
            inputs += asked
            outputs += written
            if policy.summary_verify:  # the check pass: the same request, the draft, VERIFY
                calls += 1
                inputs += asked + written + verify_tokens
                outputs += written
    return SummaryCalls(policy.summarizer, stand_in, calls, inputs, outputs)
