"""Grok CLI chat histories: the samples with their ``summary.json``, reasoning and
provider-side calls that belong to the next reply, and the drift cases."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from corpus import require_corpus
from ctxengine.importers import read_transcript
from ctxengine.importers.base import ImportedSession
from ctxengine.model import ImagePart, Message, TextPart
from import_drift import LONE_SURROGATE_ERROR, LONE_SURROGATE_JSON, LONE_SURROGATE_TEXT, tolerated

SYSTEM = {"type": "system", "content": "You are Grok."}


def messages(session: ImportedSession) -> list[Message]:
    return [e.body for e in session.entries if isinstance(e.body, Message)]


def user(text: str) -> dict[str, Any]:
    return {"type": "user", "content": [{"type": "text", "text": text}]}


def reply(call_id: str | None = "c1", arguments: Any = "{}") -> dict[str, Any]:
    call: dict[str, Any] = {"name": "run_terminal_cmd", "arguments": arguments}
    if call_id is not None:
        call["id"] = call_id
    return {"type": "assistant", "content": "", "tool_calls": [call], "model_id": "grok-4.5"}


def result(call_id: str | None = "c1", content: Any = "out") -> dict[str, Any]:
    found: dict[str, Any] = {"type": "tool_result", "content": content}
    if call_id is not None:
        found["tool_call_id"] = call_id
    return found


def write(path: Path, *lines: dict[str, Any] | str) -> Path:
    body = "".join((x if isinstance(x, str) else json.dumps(x)) + "\n" for x in lines)
    if isinstance(lines[-1], str) and not lines[-1].endswith("\n"):
        body = body.removesuffix("\n")
    path.write_text(body, encoding="utf-8")
    return path


class TestSamples:
    def test_chat_history_with_summary(self) -> None:
        session = read_transcript(require_corpus("format-fixtures", "grok", "chat_history.jsonl"))
        found = messages(session)
        assert [m.role for m in found] == ["system", "user", "user", "assistant", "tool",
                                           "assistant", "tool", "user"]  # fmt: skip
        assert found[1].meta == {"synthetic": "environment_context"}
        first = found[3]
        assert (first.reasoning[0].text, first.reasoning[0].signature) == (
            "The user wants a summary of hello.py without edits. I should read the file first.",
            "<opaque>",
        )
        assert [c.id for c in first.tool_calls] == ["call-00000000-0000-4000-8000-000000000002-0"]
        backend = found[5].parts[0]
        assert isinstance(backend, TextPart)
        assert backend.text == (
            '[provider-side tool call] web_search({"query": "python print builtin", "sources": '
            '[{"type": "url", "url": "https://example.com/search-result"}], "type": "search"})'
        )
        assert found[4].tool_results[0].text == 'print("hello from the grok fixture")\n'
        assert isinstance(found[7].parts[0], ImagePart)
        assert session.session_id == "019f6851-7ec4-7ef0-97d3-03f3eee38755"
        assert session.title == "Read hello.py and summarize what it prints"
        assert session.meta["model"] == "grok-4.5"
        assert session.report.counts("ignored") == {"reasoning without a reply": 1}

    def test_sub_agent_summary(self) -> None:
        path = require_corpus("format-fixtures", "grok", "subagent", "chat_history.jsonl")
        session = read_transcript(path)
        assert (session.meta["session_kind"], session.meta["agent_name"]) == ("subagent", "explore")
        assert session.session_id == "019f6851-7ec4-7ef0-97d3-03f3eee38756"


class TestDrift:
    """Each drift is tolerated with an exact report, and refused at its line when strict."""

    def test_missing_ids(self, tmp_path: Path) -> None:
        path = write(tmp_path / "chat_history.jsonl", SYSTEM, user("go"), reply(None), result(None))
        session = tolerated(
            path,
            "grok",
            "repaired 2: tool call without id ×1 (line 3), tool_result without call id ×1 (line 4)",
            ":3: expected a string id on a tool call",
        )
        assert messages(session)[3].tool_results[0].call_id == "call_gen_3_0"

    def test_structured_output(self, tmp_path: Path) -> None:
        blocks = [{"type": "text", "text": "a"}]
        path = write(tmp_path / "chat_history.jsonl", SYSTEM, user("go"), reply(),
                     result(content=blocks))  # fmt: skip
        session = tolerated(
            path,
            "grok",
            "repaired 1: structured content ×1 (line 4)",
            ":4: expected `content` text, got a list of parts",
        )
        assert messages(session)[3].tool_results[0].text == "a"

    def test_null_arguments(self, tmp_path: Path) -> None:
        path = write(tmp_path / "chat_history.jsonl", SYSTEM, user("go"), reply(arguments=None))
        session = tolerated(
            path,
            "grok",
            "repaired 1: null arguments ×1 (line 3)",
            ":3: expected `arguments` on a tool call",
        )
        assert messages(session)[2].tool_calls[0].arguments == "{}"

    def test_unknown_record_kind(self, tmp_path: Path) -> None:
        path = write(tmp_path / "chat_history.jsonl", SYSTEM, user("go"), {"type": "hologram"})
        tolerated(
            path,
            "grok",
            "skipped 1: item:hologram ×1 (line 3)",
            ":3: expected an item of type system, user, reasoning, assistant, tool_result or "
            "backend_tool_call, got 'hologram'",
        )

    def test_partial_last_line(self, tmp_path: Path) -> None:
        path = write(tmp_path / "chat_history.jsonl", SYSTEM, user("go"), '{"type":"assis')
        tolerated(
            path,
            "grok",
            "skipped 1: partial last line ×1 (line 3)",
            ":3: expected a complete JSON object, got a line cut short "
            "(unexpected end of data: line 1 column 15 (char 14))",
        )

    def test_lone_surrogate(self, tmp_path: Path) -> None:
        raw = json.dumps(user("SURROGATE")).replace("SURROGATE", LONE_SURROGATE_JSON)
        path = write(tmp_path / "chat_history.jsonl", SYSTEM, raw + "\n")
        session = tolerated(
            path, "grok", "repaired 1: lone surrogate ×1 (line 2)", f":2: {LONE_SURROGATE_ERROR}"
        )
        assert messages(session)[1].text == LONE_SURROGATE_TEXT
