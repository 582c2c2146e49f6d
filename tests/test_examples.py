"""The usage examples in ``examples/`` run as a user runs them (``python examples/NAME.py``,
in a subprocess) and print what they claim: the agent loop stays under its window, compacts
on the way and keeps its whole history; the walkthrough's numbers are the library's."""

from __future__ import annotations

import os
import re
import subprocess
import sys
from pathlib import Path

from ctxengine import Session, read_transcript, render_openai
from ctxengine.analysis import breakdown
from ctxengine.policy import DEFAULT_POLICY
from ctxengine.tokens.estimate import HeuristicEstimator

ROOT = Path(__file__).resolve().parents[1]
EXAMPLES = ROOT / "examples"


def run_example(name: str) -> list[str]:
    env = dict(os.environ)
    env["PYTHONPATH"] = os.pathsep.join(
        [str(ROOT / "src"), *([env["PYTHONPATH"]] if "PYTHONPATH" in env else [])]
    )
    done = subprocess.run(
        [sys.executable, str(EXAMPLES / name)],
        cwd=ROOT.parent,  # not the checkout: the example finds its own files
        env=env,
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert (done.returncode, done.stderr) == (0, "")
    return done.stdout.splitlines()


def test_the_agent_loop_compacts_under_its_window_and_keeps_its_history() -> None:
    lines = run_example("agent_loop.py")
    turns = [
        re.fullmatch(
            r"turn +(\d+): +([\d,]+) tokens sent in +(\d+) messages "
            r"\(compactions so far: (\d+)\)",
            line,
        )
        for line in lines[:-2]
    ]
    assert all(turns) and len(turns) == 13
    sent = [int(m.group(2).replace(",", "")) for m in turns if m]
    compactions = [int(m.group(4)) for m in turns if m]
    # every request fits the window, near the trigger at most (the trigger is measured from
    # the usage anchor, the printed size is the estimate of the whole context)
    trigger = DEFAULT_POLICY.resolve(6_000).trigger
    assert max(sent) < 6_000
    assert max(sent) < trigger * 1.02
    assert compactions == sorted(compactions) and compactions[-1] == 3
    # 2 opening messages + 12 replies with one tool result each + the final reply,
    # plus one compaction record per compaction: nothing was removed
    assert lines[-1] == f"history: {2 + 12 * 2 + 1 + compactions[-1]} entries, nothing deleted"
    assert lines[-2] == "Done: the module_N_step functions are consistent (12 files in view)."


def test_the_compaction_walkthrough_prints_the_librarys_numbers() -> None:
    lines = run_example("compaction_walkthrough.py")
    imported = read_transcript(EXAMPLES / "session.jsonl")
    total = breakdown(imported.entries, HeuristicEstimator()).total
    assert lines[0] == f"1. session.jsonl: claude-code, 164 entries, {total:,} tokens"
    session = Session(16_000, entries=imported.entries)
    plan = session.plan()
    assert plan is not None and plan.cut is not None
    assert lines[4].startswith(
        f"2. plan: soft (manual); trigger 12,800, target {plan.target:,}; keep the newest "
        f"{plan.cut.kept_tokens:,} tokens from entry {plan.cut.first_kept_id}"
    )
    outcome = session.compact()
    assert lines[5] == (
        f"3. compacted by extractive: {outcome.tokens_before:,} -> {outcome.tokens_after:,} "
        "tokens; the continuation state opens with:"
    )
    assert lines[6] == "   | ## Goal"
    body = render_openai(outcome.context, model="gpt-4o")
    assert f"4. request: {len(body['messages'])} messages, protocol problems: 0" in lines
    assert lines[-1].startswith("5. history: 165 entries = 164 imported + 1 compaction record")
