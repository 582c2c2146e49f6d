"""Exit codes and error lines of ``main(argv)``: bad input exits 2 naming what was wrong, a
bug exits 1 as an internal error (a ``KeyError`` included)."""

from __future__ import annotations

import json
import sqlite3
from pathlib import Path

import pytest

from ctxengine.cli import main
from ctxengine.cli.commands import inspect as inspect_module
from ctxengine.model import Entry

EXAMPLE = Path(__file__).resolve().parents[2] / "examples" / "session.jsonl"
KNOWN = (
    "ctxengine, qwen, gemini-cli, claude-code, claude-code-stream, codex, openclaw, pi, "
    "swe-agent, copilot, cursor, kimi, droid, grok, hermes, cline, roo-code, openhands, "
    "opencode, aider, anthropic-messages, chat-completions"
)


def run(capsys: pytest.CaptureFixture[str], *argv: str) -> tuple[int, str, str]:
    """``main(argv)``: (exit code, stdout, stderr), whitespace runs collapsed."""
    code = main(list(argv))
    captured = capsys.readouterr()
    return code, " ".join(captured.out.split()), " ".join(captured.err.split())


def test_a_key_error_inside_a_command_is_an_internal_error_exit_1(
    capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    def broken(entries: tuple[Entry, ...], *_args: object, **_kwargs: object) -> None:
        assert len(entries) == 164  # the example session was loaded
        raise KeyError("role")

    monkeypatch.setattr(inspect_module, "breakdown", broken)
    assert run(capsys, "inspect", str(EXAMPLE)) == (1, "", "internal error: KeyError: 'role'")


@pytest.mark.parametrize("command", ["import", "inspect", "compact", "replay"])
def test_an_unknown_format_exits_2_naming_the_known_ones(
    capsys: pytest.CaptureFixture[str], tmp_path: Path, command: str
) -> None:
    db = tmp_path / "ctx.db"
    code, stdout, stderr = run(
        capsys, command, str(EXAMPLE), "--format", "hologram", "--db", str(db)
    )
    assert (code, stdout) == (2, "")
    assert stderr == f"error: unknown format 'hologram'; known formats: {KNOWN}"
    assert not db.exists()


def test_import_tries_every_file_and_exits_2_with_a_count_when_one_fails(
    capsys: pytest.CaptureFixture[str], tmp_path: Path
) -> None:
    notes = tmp_path / "notes.txt"
    notes.write_text("just notes\n", encoding="utf-8")
    db = tmp_path / "ctx.db"
    code, stdout, stderr = run(capsys, "import", str(notes), str(EXAMPLE), "--db", str(db))
    assert code == 2
    assert stdout == (
        f"{EXAMPLE}: session 6900ea68-31eb-44fe-9d0f-8366413ede7e (claude-code): "
        "164 entries added, 0 already stored"
    )
    assert stderr == (
        f"error: {notes}: unrecognised transcript format: text (first line: 'just notes') "
        f"(known: {KNOWN}) "
        "error: 1 of 2 files not imported"
    )
    with sqlite3.connect(db) as conn:
        assert conn.execute("SELECT count(*) FROM entries").fetchone() == (164,)


def test_a_single_failing_file_exits_2_with_its_error_line_only(
    capsys: pytest.CaptureFixture[str], tmp_path: Path
) -> None:
    notes = tmp_path / "notes.txt"
    notes.write_text("just notes\n", encoding="utf-8")
    code, stdout, stderr = run(capsys, "import", str(notes), "--db", str(tmp_path / "ctx.db"))
    assert (code, stdout) == (2, "")
    assert stderr == (
        f"error: {notes}: unrecognised transcript format: text (first line: 'just notes') "
        f"(known: {KNOWN})"
    )


def test_an_unknown_option_shows_the_usage_and_exits_2(
    capsys: pytest.CaptureFixture[str],
) -> None:
    code, stdout, stderr = run(capsys, "inspect", str(EXAMPLE), "--bogus")
    assert (code, stdout) == (2, "")
    assert stderr.startswith("Usage: ctxengine inspect [OPTIONS] ")
    assert stderr.endswith(
        "Try 'ctxengine inspect --help' for help. Error: No such option: --bogus"
    )


def _big_head_session(path: Path) -> Path:
    """A chat-completions log whose system prompt alone takes about 3,600 tokens (o200k_base:
    3,626)."""
    messages: list[dict[str, str]] = [
        {"role": "system", "content": "Follow the house rules. " * 725}
    ]
    for i in range(30):
        messages.append({"role": "user", "content": f"Question {i}: explain item {i}. " * 20})
        messages.append({"role": "assistant", "content": f"Answer {i}: item {i} is fine. " * 20})
    path.write_text(json.dumps({"messages": messages}), encoding="utf-8")
    return path


def test_a_request_that_cannot_fit_with_its_output_tokens_exits_2_and_writes_nothing(
    capsys: pytest.CaptureFixture[str], tmp_path: Path
) -> None:
    source = _big_head_session(tmp_path / "big-head.json")
    out = tmp_path / "request.json"
    code, stdout, stderr = run(
        capsys, "compact", str(source), "--window", "8000", "--max-tokens", "3000", "-o", str(out)
    )
    assert (code, stdout) == (2, "")
    assert stderr == (
        "cannot compact: the compacted request still needs about 5,034 tokens plus the 3,000 "
        "output tokens asked for (--max-tokens), more than the 8,000-token window (the system "
        "prompt, developer instructions and the newest turn are kept whole and alone may not "
        "fit); nothing was written"
    )
    assert not out.exists()
    # With room for its output the same session is compacted and written.
    code, _, _ = run(
        capsys, "compact", str(source), "--window", "8000", "--max-tokens", "1500", "-o", str(out)
    )
    assert code == 0
    body = json.loads(out.read_text(encoding="utf-8"))
    assert body["max_completion_tokens"] == 1500
