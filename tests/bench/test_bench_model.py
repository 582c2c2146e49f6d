"""``ctxengine bench --summary-model``: the llm and hybrid summarizers compared beside the
default one, against the scripted local server (real HTTP through the OpenAI SDK)."""

from __future__ import annotations

import json

import pytest
from llm_helpers import GOOD, stream
from servers import ScriptedServer

from ctxengine.cli import main


def test_model_summarizers_are_compared_with_their_calls_counted(
    server: ScriptedServer, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    monkeypatch.setenv("OPENAI_BASE_URL", server.url + "/v1")
    monkeypatch.setenv("OPENAI_API_KEY", "sk-test")
    server.push(stream(GOOD, prompt_tokens=5_000), stream(GOOD, prompt_tokens=5_000))
    args = ["bench", "--sessions", "1", "--k", "1", "--json"]
    assert main([*args, "--summary-model", "openai:gpt-4o-mini"]) == 0
    report = json.loads(capsys.readouterr().out)
    assert list(report["policies"]) == ["default", "default+llm", "default+hybrid"]
    default = report["policies"]["default"]
    windows = {name: p["cells_detail"][0]["window"] for name, p in report["policies"].items()}
    assert len(set(windows.values())) == 1  # model policies replay at the offline window
    for name in ("default+llm", "default+hybrid"):
        policy = report["policies"][name]
        assert policy["cells_detail"][0]["compactions"] == 1
        assert policy["cost"]["1"]["model_calls"] == 1
        assert policy["determinism"] is None
        assert policy["validity"]["invalid"] == 0
    assert default["cost"]["1"]["model_calls"] == 0
    assert len(server.received) == 2
