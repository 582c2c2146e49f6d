"""A Codex session whose reasoning is only an encrypted payload: neither rendered request
carries it, so the context size does not count it, and a small window replays without
compacting or failing."""

from __future__ import annotations

import dataclasses
import json
import random
import string
from pathlib import Path
from typing import Any

from ctxengine.engine import Session
from ctxengine.importers import read_transcript
from ctxengine.model import Entry, Message, ReasoningPart, user
from ctxengine.projection.render import render_anthropic, render_openai
from ctxengine.projection.validate import validate
from ctxengine.replay import replay
from ctxengine.tokens import HeuristicEstimator

#: An ``encrypted_content`` payload of 20,812 characters (Fernet-like: ``gAAAAA`` + base64url).
PAYLOAD = "gAAAAA" + "".join(
    random.Random(7).choice(string.ascii_letters + string.digits + "-_") for _ in range(20_806)
)


def item(payload: dict[str, Any]) -> dict[str, Any]:
    return {"timestamp": "2025-10-01T00:00:00Z", "type": "response_item", "payload": payload}


def message(role: str, text: str) -> dict[str, Any]:
    kind = "output_text" if role == "assistant" else "input_text"
    return item({"type": "message", "role": role, "content": [{"type": kind, "text": text}]})


def reasoning(encrypted: bool) -> dict[str, Any]:
    body: dict[str, Any] = {"type": "reasoning", "summary": [], "content": None}
    if encrypted:
        body["encrypted_content"] = PAYLOAD
    return item(body)


def shell(call_id: str, command: str, output: str) -> list[dict[str, Any]]:
    args = json.dumps({"command": ["bash", "-lc", command]})
    call = {"type": "function_call", "name": "shell", "arguments": args, "call_id": call_id}
    result = {"type": "function_call_output", "call_id": call_id, "output": output}
    return [item(call), item(result)]


def rollout(tmp_path: Path, *, encrypted: bool) -> list[Entry]:
    """Two turns, each: a reasoning item before a shell call, one before the answer."""
    records: list[dict[str, Any]] = [
        {"type": "session_meta", "payload": {"id": "s1", "cwd": "/w", "cli_version": "0.50.0"}},
        message("user", "List the files in the project and tell me which is the entry point."),
        reasoning(encrypted),
        *shell("c1", "ls", "main.py\nutil.py\nREADME.md"),
        reasoning(encrypted),
        message("assistant", "The entry point is main.py."),
        message("user", "Thanks. Now show util.py."),
        reasoning(encrypted),
        *shell("c2", "cat util.py", "def helper():\n    return 1\n"),
        reasoning(encrypted),
        message("assistant", "util.py defines helper(), which returns 1."),
    ]
    path = tmp_path / f"rollout-{encrypted}.jsonl"
    path.write_text("\n".join(json.dumps(r) for r in records) + "\n", encoding="utf-8")
    return list(read_transcript(path).entries)


def without_reasoning(entries: list[Entry]) -> list[Entry]:
    out = []
    for e in entries:
        msg = e.body
        if isinstance(msg, Message) and msg.reasoning:
            parts = tuple(p for p in msg.parts if not isinstance(p, ReasoningPart))
            e = dataclasses.replace(e, body=dataclasses.replace(msg, parts=parts))
        out.append(e)
    return out


def test_the_payload_is_imported_byte_exact(tmp_path: Path) -> None:
    entries = rollout(tmp_path, encrypted=True)
    parts = [p for e in entries if isinstance(e.body, Message) for p in e.body.reasoning]
    assert len(PAYLOAD) == 20_812
    assert [(p.text, p.signature, dict(p.meta)) for p in parts] == [
        ("", PAYLOAD, {"provider": "openai"})
    ] * 4


def test_the_estimate_is_the_same_with_and_without_the_payload(tmp_path: Path) -> None:
    with_payload = Session(4_000, entries=rollout(tmp_path, encrypted=True)).project()
    no_payload = Session(4_000, entries=rollout(tmp_path, encrypted=False)).project()
    stripped = rollout(tmp_path, encrypted=True)
    no_reasoning = Session(4_000, entries=without_reasoning(stripped)).project()
    assert with_payload.tokens == no_payload.tokens == no_reasoning.tokens == 151
    # Before, each payload was priced as the hidden text it stands for.
    assert HeuristicEstimator().part(ReasoningPart("", PAYLOAD)) == 2 + 3_469


def test_neither_rendered_request_carries_the_payload(tmp_path: Path) -> None:
    session = Session(4_000, entries=rollout(tmp_path, encrypted=True))
    session.append(user("Thanks."))
    ctx = session.prepare()
    for provider, body in (
        ("openai", render_openai(ctx, model="m", declare_tools=True)),
        ("anthropic", render_anthropic(ctx, model="m", max_tokens=100, declare_tools=True)),
    ):
        assert PAYLOAD not in json.dumps(body)
        assert validate(body, provider, strict=True) == []


def test_a_replay_at_4000_tokens_neither_compacts_nor_fails(tmp_path: Path) -> None:
    result = replay(rollout(tmp_path, encrypted=True), window=4_000)
    assert [s.tokens for s in result.steps] == [18, 66, 90, 136]
    assert [e.step for s in result.steps for e in s.events] == []
    assert result.invalid == 0
