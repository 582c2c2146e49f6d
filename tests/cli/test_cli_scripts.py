"""The command line as scripts use it: output through a pipe is exact and never wrapped, data
is never read as markup, a closed pipe ends the command quietly, every ``--json`` document
matches its schema, and a store path that does not exist is not created by a listing."""

from __future__ import annotations

import json
import sqlite3
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest
from cli_helpers import EXAMPLE, EXAMPLE_ID, cli, cli_env, validate

from ctxengine.cli import main
from ctxengine.engine import Session
from ctxengine.model import Message, TextPart
from ctxengine.stores import SQLiteStore

#: The example session's title as Claude Code's importer stores it (cut to 80 characters).
EXAMPLE_TITLE = "Splitting a bill is broken: `tallyho split 100 3` prints 33.33 three times, so …"
#: Estimated tokens of the example session's messages (``inspect``'s total).
EXAMPLE_TOKENS = 17_926


@pytest.fixture(autouse=True)
def _no_summary_model(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv("CTXENGINE_SUMMARY_MODEL", raising=False)


def run_json(capsys: pytest.CaptureFixture[str], *argv: str, code: int = 0) -> Any:
    """``main(argv)`` in this process; the JSON document it printed on stdout."""
    assert main(list(argv)) == code
    return json.loads(capsys.readouterr().out)


def chat(path: Path, *texts: str) -> Path:
    """A chat-completions transcript: the user ``texts``, each answered."""
    messages: list[dict[str, str]] = [{"role": "system", "content": "You are a coding agent."}]
    for n, text in enumerate(texts):
        messages += [
            {"role": "user", "content": text},
            {"role": "assistant", "content": f"Done ({n})."},
        ]
    path.write_text(json.dumps(messages), encoding="utf-8")
    return path


class TestThroughAPipe:
    def test_import_and_sessions_print_whole_lines(self, tmp_path: Path) -> None:
        deep = tmp_path / ("a-folder-with-a-long-name-" * 4)
        deep.mkdir()
        src = deep / "session.jsonl"
        src.write_bytes(EXAMPLE.read_bytes())
        db = tmp_path / "s.db"
        done = cli("import", src, "--db", db)
        assert (done.returncode, done.stderr) == (0, "")
        line = f"{src}: session {EXAMPLE_ID} (claude-code): 164 entries added, 0 already stored"
        assert len(line) > 200
        assert done.stdout == line + "\n"

        done = cli("sessions", "--db", db)
        assert (done.returncode, done.stderr) == (0, "")
        assert done.stdout.splitlines() == [
            "id\tcreated\tupdated\tentries\ttokens\tformat\ttitle\tsource",
            f"{EXAMPLE_ID}\t2026-03-02 09:14\t2026-03-02 09:32\t164\t17,926\tclaude-code\t"
            f"{EXAMPLE_TITLE}\t{src}",
        ]

    def test_inspect_prints_tab_separated_tables(self, tmp_path: Path) -> None:
        done = cli("inspect", EXAMPLE, "--top", "2")
        assert (done.returncode, done.stderr) == (0, "")
        assert done.stdout.splitlines() == [
            f"{EXAMPLE}: 17,926 tokens (estimated) in 164 messages, 90 tool calls, 90 tool results",
            "By role",
            "role\ttokens\tshare",
            "tool\t9,726\t54.3 %",
            "assistant\t7,867\t43.9 %",
            "user\t333\t1.9 %",
            "By tool",
            "tool\tcalls\tresult tokens",
            "Read\t18\t5,394",
            "Bash\t31\t2,355",
            "Edit\t25\t644",
            "Grep\t6\t479",
            "Glob\t5\t351",
            "TodoWrite\t3\t93",
            "Write\t2\t50",
            "Top consumers",
            "seq\trole\ttool\ttokens\tpreview",
            "116\ttool\tBash\t763\tExit code 1 ..F [100%] "
            "=================================== FAILURES ============",
            '128\ttool\tRead\t754\t1→"""Command line: tallyho add | split | report.""" 2→ 3→'
            "from __future__ import ",
            "Epochs",
            "epoch\tentries\tmessages\ttokens\tstate tokens\tclosed by",
            "0\t0–163\t164\t17,926\t0\t",
            # No system prompt in the transcript: the tools (declared from their calls)
            # and the message before the last one; the model the transcript records.
            "Anthropic cache breakpoints (current context, claude-sonnet-4-5-20250929: "
            "state as user turns)",
            "path\tboundary",
            "tools[6]\tlast tool",
            "messages[132].content[0]\tnewest stable message",
        ]

    def test_a_closed_pipe_ends_the_command_quietly_with_141(self) -> None:
        # the export (140 kB) is larger than a pipe's buffer: writing goes on after the
        # reader has gone
        proc = subprocess.Popen(
            [sys.executable, "-m", "ctxengine", "export", str(EXAMPLE)],
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            env=cli_env(),
        )
        assert proc.stdout is not None and proc.stderr is not None
        first = proc.stdout.readline()
        proc.stdout.close()
        code = proc.wait(timeout=60)
        assert json.loads(first)["seq"] == 0
        assert (code, proc.stderr.read()) == (141, b"")


class TestDataIsNeverMarkup:
    def test_a_file_named_with_brackets_keeps_its_name(self, tmp_path: Path) -> None:
        name = "run[bold]1.json"
        chat(tmp_path / name, "Fix the flaky test in tests/test_io.py")
        done = cli("import", name, "--db", "s.db", cwd=tmp_path)
        assert done.returncode == 0, done.stderr
        assert done.stdout.startswith(f"{name}: session ")
        done = cli("sessions", "--db", "s.db", cwd=tmp_path)
        assert done.stdout.splitlines()[1].endswith(
            "\tchat-completions\tFix the flaky test in tests/test_io.py\trun[bold]1.json"
        )
        with sqlite3.connect(tmp_path / "s.db") as conn:
            assert conn.execute("SELECT source_path FROM sessions").fetchall() == [(name,)]
        done = cli("inspect", name, cwd=tmp_path)
        assert done.stdout.startswith(f"{name}: ")

    def test_a_line_number_is_not_an_emoji_code(self, tmp_path: Path) -> None:
        lines = EXAMPLE.read_text(encoding="utf-8").splitlines(keepends=True)
        cut = tmp_path / "trunc_mid.jsonl"
        cut.write_text("".join([*lines[:99], lines[99][:50] + "\n", *lines[100:]]), "utf-8")
        done = cli("import", "trunc_mid.jsonl", "--db", "s.db", "--strict", cwd=tmp_path)
        assert done.returncode == 2
        assert done.stderr.startswith(
            "error: trunc_mid.jsonl:100: expected a JSON object, got invalid JSON ("
        )
        assert "\U0001f4af" not in done.stderr
        done = cli("import", "trunc_mid.jsonl", "--db", "s.db", cwd=tmp_path)
        assert done.returncode == 0
        assert done.stderr == "trunc_mid.jsonl: skipped 1: invalid JSON line ×1 (line 100)\n"


class TestJsonDocuments:
    def test_import(self, capsys: pytest.CaptureFixture[str], tmp_path: Path) -> None:
        bad = tmp_path / "bad.jsonl"
        bad.write_text("not json\n", encoding="utf-8")
        db = tmp_path / "s.db"
        doc = run_json(capsys, "import", str(EXAMPLE), str(bad), "--db", str(db), "--json", code=2)
        validate(doc, "import")
        assert doc["store"] == str(db)
        assert (doc["imported"], doc["failed"]) == (1, 1)
        assert doc["files"][0] == {
            "file": str(EXAMPLE),
            "ok": True,
            "session_id": EXAMPLE_ID,
            "format": "claude-code",
            "title": EXAMPLE_TITLE,
            "added": 164,
            "skipped": 0,
            "superseded": 0,
            "change": "none",
            "diverged_at": None,
            "issues": [  # records Claude Code keeps that are not messages
                {"action": "ignored", "kind": "progress", "count": 1, "first_line": 1},
                {"action": "ignored", "kind": "file-history-snapshot", "count": 7, "first_line": 2},
                {"action": "ignored", "kind": "system:turn_duration", "count": 7, "first_line": 92},
            ],
        }
        assert doc["files"][1]["ok"] is False
        assert doc["files"][1]["error"].startswith(f"{bad}: unrecognised transcript format")

    def test_sessions(self, capsys: pytest.CaptureFixture[str], tmp_path: Path) -> None:
        db = tmp_path / "s.db"
        doc = run_json(capsys, "sessions", "--db", str(db), "--json")
        validate(doc, "sessions")
        assert doc == {"store": str(db), "tokenizer": "estimate", "sessions": []}
        assert not db.exists()  # a listing never creates a store
        assert main(["import", str(EXAMPLE), "--db", str(db)]) == 0
        capsys.readouterr()
        doc = run_json(capsys, "sessions", "--db", str(db), "--json")
        validate(doc, "sessions")
        assert doc["sessions"] == [
            {
                "id": EXAMPLE_ID,
                "format": "claude-code",
                "title": EXAMPLE_TITLE,
                "created_at": "2026-03-02T09:14:08.502Z",
                "updated_at": "2026-03-02T09:32:53.580Z",
                "entries": 164,
                "tokens": EXAMPLE_TOKENS,
                "source": str(EXAMPLE),
            }
        ]

    def test_inspect_labels_every_value(self, capsys: pytest.CaptureFixture[str]) -> None:
        doc = run_json(capsys, "inspect", str(EXAMPLE), "--json", "--top", "1")
        validate(doc, "inspect")
        assert doc["tokens"] == EXAMPLE_TOKENS
        assert doc["by_tool"][0] == {"tool": "Read", "calls": 18, "result_tokens": 5_394}
        assert doc["by_role"][0] == {"role": "tool", "tokens": 9_726}
        assert doc["top"] == [
            {
                "entry_id": doc["top"][0]["entry_id"],
                "seq": 116,
                "role": "tool",
                "tool": "Bash",
                "tokens": 763,
                "preview": "Exit code 1 ..F [100%] "
                "=================================== FAILURES ============",
            }
        ]
        assert doc["epochs"] == [
            {
                "index": 0,
                "start_seq": 0,
                "end_seq": 163,
                "messages": 164,
                "tokens": EXAMPLE_TOKENS,
                "state_tokens": 0,
                "closed_by": None,
            }
        ]
        assert doc["cache_breakpoints"] == [
            {"path": "tools[6]", "boundary": "last tool"},
            {"path": "messages[132].content[0]", "boundary": "newest stable message"},
        ]

    def test_compact_report_and_plan(
        self, capsys: pytest.CaptureFixture[str], tmp_path: Path
    ) -> None:
        out = tmp_path / "request.json"
        argv = ["compact", str(EXAMPLE), "--window", "16000", "--json"]
        doc = run_json(capsys, *argv, "-o", str(out))
        validate(doc, "compact")
        # 503 tokens under what it would be without the 7 tools the session calls, which
        # every request declares.
        assert doc["keep_recent"] == {"asked": None, "used": 2_656, "why": ""}
        assert doc["tokens_after"] < 16_000
        plan = run_json(capsys, *argv, "--plan")
        validate(plan, "compact")
        assert plan["note"] == ""
        assert plan["plan"]["attempts"][0]["keep_recent"] == 2_656

    def test_compact_keep_recent_typed_and_used(
        self, capsys: pytest.CaptureFixture[str], tmp_path: Path
    ) -> None:
        argv = ["compact", str(EXAMPLE), "--window", "16000", "--keep-recent", "9000", "--json"]
        doc = run_json(capsys, *argv, "-o", str(tmp_path / "r.json"))
        validate(doc, "compact")
        used = doc["outcome"]["plan"]["attempts"][doc["outcome"]["attempt"]]["keep_recent"]
        assert doc["keep_recent"] == {
            "asked": 9_000,
            "used": used,
            "why": "lowered so the kept tail and the continuation state fit the 16,000-token "
            "window's target",
        }
        assert used < 9_000

    def test_replay(self, capsys: pytest.CaptureFixture[str]) -> None:
        doc = run_json(capsys, "replay", str(EXAMPLE), "--window", "16000", "--json")
        validate(doc, "replay")
        assert doc["invalid"] == 0
        assert doc["calls"] == len(doc["steps"])

    def test_export(self, capsys: pytest.CaptureFixture[str], tmp_path: Path) -> None:
        out = tmp_path / "log.jsonl"
        doc = run_json(capsys, "export", str(EXAMPLE), "-o", str(out), "--json")
        validate(doc, "export")
        assert doc == {
            "source": str(EXAMPLE),
            "session_id": EXAMPLE_ID,
            "format": "jsonl",
            "tokenizer": None,
            "output": str(out),
            "entries": 164,
            "messages": None,
            "tokens": None,
            "bytes": out.stat().st_size,
        }
        assert main(["export", str(EXAMPLE), "--format", "openai", "--json"]) == 0
        captured = capsys.readouterr()
        body = json.loads(captured.out)  # the export on stdout, the document on stderr
        doc = json.loads(captured.err)
        validate(doc, "export")
        assert doc["messages"] == len(body["messages"])
        assert (doc["output"], doc["tokenizer"]) == ("-", "estimate")

    def test_bench(self, capsys: pytest.CaptureFixture[str]) -> None:
        doc = run_json(capsys, "bench", "--sessions", "1", "--k", "1", "--json")
        validate(doc, "bench")
        assert doc["ks"] == [1]


class TestSessions:
    def test_a_title_is_never_a_bare_acknowledgement(
        self, capsys: pytest.CaptureFixture[str], tmp_path: Path
    ) -> None:
        db = tmp_path / "s.db"
        chat(tmp_path / "a.json", "continue", "Fix the login bug in auth.py", "ok")
        chat(tmp_path / "b.json", "yes", "ok", "continue")
        assert (
            main(["import", str(tmp_path / "a.json"), str(tmp_path / "b.json"), "--db", str(db)])
            == 0
        )
        with SQLiteStore(db) as store:
            assert [s.title for s in store.sessions()] == ["continue", "yes"]
        capsys.readouterr()
        doc = run_json(capsys, "sessions", "--db", str(db), "--json")
        assert [s["title"] for s in doc["sessions"]] == ["Fix the login bug in auth.py", ""]

    def test_an_empty_or_missing_store_says_so_and_creates_nothing(self, tmp_path: Path) -> None:
        db = tmp_path / "new.db"
        done = cli("sessions", "--db", db)
        assert (done.returncode, done.stdout) == (0, "")
        assert done.stderr == f"note: no sessions stored in {db}\n"
        assert list(tmp_path.iterdir()) == []

    def test_any_session_id_is_addressed_with_session(
        self, capsys: pytest.CaptureFixture[str], tmp_path: Path
    ) -> None:
        db = tmp_path / "s.db"
        sid = "team/run-1.json"
        live = Session(128_000, store=SQLiteStore(db), session_id=sid)
        live.append(Message("user", (TextPart("Rename the config loader."),)))
        live.append(Message("assistant", (TextPart("Renamed it."),)))
        assert main(["inspect", sid, "--db", str(db)]) == 2
        assert capsys.readouterr().err == f"error: {sid}: file not found\n"
        doc = run_json(capsys, "inspect", "--session", sid, "--db", str(db), "--json")
        assert (doc["session_id"], doc["counts"]["message"]) == (sid, 2)
        assert main(["export", "--session", sid, "--db", str(db)]) == 0
        lines = capsys.readouterr().out.splitlines()
        assert [json.loads(line)["session_id"] for line in lines] == [sid, sid]
        assert main(["inspect", "x.json", "--session", sid, "--db", str(db)]) == 2
        assert "give a transcript file or --session ID, not both" in capsys.readouterr().err


class TestCompactOutput:
    def test_the_report_goes_to_stderr_when_the_body_goes_to_stdout(self) -> None:
        done = cli("compact", EXAMPLE, "--window", "16000", "-o", "-")
        assert done.returncode == 0
        body = json.loads(done.stdout)
        assert len(body["messages"]) > 2
        assert done.stderr.startswith(f"{EXAMPLE} → openai request, window 16,000 (trigger ")
        assert "truncated tool results: " in done.stderr

    def test_without_output_the_report_says_the_body_was_not_written(self) -> None:
        done = cli("compact", EXAMPLE, "--window", "16000")
        assert done.returncode == 0
        assert done.stdout.startswith(f"{EXAMPLE} → openai request")
        assert done.stderr == (
            "note: the request body was not written: give -o FILE (or -o - for stdout)\n"
        )

    def test_a_keep_recent_budget_over_the_trigger_names_the_value_typed(
        self, capsys: pytest.CaptureFixture[str]
    ) -> None:
        argv = ["compact", str(EXAMPLE), "--keep-recent", "50000", "--window", "16000"]
        assert main(argv) == 2
        assert " ".join(capsys.readouterr().err.split()).endswith(
            "Invalid value for --keep-recent: 50,000 tokens leaves nothing to compact: a "
            "16,000-token window compacts at 12,800 tokens (reserve 3,200); give less than "
            "12,800"
        )


def test_control_characters_in_data_reach_no_terminal_and_no_pipe(tmp_path: Path) -> None:
    source = tmp_path / "escapes.json"
    messages = [
        {"role": "user", "content": "Make the banner \x1b[31mred\x1b[0m\rnow\x07"},
        {"role": "assistant", "content": "Done."},
    ]
    source.write_text(json.dumps({"messages": messages}), encoding="utf-8")
    run = cli("inspect", source)
    assert run.returncode == 0, run.stderr
    assert "\x1b" not in run.stdout and "\r" not in run.stdout and "\x07" not in run.stdout
    # (a table cell shows a carriage return as a space, as it does a newline)
    assert "Make the banner ␛[31mred␛[0m now␇" in run.stdout


def test_inert_keeps_tabs_newlines_and_every_offset() -> None:
    from ctxengine.cli.output import inert

    assert inert("a\tb\nc\x1b[0m\x7f\x9b") == "a\tb\nc␛[0m␡\ufffd"
    assert len(inert("\x00\x1f")) == 2


def test_compact_reports_a_result_truncated_before_the_compaction(tmp_path: Path) -> None:
    """A tool result truncated in the context and then summarized is named as truncated
    before the compaction, not left out of the report."""
    big = "line of a large output\n" * 20_000
    log = [
        {"role": "system", "content": "sys"},
        {"role": "user", "content": "do it"},
        {
            "role": "assistant",
            "content": None,
            "tool_calls": [
                {
                    "id": "c1",
                    "type": "function",
                    "function": {"name": "bash", "arguments": '{"cmd":"cat big"}'},
                }
            ],
        },
        {"role": "tool", "tool_call_id": "c1", "content": big},
        {"role": "assistant", "content": "done"},
    ]
    src = tmp_path / "big.json"
    src.write_text(json.dumps(log))
    out = tmp_path / "request.json"
    plain = cli("compact", src, "--window", "200000", "-o", out)
    assert plain.returncode == 0, plain.stderr
    assert "truncated tool results: 0 (1 before the compaction); pruned tool results: 0" in (
        plain.stdout + plain.stderr
    )
    second = cli("compact", src, "--window", "200000", "-o", tmp_path / "again.json", "--json")
    assert second.returncode == 0, second.stderr
    report = json.loads(second.stdout)
    validate(report, "compact")
    assert report["truncated"] == []
    assert [(t["call_id"], t["part"]) for t in report["truncated_before"]] == [
        ("c1", "tool_result")
    ]
