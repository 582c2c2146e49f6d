"""Factory droid: session-store and stream-json samples, the model from the settings file,
and the drift cases of both."""

from __future__ import annotations

import json
import shutil
from pathlib import Path
from typing import Any

from corpus import require_corpus
from ctxengine.importers import read_transcript
from ctxengine.importers.base import ImportedSession
from ctxengine.model import Message
from import_drift import LONE_SURROGATE_ERROR, LONE_SURROGATE_JSON, LONE_SURROGATE_TEXT, tolerated

START = {"type": "session_start", "id": "d-1", "title": "T", "cwd": "/w", "version": "0.81.0"}


def messages(session: ImportedSession) -> list[Message]:
    return [e.body for e in session.entries if isinstance(e.body, Message)]


def msg(n: int, role: str, *blocks: dict[str, Any]) -> dict[str, Any]:
    return {"type": "message", "id": f"m{n}", "timestamp": f"t{n}",
            "message": {"role": role, "content": list(blocks)}}  # fmt: skip


def use(**extra: Any) -> dict[str, Any]:
    return {"type": "tool_use", "name": "Execute", "input": {"command": "ls"}, **extra}


def result(content: Any = "out", **extra: Any) -> dict[str, Any]:
    return {"type": "tool_result", "content": content, **extra}


def text(value: str) -> dict[str, Any]:
    return {"type": "text", "text": value}


def write(path: Path, *lines: dict[str, Any] | str) -> Path:
    body = "".join((x if isinstance(x, str) else json.dumps(x)) + "\n" for x in lines)
    if isinstance(lines[-1], str) and not lines[-1].endswith("\n"):
        body = body.removesuffix("\n")
    path.write_text(body, encoding="utf-8")
    return path


class TestSamples:
    def test_session_store(self) -> None:
        path = require_corpus("format-fixtures", "droid", "session_store_large.jsonl")
        session = read_transcript(path)
        assert [e.id for e in session.entries] == ["m1", "m2", "m3", "m4", "m5", "m6", "m7"]
        result_part = messages(session)[3].tool_results[0]
        assert (result_part.call_id, result_part.text, result_part.name) == (
            "tu1", "line1\nline2\nline3\n", "Execute",
        )  # fmt: skip
        assert (session.session_id, session.title) == ("droid_large", "Stage0 Droid Large")
        assert session.meta == {"cwd": "/tmp/large", "version": "0.81.0", "owner": "user",
                                "kind": "session-store"}  # fmt: skip

    def test_stream_json_groups_a_reply_with_its_calls(self) -> None:
        path = require_corpus("format-fixtures", "droid", "stream_json_large.jsonl")
        session = read_transcript(path)
        found = messages(session)
        assert [(m.role, m.text) for m in found] == [
            ("user", "Step 1"),
            ("assistant", "Ok"),
            ("tool", ""),
            ("assistant", "Captured multiline output."),
        ]
        assert [c.id for c in found[1].tool_calls] == ["c1"]
        part = found[2].tool_results[0]
        assert (part.text, part.is_error, part.name) == ("line1\nline2\nline3\n", False, "Shell")
        assert (session.session_id, session.meta["model"]) == ("sid_stage0_large", "droid-model")

    def test_settings_file_gives_the_model(self, tmp_path: Path) -> None:
        path = tmp_path / "abc.jsonl"
        shutil.copy(require_corpus("format-fixtures", "droid", "session_store_small.jsonl"), path)
        (tmp_path / "abc.settings.json").write_text('{"model": "claude-opus-4-8"}')
        assert read_transcript(path).meta["model"] == "claude-opus-4-8"

    def test_a_failed_command_in_stream_json_is_an_error(self, tmp_path: Path) -> None:
        path = write(
            tmp_path / "s.jsonl",
            {"type": "message", "session_id": "s", "role": "user", "text": "go"},
            {"type": "tool_call", "session_id": "s", "toolCallId": "c1", "toolName": "Shell",
             "parameters": {}},
            {"type": "tool_result", "session_id": "s", "toolCallId": "c1",
             "value": {"stdout": "", "stderr": "boom", "exitCode": 2}},
        )  # fmt: skip
        part = messages(read_transcript(path))[2].tool_results[0]
        assert (part.text, part.is_error) == ("boom", True)


class TestDrift:
    """Each drift is tolerated with an exact report, and refused at its line when strict."""

    def test_missing_ids(self, tmp_path: Path) -> None:
        path = write(tmp_path / "d.jsonl", START, msg(1, "user", text("go")),
                     msg(2, "assistant", use()), msg(3, "user", result()))  # fmt: skip
        session = tolerated(
            path,
            "droid",
            "repaired 2: tool_use without id ×1 (line 3), tool_result without call id ×1 (line 4)",
            ":3: expected a string id on a tool_use",
        )
        found = messages(session)
        assert found[2].tool_results[0].call_id == found[1].tool_calls[0].id == "droid_3_0"

    def test_structured_output(self, tmp_path: Path) -> None:
        block = result({"type": "text", "text": "x"}, tool_use_id="t1")
        path = write(tmp_path / "d.jsonl", START, msg(1, "user", text("go")),
                     msg(2, "assistant", use(id="t1")), msg(3, "user", block))  # fmt: skip
        tolerated(
            path,
            "droid",
            "repaired 1: structured tool output ×1 (line 4)",
            ":4: expected tool_result `content` to be a string or a list of blocks, got an object",
        )

    def test_null_arguments(self, tmp_path: Path) -> None:
        path = write(
            tmp_path / "s.jsonl",
            {"type": "message", "session_id": "s", "role": "user", "text": "go"},
            {"type": "tool_call", "session_id": "s", "toolCallId": "c1", "toolName": "Shell",
             "parameters": None},
        )  # fmt: skip
        session = tolerated(
            path,
            "droid",
            "repaired 1: null arguments ×1 (line 2)",
            ":2: expected `parameters` on a tool_call",
        )
        assert messages(session)[1].tool_calls[0].arguments == "{}"

    def test_unknown_record_kind(self, tmp_path: Path) -> None:
        path = write(tmp_path / "d.jsonl", START, msg(1, "user", text("go")), {"type": "hologram"})
        tolerated(
            path,
            "droid",
            "skipped 1: record:hologram ×1 (line 3)",
            ":3: expected a session store line of type session_start or message, got 'hologram'",
        )

    def test_partial_last_line(self, tmp_path: Path) -> None:
        path = write(tmp_path / "d.jsonl", START, msg(1, "user", text("go")), '{"type":"mess')
        tolerated(
            path,
            "droid",
            "skipped 1: partial last line ×1 (line 3)",
            ":3: expected a complete JSON object, got a line cut short "
            "(unexpected end of data: line 1 column 14 (char 13))",
        )

    def test_lone_surrogate(self, tmp_path: Path) -> None:
        raw = json.dumps(msg(1, "user", text("SURROGATE"))).replace(
            "SURROGATE", LONE_SURROGATE_JSON
        )
        path = write(tmp_path / "d.jsonl", START, raw + "\n")
        session = tolerated(
            path, "droid", "repaired 1: lone surrogate ×1 (line 2)", f":2: {LONE_SURROGATE_ERROR}"
        )
        assert messages(session)[0].text == LONE_SURROGATE_TEXT
