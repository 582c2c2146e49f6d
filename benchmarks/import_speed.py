"""Import speed (MB/s) on the largest corpus transcript of each supported format (not a test).

Run: ``.venv/bin/python benchmarks/import_speed.py [--runs N]`` (default 9 runs).

Every file under ``../shared/corpus/`` is sniffed; files of formats that ctxengine does not
import yet are skipped. For the largest file of each imported format it times, ``N`` times
each, with ``time.perf_counter``:

- **parse**: ``read_transcript(path)`` (sniffing, reading, parsing, building the entries);
- **parse + store**: the same plus ``SQLiteStore.import_session`` into a fresh SQLite file in
  a temporary folder (one transaction, committed; opening the database is not timed).

It prints the median time and the speed in MB (10^6 bytes) of source file per second; the row
marked ``*`` is the largest importable file of the corpus.
"""

from __future__ import annotations

import argparse
import tempfile
import time
from pathlib import Path

from _common import largest_per_format, median, require_corpus, table

from ctxengine.importers import read_transcript
from ctxengine.stores.sqlite import SQLiteStore


def time_parse(path: Path, runs: int) -> tuple[float, int]:
    """Median seconds of ``read_transcript(path)`` and the entry count."""
    times: list[float] = []
    entries = 0
    for _ in range(runs):
        start = time.perf_counter()
        imported = read_transcript(path)
        times.append(time.perf_counter() - start)
        entries = len(imported.entries)
    return median(times), entries


def time_parse_store(path: Path, runs: int) -> float:
    """Median seconds of ``read_transcript`` + ``import_session`` into a new SQLite file."""
    times: list[float] = []
    with tempfile.TemporaryDirectory() as tmp:
        for n in range(runs):
            with SQLiteStore(Path(tmp) / f"run{n}.db") as store:
                start = time.perf_counter()
                result = store.import_session(read_transcript(path))
                times.append(time.perf_counter() - start)
                assert result.skipped == 0, "a fresh database already held entries"
    return median(times)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--runs", type=int, default=9, help="runs per measurement (median)")
    args = parser.parse_args()
    corpus = require_corpus()
    files = largest_per_format(corpus)
    largest = max(files.values(), key=lambda p: p.stat().st_size)
    rows = []
    for fmt, path in sorted(files.items(), key=lambda kv: -kv[1].stat().st_size):
        mb = path.stat().st_size / 1e6
        parse_s, entries = time_parse(path, args.runs)
        store_s = time_parse_store(path, args.runs)
        mark = " *" if path == largest else ""
        rows.append(
            (
                fmt + mark,
                path.name,
                f"{mb:.2f}",
                f"{entries:,}",
                f"{parse_s * 1e3:.1f}",
                f"{mb / parse_s:.1f}",
                f"{store_s * 1e3:.1f}",
                f"{mb / store_s:.1f}",
                f"{entries / store_s:,.0f}",
            )
        )
    table(
        (
            "format",
            "file",
            "MB",
            "entries",
            "parse ms",
            "parse MB/s",
            "parse+store ms",
            "parse+store MB/s",
            "entries/s (parse+store)",
        ),
        rows,
        title=f"Import speed, median of {args.runs} runs (* = largest importable corpus file)",
    )


if __name__ == "__main__":
    main()
