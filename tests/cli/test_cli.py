"""The command line, through ``ctxengine.cli.main(argv)`` and once through the installed
``ctxengine`` console script. Real corpus files, a real SQLite file per test."""

from __future__ import annotations

import json
import sqlite3
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

from corpus import require_corpus
from ctxengine.analysis import breakdown
from ctxengine.cli import main
from ctxengine.engine import Session
from ctxengine.importers import read_transcript, unsupported
from ctxengine.model import CompactionRecord
from ctxengine.model.codec import entry_from_dict, entry_to_dict
from ctxengine.projection.render import called_tool_schemas, render_anthropic, render_openai
from ctxengine.projection.validate import validate
from ctxengine.tokens.estimate import HeuristicEstimator

#: A Claude Code session: 17 messages, 6 tool calls, 6 results, about 3,000 tokens.
SMALL = ("claude-code", "spotter-tool-heavy.jsonl")
SMALL_ID = "d6e0bada-1959-4eec-a9d2-0bfade768d8f"
#: A Claude Code subagent session of about 62,500 estimated tokens.
LARGE = ("claude-code", "spotter-long-dov-subagent-a2898e3.jsonl")
#: Fields every compact report has.
REPORT_KEYS = {
    "source",
    "session_id",
    "window",
    "trigger",
    "provider",
    "tokens_before",
    "tokens_after",
    "messages",
    "cache_breakpoints",
    "truncated",
    "pruned",
    "sanitized",
    "note",
    "compaction",
    "cut",
    "events",
    "closed_pending_calls",
    "summarizer",
}


def run(capsys: pytest.CaptureFixture[str], *argv: str) -> tuple[int, str, str]:
    """``main(argv)``: (exit code, stdout, stderr with whitespace runs collapsed)."""
    code = main(list(argv))
    captured = capsys.readouterr()
    return code, captured.out, " ".join(captured.err.split())


def words(text: str) -> str:
    return " ".join(text.split())


def raw_tool_counts(path: Path) -> tuple[int, int]:
    """(tool_use blocks, tool_result blocks) of a Claude Code file, streaming duplicates of
    one call counted once."""
    calls: set[str] = set()
    results = 0
    for line in path.read_text(encoding="utf-8").splitlines():
        d = json.loads(line)
        content = (d.get("message") or {}).get("content")
        for c in content if isinstance(content, list) else []:
            if c.get("type") == "tool_use":
                calls.add(c["id"])
            elif c.get("type") == "tool_result":
                results += 1
    return len(calls), results


class TestCompact:
    @pytest.mark.parametrize(
        ("provider", "render"), [("openai", render_openai), ("anthropic", render_anthropic)]
    )
    def test_compact_writes_the_request_body_and_an_exact_json_report(
        self, capsys: pytest.CaptureFixture[str], tmp_path: Path, provider: str, render: Any
    ) -> None:
        path = require_corpus(*LARGE)
        out = tmp_path / "out.json"
        argv = [str(path), "--window", "16000", "--provider", provider, "-o", str(out)]
        code, stdout, stderr = run(capsys, "compact", *argv, "--report-json")
        assert (code, stderr) == (0, "")
        report = json.loads(stdout)
        body = json.loads(out.read_text())
        assert validate(body, provider) == []

        # The same compaction through the library gives the same body and numbers (the
        # transcript records no schemas: every tool it calls is declared).
        imported = read_transcript(path)
        called = called_tool_schemas(m for e in imported.entries if (m := e.message) is not None)
        session = Session(16_000, entries=imported.entries, tools=called)
        before = session.project()
        outcome = session.compact()
        extra: dict[str, Any] = {"declare_tools": True}
        if provider == "anthropic":
            extra["max_tokens"] = 3_200  # the reserve of a 16,000-token window (under 4,096)
            extra["cache"] = True  # the breakpoints every agent request carries
        assert body == json.loads(json.dumps(render(outcome.context, **extra)))
        assert set(report) >= REPORT_KEYS
        assert report["source"] == str(path)
        assert report["session_id"] == imported.session_id
        assert (report["window"], report["trigger"], report["provider"]) == (
            16_000,
            12_800,
            provider,
        )
        assert report["tokens_before"] == before.tokens
        assert report["tokens_after"] == outcome.context.tokens
        assert report["tokens_before"] > report["tokens_after"]
        assert report["messages"] == len(body["messages"])
        assert report["note"] == ""
        record = outcome.entry.body
        assert isinstance(record, CompactionRecord)
        assert report["cut"] == {
            "first_kept_id": record.first_kept_id,
            "splits_turn": record.splits_turn,
        }
        assert report["cut"]["first_kept_id"] in {e.id for e in imported.entries}
        assert report["compaction"]["summary"] == record.summary
        assert "summarized_events" not in report
        assert [e["step"] for e in report["events"]] == ["compaction"]

    def test_the_console_script_compacts_a_corpus_file(self, tmp_path: Path) -> None:
        path = require_corpus(*LARGE)
        script = Path(sys.executable).with_name("ctxengine")
        out = tmp_path / "out.json"
        argv = ["compact", str(path), "--window", "16000", "-o", str(out), "--report-json"]
        proc = subprocess.run(
            [str(script), *argv], capture_output=True, text=True, timeout=120, check=False
        )
        assert (proc.returncode, proc.stderr) == (0, "")
        report = json.loads(proc.stdout)
        assert report["tokens_before"] > report["tokens_after"] > 0
        assert validate(json.loads(out.read_text()), "openai") == []

    def test_compacting_a_stored_session_appends_one_compaction_entry(
        self, capsys: pytest.CaptureFixture[str], tmp_path: Path
    ) -> None:
        path = require_corpus(*LARGE)
        db = str(tmp_path / "ctx.db")
        assert run(capsys, "import", str(path), "--db", db)[0] == 0
        imported = read_transcript(path)
        n = len(imported.entries)
        argv = ["--db", db, "--window", "16000", "--report-json"]
        code, stdout, _ = run(capsys, "compact", imported.session_id, *argv)
        assert code == 0
        with sqlite3.connect(db) as conn:
            kinds = [k for (k,) in conn.execute("SELECT kind FROM entries ORDER BY seq")]
        assert len(kinds) == n + 1 and kinds[-1] == "compaction"
        assert json.loads(stdout)["cut"]["first_kept_id"] is not None


class TestStoreCommands:
    def test_importing_twice_adds_nothing_and_sessions_lists_it(
        self, capsys: pytest.CaptureFixture[str], tmp_path: Path
    ) -> None:
        path = require_corpus(*SMALL)
        db = str(tmp_path / "ctx.db")
        code, stdout, _ = run(capsys, "import", str(path), "--db", db)
        assert code == 0
        assert words(stdout) == (
            f"{path}: session {SMALL_ID} (claude-code): 17 entries added, 0 already stored"
        )
        code, stdout, _ = run(capsys, "import", str(path), "--db", db)
        assert code == 0
        assert words(stdout).endswith("0 entries added, 17 already stored")

        code, stdout, _ = run(capsys, "sessions", "--db", db)
        assert code == 0
        # through a pipe: a header and one tab-separated row, never wrapped
        total = breakdown(read_transcript(path).entries, HeuristicEstimator()).total
        assert total == 2_588  # o200k_base: 2,489
        assert stdout.splitlines() == [
            "id\tcreated\tupdated\tentries\ttokens\tformat\ttitle\tsource",
            f"{SMALL_ID}\t2026-02-10 22:57\t2026-02-10 22:59\t17\t2,588\tclaude-code\t"
            f"start phoenix in background\t{path}",
        ]

    def test_export_jsonl_round_trips_through_the_codec(
        self, capsys: pytest.CaptureFixture[str], tmp_path: Path
    ) -> None:
        path = require_corpus(*SMALL)
        db = str(tmp_path / "ctx.db")
        run(capsys, "import", str(path), "--db", db)
        out = tmp_path / "log.jsonl"
        code, _, stderr = run(capsys, "export", SMALL_ID, "--db", db, "-o", str(out))
        assert (code, stderr) == (0, "")
        lines = out.read_text().splitlines()
        entries = [entry_from_dict(json.loads(line)) for line in lines]
        assert entries == list(read_transcript(path).entries)
        assert [entry_to_dict(e) for e in entries] == [json.loads(line) for line in lines]

    def test_inspect_prints_the_token_breakdown_of_a_file_and_of_a_stored_session(
        self, capsys: pytest.CaptureFixture[str], tmp_path: Path
    ) -> None:
        path = require_corpus(*SMALL)
        calls, results = raw_tool_counts(path)
        assert (calls, results) == (6, 6)
        b = breakdown(read_transcript(path).entries, HeuristicEstimator())
        db = str(tmp_path / "ctx.db")
        run(capsys, "import", str(path), "--db", db)
        for target in (str(path), SMALL_ID):
            code, stdout, _ = run(capsys, "inspect", target, "--db", db)
            assert code == 0
            text = words(stdout)
            assert (
                f"{b.total:,} tokens (estimated) in 17 messages, 6 tool calls, 6 tool results"
                in (text)
            )
            for title in ("By role", "By tool", "Top consumers", "Epochs"):
                assert title in text
            assert "\nRead\t1\t1,035\n" in stdout

    def test_replay_prints_a_timeline(self, capsys: pytest.CaptureFixture[str]) -> None:
        path = require_corpus(*SMALL)
        code, stdout, _ = run(capsys, "replay", str(path), "--window", "1000")
        assert code == 0
        text = words(stdout)
        assert "Replay of" in text and "1,000-token window" in text
        # The largest request, 759 tokens (o200k_base: 733), stays under the 800-token trigger.
        assert text.endswith(
            "4 calls, 0 compactions, 0 prunes, largest context 759 tokens, 0 invalid requests"
        )
        code, stdout, _ = run(capsys, "replay", str(path), "--window", "1000", "--json")
        data = json.loads(stdout)
        assert (data["calls"], data["compactions"], data["invalid"]) == (4, 0, 0)
        assert [s["tokens"] for s in data["steps"]] == [8, 95, 377, 759]


class TestBadInput:
    def test_a_malformed_file_under_strict_names_file_and_line_exits_2_and_writes_nothing(
        self, capsys: pytest.CaptureFixture[str], tmp_path: Path
    ) -> None:
        lines = require_corpus("claude-code", "spotter-short.jsonl").read_text().splitlines()
        bad = tmp_path / "bad.jsonl"
        broken = '{"type": "assistant", "message": {"role": "assistant", "content": ['
        bad.write_text("\n".join([*lines[:5], broken, *lines[5:]]) + "\n")
        db = tmp_path / "ctx.db"
        code, stdout, stderr = run(capsys, "import", str(bad), "--db", str(db), "--strict")
        assert (code, stdout) == (2, "")
        assert stderr.startswith(f"error: {bad}:6: expected a JSON object, got invalid JSON")
        with sqlite3.connect(db) as conn:
            assert conn.execute("SELECT count(*) FROM entries").fetchone() == (0,)
            assert conn.execute("SELECT count(*) FROM sessions").fetchone() == (0,)

    def test_an_unsupported_format_exits_2_with_format_not_supported_yet(
        self, capsys: pytest.CaptureFixture[str], tmp_path: Path, monkeypatch: pytest.MonkeyPatch
    ) -> None:
        listed = (("Hologram log", lambda path, head: head.startswith(b"HOLOGRAM")),)
        monkeypatch.setattr(unsupported, "FORMATS", listed)
        path = tmp_path / "a.log"
        path.write_bytes(b"HOLOGRAM v1\n")
        code, _, stderr = run(capsys, "import", str(path), "--db", str(tmp_path / "ctx.db"))
        assert code == 2
        assert stderr == f"error: {path}: format not supported yet: Hologram log"

    def test_an_unknown_session_id_exits_2(
        self, capsys: pytest.CaptureFixture[str], tmp_path: Path
    ) -> None:
        code, _, stderr = run(capsys, "inspect", "nosuch", "--db", str(tmp_path / "ctx.db"))
        assert (code, stderr) == (
            2,
            f"error: no stored session matches 'nosuch' (no store at {tmp_path / 'ctx.db'})",
        )
        assert not (tmp_path / "ctx.db").exists()

    def test_an_unknown_provider_exits_2(self, capsys: pytest.CaptureFixture[str]) -> None:
        path = require_corpus(*SMALL)
        code, _, stderr = run(capsys, "compact", str(path), "--provider", "bogus")
        assert code == 2
        assert "Invalid value for --provider: expected one of ['anthropic', 'openai']" in stderr
