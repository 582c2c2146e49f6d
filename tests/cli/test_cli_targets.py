"""CLI targets and multi-file import, through ``ctxengine.cli.main``: a missing file is "file
not found" (not an unknown session), an empty target is refused, and ``import`` tries every
file, reports each and exits 2 when any failed."""

from __future__ import annotations

import sqlite3
from pathlib import Path

import pytest

from corpus import require_corpus
from ctxengine.cli import main
from ctxengine.cli.load import load_target, looks_like_path
from ctxengine.errors import TranscriptError

SHORT = ("claude-code", "spotter-short.jsonl")
SHORT_ID = "55604662-cf2a-4331-851a-ec234028f8ca"
TRAJ = ("swe-agent", "swe-agent-test-repo-i1-gpt4.traj")
TRAJ_ID = "f:312da8fbed705d83"


def run(capsys: pytest.CaptureFixture[str], *argv: str) -> tuple[int, str, str]:
    """``main(argv)``: (exit code, stdout, stderr), whitespace runs collapsed."""
    code = main(list(argv))
    captured = capsys.readouterr()
    return code, " ".join(captured.out.split()), " ".join(captured.err.split())


class TestTargets:
    @pytest.mark.parametrize(
        ("target", "expected"),
        [
            ("logs/run.jsonl", True),
            ("run.jsonl", True),
            ("chat.JSON", True),
            ("x.traj", True),
            ("share.md", True),
            ("sub/dir", True),
            ("55604662-cf2a", False),
            ("f:312da8fbed705d83", False),
        ],
    )
    def test_what_looks_like_a_path(self, target: str, expected: bool) -> None:
        assert looks_like_path(target) is expected

    @pytest.mark.parametrize("name", ["missing.jsonl", "no/such/dir/log.json", "x.traj"])
    def test_a_missing_file_is_file_not_found(
        self, capsys: pytest.CaptureFixture[str], tmp_path: Path, name: str
    ) -> None:
        db = str(tmp_path / "ctx.db")
        code, stdout, stderr = run(capsys, "inspect", name, "--db", db)
        assert (code, stdout, stderr) == (2, "", f"error: {name}: file not found")
        with pytest.raises(TranscriptError) as info:
            load_target(name, db=db, format=None)
        assert (info.value.path, info.value.expected) == (name, "file not found")

    def test_an_empty_target_is_refused(
        self, capsys: pytest.CaptureFixture[str], tmp_path: Path
    ) -> None:
        code, _, stderr = run(capsys, "inspect", "", "--db", str(tmp_path / "ctx.db"))
        assert (code, stderr) == (2, "error: : expected a file path or a session id")
        with pytest.raises(TranscriptError) as info:
            load_target("", db=None, format=None)
        assert (info.value.path, info.value.expected) == (
            "",
            "expected a file path or a session id",
        )

    def test_an_id_that_is_not_stored_is_still_an_unknown_session(
        self, capsys: pytest.CaptureFixture[str], tmp_path: Path
    ) -> None:
        db = tmp_path / "ctx.db"
        code, _, stderr = run(capsys, "inspect", "abc123", "--db", str(db))
        assert (code, stderr) == (
            2,
            f"error: no stored session matches 'abc123' (no store at {db})",
        )
        assert not db.exists()


class TestImportSeveralFiles:
    def test_every_file_is_tried_and_a_failure_exits_2_at_the_end(
        self, capsys: pytest.CaptureFixture[str], tmp_path: Path
    ) -> None:
        first, third = require_corpus(*SHORT), require_corpus(*TRAJ)
        bad = tmp_path / "bad.jsonl"
        bad.write_text("not json\n", encoding="utf-8")
        db = tmp_path / "ctx.db"
        code, stdout, stderr = run(
            capsys, "import", str(first), str(bad), str(third), "--db", str(db)
        )
        assert code == 2
        assert stdout == (
            f"{first}: session {SHORT_ID} (claude-code): 5 entries added, 0 already stored "
            f"{third}: session {TRAJ_ID} (swe-agent): 13 entries added, 0 already stored"
        )
        assert stderr == (
            f"error: {bad}: unrecognised transcript format: text (first line: 'not json') "
            "(known: ctxengine, qwen, gemini-cli, "
            "claude-code, claude-code-stream, codex, openclaw, pi, swe-agent, copilot, cursor, "
            "kimi, droid, grok, "
            "hermes, cline, roo-code, openhands, opencode, aider, anthropic-messages, "
            "chat-completions) "
            "error: 1 of 3 files not imported"
        )
        with sqlite3.connect(db) as conn:
            rows = conn.execute(
                "SELECT session_id, count(*) FROM entries GROUP BY 1 ORDER BY 1"
            ).fetchall()
        assert rows == [(SHORT_ID, 5), (TRAJ_ID, 13)]

    def test_all_good_files_exit_0(
        self, capsys: pytest.CaptureFixture[str], tmp_path: Path
    ) -> None:
        first, third = require_corpus(*SHORT), require_corpus(*TRAJ)
        db = str(tmp_path / "ctx.db")
        run(capsys, "import", str(first), "--db", db)
        code, stdout, stderr = run(capsys, "import", str(first), str(third), "--db", db)
        assert (code, stderr) == (0, "")
        assert stdout == (
            f"{first}: session {SHORT_ID} (claude-code): 0 entries added, 5 already stored "
            f"{third}: session {TRAJ_ID} (swe-agent): 13 entries added, 0 already stored"
        )

    def test_a_missing_file_is_reported_and_the_rest_imported(
        self, capsys: pytest.CaptureFixture[str], tmp_path: Path
    ) -> None:
        first = require_corpus(*SHORT)
        missing = tmp_path / "gone.jsonl"
        code, stdout, stderr = run(
            capsys, "import", str(missing), str(first), "--db", str(tmp_path / "ctx.db")
        )
        assert code == 2
        assert (
            stdout
            == f"{first}: session {SHORT_ID} (claude-code): 5 entries added, 0 already stored"
        )
        assert stderr == (
            f"error: {missing}: cannot read file: No such file or directory "
            "error: 1 of 2 files not imported"
        )

    def test_an_unknown_format_is_refused_before_any_file(
        self, capsys: pytest.CaptureFixture[str], tmp_path: Path
    ) -> None:
        db = tmp_path / "ctx.db"
        code, stdout, stderr = run(
            capsys,
            "import",
            str(require_corpus(*SHORT)),
            "--format",
            "unsupported",
            "--db",
            str(db),
        )
        assert (code, stdout) == (2, "")
        assert stderr == (
            "error: unknown format 'unsupported'; known formats: ctxengine, qwen, gemini-cli, "
            "claude-code, claude-code-stream, codex, openclaw, pi, swe-agent, copilot, cursor, "
            "kimi, droid, grok, "
            "hermes, cline, roo-code, openhands, opencode, aider, anthropic-messages, "
            "chat-completions"
        )
        assert not db.exists()
