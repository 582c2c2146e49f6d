"""A transcript whose tool-call arguments are nested 5,000 levels deep: ``compact`` and
``Session.prepare()`` work and carry the arguments as their JSON text."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from ctxengine.cli import main
from ctxengine.engine import Session
from ctxengine.importers import read_transcript
from ctxengine.model.json_depth import DEEP_ARGUMENTS_NOTE
from ctxengine.projection.validate import validate
from ctxengine.tokens.estimate import HeuristicEstimator
from hand_estimator import HandEstimator

#: 5,000 nested objects: 30,001 characters.
DEEP = '{"a":' * 5_000 + "1" + "}" * 5_000


def transcript(tmp_path: Path) -> Path:
    """A chat-completions file: system, a first turn (about 1,250 tokens to compact), then
    a user message, one call with :data:`DEEP` and its result."""
    messages = [
        {"role": "system", "content": "sys"},
        {"role": "user", "content": "start " + "word " * 500},
        {"role": "assistant", "content": "answer " * 500},
        {"role": "user", "content": "do it"},
        {
            "role": "assistant",
            "content": None,
            "tool_calls": [
                {"id": "call_1", "type": "function", "function": {"name": "f", "arguments": DEEP}}
            ],
        },
        {"role": "tool", "tool_call_id": "call_1", "content": "ok"},
    ]
    path = tmp_path / "deep.json"
    path.write_text(json.dumps({"messages": messages}), encoding="utf-8")
    return path


def call_message(body: dict[str, Any]) -> dict[str, Any]:
    """The one request message that holds a tool call."""
    (message,) = [
        m
        for m in body["messages"]
        if m.get("tool_calls")
        or (isinstance(m["content"], list) and m["content"][0]["type"] == "tool_use")
    ]
    return message


def compact(tmp_path: Path, *argv: str) -> dict[str, Any]:
    out = tmp_path / "body.json"
    code = main(["compact", str(transcript(tmp_path)), "-o", str(out), "--model", "m", *argv])
    assert code == 0
    body: dict[str, Any] = json.loads(out.read_text(encoding="utf-8"))
    return body


def test_compact_for_openai_carries_the_arguments_verbatim(tmp_path: Path) -> None:
    body = compact(tmp_path, "--provider", "openai")
    arguments = call_message(body)["tool_calls"][0]["function"]["arguments"]
    assert arguments == DEEP
    assert len(arguments) == 30_001
    assert validate(body, "openai", strict=True) == []


def test_compact_for_anthropic_carries_the_text_in_an_object(tmp_path: Path) -> None:
    body = compact(tmp_path, "--provider", "anthropic", "--user", "go on")
    tool_use = call_message(body)["content"][0]
    assert tool_use["type"] == "tool_use"
    assert tool_use["input"] == {"_raw": DEEP, "_note": DEEP_ARGUMENTS_NOTE}
    assert len(tool_use["input"]["_raw"]) == 30_001
    assert validate(body, "anthropic", strict=True) == []


def test_a_small_window_truncates_them_into_valid_json(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    body = compact(tmp_path, "--window", "4000", "--report-json")
    report = json.loads(capsys.readouterr().out)
    arguments = call_message(body)["tool_calls"][0]["function"]["arguments"]
    value = json.loads(arguments)
    assert value["_note"] == DEEP_ARGUMENTS_NOTE
    (cut,) = report["truncated"]
    assert (cut["call_id"], cut["part"]) == ("call_1", "tool_call")
    head, _, tail = value["_raw"].partition("\n[… truncated: ")
    tail = tail.partition(" …]\n")[2]
    assert DEEP.startswith(head) and DEEP.endswith(tail)
    assert len(head) + cut["omitted_chars"] + len(tail) == 30_001
    # The cap is 20 % of the window: 800 tokens.
    assert HeuristicEstimator().text(arguments) <= 800


def test_prepare_counts_the_arguments_as_text(tmp_path: Path) -> None:
    entries = read_transcript(transcript(tmp_path)).entries
    ctx = Session(128_000, entries=entries, estimator=HandEstimator()).prepare()
    assert ctx.messages[4].tool_calls[0].arguments == DEEP
    # sys 4 + 1, the first turn (4 + 2,506 // 4 + 1) + (4 + 3,500 // 4 + 1), "do it"
    # 4 + 2, the call 4 + 1 + 30,001 // 4 + 1, the result 4 + 1 + 1.
    assert ctx.tokens == 5 + 631 + 880 + 6 + 7_506 + 6


def test_prepare_truncates_them_into_valid_json(tmp_path: Path) -> None:
    entries = read_transcript(transcript(tmp_path)).entries
    ctx = Session(20_000, entries=entries, estimator=HandEstimator()).prepare()
    arguments = ctx.messages[4].tool_calls[0].arguments
    (cut,) = ctx.truncations
    assert (cut.part, cut.omitted_chars, cut.omitted_tokens) == ("tool_call", 18_623, 4_656)
    value = json.loads(arguments)
    assert value["_note"] == DEEP_ARGUMENTS_NOTE
    assert len(value["_raw"]) == 30_001 - 18_623 + len(
        f"\n[… truncated: 18623 chars (~4656 tokens) omitted; full output kept in history "
        f"as entry {cut.entry_id} …]\n"
    )
    # The cap is 20 % of the window (4,000 tokens); the wrapped text is 14,329 characters.
    assert (len(arguments), HandEstimator().text(arguments)) == (14_329, 3_583)
    assert ctx.tokens == 5 + 631 + 880 + 6 + (4 + 1 + 3_583) + 6
