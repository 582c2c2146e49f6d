"""compact/export as a hand-off: a failed run leaves the store as it was, unanswered calls
are closed, a shrunken window compacts again, impossible windows exit 2."""

from __future__ import annotations

import json
import os
import sqlite3
from pathlib import Path

import pytest

from ctxengine.cli import main
from ctxengine.projection.handoff import SESSION_ENDED_RESULT
from ctxengine.projection.validate import validate

EXAMPLE = Path(__file__).resolve().parents[2] / "examples" / "session.jsonl"


def _rows(db: Path) -> int:
    with sqlite3.connect(db) as conn:
        (n,) = conn.execute("SELECT COUNT(*) FROM entries").fetchone()
    return int(n)


def _err(capsys: pytest.CaptureFixture[str]) -> str:
    return " ".join(capsys.readouterr().err.split())


def test_a_compact_that_cannot_write_its_output_exits_2_and_stores_nothing(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    db = tmp_path / "s.db"
    assert main(["import", str(EXAMPLE), "--db", str(db)]) == 0
    assert _rows(db) == 164
    code = main(["compact", "examples-session", "--db", str(db)])
    assert code == 2  # unknown session id
    sid = "6900"
    out = tmp_path / "missing-dir" / "x.json"
    capsys.readouterr()
    code = main(["compact", sid, "--db", str(db), "--window", "16000", "-o", str(out)])
    assert code == 2
    assert _err(capsys) == (
        f"error: refusing to write {out}: its folder {out.parent} does not exist; "
        "nothing was written"
    )
    assert _rows(db) == 164
    unwritable = tmp_path / "ro"
    unwritable.mkdir()
    unwritable.chmod(0o500)
    try:
        target = unwritable / "x.json"
        code = main(["compact", sid, "--db", str(db), "--window", "16000", "-o", str(target)])
        if os.geteuid() != 0:  # root writes anywhere
            assert code == 2
            assert "cannot write" in _err(capsys)
            assert _rows(db) == 164
    finally:
        unwritable.chmod(0o700)
    code = main(
        ["compact", sid, "--db", str(db), "--window", "16000", "-o", str(tmp_path / "ok.json")]
    )
    assert code == 0
    assert _rows(db) == 165


def test_a_stored_session_compacted_for_a_large_window_compacts_again_for_a_small_one(
    tmp_path: Path,
) -> None:
    db = tmp_path / "s.db"
    assert main(["import", str(EXAMPLE), "--db", str(db)]) == 0
    big, small = tmp_path / "big.json", tmp_path / "small.json"
    assert (
        main(
            [
                "compact",
                "6900",
                "--db",
                str(db),
                "--window",
                "40000",
                "-o",
                str(big),
                "--report-json",
            ]
        )
        == 0
    )
    assert main(["compact", "6900", "--db", str(db), "--window", "8000", "-o", str(small)]) == 0
    assert _rows(db) == 166
    assert len(small.read_text()) < len(big.read_text())


def test_a_window_below_the_minimum_is_a_configuration_error(
    capsys: pytest.CaptureFixture[str],
) -> None:
    assert main(["compact", str(EXAMPLE), "--window", "1"]) == 2
    assert "Invalid value for '--window': Input should be greater than or equal to 1000" in (
        _err(capsys)
    )


def test_a_session_ending_in_an_unanswered_call_hands_off_a_valid_request(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    calls = [
        {"id": f"c{i}", "type": "function", "function": {"name": "bash", "arguments": "{}"}}
        for i in (1, 2)
    ]
    messages = [
        {"role": "system", "content": "You are an agent."},
        {"role": "user", "content": "Run both checks."},
        {"role": "assistant", "content": None, "tool_calls": calls},
        {"role": "tool", "tool_call_id": "c1", "content": "ok"},
    ]
    src = tmp_path / "chat.json"
    src.write_text(json.dumps({"messages": messages}))
    out = tmp_path / "r.json"
    for provider in ("openai", "anthropic"):
        code = main(["compact", str(src), "--provider", provider, "-o", str(out), "--report-json"])
        assert code == 0
        report = json.loads(capsys.readouterr().out)
        body = json.loads(out.read_text())
        assert validate(body, provider) == []
        assert report["closed_pending_calls"] == ["c2"]
        assert SESSION_ENDED_RESULT in out.read_text()


def _chat_file(tmp_path: Path) -> Path:
    messages = [
        {"role": "system", "content": "You are an agent."},
        {"role": "user", "content": "Say hello."},
        {"role": "assistant", "content": "Hello."},
    ]
    src = tmp_path / "chat.json"
    src.write_text(json.dumps({"messages": messages}))
    return src


def test_a_strict_anthropic_body_needs_the_next_user_message(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    src, out = _chat_file(tmp_path), tmp_path / "r.json"
    base = ["compact", str(src), "--provider", "anthropic", "--model", "claude-x", "-o", str(out)]
    assert main(base) == 2
    assert "give the next user message with --user TEXT" in _err(capsys)
    assert not out.exists()
    assert main([*base, "--user", "Now say goodbye."]) == 0
    body = json.loads(out.read_text())
    assert body["messages"][-1] == {
        "role": "user",
        "content": [{"type": "text", "text": "Now say goodbye."}],
    }
    assert (body["model"], body["max_tokens"]) == ("claude-x", 4_096)
    assert validate(body, "anthropic", strict=True) == []


def test_max_tokens_is_reserved_below_the_window(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    src, out = _chat_file(tmp_path), tmp_path / "r.json"
    argv = ["compact", str(src), "--window", "4000", "-o", str(out), "--report-json"]
    assert main([*argv, "--max-tokens", "3900"]) == 2
    assert "leaves no room in a 4000-token window" in _err(capsys)
    assert main([*argv, "--max-tokens", "1000", "--provider", "anthropic"]) == 0
    report = json.loads(capsys.readouterr().out)
    assert report["trigger"] == 4_000 - 1_000 - 4_000 // 20
    assert json.loads(out.read_text())["max_tokens"] == 1_000
