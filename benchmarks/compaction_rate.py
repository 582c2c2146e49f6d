"""Compactions per turn when each corpus transcript is replayed under small windows (not a test).

Run: ``.venv/bin/python benchmarks/compaction_rate.py [--windows 4000,8000,32000] [--json]``.

Every transcript of the corpus folders (``_common.TRANSCRIPT_DIRS``) whose format imports is
replayed with ``ctxengine.replay.replay(entries, window=W)`` (default policy and estimator,
provider usage dropped) at each window. Per file and window:

- **turns**: real user messages of the source (``ctxengine.model.roles.is_real_user_message``:
  role ``user``, no tool result, not text the harness injects) among the messages the replay
  appends;
- **model calls**: the replay's steps (one per assistant reply);
- **compactions**: ladder steps recorded as ``compaction`` during the replay;
- **per 100 turns**: ``100 × compactions / turns`` (``-`` when there are no turns);
- **per 100 calls**: ``100 × compactions / model calls``: agents that take one task and
  answer it with many tool calls (SWE-agent, mini-SWE-agent) have a single turn, so this is
  the rate that compares across formats.

A ``TOTAL`` row closes each window: sums, and the rate of the sums. A replay that raises
``ConfigError`` or ``CompactionError`` is shown with the error's class name and left out of
the total. ``--json`` prints the same rows (and the skipped files) as JSON instead.
"""

from __future__ import annotations

import argparse
import json
from dataclasses import asdict, dataclass

from _common import pct, require_corpus, table, transcript_files

from ctxengine.errors import CompactionError, ConfigError, UnsupportedFormatError
from ctxengine.importers import read_transcript
from ctxengine.model.roles import is_real_user_message
from ctxengine.replay import replay, source_messages


@dataclass(frozen=True, slots=True)
class Row:
    """One replay (``file`` is ``"TOTAL"`` for a window's total; ``error`` names the
    exception class when the replay failed, and then the counts are 0)."""

    file: str
    window: int
    turns: int
    calls: int
    compactions: int
    error: str | None = None

    @property
    def per_100_turns(self) -> float | None:
        """Compactions per 100 turns; ``None`` without turns."""
        return None if self.turns == 0 else 100 * self.compactions / self.turns

    @property
    def per_100_calls(self) -> float | None:
        """Compactions per 100 model calls; ``None`` without calls."""
        return None if self.calls == 0 else 100 * self.compactions / self.calls


def measure(windows: list[int]) -> tuple[list[Row], list[str]]:
    """The rows (per window: one per importable file, then its ``TOTAL``) and the corpus
    paths skipped because their format has no importer."""
    corpus = require_corpus()
    loaded = []
    skipped = []
    for path in transcript_files(corpus):
        name = str(path.relative_to(corpus))
        try:
            entries = read_transcript(path).entries
        except UnsupportedFormatError:
            skipped.append(name)
            continue
        turns = sum(1 for m in source_messages(entries) if is_real_user_message(m))
        loaded.append((name, entries, turns))
    rows: list[Row] = []
    for window in windows:
        done: list[Row] = []
        for name, entries, turns in loaded:
            try:
                result = replay(entries, window=window)
            except (ConfigError, CompactionError) as e:
                rows.append(Row(name, window, turns, 0, 0, type(e).__name__))
                continue
            done.append(Row(name, window, turns, len(result.steps), result.compactions))
            rows.append(done[-1])
        rows.append(
            Row(
                "TOTAL",
                window,
                sum(r.turns for r in done),
                sum(r.calls for r in done),
                sum(r.compactions for r in done),
            )
        )
    return rows, skipped


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--windows", default="4000,8000,32000", help="windows in tokens")
    parser.add_argument("--json", action="store_true", help="print JSON instead of a table")
    args = parser.parse_args()
    windows = [int(w) for w in args.windows.split(",")]
    rows, skipped = measure(windows)
    if args.json:
        out = {
            "rows": [
                asdict(r) | {"per_100_turns": r.per_100_turns, "per_100_calls": r.per_100_calls}
                for r in rows
            ],
            "skipped_unsupported": skipped,
        }
        print(json.dumps(out, indent=2))
        return
    table(
        ("file", "window", "turns", "model calls", "compactions", "per 100 turns", "per 100 calls"),
        [
            (
                r.file,
                f"{r.window:,}",
                r.turns,
                r.error or r.calls,
                r.error or r.compactions,
                "-" if r.error else pct(r.compactions, r.turns),
                "-" if r.error else pct(r.compactions, r.calls),
            )
            for r in rows
        ],
        title="Compactions per turn, corpus replays (default policy, provider usage dropped)",
    )
    print(f"\nSkipped (format not supported yet): {', '.join(skipped) or 'none'}")


if __name__ == "__main__":
    main()
