"""``ctxengine compact FILE --backend native|auto|local``, end to end: the real command in a
subprocess, its provider pointed at a local server by the SDK variables; the request it
writes opens with the compaction block or item exactly as returned. Errors are clear and
exit non-zero: no key, a provider error (its status and message), a model without native
compaction; no option overwrites a data file."""

from __future__ import annotations

import json
from pathlib import Path

import orjson
import pytest
from cli_helpers import cli, cli_env
from cli_helpers import validate as check_schema
from native_helpers import (
    ANTHROPIC_BLOCK,
    OPENAI_ITEM,
    anthropic_compaction_stream_step,
    compacted_body,
)
from servers import ScriptedServer, Step, anthropic_error

from ctxengine.projection.validate import validate


def conversation(tmp_path: Path) -> Path:
    """A Chat Completions transcript: a system prompt and five turns of about 60 tokens."""
    messages: list[dict[str, str]] = [{"role": "system", "content": "You are a coding agent."}]
    for n in range(5):
        messages.append({"role": "user", "content": f"request {n}: " + "word " * 50})
        messages.append({"role": "assistant", "content": f"answer {n}: " + "done " * 50})
    path = tmp_path / "conv.json"
    path.write_text(json.dumps({"messages": messages}))
    return path


def anthropic_env(server: ScriptedServer, key: bool = True) -> dict[str, str]:
    extra = {"ANTHROPIC_BASE_URL": server.url}
    if key:
        extra["ANTHROPIC_API_KEY"] = "sk-test"
    return cli_env(**extra)


COMMON = ("--keep-recent", "70", "--window", "200000", "--user", "next step", "--json")


@pytest.mark.parametrize("backend", ["native", "auto"])
def test_anthropic_writes_the_block_first(
    server: ScriptedServer, tmp_path: Path, backend: str
) -> None:
    source = conversation(tmp_path)
    out = tmp_path / "request.json"
    server.push(anthropic_compaction_stream_step(ANTHROPIC_BLOCK))
    args = ("--backend", backend, "--provider", "anthropic", "--model", "claude-sonnet-4-6")
    proc = cli("compact", source, *args, *COMMON, "-o", out, env=anthropic_env(server))
    assert proc.returncode == 0, proc.stderr
    sent = server.received[0]
    assert sent.headers["anthropic-beta"] == "compact-2026-09-04"
    assert sent.headers["authorization"] == "Bearer sk-test"
    assert sent.body["compaction"] == {"type": "summarize"}
    assert sent.body["model"] == "claude-sonnet-4-6"
    body = json.loads(out.read_text())
    assert [m["role"] for m in body["messages"]] == ["assistant", "user"]
    blocks = body["messages"][0]["content"]
    assert orjson.dumps(blocks[0]).decode() == ANTHROPIC_BLOCK
    assert [b["type"] for b in blocks] == ["compaction", "text"]
    assert blocks[1]["text"].startswith("answer 4:")
    assert body["messages"][1]["content"][0]["text"] == "next step"
    assert validate(body, "anthropic", strict=True) == []
    report = json.loads(proc.stdout)
    assert (report["backend"], report["provider"], report["messages"]) == (
        "native",
        "anthropic",
        2,
    )
    assert report["compaction"]["native"] == "anthropic"
    check_schema(report, "compact")


def test_openai_writes_the_compacted_window_first(server: ScriptedServer, tmp_path: Path) -> None:
    source = conversation(tmp_path)
    out = tmp_path / "request.json"
    server.push(
        Step(
            body=compacted_body(["request 0", "request 3"]),
            headers={"content-type": "application/json"},
        )
    )
    env = cli_env(OPENAI_BASE_URL=server.url + "/v1", OPENAI_API_KEY="sk-test")
    args = ("--backend", "native", "--provider", "openai", "--model", "gpt-5.2")
    proc = cli("compact", source, *args, *COMMON, "-o", out, env=env)
    assert proc.returncode == 0, proc.stderr
    assert server.received[0].path == "/v1/responses/compact"
    body = json.loads(out.read_text())
    assert body["instructions"] == "You are a coding agent."
    items = body["input"]
    assert [i["type"] for i in items[:3]] == ["message", "message", "compaction"]
    assert orjson.dumps(items[2]).decode() == OPENAI_ITEM
    assert items[-1]["content"][0]["text"] == "next step"
    assert validate(body, "openai-responses", strict=True) == []
    report = json.loads(proc.stdout)
    assert (report["backend"], report["provider"]) == ("native", "openai-responses")
    check_schema(report, "compact")


def test_auto_compacts_locally_for_a_model_without_native_compaction(
    server: ScriptedServer, tmp_path: Path
) -> None:
    args = ("--backend", "auto", "--provider", "anthropic", "--model", "claude-sonnet-4-5")
    proc = cli("compact", conversation(tmp_path), *args, *COMMON, env=anthropic_env(server))
    assert proc.returncode == 0, proc.stderr
    assert server.received == []
    report = json.loads(proc.stdout)
    assert report["backend"] == "local"
    assert "native" not in report["compaction"]


def test_native_for_a_model_without_it_is_refused(server: ScriptedServer, tmp_path: Path) -> None:
    args = ("--backend", "native", "--provider", "anthropic", "--model", "claude-sonnet-4-5")
    proc = cli("compact", conversation(tmp_path), *args, *COMMON, env=anthropic_env(server))
    assert proc.returncode == 2
    assert "the model's profile has no native compaction" in proc.stderr
    assert server.received == []


def test_no_key_is_a_clear_error(server: ScriptedServer, tmp_path: Path) -> None:
    args = ("--backend", "native", "--provider", "anthropic", "--model", "claude-sonnet-4-6")
    proc = cli("compact", conversation(tmp_path), *args, *COMMON, env=anthropic_env(server, False))
    assert proc.returncode == 2
    assert "no Anthropic API key: set ANTHROPIC_API_KEY" in proc.stderr
    assert server.received == []


def test_a_provider_error_names_its_status_and_message(
    server: ScriptedServer, tmp_path: Path
) -> None:
    out = tmp_path / "request.json"
    server.push(Step(400, anthropic_error("compaction is not enabled for this organization")))
    args = ("--backend", "native", "--provider", "anthropic", "--model", "claude-sonnet-4-6")
    proc = cli(
        "compact", conversation(tmp_path), *args, *COMMON, "-o", out, env=anthropic_env(server)
    )
    assert proc.returncode == 2
    assert "HTTP 400" in proc.stderr
    assert "compaction is not enabled for this organization" in proc.stderr
    assert "nothing was written" in proc.stderr
    assert not out.exists()


def test_native_without_a_model_and_an_output_over_the_input_are_refused(
    server: ScriptedServer, tmp_path: Path
) -> None:
    source = conversation(tmp_path)
    before = source.read_bytes()
    proc = cli("compact", source, "--backend", "native", "--provider", "anthropic", *COMMON)
    assert proc.returncode == 2
    assert "--backend native needs --model" in proc.stderr
    args = ("--backend", "native", "--provider", "anthropic", "--model", "claude-sonnet-4-6")
    proc = cli("compact", source, *args, *COMMON, "-o", source, env=anthropic_env(server))
    assert proc.returncode == 2
    assert source.read_bytes() == before
    assert server.received == []
