"""``ctxengine import`` of a session stored already, on a real SQLite file: an edited copy of
the example session (a line removed from the middle) is stored once as the current version,
described as what it is; importing either version again adds nothing; ``sessions`` counts
the tokens of the current history, as ``inspect`` does."""

from __future__ import annotations

import json
import sqlite3
from pathlib import Path

import pytest
from cli_helpers import EXAMPLE, EXAMPLE_ID, validate

from ctxengine.analysis import breakdown
from ctxengine.cli import main
from ctxengine.importers import read_transcript
from ctxengine.tokens.estimate import HeuristicEstimator

#: The example's 41st line: the second block (an Edit call) of a reply logged over lines.
REMOVED_LINE = 40


def run(capsys: pytest.CaptureFixture[str], *argv: str | Path) -> tuple[int, str, str]:
    """``main(argv)``: (exit code, stdout, stderr)."""
    code = main([str(a) for a in argv])
    captured = capsys.readouterr()
    return code, captured.out, captured.err


def without_line(dest: Path, index: int) -> Path:
    """The example with its line ``index`` (0-based) removed, written to ``dest``."""
    lines = EXAMPLE.read_bytes().splitlines(keepends=True)
    dest.write_bytes(b"".join(lines[:index] + lines[index + 1 :]))
    return dest


def first_lines(dest: Path, count: int) -> Path:
    """The example's first ``count`` lines written to ``dest``."""
    lines = EXAMPLE.read_bytes().splitlines(keepends=True)
    dest.write_bytes(b"".join(lines[:count]))
    return dest


def stored_entries(db: Path) -> int:
    with sqlite3.connect(db) as conn:
        (n,) = conn.execute("SELECT count(*) FROM entries").fetchone()
    return int(n)


def sessions_row(capsys: pytest.CaptureFixture[str], db: Path) -> list[str]:
    """The one session row of ``sessions`` (tab-separated fields)."""
    code, out, _ = run(capsys, "sessions", "--db", db)
    assert code == 0
    header, row = out.splitlines()
    assert header == "id\tcreated\tupdated\tentries\ttokens\tformat\ttitle\tsource"
    return row.split("\t")


def inspect_total(capsys: pytest.CaptureFixture[str], db: Path) -> str:
    """The first line of ``inspect`` of the stored example session."""
    code, out, _ = run(capsys, "inspect", "--db", db, "--session", EXAMPLE_ID)
    assert code == 0
    return out.splitlines()[0]


def test_an_edited_copy_and_the_original_imported_in_turn(
    capsys: pytest.CaptureFixture[str], tmp_path: Path
) -> None:
    edited = without_line(tmp_path / "edited.jsonl", REMOVED_LINE)
    original = tmp_path / "session.jsonl"
    original.write_bytes(EXAMPLE.read_bytes())
    db = tmp_path / "ctx.db"
    head = f"session {EXAMPLE_ID} (claude-code)"
    code, out, _ = run(capsys, "import", "--db", db, original, edited, original, edited)
    assert code == 0
    assert out.splitlines() == [
        f"{original}: {head}: 164 entries added, 0 already stored",
        f"{edited}: {head}: 140 entries added, 24 already stored, 140 superseded (the file "
        "differs from the stored history at entry 25 of 164: an edited copy, stored as the "
        "current version)",
        f"{original}: {head}: 0 entries added, 164 already stored (an earlier version of the "
        "session: the current history differs from it at entry 25; unchanged)",
        f"{edited}: {head}: 0 entries added, 164 already stored",
    ]
    # the original, a supersede record, the edited copy's entries from the difference on
    assert stored_entries(db) == 164 + 1 + 140
    tokens = breakdown(read_transcript(edited).entries, HeuristicEstimator()).total
    assert tokens == 17_507
    assert inspect_total(capsys, db) == (
        f"{EXAMPLE_ID}: 17,507 tokens (estimated) in 164 messages, 89 tool calls, 90 tool results"
    )
    assert sessions_row(capsys, db)[3:5] == ["305", "17,507"]

    code, out, _ = run(capsys, "import", "--db", db, "--json", original, edited)
    assert code == 0
    document = json.loads(out)
    validate(document, "import")
    assert [
        (f["added"], f["skipped"], f["superseded"], f["change"], f["diverged_at"])
        for f in document["files"]
    ] == [(0, 164, 0, "earlier", 24), (0, 164, 0, "none", None)]
    assert stored_entries(db) == 305


def test_a_file_grown_after_a_reply_was_cut(
    capsys: pytest.CaptureFixture[str], tmp_path: Path
) -> None:
    """Imported while the agent was writing the reply of lines 40-41, then grown: the
    reply is superseded, and ``sessions`` counts the tokens ``inspect`` counts."""
    live = first_lines(tmp_path / "live.jsonl", 40)
    db = tmp_path / "ctx.db"
    head = f"session {EXAMPLE_ID} (claude-code)"
    code, out, _ = run(capsys, "import", "--db", db, live)
    assert (code, out) == (0, f"{live}: {head}: 25 entries added, 0 already stored\n")
    live.write_bytes(EXAMPLE.read_bytes())
    code, out, _ = run(capsys, "import", "--db", db, live, live)
    assert code == 0
    assert out.splitlines() == [
        f"{live}: {head}: 140 entries added, 24 already stored, 1 superseded (stored while "
        "still being written)",
        f"{live}: {head}: 0 entries added, 164 already stored",
    ]
    assert stored_entries(db) == 25 + 1 + 140
    tokens = breakdown(read_transcript(EXAMPLE).entries, HeuristicEstimator()).total
    assert tokens == 17_926
    assert inspect_total(capsys, db) == (
        f"{EXAMPLE_ID}: 17,926 tokens (estimated) in 164 messages, 90 tool calls, 90 tool results"
    )
    assert sessions_row(capsys, db)[3:5] == ["166", "17,926"]
