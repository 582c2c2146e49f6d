"""Start-up time of ctxengine against an empty interpreter (not a test).

Run: ``.venv/bin/python benchmarks/startup_time.py [--runs N]`` (default 21 runs).

Each case is a fresh interpreter (the one running this script, ``-I``-free so that
``PYTHONPATH`` applies), started ``N`` times in turns (run 1 of every case, then run 2 …), so a
change in the machine's load weighs on every case alike; each run is timed from before the
process is started until it has exited (``time.perf_counter``), its output discarded, with
bytecode caches written and read whatever ``PYTHONDONTWRITEBYTECODE`` says:

- **empty interpreter**: ``python -c pass``;
- **import ctxengine**: ``python -c "import ctxengine"``;
- **from ctxengine import Session**: what a library user who builds a session loads;
- **Session + first prepare**: that import, then ``Session(window=32_000)``, one user message
  and its first ``prepare()`` (a short history: no compaction), i.e. what the first model
  call of a library user costs;
- **ctxengine --help**: the console script next to the interpreter (``bin/ctxengine``), or,
  when there is none, the same entry point through ``python -c``;
- **python -m ctxengine --help**;
- **ctxengine compact --help**: a command's own help, which loads that command's module;
- **ctxengine sessions** on a store that does not exist (a note, exit 0): the lightest
  command that opens the store layer.

It prints the median and the minimum milliseconds of each case and both as a multiple of the
empty interpreter's (``× empty``).
"""

from __future__ import annotations

import argparse
import os
import shutil
import subprocess
import sys
import tempfile
import time
from pathlib import Path

from _common import median, table

#: A session built and prepared once over a short history (nothing to compact).
FIRST_PREPARE = (
    "from ctxengine import Session\n"
    "from ctxengine.model.messages import user\n"
    "s = Session(window=32_000)\n"
    "s.append(user('Summarise the design notes in three bullet points.'))\n"
    "assert len(s.prepare().messages) == 1\n"
)


def cases() -> list[tuple[str, list[str]]]:
    """``(label, argv)`` of every case (see the module docstring)."""
    py = sys.executable
    script = shutil.which("ctxengine", path=str(Path(py).parent))
    cli = (
        [script, "--help"]
        if script
        else [py, "-c", "import sys; from ctxengine.cli import run; run()", "--help"]
    )
    return [
        ("empty interpreter (python -c pass)", [py, "-c", "pass"]),
        ("import ctxengine", [py, "-c", "import ctxengine"]),
        ("from ctxengine import Session", [py, "-c", "from ctxengine import Session"]),
        ("Session + first prepare", [py, "-c", FIRST_PREPARE]),
        ("ctxengine --help", cli),
        ("python -m ctxengine --help", [py, "-m", "ctxengine", "--help"]),
        ("ctxengine compact --help", [*cli[:-1], "compact", "--help"]),
        ("ctxengine sessions (no store)", [*cli[:-1], "sessions", "--db", _NO_STORE]),
    ]


#: A store path that does not exist (``sessions`` notes that nothing is stored there).
_NO_STORE = str(Path(tempfile.gettempdir()) / "ctxengine-startup-no-store.db")


#: The environment of every run: this one's, bytecode caches written and read (a
#: ``PYTHONDONTWRITEBYTECODE`` set here would have every run compile the package again, which
#: an installed package never does).
ENV = {k: v for k, v in os.environ.items() if k != "PYTHONDONTWRITEBYTECODE"}


def timed(argv: list[str]) -> float:
    """Seconds from starting ``argv`` until it exits; raises when it fails."""
    start = time.perf_counter()
    subprocess.run(argv, check=True, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, env=ENV)
    return time.perf_counter() - start


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--runs", type=int, default=21, help="runs per case (median, min)")
    args = parser.parse_args()
    runs = cases()
    for _, argv in runs:  # once each: bytecode caches written, files in the page cache
        timed(argv)
    times: list[list[float]] = [[] for _ in runs]
    for _ in range(args.runs):
        for (_, argv), found in zip(runs, times, strict=True):
            found.append(timed(argv))
    empty_med, empty_min = median(times[0]), min(times[0])
    table(
        ("case", "median ms", "min ms", "median × empty", "min × empty"),
        [
            (
                label,
                f"{median(t) * 1e3:.1f}",
                f"{min(t) * 1e3:.1f}",
                f"{median(t) / empty_med:.1f}",
                f"{min(t) / empty_min:.1f}",
            )
            for (label, _), t in zip(runs, times, strict=True)
        ],
        title=f"Start-up time, {args.runs} runs per case in turns (wall clock, "
        f"Python {sys.version.split()[0]})",
    )


if __name__ == "__main__":
    main()
