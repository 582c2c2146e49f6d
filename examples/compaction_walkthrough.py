#!/usr/bin/env python3
"""A compaction, step by step, on the bundled example session (``examples/session.jsonl``, a
Claude Code transcript of a small Python project) for a 16,000-token model.

1. Read the transcript (any supported format is sniffed) and see where its tokens go.
2. Ask for the plan: why a compaction is due, where the verbatim tail starts (the cut point),
   the budgets and the size expected after. Nothing runs yet.
3. Compact: the old prefix becomes continuation state (the extractive summarizer: no model).
   Sizes before a compaction start from the usage anchor: the provider-reported usage of the
   latest reply, plus an estimate of what follows it.
4. Render the request body and check it against the provider's protocol.
5. History is unchanged: the compaction is one more entry at the end.

Run it::

    python examples/compaction_walkthrough.py

The command line does the same in one step:
``ctxengine compact examples/session.jsonl --window 16000 -o request.json``.
"""

from __future__ import annotations

from pathlib import Path

from ctxengine import Session, read_transcript, render_openai, validate
from ctxengine.analysis import breakdown
from ctxengine.model import CompactionRecord
from ctxengine.tokens.estimate import HeuristicEstimator

EXAMPLE = Path(__file__).resolve().with_name("session.jsonl")
WINDOW = 16_000


def main() -> None:
    # 1. read
    imported = read_transcript(EXAMPLE)
    b = breakdown(imported.entries, HeuristicEstimator())
    print(
        f"1. {EXAMPLE.name}: {imported.format}, {len(imported.entries)} entries, {b.total:,} tokens"
    )
    for role, tokens in sorted(b.by_role.items(), key=lambda kv: -kv[1]):
        print(f"   {role:9} {tokens:6,} tokens")

    # 2. plan (no summarizer runs, nothing is written)
    session = Session(WINDOW, entries=imported.entries)
    plan = session.plan()
    assert plan is not None and plan.cut is not None
    print(
        f"2. plan: {plan.requirement.level} ({plan.requirement.reason}); trigger "
        f"{plan.budget.trigger:,}, target {plan.target:,}; keep the newest "
        f"{plan.cut.kept_tokens:,} tokens from entry {plan.cut.first_kept_id}; "
        f"expect {plan.expected_tokens:,} tokens after"
    )

    # 3. compact
    outcome = session.compact()
    record = outcome.entry.body
    assert isinstance(record, CompactionRecord)
    print(
        f"3. compacted by {record.summarizer}: {outcome.tokens_before:,} -> "
        f"{outcome.tokens_after:,} tokens; the continuation state opens with:"
    )
    for line in record.summary.splitlines()[:6]:
        print(f"   | {line[:96]}")
    print(
        "   (the size before is the usage anchor: what Claude Code's last request measured,\n"
        "   its own system prompt and tool schemas included, hence more than step 1's estimate)"
    )

    # 4. render and check
    body = render_openai(outcome.context, model="gpt-4o")
    problems = validate(body, "openai")
    print(f"4. request: {len(body['messages'])} messages, protocol problems: {len(problems)}")

    # 5. history
    print(
        f"5. history: {len(session.entries)} entries = {len(imported.entries)} imported + 1 "
        f"compaction record; the first kept entry is still entry "
        f"{[e.id for e in session.entries].index(record.first_kept_id or '')}"
    )


if __name__ == "__main__":
    main()
