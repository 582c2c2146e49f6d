"""Batch replay on Ray: every corpus transcript × every preset, in one process and on a local
Ray cluster of 1 and of 2 workers (wall time, and the 1-vs-2 ratio).

Run: ``.venv/bin/python benchmarks/replay_ray.py [--runs ray1,ray2,jobs1,jobs2]`` (needs the
extra ``ctxengine[ray]`` and the corpus).

Each run is ``ctxengine replay <every transcript folder of the corpus> --policy all --json
--quiet`` in a fresh child process, timed from start to exit (``time.perf_counter``): a Ray run
includes starting the local cluster, shipping ``ctxengine`` to it and stopping it. ``jobs1`` is
the run in this process, one replay after another (``--jobs 1``); ``jobs2`` the same with two
worker processes per transcript (``--jobs 2``); ``rayN`` is ``--ray --ray-workers N``. Every
run's JSON must equal the first one's but for the wall times it records (``seconds``), or the
script exits with status 1.
"""

from __future__ import annotations

import argparse
import json
import subprocess
import sys
import time
from typing import Any

from _common import TRANSCRIPT_DIRS, require_corpus, table

#: The runs and the options each adds to the command.
RUNS: dict[str, list[str]] = {
    "jobs1": ["--jobs", "1"],
    "jobs2": ["--jobs", "2"],
    "ray1": ["--ray", "--ray-workers", "1"],
    "ray2": ["--ray", "--ray-workers", "2"],
}
#: How each run is named in the table.
LABELS = {
    "jobs1": "in process, one replay after another (--jobs 1)",
    "jobs2": "in process, 2 worker processes per transcript (--jobs 2)",
    "ray1": "Ray, local cluster of 1 worker (--ray --ray-workers 1)",
    "ray2": "Ray, local cluster of 2 workers (--ray --ray-workers 2)",
}


def without_seconds(doc: Any) -> Any:
    """``doc`` with every ``seconds`` key left out."""
    if isinstance(doc, dict):
        return {k: without_seconds(v) for k, v in doc.items() if k != "seconds"}
    if isinstance(doc, list):
        return [without_seconds(v) for v in doc]
    return doc


def main() -> None:
    parser = argparse.ArgumentParser(description=(__doc__ or "").splitlines()[0])
    parser.add_argument("--runs", default="jobs1,ray1,ray2", help=f"of {', '.join(RUNS)}")
    args = parser.parse_args()
    corpus = require_corpus()
    folders = [str(corpus / d) for d in TRANSCRIPT_DIRS if (corpus / d).is_dir()]
    base = [sys.executable, "-m", "ctxengine", "replay", *folders, "--policy", "all"]
    times: dict[str, float] = {}
    first: Any = None
    rows = []
    for name in args.runs.split(","):
        started = time.perf_counter()
        done = subprocess.run(
            [*base, "--json", "--quiet", *RUNS[name]], capture_output=True, text=True, check=False
        )
        times[name] = time.perf_counter() - started
        if done.returncode != 0:
            print(done.stderr, file=sys.stderr)
            raise SystemExit(f"{name}: exit status {done.returncode}")
        doc = without_seconds(json.loads(done.stdout))
        if first is None:
            first = doc
            replays = len(doc["sources"]) * len(doc["policies"])
            print(f"{len(doc['sources'])} transcripts × {len(doc['policies'])} presets")
        elif doc != first:
            raise SystemExit(f"{name}: the JSON differs from the first run's")
        rows.append((LABELS[name], f"{times[name]:.1f}", f"{times[name] / replays:.2f}"))
    table(("run", "wall s", "s per replay"), rows, title="Every corpus transcript × every preset")
    if "ray1" in times and "ray2" in times:
        print(f"\nRay, 1 worker / 2 workers: {times['ray1'] / times['ray2']:.2f}")


if __name__ == "__main__":
    main()
