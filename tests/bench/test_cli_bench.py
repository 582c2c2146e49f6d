"""``ctxengine bench`` through the CLI entry point: JSON and the plain-text tables."""

from __future__ import annotations

import json

import pytest

from ctxengine.cli import main


def test_bench_json_for_one_session_and_one_k(capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["bench", "--sessions", "1", "--k", "1", "--json"]) == 0
    report = json.loads(capsys.readouterr().out)
    assert report["profile"] == "smoke" and report["ks"] == [1]
    assert [s["name"] for s in report["sessions"]] == ["debug-0"]
    policy = report["policies"]["default"]
    assert policy["cells"] == 1
    assert policy["determinism"] == {"cells": 1, "identical": 1}
    assert policy["cells_detail"][0]["compactions"] == 1
    assert set(policy["cells_detail"][0]["hashes"]) == {"openai", "anthropic"}
    assert isinstance(report["targets"]["default"], list)


def test_bench_prints_tables_as_plain_text_when_piped(capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["bench", "--sessions", "1", "--k", "1", "--seed", "1"]) == 0
    out = capsys.readouterr().out
    assert out.startswith("ctxengine bench — profile smoke, seed 1, 1 sessions")
    assert "default: survival of exposed facts" in out
    assert "file_modified (indirect)" in out
    assert "modified-file recall" in out
    assert "determinism 1/1 identical request hashes" in out
    assert "─" not in out and "│" not in out  # no box drawing when not a terminal


def test_bench_rejects_an_unknown_profile(capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["bench", "--profile", "huge"]) == 2
    assert "expected one of smoke, full" in capsys.readouterr().err
