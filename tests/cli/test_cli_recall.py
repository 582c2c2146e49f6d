"""``ctxengine recall``: exact excerpts from a session's whole history, as text in a pipe and
as JSON (schemas/recall.json); a stored session by id; bad input exits 2."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from cli_helpers import EXAMPLE, EXAMPLE_ID, cli, validate

from ctxengine.cli import main

#: The traceback of the example session's crash (entry 81, a Bash result).
CRASH = (
    "10:     fair = total // len(rows)\n"
    "11:            ~~~~~~^^~~~~~~~~~~\n"
    "12: ZeroDivisionError: integer division or modulo by zero"
)


def test_json_names_the_entry_line_and_excerpt(capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["recall", str(EXAMPLE), "ZeroDivisionError: integer division", "--json"]) == 0
    doc = json.loads(capsys.readouterr().out)
    validate(doc, "recall")
    assert (doc["session_id"], doc["matched"], doc["shown"]) == (EXAMPLE_ID, 1, 1)
    (hit,) = doc["hits"]
    assert hit == {
        "entry_id": "9cdab2ec-4ff6-450a-ba08-60aaf060fcd3",
        "seq": 81,
        "kind": "tool_result",
        "role": "tool",
        "tool": "Bash",
        "call_id": "toolu_01SRJ1Lu7aRiPRdKzoi3cwBc",
        "line": 12,
        "excerpt": CRASH,
        "tokens": doc["tokens"],
        "next_line": None,
        "session_id": EXAMPLE_ID,
    }


def test_json_says_where_an_entry_read_whole_goes_on(capsys: pytest.CaptureFixture[str]) -> None:
    crash = "9cdab2ec-4ff6-450a-ba08-60aaf060fcd3"
    argv = ["recall", str(EXAMPLE), "--entry", crash, "--budget", "40", "--json"]
    assert main(argv) == 0
    doc = json.loads(capsys.readouterr().out)
    validate(doc, "recall")
    (hit,) = doc["hits"]
    assert hit["next_line"] == 3
    assert hit["excerpt"] == (
        "1: Exit code 1\n2: Traceback (most recent call last):\n"
        "… lines 3–12 not shown: ask again with from_line 3"
    )
    argv = ["recall", str(EXAMPLE), "--entry", crash, "--from-line", "3", "--json"]
    assert main(argv) == 0
    doc = json.loads(capsys.readouterr().out)
    validate(doc, "recall")
    (rest,) = doc["hits"]
    assert rest["next_line"] is None
    assert rest["excerpt"].startswith("3: ")
    assert rest["excerpt"].splitlines()[-1] == CRASH.splitlines()[-1]


def test_plain_text_says_the_option_that_goes_on() -> None:
    crash = "9cdab2ec-4ff6-450a-ba08-60aaf060fcd3"
    run = cli("recall", EXAMPLE, "--entry", crash, "--budget", "40")
    assert run.returncode == 0, run.stderr
    assert run.stdout.splitlines()[-1] == "… lines 3–12 not shown: ask again with --from-line 3"


def test_plain_text_in_a_pipe_newest_first_with_the_count_left_out() -> None:
    run = cli("recall", EXAMPLE, "ZeroDivisionError", "--budget", "60")
    assert run.returncode == 0, run.stderr
    lines = run.stdout.splitlines()
    assert lines[0].startswith("3 matches for 'ZeroDivisionError' (newest first; 1 shown, ")
    assert lines[2] == "[8cea4067-ce1a-4c3e-b79b-83920fe8ce75 · seq 143 · call of Edit] line 10:"
    assert lines[-1] == (
        "2 more not shown (budget 60 tokens): narrow the query (a longer text, a regex, a "
        "path, a tool or an entry range)."
    )


def test_filters_and_order(capsys: pytest.CaptureFixture[str]) -> None:
    argv = ["recall", str(EXAMPLE), "ZeroDivisionError", "--tool", "Bash", "--json"]
    assert main(argv) == 0
    assert [h["seq"] for h in json.loads(capsys.readouterr().out)["hits"]] == [81]
    argv = ["recall", str(EXAMPLE), "ZeroDivisionError", "--oldest-first", "--json"]
    assert main(argv) == 0
    assert [h["seq"] for h in json.loads(capsys.readouterr().out)["hits"]] == [79, 81, 143]
    argv = ["recall", str(EXAMPLE), "ZeroDivisionError", "--from", "80", "--to", "100", "--json"]
    assert main(argv) == 0
    assert [h["seq"] for h in json.loads(capsys.readouterr().out)["hits"]] == [81]
    assert main(["recall", str(EXAMPLE), r"Zero\w+Error: \w+", "--regex", "--json"]) == 0
    assert json.loads(capsys.readouterr().out)["matched"] == 1


def test_a_stored_session_by_id(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    db = tmp_path / "store.db"
    assert main(["import", str(EXAMPLE), "--db", str(db)]) == 0
    capsys.readouterr()
    assert main(["recall", "--session", EXAMPLE_ID[:8], "modulo by zero", "--db", str(db)]) == 0
    out = capsys.readouterr().out
    assert out.startswith("1 match for 'modulo by zero' (newest first; 1 shown, ")
    assert CRASH in out


@pytest.mark.parametrize(
    ("args", "message"),
    [
        (["("], "recall: invalid regular expression '('"),
        ([], "recall: give a text, a path, a tool, a role, an entry or a range"),
    ],
)
def test_bad_queries_exit_2_with_the_reason(args: list[str], message: str) -> None:
    run = cli("recall", EXAMPLE, *args, "--regex")
    assert run.returncode == 2
    assert message in run.stderr
    assert run.stdout == ""


def test_an_entry_id_the_session_does_not_hold_exits_2_naming_it() -> None:
    run = cli("recall", EXAMPLE, "--entry", "no-such-entry")
    assert (run.returncode, run.stdout) == (2, "")
    assert "no entry 'no-such-entry' in this session's history" in run.stderr
    found = cli("recall", EXAMPLE, "--entry", "9cdab2ec-4ff6-450a-ba08-60aaf060fcd3")
    assert found.returncode == 0 and CRASH in found.stdout
