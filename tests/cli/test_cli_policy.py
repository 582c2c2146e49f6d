"""``ctxengine compact --policy NAME``: a preset compacts the session its own way."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from cli_helpers import validate as validate_schema

from corpus import require_corpus
from ctxengine.cli import main
from ctxengine.cli.options import policy_from_options
from ctxengine.errors import ConfigError
from ctxengine.policy import DEFAULT_POLICY
from ctxengine.policy.presets import preset
from ctxengine.projection.injection import HANDOFF_PREFIX
from ctxengine.projection.validate import validate

CODEX = ("codex", "codex-cpolar-connect-2025-09-16-a.jsonl")


def run(capsys: pytest.CaptureFixture[str], *argv: str) -> tuple[int, str, str]:
    code = main(list(argv))
    captured = capsys.readouterr()
    return code, captured.out, " ".join(captured.err.split())


def test_compact_with_the_codex_preset_writes_a_handoff_request(
    capsys: pytest.CaptureFixture[str], tmp_path: Path
) -> None:
    path = require_corpus(*CODEX)
    out = tmp_path / "body.json"
    argv = ["compact", str(path), "--window", "32000", "--policy", "codex", "-o", str(out)]
    code, stdout, stderr = run(capsys, *argv, "--report-json")
    assert code == 0
    assert stderr == (
        "warning: policy 'codex' writes its summary with a model (llm); no summary model is "
        "set, so the extractive summarizer stands in"
    )
    report = json.loads(stdout)
    validate_schema(report, "compact")
    # Codex compacts at 90 % of the window.
    assert (report["window"], report["trigger"]) == (32_000, 28_800)
    record = report["compaction"]
    assert (record["policy"], record["injection"], record["summarizer"]) == (
        "codex",
        "handoff",
        "extractive",
    )
    assert "first_kept_id" not in record  # nothing kept verbatim
    body = json.loads(out.read_text())
    assert validate(body, "openai") == []
    messages = body["messages"]
    # The retained user messages, then the hand-off summary last.
    assert [m["role"] for m in messages] == ["user"] * len(record["retained_ids"]) + ["user"]
    assert messages[-1]["content"].startswith(HANDOFF_PREFIX)


def test_keep_last_n_drops_without_a_summary(capsys: pytest.CaptureFixture[str]) -> None:
    path = require_corpus(*CODEX)
    argv = ["compact", str(path), "--window", "32000", "--policy", "keep-last-n", "--json"]
    code, stdout, stderr = run(capsys, *argv)
    assert (code, stderr) == (
        0,
        "note: the request body was not written: give -o FILE (or -o - for stdout)",
    )
    report = json.loads(stdout)
    validate_schema(report, "compact")
    assert report["summarizer"]["kind"] == "none"
    assert report["compaction"]["summarizer"] == "none"
    assert "earlier messages of this conversation were removed" in report["compaction"]["summary"]


def test_an_unknown_policy_exits_2_listing_the_presets(
    capsys: pytest.CaptureFixture[str],
) -> None:
    path = require_corpus(*CODEX)
    code, stdout, stderr = run(capsys, "compact", str(path), "--policy", "cursor")
    assert (code, stdout) == (2, "")
    assert stderr == (
        "error: no preset named 'cursor'; known: default, pi, codex, gemini-cli, opencode, "
        "claude-code, roo-code, openhands, none, keep-last-n, observation-masking"
    )


def test_the_none_policy_compacts_nothing_and_says_why(
    capsys: pytest.CaptureFixture[str], tmp_path: Path
) -> None:
    path = require_corpus(*CODEX)
    out = tmp_path / "body.json"
    argv = ["compact", str(path), "--window", "32000", "--policy", "none", "-o", str(out)]
    code, stdout, stderr = run(capsys, *argv)
    assert (code, stdout, out.exists()) == (2, "", False)
    assert stderr == (
        "cannot compact: the compacted request still needs about 55,524 tokens, more than "
        "the 32,000-token window: nothing was compacted (policy 'none' never compacts); "
        "nothing was written"
    )


class TestPolicyFromOptions:
    def test_no_name_is_the_default_policy(self) -> None:
        assert policy_from_options() is DEFAULT_POLICY

    def test_a_name_is_the_preset(self) -> None:
        assert policy_from_options(name="gemini-cli") == preset("gemini-cli")

    def test_max_tokens_is_the_output_a_reserving_preset_keeps_free(self) -> None:
        # OpenCode: window − min(20,000, 8,192).
        p = policy_from_options(window=200_000, max_tokens=8_192, name="opencode")
        assert p.resolve(200_000).trigger == 191_808
        # pi keeps its 16,384 when that is more than the output with a 5 % margin.
        pi_small = policy_from_options(window=200_000, max_tokens=1_000, name="pi")
        assert pi_small.resolve(200_000).reserve == 16_384
        pi_large = policy_from_options(window=200_000, max_tokens=8_000, name="pi")
        assert pi_large.resolve(200_000).reserve == 18_000

    def test_keep_recent_replaces_a_share_or_a_count(self) -> None:
        p = policy_from_options(3_000, name="gemini-cli")
        assert (p.keep_recent_tokens, p.keep_recent_share) == (3_000, None)
        p = policy_from_options(3_000, name="openhands")
        assert (p.keep_recent_tokens, p.keep_recent_messages) == (3_000, None)

    def test_an_unknown_name_is_a_config_error(self) -> None:
        with pytest.raises(ConfigError, match="no preset named 'x'"):
            policy_from_options(name="x")
