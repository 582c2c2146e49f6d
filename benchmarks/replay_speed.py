"""Replay speed: every preset over the largest corpus transcript (wall time, peak memory),
generated sessions of growing size under ``default`` (time per entry), and calls per second
on the largest transcript of each format.

Run: ``.venv/bin/python benchmarks/replay_speed.py [--parts presets,scaling,formats]
[--sizes 1000,4000,10000,40000] [--runs N] [--windows 16000,64000,200000]``.

- **presets**: the largest transcript of the corpus (by bytes) imported once, then every
  preset of :data:`ctxengine.policy.presets.PRESET_NAMES` replayed side by side at the CLI's
  default window, as ``ctxengine replay FILE --policy <all presets>`` runs it, once in one
  process (``--jobs 1``) and once with two worker processes (``--jobs 2``)
  (:func:`ctxengine.replay.compare.compare` with the simulated prompt cache and ledger
  survival, then the cache model against the recorded reads). Each run is a fresh child
  process: wall time (``time.perf_counter``) and CPU time of the comparison alone, and the
  child's peak resident memory (``ru_maxrss``) after it.
- **scaling**: sessions of exactly N entries cut from ``ctxengine.bench.generator.generate``
  (seed 1, template ``debug``), each replayed under ``default`` at the default window with
  incremental validation for both providers and the simulated Anthropic cache, in a child
  process: wall and CPU seconds, CPU seconds per 1,000 entries, and that figure relative to
  the smallest session's (linear growth keeps it near 1). The ratio is taken on CPU time,
  which other processes on a shared machine do not inflate as they do wall time.
- **formats**: the earlier table: for the largest file of each format, replay at each
  window, median of ``--runs``; *full*: every request validated (incrementally), *prepare
  only*: no rendering.
"""

from __future__ import annotations

import argparse
import json
import resource
import subprocess
import sys
import time
from collections.abc import Sequence

from _common import largest_per_format, median, require_corpus, size_of, table, transcript_files

from ctxengine.bench.generator import generate
from ctxengine.cost import shipped_price_table
from ctxengine.importers import read_transcript
from ctxengine.model import Entry
from ctxengine.policy.defaults import DEFAULT_WINDOW
from ctxengine.policy.presets import PRESET_NAMES, preset
from ctxengine.replay import CacheSetup, ReplayResult, replay
from ctxengine.replay.compare import compare
from ctxengine.replay.source import check_cache

#: Generated sessions are built from this template and seed.
TEMPLATE, SEED = "debug", 1
#: Estimated tokens asked of the generator per entry wanted (it writes about 460 per entry;
#: the session is then cut to exactly N entries).
TOKENS_PER_ENTRY = 600


def generated(entries: int) -> list[Entry]:
    """A generated session of exactly ``entries`` entries."""
    tokens = entries * TOKENS_PER_ENTRY
    while True:
        messages = generate(SEED, template=TEMPLATE, tokens=tokens).messages
        if len(messages) >= entries:
            break
        tokens = tokens * 5 // 4
    return [Entry(f"g{i}", "generated", i, m) for i, m in enumerate(messages[:entries])]


def _child(argv: Sequence[str]) -> dict[str, float]:
    """Run this script as a child with ``argv``; its JSON line of figures."""
    proc = subprocess.run(
        [sys.executable, __file__, "--child", *argv], capture_output=True, text=True, check=False
    )
    if proc.returncode != 0:
        raise SystemExit(f"child {argv} failed:\n{proc.stderr}")
    figures: dict[str, float] = json.loads(proc.stdout.strip().splitlines()[-1])
    return figures


def _measure_presets(path: str, jobs: int) -> dict[str, float]:
    entries = read_transcript(path).entries
    prices = shipped_price_table()
    policies = [(name, preset(name)) for name in PRESET_NAMES]
    wall, cpu = time.perf_counter(), time.process_time()
    comparison = compare(
        entries, policies, window=DEFAULT_WINDOW, prices=prices, source=path, jobs=jobs
    )
    check_cache(entries, comparison.price.rules)
    wall, cpu = time.perf_counter() - wall, time.process_time() - cpu
    return {
        "wall_s": wall,
        "cpu_s": cpu,
        "peak_mb": resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024,
        "calls": sum(len(r.steps) for r in comparison.runs),
        "invalid": sum(r.result.invalid for r in comparison.runs),
        "compactions": sum(r.result.compactions for r in comparison.runs),
    }


def _measure_scaling(size: int) -> dict[str, float]:
    entries = generated(size)
    rules = shipped_price_table().rules["anthropic"]
    wall, cpu = time.perf_counter(), time.process_time()
    result = replay(entries, window=DEFAULT_WINDOW, cache=CacheSetup(rules))
    wall, cpu = time.perf_counter() - wall, time.process_time() - cpu
    return {
        "wall_s": wall,
        "cpu_s": cpu,
        "peak_mb": resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024,
        "calls": len(result.steps),
        "compactions": result.compactions,
        "prunes": result.prunes,
        "invalid": result.invalid,
        "tail": sum(1 for s in result.steps if s.checked == "tail"),
    }


def presets_part() -> None:
    corpus = require_corpus()
    largest = max(transcript_files(corpus), key=size_of)
    rows = []
    for jobs in (1, 2):
        figures = _child(["presets", str(largest), str(jobs)])
        rows.append(
            (
                str(largest.relative_to(corpus)),
                f"{size_of(largest) / 1e6:.2f}",
                str(len(PRESET_NAMES)),
                str(jobs),
                f"{figures['calls']:,.0f}",
                f"{figures['compactions']:,.0f}",
                f"{figures['invalid']:.0f}",
                f"{figures['wall_s']:.2f}",
                f"{figures['cpu_s']:.2f}",
                f"{figures['peak_mb']:.0f}",
            )
        )
    table(
        ("file", "MB", "presets", "jobs", "calls (all)", "compactions (all)", "invalid",
         "wall s", "CPU s (main process)", "peak MB (main process)"),
        rows,
        title=f"Every preset over the largest transcript, {DEFAULT_WINDOW:,}-token window "
        f"({', '.join(PRESET_NAMES)}); jobs 2: two worker processes, as `ctxengine replay "
        "--policy …` runs them on two CPUs",
    )  # fmt: skip


def scaling_part(sizes: Sequence[int]) -> None:
    rows = []
    base: float | None = None
    for size in sizes:
        f = _child(["scaling", str(size)])
        per_k = f["cpu_s"] / size * 1000
        base = per_k if base is None else base
        rows.append(
            (
                f"{size:,}",
                f"{f['calls']:,.0f}",
                f"{f['compactions']:,.0f}",
                f"{f['prunes']:,.0f}",
                f"{f['tail'] / max(1, f['calls']):.0%}",
                f"{f['invalid']:.0f}",
                f"{f['wall_s']:.2f}",
                f"{f['cpu_s']:.2f}",
                f"{per_k:.3f}",
                f"{per_k / base:.2f}",
                f"{f['peak_mb']:.0f}",
            )
        )
    table(
        ("entries", "calls", "compactions", "prunes", "tail-checked", "invalid", "wall s",
         "CPU s", "CPU s per 1k entries", "vs smallest", "peak MB"),
        rows,
        title=f"Generated sessions ({TEMPLATE}, seed {SEED}) under default, "
        f"{DEFAULT_WINDOW:,}-token window, simulated Anthropic cache",
    )  # fmt: skip


def timed_replay(entries: Sequence[Entry], window: int, providers: tuple[str, ...]) -> float:
    start = time.perf_counter()
    replay(entries, window=window, providers=providers)
    return time.perf_counter() - start


def formats_part(runs: int, windows: Sequence[int]) -> None:
    files = largest_per_format(require_corpus())
    rows = []
    for fmt, path in sorted(files.items(), key=lambda kv: -size_of(kv[1])):
        entries = read_transcript(path).entries
        for window in windows:
            result: ReplayResult = replay(entries, window=window)
            calls = max(1, len(result.steps))
            full = median([timed_replay(entries, window, ("openai", "anthropic"))
                           for _ in range(runs)])  # fmt: skip
            bare = median([timed_replay(entries, window, ()) for _ in range(runs)])
            rows.append(
                (
                    fmt,
                    f"{size_of(path) / 1e6:.2f}",
                    f"{window:,}",
                    len(result.steps),
                    result.compactions,
                    result.invalid,
                    f"{full:.3f}",
                    f"{calls / full:,.0f}",
                    f"{full / calls * 1e3:.2f}",
                    f"{calls / bare:,.0f}",
                )
            )
    table(
        ("format", "MB", "window", "calls", "compactions", "invalid", "full s", "full calls/s",
         "full ms/call", "prepare-only calls/s"),
        rows,
        title=f"Replay speed, largest file per format, median of {runs} runs",
    )  # fmt: skip


def main() -> None:
    if len(sys.argv) > 1 and sys.argv[1] == "--child":
        kind, arg = sys.argv[2], sys.argv[3]
        figures = (
            _measure_presets(arg, int(sys.argv[4]))
            if kind == "presets"
            else _measure_scaling(int(arg))
        )
        print(json.dumps(figures))
        return
    parser = argparse.ArgumentParser(description=(__doc__ or "").splitlines()[0])
    parser.add_argument("--parts", default="presets,scaling,formats")
    parser.add_argument("--sizes", default="1000,4000,10000,40000", help="entries")
    parser.add_argument("--runs", type=int, default=3, help="runs per formats figure (median)")
    parser.add_argument("--windows", default="16000,64000,200000", help="formats part, tokens")
    args = parser.parse_args()
    parts = args.parts.split(",")
    if "presets" in parts:
        presets_part()
    if "scaling" in parts:
        scaling_part([int(s) for s in args.sizes.split(",")])
    if "formats" in parts:
        formats_part(args.runs, [int(w) for w in args.windows.split(",")])


if __name__ == "__main__":
    main()
