"""Background compaction on the corpus: the ``prepare()`` that reaches the trigger costs what a
non-compacting call costs once the compaction was computed in the background (not a test).

Run: ``.venv/bin/python benchmarks/precompute_latency.py [--window 32000] [--ratio 0.85]
[--block 0.95] [--files N]``.

Every corpus transcript (``../shared/corpus``, the folders of whole transcripts) with at
least ``--min-tokens`` of messages is replayed twice as a live agent would send it: its
messages appended one at a time with the times the transcript recorded, ``prepare()``
before each assistant reply (only ``prepare()`` is timed, ``time.perf_counter_ns``). Once
under the default policy, once under the default policy with ``precompute_ratio`` set
(``--ratio`` of the trigger, OpenCode's 85 % by default): a candidate compaction is
computed on a thread of its own from that share on and adopted at the trigger
(:mod:`ctxengine.engine.precompute`).

Between two calls an agent waits for its model (seconds); the extractive summary a
candidate runs takes milliseconds. The benchmark stands for that wait with
``Session.wait_precompute()`` after each call (untimed), so the candidate is ready when the
trigger comes, as it is in a live session; the candidates' own computing times are printed
(measured through the pluggable ``candidate`` argument, which wraps the default
:func:`~ctxengine.engine.precompute.local_candidate`).

A third run (``--block``, 0 to leave it out) adds ``precompute_block_ratio`` (the Copilot
SDK's 95 %): a stale candidate is adopted late when the context after it stays small, and a
trigger that holds no candidate sends its context as it is and starts one, adopted at the next
call. "Every trigger call" groups each run's calls at the trigger, whatever they did.

Printed, in milliseconds: p50 and p95 of the trigger calls that adopted a candidate, of the
trigger calls of the run without precompute (foreground compaction), of the non-compacting
calls (no ladder step) of both runs, and of the calls that started a candidate (they plan
the compaction); then the p50 ratios to the non-compacting calls.
"""

from __future__ import annotations

import argparse
import gc
import time
from collections.abc import Sequence
from dataclasses import dataclass, field

from _common import median, percentile, require_corpus, table, transcript_files

from ctxengine.engine import Session
from ctxengine.engine.precompute import Candidate, Snapshot, local_candidate
from ctxengine.errors import TranscriptError
from ctxengine.importers import read_transcript
from ctxengine.ladder.plan import CompactionPlan
from ctxengine.model import Entry
from ctxengine.policy import DEFAULT_POLICY, Policy
from ctxengine.replay.loop import source_messages, source_stamps
from ctxengine.tokens.estimate import HeuristicEstimator


@dataclass
class Calls:
    """``prepare()`` times in nanoseconds, by what the call did."""

    adopted: list[int] = field(default_factory=list)
    foreground: list[int] = field(default_factory=list)
    deferred: list[int] = field(default_factory=list)
    #: adoptions of a stale candidate (a block limit set), also in ``adopted``
    late: int = 0
    plain: list[int] = field(default_factory=list)
    started: list[int] = field(default_factory=list)
    other: list[int] = field(default_factory=list)
    computed_s: list[float] = field(default_factory=list)
    discarded: int = 0


def replay_timed(entries: Sequence[Entry], window: int, policy: Policy, into: Calls) -> None:
    """Replay ``entries`` as a live agent, timing every ``prepare()`` into ``into``."""

    def timed(plan: CompactionPlan, snapshot: Snapshot) -> Candidate:
        candidate = local_candidate(plan, snapshot)
        into.computed_s.append(candidate.seconds)
        return candidate

    messages = source_messages(entries)
    stamps = source_stamps(entries)
    gc.collect()
    with Session(window, policy=policy, candidate=timed) as s:
        seen_user, previous = False, ""
        for message, stamp in zip(messages, stamps, strict=True):
            if message.role == "assistant" and previous != "assistant" and seen_user:
                n = len(s.events)
                started = time.perf_counter_ns()
                s.prepare()
                elapsed = time.perf_counter_ns() - started
                steps = {e.step for e in s.events[n:]}
                into.discarded += "precompute_discarded" in steps
                if "precompute_adopted" in steps:
                    into.adopted.append(elapsed)
                    into.late += any(
                        e.step == "precompute_adopted" and "adopted late" in e.detail
                        for e in s.events[n:]
                    )
                elif "precompute_deferred" in steps:
                    into.deferred.append(elapsed)
                elif "compaction" in steps:
                    into.foreground.append(elapsed)
                elif "precompute_started" in steps:
                    into.started.append(elapsed)
                elif not steps:
                    into.plain.append(elapsed)
                else:
                    into.other.append(elapsed)
                s.wait_precompute()  # the model call an agent makes now (untimed)
            seen_user = seen_user or message.role == "user"
            previous = message.role
            s.append(message, created_at=stamp)


def ms(ns: Sequence[int], q: float) -> str:
    if not ns:
        return "-"
    return f"{(median(ns) if q == 50 else percentile(ns, q)) / 1e6:.2f}"


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--window", type=int, default=32_000, help="model window (tokens)")
    parser.add_argument("--ratio", type=float, default=0.85, help="precompute share of trigger")
    parser.add_argument("--min-tokens", type=int, default=20_000, help="smallest transcript")
    parser.add_argument("--files", type=int, default=0, help="only the first N transcripts")
    parser.add_argument(
        "--block", type=float, default=0.95, help="block share of the window (0: no such run)"
    )
    args = parser.parse_args()

    corpus = require_corpus()
    estimator = HeuristicEstimator()
    sessions: list[tuple[str, list[Entry]]] = []
    for path in transcript_files(corpus):
        try:
            entries = read_transcript(path).entries
        except TranscriptError:
            continue
        tokens = sum(estimator.message(m) for m in source_messages(entries))
        if tokens >= args.min_tokens:
            sessions.append((str(path.relative_to(corpus)), entries))
    if args.files:
        sessions = sessions[: args.files]

    on_policy = DEFAULT_POLICY.model_copy(update={"precompute_ratio": args.ratio})
    block_policy = on_policy.model_copy(update={"precompute_block_ratio": args.block or None})
    off, on, block = Calls(), Calls(), Calls()
    rows = []
    for name, entries in sessions:
        before = (len(off.foreground), len(on.adopted), len(on.foreground))
        before_block = (len(block.adopted), len(block.deferred), len(block.foreground))
        replay_timed(entries, args.window, DEFAULT_POLICY, off)
        replay_timed(entries, args.window, on_policy, on)
        if args.block:
            replay_timed(entries, args.window, block_policy, block)
        rows.append(
            (
                name,
                len(off.foreground) - before[0],
                len(on.adopted) - before[1],
                len(on.foreground) - before[2],
                len(block.adopted) - before_block[0],
                len(block.deferred) - before_block[1],
                len(block.foreground) - before_block[2],
            )
        )
    table(
        (
            "transcript",
            "compactions (off)",
            "adopted (on)",
            "foreground (on)",
            "adopted (block)",
            "deferred (block)",
            "foreground (block)",
        ),
        rows,
        f"{len(sessions)} transcripts at a {args.window:,}-token window; precompute from "
        f"{args.ratio:.0%} of the trigger; block: also precompute_block_ratio={args.block}",
    )
    groups = [
        ("trigger, candidate adopted (on)", on.adopted),
        ("trigger, foreground compaction (off)", off.foreground),
        ("trigger, foreground compaction (on: no candidate held)", on.foreground),
        ("every trigger call (off)", off.foreground),
        ("every trigger call (on)", on.adopted + on.foreground),
        ("non-compacting (off)", off.plain),
        ("non-compacting (on)", on.plain),
        ("candidate started (on)", on.started),
    ]
    if args.block:
        groups += [
            (f"trigger, candidate adopted (block; {block.late} stale ones late)", block.adopted),
            ("trigger, deferred: sent as it is, candidate started (block)", block.deferred),
            ("trigger, foreground compaction (block)", block.foreground),
            ("every trigger call (block)", block.adopted + block.deferred + block.foreground),
            ("non-compacting (block)", block.plain),
        ]
    table(
        ("calls", "n", "p50 ms", "p95 ms"),
        [(label, len(v), ms(v, 50), ms(v, 95)) for label, v in groups],
        "prepare() latency",
    )
    base = median(off.plain)
    print(
        f"\np50 ratio to a non-compacting call (off): adopted {median(on.adopted) / base:.2f}, "
        f"foreground {median(off.foreground) / base:.2f}, started {median(on.started) / base:.2f}"
    )
    computed = sorted(on.computed_s)
    print(
        f"candidates computed: {len(computed)} (adopted {len(on.adopted)}, discarded stale "
        f"{on.discarded}); computing time p50 {median(computed) * 1e3:.1f} ms, p95 "
        f"{percentile(computed, 95) * 1e3:.1f} ms (off the request path)"
    )


if __name__ == "__main__":
    main()
