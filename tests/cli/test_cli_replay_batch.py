"""``ctxengine replay`` over several transcripts and folders in this process: the batch JSON,
its agreement with one ``replay FILE --policy`` per file, failures named with the others kept,
``--policy all`` and repeated ``--policy``; and a policy that raises in a ``--jobs`` worker."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
from cli_helpers import validate

from corpus import require_corpus
from ctxengine.cli import main
from ctxengine.cli.comparison import policies_from
from ctxengine.cost import shipped_price_table
from ctxengine.errors import ConfigError, ContextFloorError
from ctxengine.importers import formats, read_transcript
from ctxengine.policy.presets import PRESET_NAMES, preset
from ctxengine.replay.compare import compare

#: Four calls, no compaction at a 1,000-token window.
SMALL = ("claude-code", "spotter-tool-heavy.jsonl")
#: At a 3,500-token window ``opencode`` fails (its 2,729-token task, never truncated, does not
#: fit under its 1,750-token trigger) and ``default`` does not (trigger 2,800).
ABORTED = ("openai-messages", "mini-swe-agent-deepseek-reasoner-pvlib-1606-aborted.traj.json")
LOOP = (
    "ContextFloorError: no compaction can bring the context under the trigger of 1,750 tokens "
    "(window 3,500): what every compaction keeps is 3,031 tokens already (largest parts: "
    "newest user message 2,733, continuation state 176, continuation message 66); the newest "
    "user message is never cut nor summarized before it is answered: send a shorter one, or "
    "use a model with a larger window"
)


def run(capsys: pytest.CaptureFixture[str], *argv: str) -> tuple[int, str, list[str]]:
    """Exit code, stdout, and the stderr lines that are not progress lines."""
    code = main(list(argv))
    captured = capsys.readouterr()
    lines = [line for line in captured.err.splitlines() if not line.startswith("[")]
    return code, captured.out, lines


def without_seconds(doc: Any) -> Any:
    """``doc`` with every ``seconds`` (wall time) key left out."""
    if isinstance(doc, dict):
        return {k: without_seconds(v) for k, v in doc.items() if k != "seconds"}
    if isinstance(doc, list):
        return [without_seconds(v) for v in doc]
    return doc


def test_policy_all_and_repeated_policy_options_name_the_presets_in_order() -> None:
    assert [n for n, _ in policies_from(["all"])] == list(PRESET_NAMES)
    assert [n for n, _ in policies_from(["pi,codex", "default", "pi"])] == [
        "pi",
        "codex",
        "default",
    ]
    with pytest.raises(ConfigError, match="has an empty name between its commas"):
        policies_from(["pi,,codex"])


def test_a_batch_holds_each_files_comparison_as_replay_file_policy_prints_it(
    capsys: pytest.CaptureFixture[str], tmp_path: Path
) -> None:
    small = require_corpus(*SMALL)
    folder = tmp_path / "folder"
    folder.mkdir()
    (folder / "b.jsonl").write_bytes(small.read_bytes())
    (folder / "notes.txt").write_text("not a transcript\n", encoding="utf-8")
    (folder / ".hidden.jsonl").write_bytes(small.read_bytes())
    code, out, err = run(capsys, "replay", str(small), str(folder), "--window", "1000",
                         "--policy", "default,keep-last-n", "--json")  # fmt: skip
    assert (code, err) == (0, [])
    batch = json.loads(out)
    validate(batch, "replay")
    assert [s["source"] for s in batch["sources"]] == [str(small), str(folder / "b.jsonl")]
    assert batch["skipped"] == [
        {
            "file": str(folder / "notes.txt"),
            "reason": "unrecognised transcript format: text (first line: 'not a transcript') "
            f"(known: {', '.join(formats())})",
        }
    ]
    assert (batch["schema"], batch["policies"], batch["errors"]) == (
        "ctxengine.replay.batch/1",
        ["default", "keep-last-n"],
        [],
    )
    code, out, _ = run(capsys, "replay", str(small), "--window", "1000",
                       "--policy", "default,keep-last-n", "--json")  # fmt: skip
    single = json.loads(out)
    assert code == 0
    assert without_seconds(batch["sources"][0]) == without_seconds(single)
    second = without_seconds(batch["sources"][1])
    assert second == {**without_seconds(single), "source": str(folder / "b.jsonl")}
    # 4 calls of 2,901 input tokens per file (test_cli_replay_compare), twice; the cost is
    # the sum of the unrounded costs (2 × 0.023306…), rounded once.
    assert batch["totals"][0] == {
        "name": "default",
        "transcripts": 2,
        "calls": 8,
        "compactions": 0,
        "prunes": 0,
        "invalid": 0,
        "input_tokens": {"billed": 5802, "uncached": 3560, "cache_read": 0, "cache_write": 2242},
        "cost_usd": 0.046613,
    }


def test_a_failing_transcript_and_policy_are_named_and_the_others_kept(
    capsys: pytest.CaptureFixture[str], tmp_path: Path
) -> None:
    small, aborted = require_corpus(*SMALL), require_corpus(*ABORTED)
    bad = tmp_path / "bad.jsonl"
    bad.write_text("not a transcript\n", encoding="utf-8")
    code, out, err = run(capsys, "replay", str(aborted), str(bad), str(small), "--window",
                         "3500", "--policy", "default,opencode", "--json")  # fmt: skip
    assert code == 1
    unrecognised = (
        f"TranscriptError: {bad}: unrecognised transcript format: text (first line: "
        f"'not a transcript') (known: {', '.join(formats())})"
    )
    assert err == [
        f"error: {aborted} under opencode: {LOOP}",
        f"error: {bad}: {unrecognised}",
        "error: 3 of 6 replays failed or were not run (listed above); the other results are "
        "printed",
    ]
    batch = json.loads(out)
    validate(batch, "replay")
    assert batch["errors"] == [
        {"source": str(aborted), "policy": "opencode", "error": LOOP},
        {"source": str(bad), "policy": None, "error": unrecognised},
    ]
    assert [(s["source"], [p["name"] for p in s["policies"]]) for s in batch["sources"]] == [
        (str(aborted), ["default"]),
        (str(small), ["default", "opencode"]),
    ]
    assert [(t["name"], t["transcripts"]) for t in batch["totals"]] == [
        ("default", 2),
        ("opencode", 1),
    ]


def test_compare_on_error_leaves_the_failing_policy_out() -> None:
    entries = read_transcript(require_corpus(*ABORTED)).entries
    failed: list[tuple[str, str]] = []
    c = compare(
        entries,
        [("default", preset("default")), ("opencode", preset("opencode"))],
        window=3500,
        prices=shipped_price_table(),
        on_error=lambda name, exc: failed.append((name, f"{type(exc).__name__}: {exc}")),
    )
    assert failed == [("opencode", LOOP)]
    assert [r.name for r in c.runs] == ["default"]
    with pytest.raises(ContextFloorError, match="newest user message 2,733"):
        compare(entries, [("opencode", preset("opencode"))], window=3500,
                prices=shipped_price_table())  # fmt: skip


def test_an_error_raised_in_a_jobs_worker_reaches_the_parent_as_raised() -> None:
    # Before ctxengine errors pickled, this broke the pool (BrokenProcessPool).
    entries = read_transcript(require_corpus("swe-agent", "swe-agent-ctf-web-i-got-id.traj"))
    policies = [("default", preset("default")), ("pi", preset("pi"))]
    with pytest.raises(ContextFloorError) as raised:
        compare(entries.entries, policies, window=3000, prices=shipped_price_table(), jobs=2)
    assert str(raised.value).startswith(
        "no compaction can bring the context under the trigger of 1,500 tokens (window 3,000): "
        "what every compaction keeps is 2,251 tokens already (largest parts: system prompt "
        "1,424, newest user message 565, continuation state 191)"
    )
