"""A project checked out under /tmp (CI jobs, sandboxes): its files are real changes, not
scratch, when they lie in the session's working directory (the one the transcript records,
or the one the messages state) or, with none known, in the project root the paths suggest;
real temporary files outside it stay scratch."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from summarizer_helpers import call, calls, results

from ctxengine.cli import main
from ctxengine.engine import Session
from ctxengine.model import (
    CompactionRecord,
    Message,
    ToolCallPart,
    Usage,
    assistant,
    tool_result,
    user,
)
from ctxengine.summarizers.ledgers import extract_ledgers
from ctxengine.summarizers.paths import in_temp_dir, project_root


class TestInTempDir:
    def test_inside_the_working_directory(self) -> None:
        assert in_temp_dir("/tmp/ci/repo/m1.py", "/tmp/ci/repo") is False
        assert in_temp_dir("/tmp/ci/repo/tmp/out.json", "/tmp/ci/repo") is True
        assert in_temp_dir("/tmp/other/m1.py", "/tmp/ci/repo") is True
        assert in_temp_dir("/tmp/fix.py", "/tmp/ci/repo") is True

    def test_a_temp_root_is_no_project(self) -> None:
        assert in_temp_dir("/tmp/fix.py", "/tmp") is True
        assert in_temp_dir("/tmp/fix.py", "/tmp/") is True
        assert in_temp_dir("/var/tmp/a/b.py", "", "/var/tmp") is True

    def test_inside_the_project_root(self) -> None:
        assert in_temp_dir("/tmp/ci/repo/src/a.py", "", "/tmp/ci/repo") is False
        assert in_temp_dir("/tmp/ci/repo/src/a.py") is True

    def test_project_root(self) -> None:
        assert project_root(["/tmp/ci/repo/src/a.py", "/tmp/ci/repo/src/b.py"]) == "/tmp/ci/repo"
        assert project_root(["/tmp/x/pyproject.toml", "/tmp/x/a.py"]) == "/tmp/x"
        # the most frequent root wins; the first seen on a tie
        paths = ["/tmp/a/src/x.py", "/tmp/b/tests/t.py", "/tmp/b/tests/u.py"]
        assert project_root(paths) == "/tmp/b"
        assert project_root(["/tmp/a/src/x.py", "/tmp/b/src/y.py"]) == "/tmp/a"
        assert project_root(["/tmp/fix.py", "rel/src/a.py", "/src/a.py"]) == ""


def _edits(root: str) -> list[Message]:
    msgs = [user("migrate the modules")]
    for i in range(2):
        path = f"{root}/m{i}.py"
        msgs += [
            calls(call(f"e{i}", "Edit", file_path=path, old_string="a", new_string="b")),
            results((f"e{i}", f"The file {path} has been updated successfully.")),
        ]
    msgs += [
        calls(call("w", "Write", file_path="/tmp/notes.txt", content="x")),
        results(("w", "File created successfully at: /tmp/notes.txt")),
    ]
    return msgs


class TestLedgers:
    def test_with_the_working_directory(self) -> None:
        ledgers = extract_ledgers(_edits("/tmp/ci/repo"), cwd="/tmp/ci/repo")
        assert ledgers.files_modified == ("/tmp/ci/repo/m0.py", "/tmp/ci/repo/m1.py")
        assert [(f.path, f.status) for f in ledgers.files if f.status == "scratch"] == [
            ("/tmp/notes.txt", "scratch")
        ]

    def test_without_it_no_project_root_is_suggested(self) -> None:
        # no layout directory, no marker file: nothing tells the checkout from scratch
        ledgers = extract_ledgers(_edits("/tmp/ci/repo"))
        assert ledgers.files_modified == ()

    def test_without_it_the_project_root_is_inferred(self) -> None:
        ledgers = extract_ledgers(_edits("/tmp/ci/repo/src"))
        assert ledgers.files_modified == ("/tmp/ci/repo/src/m0.py", "/tmp/ci/repo/src/m1.py")
        assert [f.path for f in ledgers.files if f.status == "scratch"] == ["/tmp/notes.txt"]


def _record(cwd: str) -> CompactionRecord:
    s = Session(window=8_000, cwd=cwd)
    s.append(user("migrate the modules"))

    def step(cid: str, name: str, args: dict[str, object], result: str) -> None:
        part = ToolCallPart(cid, name, json.dumps(args))
        s.record(assistant("", part, usage=Usage(input_tokens=100, output_tokens=1)))
        s.append(tool_result(cid, result))

    for i in range(2):
        path = f"/tmp/ci/repo/m{i}.py"
        step(f"e{i}", "Edit", {"file_path": path, "old_string": "a", "new_string": "b"}, "ok")
    for i in range(12):
        step(f"r{i}", "Read", {"file_path": f"/tmp/ci/repo/f{i}.py"}, "x = 1\n" * 400)
    s.compact()
    (record,) = [e.body for e in s.entries if isinstance(e.body, CompactionRecord)]
    return record


def test_session_cwd_reaches_the_summarizer() -> None:
    record = _record("/tmp/ci/repo")
    assert record.ledgers.cwd == "/tmp/ci/repo"
    assert record.ledgers.files_modified == ("/tmp/ci/repo/m0.py", "/tmp/ci/repo/m1.py")
    assert "## Files modified\n- /tmp/ci/repo/m0.py\n- /tmp/ci/repo/m1.py\n" in record.summary
    unknown = _record("")
    assert unknown.ledgers.files_modified == ()


def _claude_code(path: Path, cwd: str) -> None:
    lines: list[dict[str, object]] = []

    def add(role: str, content: object) -> None:
        n = len(lines) + 1
        record: dict[str, object] = {
            "type": role,
            "uuid": f"u{n}",
            "parentUuid": f"u{n - 1}" if n > 1 else None,
            "sessionId": "s1",
            "timestamp": f"2026-01-01T10:00:{n:02d}.000Z",
            "cwd": cwd,
            "message": {"role": role, "content": content},
        }
        lines.append(record)

    add("user", "migrate the modules")
    for i in range(2):
        p = f"{cwd}/m{i}.py"
        edit = {"file_path": p, "old_string": "a", "new_string": "b"}
        add("assistant", [{"type": "tool_use", "id": f"e{i}", "name": "Edit", "input": edit}])
        add("user", [{"type": "tool_result", "tool_use_id": f"e{i}", "content": "ok"}])
    for i in range(12):
        read = {"file_path": f"{cwd}/f{i}.py"}
        add("assistant", [{"type": "tool_use", "id": f"r{i}", "name": "Read", "input": read}])
        add("user", [{"type": "tool_result", "tool_use_id": f"r{i}", "content": "x = 1\n" * 400}])
    path.write_text("\n".join(json.dumps(d) for d in lines) + "\n", encoding="utf-8")


def test_compact_uses_the_cwd_the_transcript_records(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    source = tmp_path / "s.jsonl"
    _claude_code(source, "/tmp/ci/repo")
    code = main(
        ["compact", str(source), "--window", "8000", "-o", str(tmp_path / "o.json"), "--json"]
    )
    out = capsys.readouterr().out
    assert code == 0
    ledgers = json.loads(out)["compaction"]["ledgers"]
    assert ledgers["cwd"] == "/tmp/ci/repo"
    assert ledgers["files_modified"] == ["/tmp/ci/repo/m0.py", "/tmp/ci/repo/m1.py"]


def test_a_child_session_keeps_the_working_directory() -> None:
    parent = Session(8_000, cwd="/tmp/ci/repo")
    parent.append(user("migrate the modules"))
    assert parent.runner.cwd == "/tmp/ci/repo"
    assert parent.fork().runner.cwd == "/tmp/ci/repo"
    assert parent.spawn("check the docs").runner.cwd == "/tmp/ci/repo"
