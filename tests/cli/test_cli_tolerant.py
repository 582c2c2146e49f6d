"""Tolerant by default, strict on request: ``import`` and ``compact`` read a drifted
transcript, print one line of what they skipped or repaired, store it with the session, and
refuse the file at its first such line under ``--strict``."""

from __future__ import annotations

import json
import sqlite3
from pathlib import Path
from typing import Any

import pytest

from corpus import require_corpus
from ctxengine.cli import main
from ctxengine.projection.validate import validate
from ctxengine.stores import SQLiteStore

FIXTURE = ("format-fixtures", "claude", "large.jsonl")
FIXTURE_SUMMARY = (
    "repaired 2: tool_use without id ×1 (line 2), tool_result without tool_use_id ×1 (line 3)"
)


def run(capsys: pytest.CaptureFixture[str], *argv: str) -> tuple[int, str, str]:
    """``main(argv)``: (exit code, stdout, stderr), each with whitespace runs collapsed (the
    consoles wrap long lines)."""
    code = main(list(argv))
    captured = capsys.readouterr()
    return code, " ".join(captured.out.split()), " ".join(captured.err.split())


def live_session(tmp_path: Path) -> Path:
    """The spotter-short session with a partial last line, as a live session being written
    leaves it."""
    source = require_corpus("claude-code", "spotter-short.jsonl").read_text(encoding="utf-8")
    path = tmp_path / "live.jsonl"
    path.write_text(source + '{"type": "assistant", "message": {"role": "assis', encoding="utf-8")
    return path


class TestImport:
    def test_a_drifted_file_imports_prints_one_summary_line_and_stores_the_report(
        self, capsys: pytest.CaptureFixture[str], tmp_path: Path
    ) -> None:
        path = require_corpus(*FIXTURE)
        db = tmp_path / "ctx.db"
        code, stdout, stderr = run(capsys, "import", str(path), "--db", str(db))
        assert code == 0
        assert stdout == (
            f"{path}: session ses_stage0_large (claude-code): 10 entries added, 0 already stored"
        )
        assert stderr == f"{path}: {FIXTURE_SUMMARY}"
        with SQLiteStore(db) as store:
            [record] = store.import_reports("ses_stage0_large")
        assert (record.source_path, record.format, record.added) == (str(path), "claude-code", 10)
        assert record.report["issues"] == [
            {
                "action": "repaired",
                "kind": "tool_use without id",
                "count": 1,
                "first_line": 2,
                "expected": "expected a string `id` on a tool_use block",
            },
            {
                "action": "repaired",
                "kind": "tool_result without tool_use_id",
                "count": 1,
                "first_line": 3,
                "expected": "expected a string `tool_use_id` on a tool_result block",
            },
        ]

    def test_a_clean_import_prints_no_summary_and_stores_a_clean_record_each_time(
        self, capsys: pytest.CaptureFixture[str], tmp_path: Path
    ) -> None:
        path = require_corpus("claude-code", "spotter-short.jsonl")
        db = tmp_path / "ctx.db"
        for added in (5, 0):
            code, stdout, stderr = run(capsys, "import", str(path), "--db", str(db))
            assert (code, stderr) == (0, "")
            assert stdout.endswith(f"{added} entries added, {5 - added} already stored")
        with SQLiteStore(db) as store:
            records = store.import_reports("55604662-cf2a-4331-851a-ec234028f8ca")
        assert [r.added for r in records] == [5, 0]
        assert [[i["action"] for i in r.report["issues"]] for r in records] == [
            ["ignored", "ignored", "ignored"],
            ["ignored", "ignored", "ignored"],
        ]

    def test_a_live_session_being_written_imports_without_its_partial_last_line(
        self, capsys: pytest.CaptureFixture[str], tmp_path: Path
    ) -> None:
        path = live_session(tmp_path)
        code, stdout, stderr = run(capsys, "import", str(path), "--db", str(tmp_path / "c.db"))
        assert code == 0
        assert stdout.endswith(": 5 entries added, 0 already stored")
        assert stderr == f"{path}: skipped 1: partial last line ×1 (line 16)"

    def test_strict_refuses_at_the_first_repair_and_writes_nothing(
        self, capsys: pytest.CaptureFixture[str], tmp_path: Path
    ) -> None:
        path = require_corpus(*FIXTURE)
        db = tmp_path / "ctx.db"
        code, stdout, stderr = run(capsys, "import", str(path), "--db", str(db), "--strict")
        assert (code, stdout) == (2, "")
        assert stderr == f"error: {path}:2: expected a string `id` on a tool_use block"
        with sqlite3.connect(db) as conn:
            assert conn.execute("SELECT count(*) FROM sessions").fetchone() == (0,)
            assert conn.execute("SELECT count(*) FROM import_reports").fetchone() == (0,)


class TestCompact:
    @pytest.mark.parametrize("provider", ["openai", "anthropic"])
    def test_compact_reads_a_drifted_file_and_says_so_in_one_line(
        self, capsys: pytest.CaptureFixture[str], tmp_path: Path, provider: str
    ) -> None:
        path = require_corpus(*FIXTURE)
        out = tmp_path / "body.json"
        code, _, stderr = run(
            capsys, "compact", str(path), "--window", "8000", "--provider", provider,
            "-o", str(out), "--user", "go on",
        )  # fmt: skip
        assert code == 0
        assert stderr == f"{path}: {FIXTURE_SUMMARY}"
        body: dict[str, Any] = json.loads(out.read_text(encoding="utf-8"))
        assert validate(body, provider) == []
        assert "toolu_gen_a1_0" in json.dumps(body)

    def test_compact_strict_names_file_and_line(
        self, capsys: pytest.CaptureFixture[str], tmp_path: Path
    ) -> None:
        path = live_session(tmp_path)
        code, stdout, stderr = run(capsys, "compact", str(path), "--strict")
        assert (code, stdout) == (2, "")
        assert stderr.startswith(
            f"error: {path}:16: expected a complete JSON object, got a line cut short"
        )


BROKEN_ARGUMENTS = '{"command":["bash","-lc","ls"'
ARGUMENTS_SUMMARY = "repaired 1: tool call arguments not JSON (kept as text) ×1 (line 3)"
ARGUMENTS_EXPECTED = (
    "expected `arguments` to be JSON text, got text that is not JSON (kept as text)"
)


def rollout_with_broken_arguments(tmp_path: Path) -> Path:
    """A Codex rollout whose one function call (line 3) holds arguments cut short."""

    def item(payload: dict[str, Any]) -> dict[str, Any]:
        return {"timestamp": "2025-10-01T00:00:00Z", "type": "response_item", "payload": payload}

    records = [
        {"type": "session_meta", "payload": {"id": "sess-args", "cwd": "/w"}},
        item({"type": "message", "role": "user",
              "content": [{"type": "input_text", "text": "list the files"}]}),
        item({"type": "function_call", "name": "shell", "arguments": BROKEN_ARGUMENTS,
              "call_id": "c1"}),
        item({"type": "function_call_output", "call_id": "c1", "output": "a.py"}),
    ]  # fmt: skip
    path = tmp_path / "rollout.jsonl"
    path.write_text("".join(json.dumps(r) + "\n" for r in records), encoding="utf-8")
    return path


class TestArgumentsNotJSON:
    """Tool-call arguments that are not JSON are imported as written, said in the one line,
    and refused under --strict."""

    def test_import_keeps_them_and_says_so_in_one_line(
        self, capsys: pytest.CaptureFixture[str], tmp_path: Path
    ) -> None:
        path = rollout_with_broken_arguments(tmp_path)
        db = tmp_path / "ctx.db"
        code, stdout, stderr = run(capsys, "import", str(path), "--db", str(db))
        assert code == 0
        assert stdout == f"{path}: session sess-args (codex): 3 entries added, 0 already stored"
        assert stderr == f"{path}: {ARGUMENTS_SUMMARY}"
        with SQLiteStore(db) as store:
            entries = store.entries("sess-args")
        calls = [c for e in entries if e.message is not None for c in e.message.tool_calls]
        assert [(c.id, c.arguments) for c in calls] == [("c1", BROKEN_ARGUMENTS)]

    def test_import_json_lists_the_issue(
        self, capsys: pytest.CaptureFixture[str], tmp_path: Path
    ) -> None:
        path = rollout_with_broken_arguments(tmp_path)
        code = main(["import", str(path), "--db", str(tmp_path / "ctx.db"), "--json"])
        captured = capsys.readouterr()
        assert code == 0
        assert " ".join(captured.err.split()) == f"{path}: {ARGUMENTS_SUMMARY}"
        [done] = json.loads(captured.out)["files"]
        assert done["issues"] == [
            {
                "action": "repaired",
                "kind": "tool call arguments not JSON (kept as text)",
                "count": 1,
                "first_line": 3,
                "expected": ARGUMENTS_EXPECTED,
            }
        ]

    def test_strict_import_refuses_the_file_at_the_call_line(
        self, capsys: pytest.CaptureFixture[str], tmp_path: Path
    ) -> None:
        path = rollout_with_broken_arguments(tmp_path)
        db = tmp_path / "ctx.db"
        code, stdout, stderr = run(capsys, "import", str(path), "--db", str(db), "--strict")
        assert (code, stdout) == (2, "")
        assert stderr == f"error: {path}:3: {ARGUMENTS_EXPECTED}"
        with sqlite3.connect(db) as conn:
            assert conn.execute("SELECT count(*) FROM sessions").fetchone() == (0,)

    def test_compact_says_so_in_one_line(
        self, capsys: pytest.CaptureFixture[str], tmp_path: Path
    ) -> None:
        path = rollout_with_broken_arguments(tmp_path)
        out = tmp_path / "body.json"
        code, _, stderr = run(
            capsys, "compact", str(path), "--window", "8000", "-o", str(out), "--user", "go on"
        )
        assert (code, stderr) == (0, f"{path}: {ARGUMENTS_SUMMARY}")
        body: dict[str, Any] = json.loads(out.read_text(encoding="utf-8"))
        calls = [c for m in body["messages"] for c in m.get("tool_calls") or ()]
        assert [c["function"]["arguments"] for c in calls] == [BROKEN_ARGUMENTS]


class TestSniffedWithBadRecords:
    """Format detection looks past a malformed message or a torn first line: the file
    imports with one line naming what was skipped, and ``--strict`` names where."""

    def chat_with_a_bad_role(self, tmp_path: Path) -> Path:
        path = tmp_path / "chat.json"
        messages = [
            {"role": "system", "content": "x"},
            {"role": "user", "content": "hi"},
            {"role": "assistant", "content": "hello"},
            {"role": "wizard", "content": "?"},
        ]
        path.write_text(json.dumps({"messages": messages}), encoding="utf-8")
        return path

    def test_a_chat_file_with_one_bad_message_imports_and_says_so(
        self, capsys: pytest.CaptureFixture[str], tmp_path: Path
    ) -> None:
        path = self.chat_with_a_bad_role(tmp_path)
        db = tmp_path / "ctx.db"
        code, stdout, stderr = run(capsys, "import", str(path), "--db", str(db))
        assert code == 0
        assert stdout.startswith(f"{path}: session f:")
        assert stdout.endswith("(chat-completions): 3 entries added, 0 already stored")
        assert stderr == f"{path}: skipped 1: message role wizard ×1 ($.messages[3].role)"

    def test_strict_names_the_json_path(
        self, capsys: pytest.CaptureFixture[str], tmp_path: Path
    ) -> None:
        path = self.chat_with_a_bad_role(tmp_path)
        code, stdout, stderr = run(
            capsys, "import", str(path), "--db", str(tmp_path / "ctx.db"), "--strict"
        )
        assert (code, stdout) == (2, "")
        assert stderr == (
            f"error: {path} at $.messages[3].role: expected one of system, developer, user, "
            "assistant, tool, function"
        )

    def test_a_claude_code_file_with_a_line_of_text_first(
        self, capsys: pytest.CaptureFixture[str], tmp_path: Path
    ) -> None:
        source = require_corpus("claude-code", "spotter-short.jsonl").read_bytes()
        path = tmp_path / "prefixed.jsonl"
        path.write_bytes(b"Script started on 2026-01-01\n" + source)
        db = tmp_path / "ctx.db"
        code, stdout, stderr = run(capsys, "import", str(path), "--db", str(db))
        assert code == 0
        assert "(claude-code): 5 entries added" in stdout
        assert stderr == f"{path}: skipped 1: invalid JSON line ×1 (line 1)"
        code, stdout, stderr = run(capsys, "import", str(path), "--db", str(db), "--strict")
        assert (code, stdout) == (2, "")
        assert stderr == (
            f"error: {path}:1: expected a JSON object, got invalid JSON (unexpected character, "
            "expected a JSON value: line 1 column 1 (char 0))"
        )
