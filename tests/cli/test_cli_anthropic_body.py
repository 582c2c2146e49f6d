"""The Anthropic body ``compact`` and ``export`` write is the one ``Session.complete`` sends:
the prompt-cache breakpoints ``inspect`` lists (``--no-cache-markers`` leaves them out), and
the state as mid-conversation system messages for a model whose profile takes them."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import orjson
import pytest

from ctxengine.cli import main
from ctxengine.model import CompactionRecord, Entry, Message, PinRecord, TextPart
from ctxengine.model.codec import entry_to_dict
from ctxengine.projection._check_anthropic import cache_control_paths
from ctxengine.providers.profiles import PROFILES_ENV

READ_TOOL = {
    "type": "function",
    "function": {
        "name": "read",
        "description": "Read a file",
        "parameters": {"type": "object", "properties": {"path": {"type": "string"}}},
    },
}


def chat_file(tmp_path: Path) -> Path:
    """A Chat Completions transcript of twelve read steps, ending with the user's turn (each
    read returns 779 estimated tokens: at a 4,500-token window the compaction keeps the
    last read with its call)."""
    messages: list[dict[str, Any]] = [
        {"role": "system", "content": "You are a careful agent."},
        {"role": "user", "content": "Port the parser to Rust."},
    ]
    for i in range(12):
        call = {"name": "read", "arguments": json.dumps({"path": f"src/f{i}.py"})}
        messages += [
            {
                "role": "assistant",
                "content": None,
                "tool_calls": [{"id": f"c{i}", "type": "function", "function": call}],
            },
            {"role": "tool", "tool_call_id": f"c{i}", "content": f"line {i} " * 200},
            {"role": "assistant", "content": f"Read file {i}."},
            {"role": "user", "content": f"Go on with step {i}."},
        ]
    path = tmp_path / "chat.json"
    path.write_text(json.dumps({"messages": messages, "tools": [READ_TOOL]}), encoding="utf-8")
    return path


def stored_session(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> tuple[Path, str]:
    """The chat transcript imported into a fresh store: ``(store, session id)``."""
    db = tmp_path / "s.db"
    assert main(["import", str(chat_file(tmp_path)), "--db", str(db), "--json"]) == 0
    session_id = json.loads(capsys.readouterr().out)["files"][0]["session_id"]
    return db, str(session_id)


def compact_report(
    capsys: pytest.CaptureFixture[str], *args: str | Path
) -> tuple[dict[str, Any], dict[str, Any]]:
    """``compact ARGS --json -o FILE``: the report and the written body."""
    argv = [str(a) for a in args]
    out = Path(argv[argv.index("-o") + 1])
    assert main(["compact", *argv, "--json"]) == 0
    return json.loads(capsys.readouterr().out), json.loads(out.read_text(encoding="utf-8"))


EXPECTED_BREAKPOINTS = [
    {"path": "tools[0]", "boundary": "last tool"},
    {"path": "system[0]", "boundary": "system prompt"},
    {"path": "messages[0].content[0]", "boundary": "end of the preamble"},
    {"path": "messages[1].content[0]", "boundary": "newest stable message"},
]


def test_compact_writes_the_breakpoints_inspect_lists(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    db, sid = stored_session(tmp_path, capsys)
    out = tmp_path / "request.json"
    report, body = compact_report(
        capsys, sid, "--db", db, "--window", "4500", "--provider", "anthropic", "-o", out
    )
    assert report["cache_breakpoints"] == EXPECTED_BREAKPOINTS
    assert cache_control_paths(body) == [b["path"] for b in EXPECTED_BREAKPOINTS]
    # The tool list (every tool the transcript calls) counts towards the context, so the
    # kept tail is the latest reply and the request after it.
    assert [m["role"] for m in body["messages"]] == ["user", "assistant", "user"]
    assert all("cache_control" not in block for block in body["messages"][-1]["content"])
    assert body["messages"][1]["content"][0] == {
        "type": "text",
        "text": "Read file 11.",
        "cache_control": {"type": "ephemeral"},
    }
    # The stored session, inspected after the compaction, lists the same places.
    assert main(["inspect", sid, "--db", str(db), "--json"]) == 0
    assert json.loads(capsys.readouterr().out)["cache_breakpoints"] == EXPECTED_BREAKPOINTS


def test_no_cache_markers_leaves_them_out(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    out = tmp_path / "request.json"
    report, body = compact_report(
        capsys,
        chat_file(tmp_path),
        "--window",
        "4500",
        "--provider",
        "anthropic",
        "--no-cache-markers",
        "-o",
        out,
    )
    assert report["cache_breakpoints"] == []
    assert cache_control_paths(body) == []
    assert isinstance(body["system"], str)  # unmarked: the plain string form
    assert report["messages"] == 3


def test_an_openai_body_reports_no_breakpoints(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    out = tmp_path / "request.json"
    report, body = compact_report(capsys, chat_file(tmp_path), "--window", "4000", "-o", out)
    assert report["cache_breakpoints"] == []
    assert "cache_control" not in out.read_text(encoding="utf-8")
    assert body["messages"][0]["role"] == "system"


def compacted_log(tmp_path: Path) -> Path:
    """A ctxengine log compacted with a kept tail that starts with the assistant's reply,
    and a pin logged before the compaction."""
    bodies: list[Any] = [
        Message("system", (TextPart("Be careful."),)),
        Message("user", (TextPart("Port the parser."),)),
        PinRecord("Never add a co-author trailer."),
        Message("assistant", (TextPart("Reading the grammar."),)),
        Message("user", (TextPart("Go on."),)),
        Message("assistant", (TextPart("Grammar read."),)),
        CompactionRecord("## Goal\nPort the parser.", "e5", 500, 100, "default", "extractive"),
        Message("user", (TextPart("Next: the lexer."),)),
    ]
    path = tmp_path / "log.jsonl"
    lines = [orjson.dumps(entry_to_dict(Entry(f"e{i}", "s", i, b))) for i, b in enumerate(bodies)]
    path.write_bytes(b"\n".join(lines) + b"\n")
    return path


def profiles_file(tmp_path: Path) -> Path:
    """An override file: ``claude-x`` takes mid-conversation system messages."""
    path = tmp_path / "profiles.json"
    fields = {"provider": "anthropic", "context_window": 200_000, "max_output_tokens": 8192}
    path.write_text(
        json.dumps({"models": {"claude-x": fields | {"mid_conversation_system": True}}}),
        encoding="utf-8",
    )
    return path


PINS_TEXT = (
    "Pinned by the user: standing instructions that hold for the whole session, through "
    "every compaction, until the user changes them.\n\n[1]\nNever add a co-author trailer."
)


def roles(body: dict[str, Any]) -> list[str]:
    return [m["role"] for m in body["messages"]]


@pytest.mark.parametrize("command", ["compact", "export"])
def test_a_model_whose_profile_takes_system_messages_gets_the_state_there(
    command: str, tmp_path: Path, capsys: pytest.CaptureFixture[str], monkeypatch: Any
) -> None:
    monkeypatch.setenv(PROFILES_ENV, str(profiles_file(tmp_path)))
    log, out = compacted_log(tmp_path), tmp_path / "request.json"
    kind = ["--provider"] if command == "compact" else ["--format"]
    argv = [command, str(log), *kind, "anthropic", "--model", "claude-x", "-o", str(out)]
    assert main(argv) == 0
    capsys.readouterr()
    body = json.loads(out.read_text(encoding="utf-8"))
    assert roles(body) == ["user", "system", "assistant", "user"]
    assert [b["text"] for b in body["messages"][1]["content"]] == [PINS_TEXT]
    assert body["model"] == "claude-x"


@pytest.mark.parametrize("model", ["claude-x", "claude-sonnet-4-5"])
def test_another_model_gets_the_state_as_a_user_turn(
    model: str, tmp_path: Path, capsys: pytest.CaptureFixture[str], monkeypatch: Any
) -> None:
    if model == "claude-x":
        monkeypatch.delenv(PROFILES_ENV, raising=False)  # no override: unknown model
    else:
        monkeypatch.setenv(PROFILES_ENV, str(profiles_file(tmp_path)))  # names claude-x only
    log, out = compacted_log(tmp_path), tmp_path / "request.json"
    argv = ["compact", str(log), "--provider", "anthropic", "--model", model, "-o", str(out)]
    assert main(argv) == 0
    capsys.readouterr()
    body = json.loads(out.read_text(encoding="utf-8"))
    assert roles(body) == ["user", "assistant", "user"]
    assert body["messages"][0]["content"][1]["text"] == PINS_TEXT


def inspect_json(capsys: pytest.CaptureFixture[str], *args: str | Path) -> dict[str, Any]:
    assert main(["inspect", *(str(a) for a in args), "--json"]) == 0
    doc: dict[str, Any] = json.loads(capsys.readouterr().out)
    return doc


def test_inspect_places_the_breakpoints_for_the_model_the_profile_names(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], monkeypatch: Any
) -> None:
    monkeypatch.delenv(PROFILES_ENV, raising=False)
    log = compacted_log(tmp_path)
    newer = inspect_json(capsys, log, "--model", "claude-opus-5-5")
    assert newer["cache_model"] == "claude-opus-5-5"
    assert newer["state_as_system_messages"] is True
    # The pinned items are a system message of their own (messages[1]), which ends the
    # preamble; the kept assistant reply after it is the newest stable message.
    assert newer["cache_breakpoints"] == [
        {"path": "system[0]", "boundary": "system prompt"},
        {"path": "messages[1].content[0]", "boundary": "end of the preamble"},
        {"path": "messages[2].content[0]", "boundary": "newest stable message"},
    ]
    older = inspect_json(capsys, log, "--model", "claude-sonnet-4-5")
    assert older["state_as_system_messages"] is False
    assert older["cache_breakpoints"] == [
        {"path": "system[0]", "boundary": "system prompt"},
        {"path": "messages[0].content[1]", "boundary": "end of the preamble"},
        {"path": "messages[1].content[0]", "boundary": "newest stable message"},
    ]
    # No --model and no model recorded in the log: user turns.
    plain = inspect_json(capsys, log)
    assert (plain["cache_model"], plain["state_as_system_messages"]) == (None, False)
    assert plain["cache_breakpoints"] == older["cache_breakpoints"]
