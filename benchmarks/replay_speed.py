"""Replay speed (model calls per second, ms per call) on the largest corpus transcripts.

Run: ``.venv/bin/python benchmarks/replay_speed.py [--runs N] [--windows 16000,64000,200000]``
(defaults: 3 runs, those three windows).

For the largest file of each format ctxengine imports, the transcript is imported once (not
timed), then ``ctxengine.replay.replay(entries, window=W)`` is timed with
``time.perf_counter``: every message is appended to a fresh ``Session`` and, before each
assistant message, ``prepare()`` builds the context (running the compaction ladder when the
trigger is reached). Two modes:

- **full**: as ``ctxengine replay`` runs it: each request is also rendered for OpenAI and
  Anthropic and checked with ``ctxengine.validate`` (the row's ``invalid`` column);
- **prepare only**: ``providers=()``: appends and ``prepare()`` alone.

Figures are the median over the runs; ``ms/call`` is replay time divided by model calls, so it
includes the appends between calls. ``p95 ms`` is the 95th percentile of the time from one
call's end to the next call's end (full mode, median run).
"""

from __future__ import annotations

import argparse
import time
from collections.abc import Sequence

from _common import largest_per_format, median, percentile, require_corpus, table

from ctxengine.importers import read_transcript
from ctxengine.model import Entry
from ctxengine.replay import ReplayResult, ReplayStep, replay


def timed_replay(
    entries: Sequence[Entry], window: int, providers: tuple[str, ...]
) -> tuple[float, ReplayResult, list[float]]:
    """One replay: seconds, its result, and the seconds between successive calls' ends."""
    marks: list[float] = []

    def on_step(_: ReplayStep) -> None:
        marks.append(time.perf_counter())

    start = time.perf_counter()
    result = replay(entries, window=window, providers=providers, on_step=on_step)
    seconds = time.perf_counter() - start
    gaps = [b - a for a, b in zip([start, *marks], marks, strict=False)]
    return seconds, result, gaps


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--runs", type=int, default=3, help="runs per measurement (median)")
    parser.add_argument("--windows", default="16000,64000,200000", help="windows in tokens")
    args = parser.parse_args()
    windows = [int(w) for w in args.windows.split(",")]
    files = largest_per_format(require_corpus())
    rows = []
    for fmt, path in sorted(files.items(), key=lambda kv: -kv[1].stat().st_size):
        entries = read_transcript(path).entries
        for window in windows:
            both = ("openai", "anthropic")
            full = [timed_replay(entries, window, both) for _ in range(args.runs)]
            bare = [timed_replay(entries, window, ())[0] for _ in range(args.runs)]
            full.sort(key=lambda run: run[0])
            seconds, result, gaps = full[len(full) // 2]
            calls = len(result.steps)
            bare_s = median(bare)
            rows.append(
                (
                    fmt,
                    f"{path.stat().st_size / 1e6:.2f}",
                    f"{window:,}",
                    calls,
                    result.compactions,
                    result.prunes,
                    result.invalid,
                    f"{result.max_tokens:,}",
                    f"{seconds:.3f}",
                    f"{calls / seconds:,.0f}",
                    f"{seconds / calls * 1e3:.2f}",
                    f"{percentile(gaps, 95) * 1e3:.2f}",
                    f"{calls / bare_s:,.0f}",
                    f"{bare_s / calls * 1e3:.2f}",
                )
            )
    table(
        (
            "format",
            "MB",
            "window",
            "calls",
            "compactions",
            "prunes",
            "invalid",
            "max ctx tokens",
            "full s",
            "full calls/s",
            "full ms/call",
            "full p95 ms",
            "prepare-only calls/s",
            "prepare-only ms/call",
        ),
        rows,
        title=f"Replay speed, largest file per format, median of {args.runs} runs",
    )


if __name__ == "__main__":
    main()
