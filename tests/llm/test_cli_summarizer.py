"""``ctxengine compact FILE --summarizer llm`` end to end: a subprocess pointed at the local
scripted server through OPENAI_BASE_URL and CTXENGINE_SUMMARY_MODEL."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest
from llm_helpers import GOOD, stream, user_prompt
from servers import ScriptedServer

from ctxengine.summarizers.factory import compact_instructions

TASK = "Task A: migrate module X to the storage API. Never push to main."


def transcript(path: Path, steps: int = 12) -> Path:
    messages: list[dict[str, Any]] = [
        {"role": "system", "content": "You are a coding agent."},
        {"role": "user", "content": TASK},
    ]
    for k in range(steps):
        call = {
            "id": f"call_{k}",
            "type": "function",
            "function": {"name": "read_file", "arguments": json.dumps({"path": f"src/m{k}.py"})},
        }
        messages += [
            {"role": "assistant", "content": f"Reading m{k}.", "tool_calls": [call]},
            {"role": "tool", "tool_call_id": f"call_{k}", "content": f"def f{k}():\n" * 150},
        ]
    messages.append({"role": "assistant", "content": "All modules read."})
    path.write_text(json.dumps(messages), encoding="utf-8")
    return path


def run_cli(cwd: Path, env: dict[str, str], *args: str) -> subprocess.CompletedProcess[str]:
    full = {k: v for k, v in os.environ.items() if not k.startswith(("OPENAI_", "ANTHROPIC_"))}
    full.pop("CTXENGINE_SUMMARY_MODEL", None)
    full.update(env)
    return subprocess.run(
        [sys.executable, "-m", "ctxengine", "compact", *args],
        cwd=cwd,
        env=full,
        capture_output=True,
        text=True,
        timeout=120,
    )


@pytest.fixture
def project(tmp_path: Path) -> Path:
    (tmp_path / "AGENTS.md").write_text(
        "# Rules\nUse tabs.\n\n## Compact instructions\nKeep every test name.\n\n## Other\nx\n",
        encoding="utf-8",
    )
    transcript(tmp_path / "session.json")
    return tmp_path


def test_compact_with_the_llm_summarizer_end_to_end(server: ScriptedServer, project: Path) -> None:
    server.push(stream(GOOD, prompt_tokens=2_345))
    env = {
        "OPENAI_BASE_URL": server.url + "/v1",
        "CTXENGINE_SUMMARY_MODEL": "openai:gpt-4o-mini",
    }
    args = ("session.json", "--summarizer", "llm", "--window", "8000", "--keep-recent", "600")
    done = run_cli(project, env, *args, "--report-json")
    assert done.returncode == 0, done.stderr
    report = json.loads(done.stdout)
    assert report["summarizer"] == {
        "kind": "llm",
        "model": "openai:gpt-4o-mini",
        "calls": 1,
        "input_tokens": 2_345,
        "output_tokens": len([GOOD[i : i + 40] for i in range(0, len(GOOD), 40)]),
        "instructions_from": ["AGENTS.md"],
        "fallback": None,
        "notes": ["calls:1", "call_input_tokens:2345", "call_output_tokens:12"],
    }
    assert (report["compaction"]["summarizer"], report["compaction"]["summary"]) == ("llm", GOOD)
    assert report["tokens_after"] < report["tokens_before"]
    [got] = server.received
    assert got.path == "/v1/chat/completions"
    assert (got.body["model"], got.body["max_tokens"], got.body["stream"]) == (
        "gpt-4o-mini",
        12_000,
        True,
    )
    prompt = user_prompt(got.body)
    assert "Project compact instructions:\nKeep every test name." in prompt
    assert f"[user wrote]\n| {TASK}" in prompt


def test_a_refused_summary_falls_back_to_the_extractive_one(
    server: ScriptedServer, project: Path
) -> None:
    server.push(stream("Please provide the conversation you want summarized."))
    env = {"OPENAI_BASE_URL": server.url + "/v1"}
    args = ("session.json", "--summary-model", "openai:gpt-4o-mini", "--window", "8000")
    done = run_cli(project, env, *args, "--keep-recent", "600", "--report-json")
    assert done.returncode == 0, done.stderr
    report = json.loads(done.stdout)
    assert report["summarizer"]["kind"] == "hybrid"
    assert report["summarizer"]["fallback"].startswith(
        "hybrid summarizer failed (summary rejected: refusal"
    )
    assert report["compaction"]["summarizer"] == "extractive"


def test_a_model_summarizer_without_a_model_is_a_configuration_error(project: Path) -> None:
    done = run_cli(project, {}, "session.json", "--summarizer", "llm")
    assert done.returncode == 2
    assert "needs a summary model: set CTXENGINE_SUMMARY_MODEL" in " ".join(done.stderr.split())


def test_compact_instructions_section_is_found_at_any_level() -> None:
    text = "# A\n### compact instructions\nKeep names.\n#### detail\nmore\n### Next\nno"
    assert compact_instructions(text) == "Keep names.\n#### detail\nmore"
    assert compact_instructions("# Summary Instructions\n\nfocus on tests\n") == "focus on tests"
    assert compact_instructions("# Rules\nnothing here") is None


def test_an_explicit_model_summarizer_that_fails_exits_2_and_writes_nothing(
    server: ScriptedServer, project: Path
) -> None:
    server.push(stream("Please provide the conversation you want summarized."))
    env = {"OPENAI_BASE_URL": server.url + "/v1"}
    args = ("session.json", "--summarizer", "llm", "--summary-model", "openai:gpt-4o-mini")
    done = run_cli(
        project, env, *args, "--window", "8000", "--keep-recent", "600", "-o", "out.json"
    )
    assert done.returncode == 2
    assert " ".join(done.stderr.split()) == (
        "cannot compact: the llm summary written by openai:gpt-4o-mini was rejected: refusal "
        "('Please provide the conversation you want summarized.'); nothing was written"
    )
    assert not (project / "out.json").exists()


def test_an_explicit_extractive_summarizer_ignores_a_malformed_summary_model_variable(
    project: Path,
) -> None:
    env = {"CTXENGINE_SUMMARY_MODEL": "gpt-4o-mini"}
    done = run_cli(
        project,
        env,
        "session.json",
        "--summarizer",
        "extractive",
        "--window",
        "8000",
        "--report-json",
    )
    assert done.returncode == 0, done.stderr
    assert json.loads(done.stdout)["summarizer"]["kind"] == "extractive"


def test_an_interrupt_exits_130_and_says_nothing_was_written(
    monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    from ctxengine.cli import main
    from ctxengine.cli.commands import compact as compact_module

    def interrupted(*_args: object, **_kwargs: object) -> None:
        raise KeyboardInterrupt

    monkeypatch.setattr(compact_module, "load_target", interrupted)
    assert main(["compact", "whatever.jsonl"]) == 130
    assert "interrupted: nothing was written" in capsys.readouterr().err
