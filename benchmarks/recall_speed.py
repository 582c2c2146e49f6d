"""Speed of history recall at 10,000 entries (not a test).

Run: ``.venv/bin/python benchmarks/recall_speed.py [--entries N] [--runs R]`` (defaults
10,000 entries, 21 runs per query).

The largest transcript of each corpus format is read and its entries repeated (ids made
unique per copy) until the log holds ``--entries`` entries, as one long session; a
``Session`` is built over it. Then, per format, it prints:

- **index**: building the recall index over the whole log (the first ``Session.recall``
  of a session pays it once; later calls index only the new entries);
- **exact**: an exact-text query: a line of the first long tool result (as an agent would
  look up an error line). Every copy of the transcript holds it, so the whole log is
  scanned and every match counted; the newest are shown within the default budget;
- **regex**: a regular expression over the same log;
- **miss**: a text found nowhere (the whole log scanned, nothing shown).

Median and p95 milliseconds of ``R`` runs each (``time.perf_counter``), in one process.
The target of the recall issue: an exact-match query in under 50 ms at 10,000 entries.
"""

from __future__ import annotations

import argparse
import re
import time
from dataclasses import replace

from _common import largest_per_format, median, percentile, require_corpus, table

from ctxengine.engine import Session
from ctxengine.importers import read_transcript
from ctxengine.model import Entry, TextPart
from ctxengine.recall import RecallQuery


def grown(entries: list[Entry], n: int) -> list[Entry]:
    """``entries`` repeated until there are ``n`` (ids suffixed per copy, seq renumbered)."""
    out: list[Entry] = []
    copy = 0
    while len(out) < n:
        for e in entries:
            if len(out) == n:
                break
            out.append(replace(e, id=f"{e.id}#{copy}", seq=len(out), parent_id=None))
        copy += 1
    return out


def probe_line(entries: list[Entry]) -> str | None:
    """A distinctive line of the first long tool result (what an agent would look up)."""
    for e in entries:
        m = e.message
        if m is None:
            continue
        for r in m.tool_results:
            for p in r.content:
                if isinstance(p, TextPart):
                    for line in p.text.splitlines():
                        if 30 <= len(line.strip()) <= 120:
                            return line.strip()
    return None


def timed(fn: object, runs: int) -> tuple[float, float]:
    assert callable(fn)
    fn()
    samples = []
    for _ in range(runs):
        start = time.perf_counter()
        fn()
        samples.append((time.perf_counter() - start) * 1000)
    return median(samples), percentile(samples, 95)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--entries", type=int, default=10_000)
    parser.add_argument("--runs", type=int, default=21)
    args = parser.parse_args()
    corpus = require_corpus()
    rows = []
    for fmt, path in sorted(largest_per_format(corpus, conversations=True).items()):
        source = read_transcript(path).entries
        line = probe_line(source)
        if line is None:
            continue
        entries = grown(list(source), args.entries)
        start = time.perf_counter()
        s = Session(1_000_000, entries=entries)
        build_s = time.perf_counter() - start
        start = time.perf_counter()
        s.recall("x")
        index_ms = (time.perf_counter() - start) * 1000
        exact = RecallQuery(text=line)
        found = s.recall(exact)
        assert found.hits, (fmt, line)
        word = line.split()[0]
        regex = RecallQuery(text=rf"\b{re.escape(word)}\b\s+\S+", regex=True)
        miss = RecallQuery(text="zq-not-in-any-transcript-9137")
        e50, e95 = timed(lambda s=s, q=exact: s.recall(q), args.runs)
        r50, r95 = timed(lambda s=s, q=regex: s.recall(q), args.runs)
        m50, m95 = timed(lambda s=s, q=miss: s.recall(q), args.runs)
        rows.append(
            (
                fmt,
                f"{len(entries):,}",
                f"{sum(1 for _ in entries if _.message is not None):,}",
                f"{build_s:.2f}",
                f"{index_ms:.0f}",
                f"{found.matched:,}",
                f"{e50:.1f} / {e95:.1f}",
                f"{r50:.1f} / {r95:.1f}",
                f"{m50:.1f} / {m95:.1f}",
            )
        )
    table(
        (
            "format",
            "entries",
            "messages",
            "session s",
            "index ms",
            "exact matches",
            "exact ms p50/p95",
            "regex ms p50/p95",
            "miss ms p50/p95",
        ),
        rows,
        title=f"recall over {args.entries:,} entries ({args.runs} runs per query)",
    )


if __name__ == "__main__":
    main()
