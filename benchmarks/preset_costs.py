"""Every preset on three corpus sessions (Claude Code, Codex, mini-swe-agent) at two windows:
compactions, summarizer calls, input tokens billed, simulated cache reads, estimated cost.

Run: ``.venv/bin/python benchmarks/preset_costs.py [--windows 128000,32000]``.

Each session is replayed under every preset of :data:`ctxengine.policy.presets.PRESET_NAMES`
with :func:`ctxengine.replay.compare.compare`, as ``ctxengine replay FILE --policy …`` runs
it: the prompt cache simulated under the rules of the model the transcript records, priced
from the shipped table (a model summarizer stood in for by the extractive one, its calls
estimated: marked ``*``).
"""

from __future__ import annotations

import argparse

from _common import require_file, table

from ctxengine.cost import shipped_price_table
from ctxengine.importers import read_transcript
from ctxengine.policy.presets import PRESET_NAMES, preset
from ctxengine.replay.compare import compare

#: The sessions: one each of Claude Code, Codex and mini-swe-agent.
SESSIONS: tuple[str, ...] = (
    "claude-code/spotter-long-a0y-main.jsonl",
    "codex/codex-openprintkit-2025-10-31-long.jsonl",
    "openai-messages/mini-swe-agent-deepseek-chat-django-13265.traj.json",
)


def main() -> None:
    parser = argparse.ArgumentParser(description=(__doc__ or "").splitlines()[0])
    parser.add_argument("--windows", default="128000,32000", help="windows in tokens")
    args = parser.parse_args()
    windows = [int(w) for w in args.windows.split(",")]
    prices = shipped_price_table()
    policies = [(name, preset(name)) for name in PRESET_NAMES]
    rows = []
    for name in SESSIONS:
        entries = read_transcript(require_file(name)).entries
        for window in windows:
            c = compare(entries, policies, window=window, prices=prices, source=name, jobs=2)
            for run in c.runs:
                star = "*" if run.summary.stand_in else ""
                rows.append(
                    (
                        name.split("/")[0],
                        f"{window:,}",
                        run.name,
                        run.result.compactions,
                        f"{run.summary.calls}{star}",
                        f"{run.billed_input:,}",
                        f"{run.cache_read:,}",
                        f"{100 * run.cache_read / max(1, run.billed_input):.1f}",
                        f"{run.cost:,.2f}",
                        c.price.price.name,
                    )
                )
    table(
        ("session", "window", "preset", "compactions", "summarizer calls", "input billed",
         "cache reads", "read %", "cost $", "priced as"),
        rows,
        title="Presets on three corpus sessions (* model summarizer estimated offline)",
    )  # fmt: skip


if __name__ == "__main__":
    main()
