"""Cursor agent transcripts: the samples, sub-agent folders, calls without ids paired in
order, and the drift cases."""

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


def messages(session: ImportedSession) -> list[Message]:
    return [e.body for e in session.entries if isinstance(e.body, Message)]


def line(role: str, *blocks: dict[str, Any]) -> dict[str, Any]:
    return {"role": role, "message": {"content": list(blocks)}}


def text(value: str) -> dict[str, Any]:
    return {"type": "text", "text": value}


def use(name: str = "Bash", **extra: Any) -> dict[str, Any]:
    return {"type": "tool_use", "name": name, "input": {"command": "ls"}, **extra}


def result(content: Any = "out", **extra: Any) -> dict[str, Any]:
    return {"type": "tool_result", "content": content, **extra}


def write(path: Path, *lines: dict[str, Any] | str) -> Path:
    body = "".join((x if isinstance(x, str) else json.dumps(x)) + "\n" for x in lines)
    if isinstance(lines[-1], str) and not lines[-1].endswith("\n"):
        body = body.removesuffix("\n")
    path.write_text(body, encoding="utf-8")
    return path


class TestSamples:
    def test_large_sample_pairs_results_with_calls_in_order(self) -> None:
        session = read_transcript(require_corpus("format-fixtures", "cursor", "large.jsonl"))
        found = messages(session)
        roles = "user assistant tool assistant user assistant tool assistant user assistant"
        assert [m.role for m in found] == roles.split()
        first = found[1]
        assert [p.kind for p in first.parts] == ["reasoning", "text", "tool_call"]
        assert [c.id for m in found for c in m.tool_calls] == ["cursor_2_2", "cursor_6_0"]
        results = [r for m in found for r in m.tool_results]
        assert [(r.call_id, r.text, r.name, r.meta) for r in results] == [
            ("cursor_2_2", "file1.txt\nfile2.txt", "Bash", {"tool_use_id": "t1"}),
            ("cursor_6_0", "hello world", "Read", {"tool_use_id": "t2"}),
        ]
        assert session.report.summary() == ""
        assert session.session_id == "large"

    def test_turn_records_are_ignored(self) -> None:
        session = read_transcript(require_corpus("format-fixtures", "cursor", "small.jsonl"))
        assert session.report.counts("ignored") == {"turn_ended": 1}
        assert messages(session)[-1].stop_reason == "tool_use"

    def test_sub_agent_samples_are_linked(self) -> None:
        parent = read_transcript(
            require_corpus("format-fixtures", "cursor", "subagent", "parent.jsonl")
        )
        child = read_transcript(
            require_corpus("format-fixtures", "cursor", "subagent", "subagents", "child.jsonl")
        )
        assert (parent.session_id, parent.meta) == ("parent", {"subagents": ["child"]})
        assert (child.session_id, child.meta) == ("parent:child", {"parent_session_id": "parent"})

    def test_cursor_layout_links_by_the_transcript_folder(self, tmp_path: Path) -> None:
        folder = tmp_path / "agent-transcripts" / "u-1"
        (folder / "subagents").mkdir(parents=True)
        shutil.copy(
            require_corpus("format-fixtures", "cursor", "small.jsonl"), folder / "u-1.jsonl"
        )
        write(folder / "subagents" / "u-2.jsonl", line("user", text("x")))
        assert read_transcript(folder / "subagents" / "u-2.jsonl").session_id == "u-1:u-2"
        assert read_transcript(folder / "u-1.jsonl").meta == {"subagents": ["u-2"]}


class TestDrift:
    """Cursor records no call ids (generating them is no drift); the other drift cases are
    tolerated with an exact report and refused at their line when strict."""

    def test_missing_ids_are_the_format_not_drift(self, tmp_path: Path) -> None:
        path = write(tmp_path / "t.jsonl", line("user", text("go")), line("assistant", use()),
                     line("user", result()))  # fmt: skip
        session = read_transcript(path, strict=True)
        found = messages(session)
        assert found[2].tool_results[0].call_id == found[1].tool_calls[0].id == "cursor_2_0"

    def test_structured_output(self, tmp_path: Path) -> None:
        path = write(tmp_path / "t.jsonl", line("user", text("go")), line("assistant", use()),
                     line("user", result({"type": "text", "text": "one block"})))  # fmt: skip
        session = tolerated(
            path,
            "cursor",
            "repaired 1: structured tool output ×1 (line 3)",
            ":3: expected tool_result `content` to be a string or a list of blocks, got an object",
        )
        assert messages(session)[2].tool_results[0].text == "one block"

    def test_null_arguments(self, tmp_path: Path) -> None:
        path = write(tmp_path / "t.jsonl", line("user", text("go")),
                     line("assistant", use() | {"input": None}))  # fmt: skip
        session = tolerated(
            path,
            "cursor",
            "repaired 1: null tool input ×1 (line 2)",
            ":2: expected an `input` object on a tool_use block",
        )
        assert messages(session)[1].tool_calls[0].arguments == "{}"

    def test_unknown_record_kind(self, tmp_path: Path) -> None:
        path = write(tmp_path / "t.jsonl", line("user", text("go")), {"type": "hologram"})
        tolerated(
            path,
            "cursor",
            "skipped 1: record:hologram ×1 (line 2)",
            ":2: expected a message line with `role` user or assistant, got type 'hologram'",
        )

    def test_partial_last_line(self, tmp_path: Path) -> None:
        path = write(tmp_path / "t.jsonl", line("user", text("go")), '{"role":"assistant","mes')
        tolerated(
            path,
            "cursor",
            "skipped 1: partial last line ×1 (line 2)",
            ":2: expected a complete JSON object, got a line cut short "
            "(unexpected end of data: line 1 column 25 (char 24))",
        )

    def test_lone_surrogate(self, tmp_path: Path) -> None:
        raw = json.dumps(line("user", text("SURROGATE"))).replace("SURROGATE", LONE_SURROGATE_JSON)
        path = write(tmp_path / "t.jsonl", raw + "\n")
        session = tolerated(
            path, "cursor", "repaired 1: lone surrogate ×1 (line 1)", f":1: {LONE_SURROGATE_ERROR}"
        )
        assert messages(session)[0].text == LONE_SURROGATE_TEXT
