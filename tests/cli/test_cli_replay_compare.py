"""``ctxengine replay --policy``: the comparison table, its JSON, and bad options."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from cli_helpers import validate

from corpus import require_corpus
from ctxengine.cli import main

SMALL = ("claude-code", "spotter-tool-heavy.jsonl")
LONG = ("claude-code", "spotter-long-a0y-main.jsonl")


def run(capsys: pytest.CaptureFixture[str], *argv: str) -> tuple[int, str, str]:
    code = main(list(argv))
    captured = capsys.readouterr()
    return code, captured.out, " ".join(captured.err.split())


def test_the_json_comparison_follows_its_schema(capsys: pytest.CaptureFixture[str]) -> None:
    path = require_corpus(*SMALL)
    code, stdout, _ = run(capsys, "replay", str(path), "--window", "1000", "--policy",
                          "default", "--json")  # fmt: skip
    assert code == 0
    data = json.loads(stdout)
    validate(data, "replay")
    assert list(data) == [
        "schema", "source", "window", "sample", "tokenizer", "model", "cache", "notes",
        "facts", "policies", "cache_check",
    ]  # fmt: skip
    assert data["tokenizer"] == "estimate"
    assert (data["schema"], data["window"], data["model"]["priced_as"]) == (
        "ctxengine.replay.comparison/1",
        1000,
        "claude-opus-4-6",
    )
    (policy,) = data["policies"]
    # The same replay as without --policy (4 calls, no compaction: the largest context, 759
    # tokens, stays under the 800-token trigger).
    assert (policy["calls"], policy["compactions"], policy["context"]["peak"]) == (4, 0, 759)
    assert policy["input_tokens"] == {
        "billed": 2901,
        "uncached": 1780,
        "cache_read": 0,
        "cache_write": 1121,
    }
    assert policy["cost_usd"] == {"requests": 0.023306, "summarizer": 0.0, "total": 0.023306}
    assert policy["survival"]["first_request"] is True
    assert "steps" not in policy
    assert data["cache_check"]["compared"] == 3


def test_steps_list_every_call_with_its_cache_outcome(capsys: pytest.CaptureFixture[str]) -> None:
    path = require_corpus(*SMALL)
    argv = ["replay", str(path), "--window", "1000", "--policy", "default", "--json", "--steps"]
    code, stdout, _ = run(capsys, *argv)
    doc = json.loads(stdout)
    validate(doc, "replay")
    steps = doc["policies"][0]["steps"]
    assert code == 0
    # One epoch: every request after the first is checked from its new tail.
    assert [s["checked"] for s in steps] == ["full", "tail", "tail", "tail"]
    assert [s["events"] for s in steps] == [[], [], [], []]
    assert [s["cache"]["prompt"] for s in steps] == [460, 535, 785, 1121]
    assert sum(s["cache"]["prompt"] for s in steps) == 2901


def test_the_table_has_one_column_per_policy(capsys: pytest.CaptureFixture[str]) -> None:
    path = require_corpus(*LONG)
    code, stdout, _ = run(capsys, "replay", str(path), "--policy", "default")
    assert code == 0
    lines = stdout.splitlines()
    assert lines[0].endswith(
        "under a 128,000-token window: anthropic prompt cache (breakpoints, 300 s), "
        "claude-opus-4-6 prices"
    )
    assert lines[1] == "\tdefault"
    assert "model calls\t157" in lines
    assert "cache breaks\tcompaction 1" in lines
    assert "modified files kept\t39/39" in lines
    text = " ".join(stdout.split())
    assert (
        "cache-read ratio recorded 98.4 %, simulated 98.9 % (x1.005); reads recorded "
        "15,355,833, simulated 13,449,022 tokens (x0.876)" in text
    )


@pytest.mark.parametrize(
    ("argv", "message"),
    [
        (["--policy", "default,nosuch"], "error: no preset named 'nosuch'"),
        (["--policy", " , "], "error: --policy needs preset names"),
        (
            ["--policy", "default,,pi"],
            "error: --policy 'default,,pi' has an empty name between its commas",
        ),
        (["--policy", "default", "--cache-ttl", "2h"], "error: --cache-ttl must be 5m or 1h"),
        (
            ["--policy", "default", "--cache-provider", "gemini"],
            "error: no cache rules for 'gemini'; known: anthropic, openai",
        ),
        (
            ["--steps"],
            "error: --steps lists every call of a comparison: it needs --policy and --json",
        ),
        (
            ["--policy", "default", "--steps"],
            "error: --steps lists every call of a comparison: it needs --policy and --json",
        ),
    ],
)
def test_bad_options_exit_2_naming_them(
    capsys: pytest.CaptureFixture[str], argv: list[str], message: str
) -> None:
    path = require_corpus(*SMALL)
    code, stdout, stderr = run(capsys, "replay", str(path), *argv)
    assert (code, stdout) == (2, "")
    assert stderr.startswith(message)


def test_a_prices_file_overrides_and_a_bad_one_is_named(
    capsys: pytest.CaptureFixture[str], tmp_path: Path
) -> None:
    path = require_corpus(*SMALL)
    cheap = tmp_path / "prices.json"
    opus = {"provider": "anthropic", "input": 0.0, "cached_input": 0.0, "cache_write": 0.0,
            "cache_write_long": 0.0, "output": 1000.0}  # fmt: skip
    cheap.write_text(json.dumps({"models": {"claude-opus-4-6": opus}}))
    argv = ["replay", str(path), "--window", "1000", "--policy", "default", "--json"]
    code, stdout, _ = run(capsys, *argv, "--prices", str(cheap))
    assert code == 0
    # Only output is priced: 296 output tokens at $1,000 per million.
    assert json.loads(stdout)["policies"][0]["cost_usd"]["total"] == 0.296
    bad = tmp_path / "bad.json"
    bad.write_text(json.dumps({"models": {"x": {**opus, "input": "a"}}}))
    code, _, stderr = run(capsys, *argv, "--prices", str(bad))
    assert (code, stderr) == (2, f"error: {bad}: models.x.input: expected a number, got 'a'")


def test_a_sample_and_a_keep_recent_override_are_said(capsys: pytest.CaptureFixture[str]) -> None:
    path = require_corpus(*SMALL)
    argv = ["--policy", "default,pi", "--sample", "5", "--keep-recent", "2000", "--json"]
    code, stdout, _ = run(capsys, "replay", str(path), *argv)
    assert code == 0
    notes = json.loads(stdout)["notes"]
    assert notes[-2:] == [
        "--sample 5: every 5th request was validated in full and the others not at all; "
        "invalid requests counts those checked",
        "--keep-recent 2,000 replaced every policy's own keep-recent budget",
    ]
