"""Claude Code and Codex, run headless, through the proxy to a scripted upstream on
127.0.0.1: a multi-step task whose history passes the proxy's window at least twice; every
request the proxy forwards is valid and within the window.

The agents come from the npm registry (``.ci/run`` installs them into ``.agents/``, or
``CTXENGINE_AGENTS`` names a folder with ``node_modules/.bin/claude`` and ``codex``); the
tests are skipped, saying so, where they are not installed (and fail under ``CI=true``).
Claude Code 2.1.197 sends the Messages API with server-sent events, mid-conversation system
messages and ``?beta=true``; Codex 0.171.0 the Responses API, streamed. Flags and variables follow
``shared/reference/running-real-agents.md``.

The task: print ``STEPS`` chunks of about 6,000 tokens each with the agent's shell tool, one
per step, then answer ``ALL DONE``. The scripted model reads the step from the newest tool
output (``chunk K``), which survives any compaction of what came before.
"""

from __future__ import annotations

import json
import os
import re
import subprocess
from pathlib import Path
from typing import Any

import pytest
from harness import ProxyServer, _anthropic, request_tokens
from servers import Received, ScriptedServer, Step

from ctxengine.projection.validate import validate
from ctxengine.proxy.core import ProxyCore
from ctxengine.proxy.record import Recorder
from ctxengine.stores.sqlite import SQLiteStore

ROOT = Path(__file__).resolve().parents[2]
AGENTS = Path(os.environ.get("CTXENGINE_AGENTS") or ROOT / ".agents")
STEPS = 18
CHUNK = re.compile(r"chunk (\d+) line 000")


def _bin(name: str) -> Path:
    path = AGENTS / "node_modules" / ".bin" / name
    if not path.exists():
        why = f"{name} is not installed in {AGENTS} (.ci/run installs it from npm)"
        if os.environ.get("CI") == "true":
            pytest.fail(why)  # CI installs them: a missing one is a broken install step
        pytest.skip(why)
    return path


def _command(k: int) -> str:
    return (
        f"python3 -c \"for i in range(280): print(f'chunk {k} line {{i:03d}}: ' + "
        "'abcdefgh ' * 8)\""
    )


def _step(text: str) -> int:
    """The step whose output ``text`` is (0: none yet)."""
    found = CHUNK.findall(text)
    return int(found[-1]) if found else 0


class Task:
    """The scripted model of one agent run; checks every request it receives."""

    def __init__(self, api: str, window: int) -> None:
        self.api = api
        self.window = window
        self.main: list[dict[str, Any]] = []
        self.problems: list[list[str]] = []
        self.tokens: list[int] = []
        self.side = 0
        self.steps: list[int] = []

    def __call__(self, req: Received) -> Step:
        path = req.path.split("?")[0]
        body = req.body if isinstance(req.body, dict) else {}
        if path.endswith("/count_tokens"):
            return Step(200, {"input_tokens": request_tokens("anthropic", body)})
        provider = "anthropic" if self.api == "anthropic" else "openai-responses"
        self.problems.append(validate(body, provider))
        api = "anthropic" if self.api == "anthropic" else "responses"
        tokens = request_tokens(api, body)  # type: ignore[arg-type]
        self.tokens.append(tokens)
        if not body.get("tools"):
            self.side += 1  # a title or summary request, not the task's
            return self._text("ok", tokens, body)
        self.main.append(body)
        last = self._last_output(body)
        k = _step(last) + 1 if last is not None else 1
        if last is not None and _step(last) == 0:
            k = STEPS + 1  # the newest output is not a chunk: finish
        self.steps.append(k)
        if k > STEPS:
            return self._text(f"ALL DONE: {STEPS} chunks printed.", tokens, body)
        return self._call(k, tokens, body)

    def _last_output(self, body: dict[str, Any]) -> str | None:
        """The newest tool output of the request (the agent may add reminders after it);
        ``None`` when it has none (the task's first call)."""
        if self.api == "anthropic":
            for message in reversed(body["messages"]):
                content = message.get("content")
                if message.get("role") == "assistant":
                    return None
                if isinstance(content, list):
                    found = [
                        json.dumps(b.get("content"))
                        for b in content
                        if isinstance(b, dict) and b.get("type") == "tool_result"
                    ]
                    if found:
                        return found[-1]
            return None
        for item in reversed(body["input"]):
            if not isinstance(item, dict):
                continue
            if item.get("type") in ("function_call", "custom_tool_call") or (
                item.get("role") == "assistant"
            ):
                return None
            if item.get("type") in ("function_call_output", "custom_tool_call_output"):
                return json.dumps(item.get("output"))
        return None

    def _text(self, text: str, tokens: int, body: dict[str, Any]) -> Step:
        n = len(self.tokens)
        if self.api == "anthropic":
            return _anthropic(("text", text), tokens, 10, body.get("stream") is True, f"msg_{n}")
        return _responses_events(
            [
                {
                    "type": "message",
                    "id": f"msg_{n}",
                    "role": "assistant",
                    "status": "completed",
                    "content": [{"type": "output_text", "text": text, "annotations": []}],
                }
            ],
            tokens,
        )

    def _call(self, k: int, tokens: int, body: dict[str, Any]) -> Step:
        n = len(self.tokens)
        if self.api == "anthropic":
            args = {"command": _command(k), "description": f"Print chunk {k}"}
            return _anthropic(
                ("call", f"step{k}_{n}", "Bash", args),
                tokens,
                40,
                body.get("stream") is True,
                f"msg_{n}",
            )
        args = json.dumps({"cmd": _command(k), "yield_time_ms": 10000})
        return _responses_events(
            [
                {
                    "type": "function_call",
                    "id": f"fc_{n}",
                    "status": "completed",
                    "call_id": f"call_{k}_{n}",
                    "name": "exec_command",
                    "arguments": args,
                }
            ],
            tokens,
            n,
        )


def _responses_events(items: list[dict[str, Any]], tokens: int, n: int = 0) -> Step:
    usage = {
        "input_tokens": tokens,
        "input_tokens_details": {"cached_tokens": 0},
        "output_tokens": 40,
        "output_tokens_details": {"reasoning_tokens": 0},
        "total_tokens": tokens + 40,
    }
    response = {
        "id": f"resp_{n}",
        "object": "response",
        "created_at": 1,
        "model": "gpt-5.5",
        "status": "completed",
        "output": items,
        "usage": usage,
    }
    events: list[tuple[str | None, Any]] = [
        (
            "response.created",
            {
                "type": "response.created",
                "sequence_number": 0,
                "response": {**response, "status": "in_progress", "output": [], "usage": None},
            },
        )
    ]
    for n, item in enumerate(items):
        events.append(
            (
                "response.output_item.added",
                {
                    "type": "response.output_item.added",
                    "sequence_number": 1 + 2 * n,
                    "output_index": n,
                    "item": item,
                },
            )
        )
        events.append(
            (
                "response.output_item.done",
                {
                    "type": "response.output_item.done",
                    "sequence_number": 2 + 2 * n,
                    "output_index": n,
                    "item": item,
                },
            )
        )
    events.append(
        (
            "response.completed",
            {
                "type": "response.completed",
                "sequence_number": 1 + 2 * len(items),
                "response": response,
            },
        )
    )
    return Step(200, events=events)


def _check(task: Task, proxy: ProxyServer, window: int, db: Path) -> dict[str, Any]:
    assert [(n, p) for n, p in enumerate(task.problems) if p] == []
    assert max(task.tokens) <= window
    compacted = [line for line in proxy.lines if " compacted " in line]
    epochs = max(int(line.split("epoch ")[1].split(")")[0]) for line in compacted)
    before = max(
        int(line.split("tokens ")[1].split(" ->")[0].replace(",", "")) for line in compacted
    )
    # The history the agent holds passed the window at least twice.
    assert before > 2 * window
    assert epochs >= 2
    with SQLiteStore(db, read_only=True) as store:
        sessions = store.sessions()
    assert any(s.format == "proxy" for s in sessions)
    return {
        "invalid": sum(bool(p) for p in task.problems),
        "requests": len(task.tokens),
        "task_requests": len(task.main),
        "max_tokens": max(task.tokens),
        "history_tokens": before,
        "epochs": epochs,
    }


def test_claude_code_through_the_proxy(tmp_path: Path) -> None:
    claude = _bin("claude")
    window = 40_000
    task = Task("anthropic", window)
    db = tmp_path / "proxy.db"
    recorder = Recorder(SQLiteStore(db))
    home, work = tmp_path / "home", tmp_path / "work"
    home.mkdir()
    work.mkdir()
    with (
        ScriptedServer(task) as upstream,
        ProxyServer(ProxyCore(window=window, recorder=recorder), upstream.url) as proxy,
    ):
        env = {
            "PATH": os.environ["PATH"],
            "HOME": str(home),
            "CLAUDE_CONFIG_DIR": str(home / ".claude"),
            "ANTHROPIC_BASE_URL": proxy.url,
            "ANTHROPIC_API_KEY": "sk-ant-test-key",
            "DISABLE_TELEMETRY": "1",
            "CLAUDE_CODE_DISABLE_NONESSENTIAL_TRAFFIC": "1",
            "IS_SANDBOX": "1",
        }
        prompt = f"Print the {STEPS} chunks with the shell, one per step, then say ALL DONE."
        run = subprocess.run(
            [
                str(claude),
                "-p",
                prompt,
                "--output-format",
                "stream-json",
                "--verbose",
                "--dangerously-skip-permissions",
            ],
            env=env,
            cwd=work,
            capture_output=True,
            timeout=600,
            check=False,
        )
    recorder.close()
    assert run.returncode == 0, run.stderr.decode()[-2000:]
    result = json.loads(run.stdout.decode().strip().splitlines()[-1])
    assert result["result"] == f"ALL DONE: {STEPS} chunks printed."
    assert len(task.main) == STEPS + 1
    print("claude-code:", json.dumps(_check(task, proxy, window, db)))


def test_codex_through_the_proxy(tmp_path: Path) -> None:
    codex = _bin("codex")
    window = 40_000
    task = Task("responses", window)
    db = tmp_path / "proxy.db"
    recorder = Recorder(SQLiteStore(db))
    home, work = tmp_path / "home", tmp_path / "work"
    (home / ".codex").mkdir(parents=True)
    work.mkdir()
    with (
        ScriptedServer(task) as upstream,
        ProxyServer(ProxyCore(window=window, recorder=recorder), upstream.url) as proxy,
    ):
        (home / ".codex" / "config.toml").write_text(
            'model = "gpt-5.5"\nmodel_provider = "local"\napproval_policy = "never"\n'
            'sandbox_mode = "danger-full-access"\n\n[model_providers.local]\n'
            f'name = "local"\nbase_url = "{proxy.url}/v1"\nenv_key = "LOCAL_KEY"\n'
            'wire_api = "responses"\n'
        )
        env = {
            "PATH": os.environ["PATH"],
            "HOME": str(home),
            "CODEX_HOME": str(home / ".codex"),
            "LOCAL_KEY": "sk-test-key",
        }
        prompt = f"Print the {STEPS} chunks with the shell, one per step, then say ALL DONE."
        run = subprocess.run(
            [str(codex), "exec", "--json", "--skip-git-repo-check", prompt],
            env=env,
            cwd=work,
            capture_output=True,
            timeout=600,
            check=False,
        )
    recorder.close()
    assert run.returncode == 0, run.stderr.decode()[-2000:]
    assert f"ALL DONE: {STEPS} chunks printed." in run.stdout.decode()
    assert len(task.main) == STEPS + 1
    print("codex:", json.dumps(_check(task, proxy, window, db)))
