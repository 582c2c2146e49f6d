"""``compact`` and ``export`` without ``--window``: the window of ``--model``'s profile,
else 128,000 tokens."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from cli_helpers import EXAMPLE

from ctxengine.cli import main
from ctxengine.providers.profiles import PROFILES_ENV


@pytest.mark.parametrize(
    ("extra", "window"),
    [
        (["--model", "claude-opus-5-5"], 200_000),
        (["--model", "gpt-4.1-mini"], 1_047_576),
        (["--model", "no-such-model"], 128_000),
        ([], 128_000),
        (["--model", "claude-opus-5-5", "--window", "50000"], 50_000),
    ],
)
def test_compact_takes_the_window_of_the_model(
    extra: list[str],
    window: int,
    tmp_path: Path,
    capsys: pytest.CaptureFixture[str],
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.delenv(PROFILES_ENV, raising=False)
    out = tmp_path / "r.json"
    argv = ["compact", str(EXAMPLE), "--provider", "anthropic", "--user", "Go on."]
    assert main([*argv, *extra, "-o", str(out), "--json"]) == 0
    assert json.loads(capsys.readouterr().out)["window"] == window


def test_export_takes_the_window_of_the_model(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    profiles = tmp_path / "profiles.json"
    tiny = {"provider": "anthropic", "context_window": 16_000, "max_output_tokens": 2_000}
    profiles.write_text(json.dumps({"models": {"tiny-model": tiny}}), encoding="utf-8")
    monkeypatch.setenv(PROFILES_ENV, str(profiles))
    counts = []
    for extra in ([], ["--model", "tiny-model"]):
        out = tmp_path / "r.json"
        argv = ["export", str(EXAMPLE), "--format", "anthropic", "--user", "Go on.", *extra]
        assert main([*argv, "-o", str(out), "--json"]) == 0
        counts.append(json.loads(capsys.readouterr().out)["tokens"])
    # The example (about 21,500 tokens) fits 128,000 whole; the 16,000-token window of the
    # model's profile compacts it.
    assert counts[0] > 16_000 > counts[1]
