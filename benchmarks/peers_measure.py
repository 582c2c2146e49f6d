"""The peers measurement of ``../shared/reference/peers-measured.md`` §3–§5, repeated on
ctxengine (not a test).

Run: ``.venv/bin/python benchmarks/peers_measure.py [--no-stateless] [--no-scratch]
[--prime-ledgers] [--profile]``.

Inputs (§3): the same three transcripts, imported with ``read_transcript`` (provider usage
dropped, as ``ctxengine replay`` does): mini-swe-agent django-13265, mini-swe-agent pvlib-1606
(aborted) and SWE-agent marshmallow-1867. One request per assistant turn: request i is
``messages[:i]`` where message i is an assistant message; for the aborted pvlib run also the
final in-flight request (every message). Budgets B = 4,000 … 64,000 tokens. That gives
174 requests × 5 budgets = 870 calls per variant.

Four ways to run ctxengine, each over every (transcript, B):

- **live**: one ``Session(window=B)`` per (transcript, B); messages are appended in order and
  ``prepare()`` is called before each assistant message, as an agent uses it (the peers'
  "per-turn loop" settings);
- **stateless**: a fresh ``Session(window=B)`` over ``messages[:i]`` for each request, then one
  ``prepare()`` (the peers' "stateless" settings): every request compacts from scratch;
- **stateless, prefix cache**: ``PrefixCache.serve(messages[:i], window=B)`` for each request
  (``ctxengine.prepare(..., cache=...)``; one cache for the whole run): a request continues
  from the checkpoint of the previous one; the same message objects every time, as a
  framework hook that keeps its message list;
- **stateless, prefix cache, new objects**: the same, each request's messages rebuilt as new
  objects first (untimed), as a proxy that parses every request: the cache finds them by
  content hash.

The variants take turns on each (transcript, B), each starting with the remembered ledger
analyses forgotten (:func:`~ctxengine.summarizers.prime.clear_analysis_caches`), so that a
change in the machine's load falls on all of them. The time of a stateless call
is the whole call (hashing, appending, ``prepare()``); of a
live call ``prepare()`` alone (appending is not timed). The cached variants' contexts are
compared with the live session's at the same request: "same as live" counts the equal ones.

Per output, as in §4: valid for OpenAI (``ctxengine.validate(render_openai(ctx), "openai")``,
the peers' yardstick) and for Anthropic; output tokens, by ctxengine's own estimator
(``ctx.tokens``) and by :func:`approx_tokens`, a re-implementation of LangChain's
``count_tokens_approximately`` applied to the OpenAI body, the counter of the peers' tables;
task kept (the first user message's text appears verbatim in some output message, or
quoted as the continuation state quotes a text holding a line that starts with ``#``: later
lines indented); last input kept (the text of message i−1 appears verbatim); system kept;
wall time of ``prepare()`` alone
(``time.perf_counter_ns``; imports, rendering and checks are not timed). "history > B" means
the untouched request is over B by the approximate counter (§5.1).

The peers' rows are quoted from peers-measured.md (see ``_peers.py``), not re-measured.
Every output missing a target is listed, grouped by transcript, B and reason; ``--profile``
adds a cProfile of the ``prepare()`` calls of each variant.
"""

from __future__ import annotations

import argparse
import cProfile
import time
from collections.abc import Callable

from _outcome import BUDGETS, CREATED, TRANSCRIPTS, Outcome, Transcript, load, score
from _peers_report import (
    print_failures,
    print_inputs,
    print_profile,
    print_side_by_side,
    print_slowest,
    print_tables,
    print_targets,
)

from ctxengine.engine import Session
from ctxengine.engine.stateless import PrefixCache
from ctxengine.model.codec import message_from_dict, message_to_dict
from ctxengine.projection.context import Context
from ctxengine.summarizers.prime import clear_analysis_caches

Profiler = cProfile.Profile | None
#: The live session's context at each (transcript, B, request), to compare the cached
#: stateless variants with.
LIVE: dict[tuple[str, int, int], Context] = {}
#: Per variant, whether each of its contexts equals the live one.
SAME: dict[str, list[bool]] = {}
#: One prefix cache per cached variant, for the whole run.
CACHES: dict[str, PrefixCache] = {}
#: ``--prime-ledgers``: sessions analyse each message for the ledgers as it arrives.
OPTIONS = {"prime_ledgers": False}


def _timed_prepare(session: Session, profiler: Profiler) -> tuple[Context, float, bool]:
    events = len(session.events)
    if profiler is not None:
        profiler.enable()
    start = time.perf_counter_ns()
    ctx = session.prepare()
    ms = (time.perf_counter_ns() - start) / 1e6
    if profiler is not None:
        profiler.disable()
    compacted = any(e.step == "compaction" for e in session.events[events:])
    return ctx, ms, compacted


def run_live(t: Transcript, budget: int, profiler: Profiler) -> list[Outcome]:
    """One session per (transcript, B), ``prepare()`` before every assistant message."""
    session = Session(budget, prime_ledgers=OPTIONS["prime_ledgers"])
    wanted = set(t.requests)
    out = []
    for i in range(len(t.messages) + 1):
        if i in wanted:
            ctx, ms, compacted = _timed_prepare(session, profiler)
            LIVE[(t.name, budget, i)] = ctx
            out.append(score(t, budget, i, ctx, ms, compacted))
        if i < len(t.messages):
            session.append(t.messages[i], created_at=CREATED)
    return out


def run_stateless(t: Transcript, budget: int, profiler: Profiler) -> list[Outcome]:
    """A fresh session over ``messages[:i]`` for each request, one ``prepare()`` each."""
    out = []
    for i in t.requests:
        session = Session(budget, entries=t.entries[:i], prime_ledgers=OPTIONS["prime_ledgers"])
        ctx, ms, compacted = _timed_prepare(session, profiler)
        out.append(score(t, budget, i, ctx, ms, compacted))
    return out


def _cached(t: Transcript, budget: int, profiler: Profiler, *, fresh: bool) -> list[Outcome]:
    """One ``PrefixCache.serve`` per request (the whole call timed); ``fresh``: each request's
    messages rebuilt as new objects first (untimed)."""
    name = "stateless, prefix cache" + (", new objects" if fresh else "")
    cache = CACHES.setdefault(name, PrefixCache(prime_ledgers=OPTIONS["prime_ledgers"]))
    same = SAME.setdefault(name, [])
    out = []
    for i in t.requests:
        request = t.messages[:i]
        if fresh:
            request = tuple(message_from_dict(message_to_dict(m)) for m in request)
        if profiler is not None:
            profiler.enable()
        start = time.perf_counter_ns()
        served = cache.serve(request, window=budget, created_at=CREATED)
        ms = (time.perf_counter_ns() - start) / 1e6
        if profiler is not None:
            profiler.disable()
        compacted = any(e.step == "compaction" for e in served.events)
        live = LIVE.get((t.name, budget, i))
        if live is not None:
            same.append(served.context == live)
        out.append(score(t, budget, i, served.context, ms, compacted))
    return out


def run_cached(t: Transcript, budget: int, profiler: Profiler) -> list[Outcome]:
    """``PrefixCache.serve(messages[:i])`` for each request, the same message objects."""
    return _cached(t, budget, profiler, fresh=False)


def run_cached_fresh(t: Transcript, budget: int, profiler: Profiler) -> list[Outcome]:
    """``PrefixCache.serve`` of each request's messages rebuilt as new objects."""
    return _cached(t, budget, profiler, fresh=True)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--no-stateless", action="store_true", help="live sessions only")
    parser.add_argument(
        "--no-scratch", action="store_true", help="leave out the fresh-session stateless run"
    )
    parser.add_argument("--profile", action="store_true", help="cProfile the prepare() calls")
    parser.add_argument(
        "--prime-ledgers",
        action="store_true",
        help="sessions analyse each message for the ledgers as it arrives",
    )
    args = parser.parse_args()
    OPTIONS["prime_ledgers"] = args.prime_ledgers
    transcripts = [load(*spec) for spec in TRANSCRIPTS]
    print_inputs(transcripts)
    variants: dict[str, Callable[[Transcript, int, Profiler], list[Outcome]]] = {"live": run_live}
    if not args.no_stateless:
        if not args.no_scratch:
            variants["stateless"] = run_stateless
        variants["stateless, prefix cache"] = run_cached
        variants["stateless, prefix cache, new objects"] = run_cached_fresh
    labels = {name: f"ctxengine / {name}" for name in variants}
    results: dict[str, list[Outcome]] = {label: [] for label in labels.values()}
    profiles = {label: cProfile.Profile() for label in labels.values()} if args.profile else {}
    seconds = dict.fromkeys(labels.values(), 0.0)
    # Variants take turns on each (transcript, B), each starting cold (the remembered
    # analyses forgotten), so that a change in the machine's load falls on all of them.
    for t in transcripts:
        for b in BUDGETS:
            for name, fn in variants.items():
                label = labels[name]
                clear_analysis_caches()
                start = time.perf_counter()
                results[label] += fn(t, b, profiles.get(label))
                seconds[label] += time.perf_counter() - start
    for label, out in results.items():
        print(f"{label}: {len(out)} calls, {seconds[label]:.1f} s with scoring")
    print_tables(results)
    print_side_by_side(results, {f"ctxengine / {k}": v for k, v in SAME.items()})
    print_targets(results)
    for label, out in results.items():
        print_failures(label, out)
        print_slowest(label, out)
        if label in profiles:
            print_profile(label, profiles[label], out)


if __name__ == "__main__":
    main()
