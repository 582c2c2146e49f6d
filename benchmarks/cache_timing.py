"""Cache-aware timing on the corpus: how many prefix-changing steps (prunes, compactions) land
on a prompt cache already cold, before and after turning cache-aware timing on (not a test).

Run: ``.venv/bin/python benchmarks/cache_timing.py [--window 32000] [--model M]``.

The corpus transcripts whose agent sat idle longer than 5 minutes at least once before a
model call (by the times they recorded) are replayed with a simulated prompt cache
(``ctxengine.replay.compare``, priced as ``--model``, Anthropic's cache rules by default),
each under two pairs of policies:

* ``default`` (5-minute cache) against ``default+timing``: the same policy with
  ``prune_when="always"`` and ``prune_cache_cold_only`` (a prune waits for a cold cache, and
  runs at any call once it is cold) and ``idle_compact_seconds=300`` (an idle session at 80 %
  of its trigger or more compacts before its request);
* ``claude-code-untimed`` (the Claude Code preset without its cache timing: no microcompact,
  no idle compaction) against ``claude-code`` (1-hour cache: clears old tool results once the
  cache is cold, compacts a session idle past the hour), the cache written with the 1-hour
  lifetime.

Printed per transcript and policy: the prefix-changing calls and those of them on a cold
cache (the report's ``prefix_changes``), compactions, prunes, tokens written to the cache and
the cost of the requests (USD).
"""

from __future__ import annotations

import argparse

from _common import require_corpus, table, transcript_files

from ctxengine.cost import shipped_price_table
from ctxengine.errors import TranscriptError
from ctxengine.importers import read_transcript
from ctxengine.ladder.timing import reply_gap
from ctxengine.model import Entry
from ctxengine.policy import DEFAULT_POLICY, Policy
from ctxengine.policy.presets import preset
from ctxengine.replay.compare import compare
from ctxengine.replay.loop import source_messages

#: Idle gap (seconds) a transcript must show at least once to be replayed: Anthropic's and
#: OpenAI's default cache lifetime.
IDLE_S = 300.0


def idle_gaps(entries: list[Entry]) -> list[float]:
    """The idle gaps (seconds) before each model call of ``entries``, where known."""
    gaps: list[float] = []
    seen: list[Entry] = []
    previous = ""
    for e in entries:
        m = e.message
        if m is None:
            continue
        if m.role == "assistant" and previous != "assistant":
            gap = reply_gap(seen)
            if gap is not None:
                gaps.append(gap)
        seen.append(e)
        previous = m.role
    return gaps


def pairs() -> list[tuple[bool, list[tuple[str, Policy]]]]:
    """``(long cache lifetime, [(name, policy), …])`` per comparison."""
    timing = DEFAULT_POLICY.model_copy(
        update={
            "prune_when": "always",
            "prune_cache_cold_only": True,
            "idle_compact_seconds": IDLE_S,
        }
    )
    claude = preset("claude-code")
    untimed = claude.model_copy(
        update={"prune_enabled": False, "idle_compact_seconds": None, "name": "claude-code"}
    )
    return [
        (False, [("default", DEFAULT_POLICY), ("default+timing", timing)]),
        (True, [("claude-code-untimed", untimed), ("claude-code", claude)]),
    ]


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--window", type=int, default=32_000, help="model window (tokens)")
    parser.add_argument("--model", default="claude-sonnet-4-5", help="priced as this model")
    args = parser.parse_args()

    corpus = require_corpus()
    prices = shipped_price_table()
    rows = []
    for path in transcript_files(corpus):
        try:
            entries = read_transcript(path).entries
        except TranscriptError:
            continue
        gaps = idle_gaps(entries)
        if not any(g >= IDLE_S for g in gaps) or not source_messages(entries):
            continue
        name = str(path.relative_to(corpus))
        long_gaps = sum(g >= IDLE_S for g in gaps)
        for long_ttl, policies in pairs():
            result = compare(
                entries,
                policies,
                window=args.window,
                prices=prices,
                model=args.model,
                long_ttl=long_ttl,
            )
            report = result.to_dict()
            for run in report["policies"]:
                changes = run["prefix_changes"]
                rows.append(
                    (
                        name,
                        f"{len(gaps)} ({long_gaps})",
                        run["name"],
                        report["cache"]["ttl_s"],
                        changes["steps"],
                        changes["on_cold_cache"],
                        run["compactions"],
                        run["prunes"],
                        f"{run['input_tokens']['cache_write']:,}",
                        f"{run['cost_usd']['requests']:.3f}",
                    )
                )
    table(
        (
            "transcript",
            f"calls (idle ≥ {IDLE_S:.0f} s)",
            "policy",
            "cache TTL s",
            "prefix changes",
            "on cold cache",
            "compactions",
            "prunes",
            "cache write tokens",
            "requests USD",
        ),
        rows,
        f"Prefix-changing steps on a cold cache at a {args.window:,}-token window, priced as "
        f"{args.model}",
    )


if __name__ == "__main__":
    main()
