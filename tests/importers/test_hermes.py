"""Hermes session JSON: the samples and the drift cases (by JSON path)."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from corpus import require_corpus
from ctxengine.errors import TranscriptError
from ctxengine.importers import read_transcript
from ctxengine.importers.base import ImportedSession
from ctxengine.model import Message
from import_drift import LONE_SURROGATE_ERROR, LONE_SURROGATE_JSON, LONE_SURROGATE_TEXT, tolerated


def messages(session: ImportedSession) -> list[Message]:
    return [e.body for e in session.entries if isinstance(e.body, Message)]


def session_doc(*msgs: dict[str, Any]) -> dict[str, Any]:
    return {"session_id": "h-1", "model": "m", "platform": "cli", "messages": list(msgs)}


def call(call_id: str | None = "c1", arguments: Any = '{"command": "pwd"}') -> dict[str, Any]:
    found: dict[str, Any] = {"type": "function",
                             "function": {"name": "shell", "arguments": arguments}}  # fmt: skip
    if call_id is not None:
        found["id"] = call_id
    return found


def write(tmp_path: Path, doc: dict[str, Any] | str) -> Path:
    path = tmp_path / "session.json"
    path.write_text(doc if isinstance(doc, str) else json.dumps(doc), encoding="utf-8")
    return path


GO = {"role": "user", "content": "go"}


class TestSamples:
    def test_large(self) -> None:
        session = read_transcript(require_corpus("format-fixtures", "hermes", "large.json"))
        found = messages(session)
        assert [(m.role, m.text) for m in found] == [
            ("system", "You are Hermes."),
            ("user", "Check the current directory."),
            ("assistant", "I will inspect the directory."),
            ("tool", ""),
            ("assistant", "The current directory is /Users/alexm/Repository/Codex-History."),
        ]
        assert found[2].reasoning[0].text == "Need a shell lookup."
        assert (found[2].tool_calls[0].id, found[2].tool_calls[0].arguments) == (
            "call_001",
            '{"command":"pwd"}',
        )
        assert found[3].tool_results[0].text == "/Users/alexm/Repository/Codex-History"
        assert found[4].stop_reason == "stop"
        assert session.session_id == "20260429_hermes_large"
        assert (session.meta["platform"], session.meta["cwd"]) == (
            "telegram",
            "~/Repository/Codex-History",
        )
        assert [t["name"] for t in session.meta["tools"]] == ["shell"]
        assert session.report.counts("ignored") == {"session_meta": 1}

    def test_small(self) -> None:
        session = read_transcript(require_corpus("format-fixtures", "hermes", "small.json"))
        assert [m.role for m in messages(session)] == ["user", "assistant"]
        assert session.meta["model"] == "claude-sonnet-4-6"


class TestDrift:
    """Each drift is tolerated with an exact report, and refused at its JSON path when
    strict; a cut document is refused."""

    def test_missing_ids(self, tmp_path: Path) -> None:
        doc = session_doc(
            GO, {"role": "assistant", "content": None, "tool_calls": [call(None)]},
            {"role": "tool", "content": "/w"},
        )  # fmt: skip
        session = tolerated(
            write(tmp_path, doc),
            "hermes",
            "repaired 2: tool call without id ×1 ($.messages[1].tool_calls[0].id), tool "
            "message without call id ×1 ($.messages[2].tool_call_id)",
            " at $.messages[1].tool_calls[0].id: expected a string `id` on a tool call",
        )
        assert messages(session)[2].tool_results[0].call_id == "call_gen_1"

    def test_structured_output(self, tmp_path: Path) -> None:
        doc = session_doc(
            GO, {"role": "assistant", "content": None, "tool_calls": [call()]},
            {"role": "tool", "tool_call_id": "c1", "content": {"type": "text", "text": "/w"}},
        )  # fmt: skip
        session = tolerated(
            write(tmp_path, doc),
            "hermes",
            "repaired 1: structured content ×1 ($.messages[2].content)",
            " at $.messages[2].content: expected `content` to be a string, null or a list of "
            "parts, got one part object",
        )
        assert messages(session)[2].tool_results[0].text == "/w"

    def test_null_arguments(self, tmp_path: Path) -> None:
        doc = session_doc(GO, {"role": "assistant", "content": None,
                               "tool_calls": [call(arguments=None)]})  # fmt: skip
        session = tolerated(
            write(tmp_path, doc),
            "hermes",
            "repaired 1: null arguments ×1 ($.messages[1].tool_calls[0].function)",
            " at $.messages[1].tool_calls[0].function: expected tool-call arguments, got null",
        )
        assert messages(session)[1].tool_calls[0].arguments == "{}"

    def test_unknown_record_kind(self, tmp_path: Path) -> None:
        doc = session_doc(GO, {"role": "hologram", "content": "x"})
        tolerated(
            write(tmp_path, doc),
            "hermes",
            "skipped 1: message role hologram ×1 ($.messages[1].role)",
            " at $.messages[1].role: expected one of system, developer, user, assistant, tool, "
            "function",
        )

    def test_a_cut_document_is_refused(self, tmp_path: Path) -> None:
        path = write(tmp_path, json.dumps(session_doc(GO))[:-20])
        with pytest.raises(TranscriptError) as info:
            read_transcript(path, "hermes")
        assert str(info.value).startswith(
            f"{path}: read as a Hermes session, but it is not valid JSON (unexpected end of data"
        )

    def test_lone_surrogate(self, tmp_path: Path) -> None:
        raw = json.dumps(session_doc({"role": "user", "content": "SURROGATE"}))
        path = write(tmp_path, raw.replace("SURROGATE", LONE_SURROGATE_JSON))
        session = tolerated(
            path, "hermes", "repaired 1: lone surrogate ×1 (line 1)", f":1: {LONE_SURROGATE_ERROR}"
        )
        assert messages(session)[0].text == LONE_SURROGATE_TEXT
