"""``inspect`` of a stored session shows its stored imports: when, from which file, the
entries added, and what each import skipped, repaired and ignored (kinds, counts, first
line), as text and under ``imports`` with ``--json``."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
from cli_helpers import validate

from ctxengine.cli import main


def line(**record: Any) -> str:
    return json.dumps({"sessionId": "s1", **record})


def transcript(path: Path, grown: bool) -> Path:
    """A Claude Code session: a tool_use without id (line 3), an unknown record (line 5),
    a progress record (line 2); grown, one more user line."""
    lines = [
        line(type="user", uuid="u1", message={"role": "user", "content": "go"}),
        line(type="progress", uuid="p1", data={}),
        line(
            type="assistant",
            uuid="a1",
            message={
                "id": "m1",
                "role": "assistant",
                "content": [{"type": "tool_use", "name": "Bash", "input": {}}],
            },
        ),
        line(
            type="user",
            uuid="r1",
            message={"role": "user", "content": [{"type": "tool_result", "content": "ok"}]},
        ),
        line(type="hologram", uuid="h1"),
    ]
    if grown:
        lines.append(line(type="user", uuid="u2", message={"role": "user", "content": "more"}))
    path.write_text("\n".join(lines) + "\n", encoding="utf-8")
    return path


def run(capsys: pytest.CaptureFixture[str], *argv: str) -> tuple[int, str]:
    code = main(list(argv))
    return code, capsys.readouterr().out


def test_inspect_lists_the_stored_imports_with_their_reports(
    capsys: pytest.CaptureFixture[str], tmp_path: Path
) -> None:
    db = str(tmp_path / "ctx.db")
    path = tmp_path / "s.jsonl"
    assert main(["import", str(transcript(path, False)), "--db", db]) == 0
    assert main(["import", str(transcript(path, True)), "--db", db]) == 0
    capsys.readouterr()
    code, stdout = run(capsys, "inspect", "s1", "--db", db)
    assert code == 0
    at = stdout.index("Imports\n")
    # each import's heading starts with the time it was stored
    shown = [" ".join(x.split()[1:]) if x[0].isdigit() else x for x in stdout[at:].splitlines()]
    repaired = (
        "  repaired 2: tool_use without id ×1 (line 3), tool_result without tool_use_id ×1 (line 4)"
    )
    assert shown == [
        "Imports",
        f"{path} (claude-code): 3 entries added",
        "  skipped 1: record:hologram ×1 (line 5)",
        repaired,
        "  ignored 1: progress ×1 (line 2)",
        f"{path} (claude-code): 1 entries added",
        "  skipped 1: record:hologram ×1 (line 5)",
        repaired,
        "  ignored 1: progress ×1 (line 2)",
    ]
    code, stdout = run(capsys, "inspect", "s1", "--db", db, "--json")
    validate(json.loads(stdout), "inspect")
    imports = json.loads(stdout)["imports"]
    assert [(i["added"], i["format"]) for i in imports] == [(3, "claude-code"), (1, "claude-code")]
    assert imports[1]["issues"] == [
        {
            "action": "skipped",
            "kind": "record:hologram",
            "count": 1,
            "first_line": 5,
            "expected": "expected a Claude Code record type (user, assistant, attachment, "
            "system …), got 'hologram'",
        },
        {
            "action": "repaired",
            "kind": "tool_use without id",
            "count": 1,
            "first_line": 3,
            "expected": "expected a string `id` on a tool_use block",
        },
        {
            "action": "repaired",
            "kind": "tool_result without tool_use_id",
            "count": 1,
            "first_line": 4,
            "expected": "expected a string `tool_use_id` on a tool_result block",
        },
        {"action": "ignored", "kind": "progress", "count": 1, "first_line": 2},
    ]
    assert imports[0]["source_path"] == str(path)


def test_a_file_has_no_imports_to_show(capsys: pytest.CaptureFixture[str], tmp_path: Path) -> None:
    path = transcript(tmp_path / "s.jsonl", False)
    code, stdout = run(capsys, "inspect", str(path), "--json")
    assert code == 0
    assert "imports" not in json.loads(stdout)
    code, stdout = run(capsys, "inspect", str(path))
    assert "Imports" not in stdout
