#!/usr/bin/env python3
"""Write ``examples/session.jsonl``: a Claude Code session in its JSONL form (the file Claude
Code keeps under ``~/.claude/projects/<dir>/<session>.jsonl``).

The session: in a small Python project (``tallyho``, split shared expenses), a user asks the
assistant to fix a rounding bug and add a ``--currency`` option, then more work over several
turns. The assistant reads, greps, runs tests (some runs fail with real tracebacks), edits and
writes files, issues parallel tool calls, thinks with signed thinking blocks, and respects the
user's constraints ("never touch the migrations folder", "don't push"). Every line is written
the way Claude Code writes it: one line per content block with a shared ``message.id``, tool
results as user lines with ``toolUseResult``, hook progress, file-history snapshots and
turn-duration records in between.

Deterministic: ids, signatures and timestamps derive from fixed seeds, so running it twice
writes the same bytes. Usage::

    python tests/example_session/make_session.py [OUT]   # default: examples/session.jsonl
"""

from __future__ import annotations

import sys
from pathlib import Path

import tallyho_edits as edits
import tallyho_talk as outputs
from claude_jsonl import Session, Todos, bash, edit, glob, grep, new_uuid, read, write


def story(s: Session) -> None:
    """The conversation (texts and outputs from :mod:`tallyho_talk`)."""
    o, e, todo = outputs, edits, Todos()
    s.hook("SessionStart", "~/.claude/hooks/notify.sh session-start", new_uuid("hook", 1))
    s.prompt(o.PROMPT_1, pause=3.0)
    s.reply(
        "I'll start by getting an overview of the project.",
        glob("**/*.py"),
        read("README.md"),
        read("pyproject.toml"),
        bash(
            "git status --short && git log --oneline -5",
            "Show git status and recent commits",
            o.GIT_LOG_START,
        ),
        thinking=o.THINK_1,
    )
    s.reply(
        "Let me read the split and money modules.",
        read("src/tallyho/split.py"),
        read("src/tallyho/money.py"),
        read("src/tallyho/__init__.py"),
        interleaved=True,
    )
    s.reply(
        "",
        grep(r"split_evenly|split_by_weights"),
        read("tests/test_split.py"),
        read("tests/test_money.py"),
    )
    s.reply("", bash("python -m pytest -q", "Run the test suite", o.pytest_ok(11), seconds=1.8))
    s.reply(
        "All 11 tests pass. Let me reproduce the rounding problem directly.",
        bash(o.REPRO_CMD, "Reproduce the 100/3 split", o.REPRO_OUT, seconds=0.3),
    )
    s.reply(o.SAY_REPRODUCED, todo(*o.TODOS_1))
    s.reply("", edit("tests/test_split.py", *e.TEST_ADDS_UP))
    s.reply(
        "",
        bash(
            "python -m pytest tests/test_split.py -q",
            "Run the split tests",
            o.fail_adds_up(s.fs),
            code=1,
            seconds=1.2,
        ),
    )
    s.reply(
        o.SAY_FIX,
        edit("src/tallyho/split.py", *e.SPLIT_IMPORTS),
        edit("src/tallyho/split.py", *e.SPLIT_EVENLY),
    )
    s.reply(
        "",
        bash(
            "python -m pytest tests/test_split.py -q",
            "Run the split tests",
            o.pytest_ok(4),
            seconds=1.1,
        ),
    )
    s.reply(
        "Passing. A few more edge cases: one cent among three, and an amount that does not "
        "divide evenly into seven.",
        edit("tests/test_split.py", *e.TEST_EDGES),
    )
    s.reply(
        "",
        bash(
            "python -m pytest tests/test_split.py -q",
            "Run the split tests",
            o.pytest_ok(7),
            seconds=1.1,
        ),
    )
    s.reply("", todo(*o.TODOS_2))
    s.reply(
        "Now the `--currency` option. Let me look at the CLI and check where currency is "
        "already mentioned.",
        read("src/tallyho/cli.py"),
        read("tests/test_cli.py"),
        grep("currency", files_only=True),
        glob("migrations/*"),
    )
    s.reply(o.SAY_MIGRATIONS, edit("src/tallyho/money.py", *e.FORMAT_AMOUNT))
    s.reply(
        "",
        edit("src/tallyho/cli.py", *e.CLI_IMPORT_FORMAT),
        edit("src/tallyho/cli.py", *e.CLI_CURRENCY_ARG),
        edit("src/tallyho/cli.py", *e.CLI_CURRENCY_PRINT),
    )
    s.reply("", write("tests/test_format.py", e.TEST_FORMAT))
    s.reply(
        "", bash("python -m pytest -q", "Run the test suite", o.fail_jpy(s.fs), code=1, seconds=1.9)
    )
    s.reply(o.SAY_YEN, edit("src/tallyho/money.py", *e.DECIMALS), thinking=o.THINK_YEN)
    s.reply("", bash("python -m pytest -q", "Run the test suite", o.pytest_ok(19), seconds=1.8))
    s.reply(
        "",
        bash("python -m tallyho.cli split 100 3 --currency USD", "Try the new option", o.SPLIT_USD),
        bash("ruff check src tests", "Lint", "All checks passed!"),
        bash("mypy src", "Type-check", o.MYPY_OK, seconds=2.4),
    )
    s.reply(
        "", todo(*o.TODOS_3), bash("git diff --stat", "Summarise the changes", o.diff_stat(s.fs))
    )
    s.reply(o.SUMMARY_1)
    s.end_turn()

    s.prompt(o.PROMPT_2, pause=140)
    s.reply(
        "Yes, it rounds each share on its own. I'll route it through the same allocation.",
        read("src/tallyho/split.py"),
        read("CHANGELOG.md"),
        thinking=o.THINK_2,
    )
    s.reply("", edit("src/tallyho/split.py", *e.SPLIT_WEIGHTS))
    s.reply("", edit("tests/test_split.py", *e.TEST_WEIGHTS))
    s.reply(
        "",
        bash(
            "python -m pytest tests/test_split.py -q",
            "Run the split tests",
            o.pytest_ok(8),
            seconds=1.1,
        ),
    )
    s.reply("", grep("^## ", glob_="CHANGELOG.md"))
    s.reply("", edit("CHANGELOG.md", *e.CHANGELOG_1))
    s.reply("", bash("python -m pytest -q", "Run the test suite", o.pytest_ok(20), seconds=1.8))
    s.reply(o.SUMMARY_2)
    s.end_turn()

    s.prompt(o.PROMPT_3, pause=95)
    s.reply(
        "Let me reproduce it with an empty database first.",
        bash(
            o.EMPTY_REPORT_CMD,
            "Run report on an empty database",
            o.zero_division(s.fs),
            code=1,
            seconds=0.5,
        ),
    )
    s.reply(
        "",
        read("src/tallyho/ledger.py"),
        read("tests/test_ledger.py"),
        read("tests/conftest.py"),
        glob("migrations/*.sql"),
        interleaved=True,
    )
    s.reply("", grep(r"balances\("))
    s.reply("", glob("src/tallyho/*.py"))
    s.reply(o.SAY_EMPTY, edit("src/tallyho/ledger.py", *e.LEDGER_EMPTY))
    s.reply("", edit("src/tallyho/cli.py", *e.CLI_EMPTY_REPORT))
    s.reply("", edit("tests/test_ledger.py", *e.TEST_LEDGER_EMPTY))
    s.reply("", bash("python -m pytest -q", "Run the test suite", o.pytest_ok(21), seconds=1.8))
    s.reply(
        "",
        bash(o.EMPTY_REPORT_CMD, "Run report on an empty database", o.EMPTY_REPORT_OUT),
        bash("git status --short", "Check which files changed", o.git_status(s.fs)),
    )
    s.reply(o.SUMMARY_3)
    s.end_turn()

    s.prompt(o.PROMPT_4, pause=210)
    s.reply("", read("src/tallyho/cli.py"), grep("^import json", glob_="src/**"))
    s.reply(
        "",
        edit("src/tallyho/cli.py", *e.CLI_JSON_IMPORT),
        edit("src/tallyho/cli.py", *e.CLI_JSON_ARG),
        interleaved=True,
    )
    s.reply("", edit("src/tallyho/cli.py", *e.CLI_JSON_PRINT))
    s.reply(
        "",
        edit("tests/test_cli.py", *e.TEST_CLI_JSON_IMPORT),
        edit("tests/test_cli.py", *e.TEST_CLI_JSON),
        interleaved=True,
    )
    s.reply(
        "",
        bash(
            "python -m pytest tests/test_cli.py -q",
            "Run the CLI tests",
            o.fail_json(s.fs),
            code=1,
            seconds=1.3,
        ),
    )
    s.reply(o.SAY_DECIMAL_JSON, edit("src/tallyho/cli.py", *e.CLI_JSON_FIX))
    s.reply("", bash("python -m pytest -q", "Run the test suite", o.pytest_ok(22), seconds=1.8))
    s.reply("", bash("jq --version", "Check that jq is installed", "jq-1.7.1"))
    s.reply("", bash(o.JSON_DEMO_CMD, "Try report --json", o.JSON_DEMO_OUT, seconds=0.7))
    s.reply(o.SUMMARY_4)
    s.end_turn()

    s.prompt(o.PROMPT_5, pause=75)
    s.reply("", read("src/tallyho/cli.py"), thinking=o.THINK_3)
    s.reply("", grep("split_by_weights", glob_="tests/*", files_only=True))
    s.reply(
        "",
        edit("src/tallyho/cli.py", *e.CLI_WEIGHTS_IMPORT),
        edit("src/tallyho/cli.py", *e.CLI_WEIGHTS_ARG),
        edit("src/tallyho/cli.py", *e.CLI_WEIGHTS_USE),
    )
    s.reply("", write("tests/test_cli_weights.py", e.TEST_CLI_WEIGHTS))
    s.reply("", bash("python -m pytest -q", "Run the test suite", o.pytest_ok(25), seconds=1.9))
    s.reply(
        "",
        bash(
            "python -m tallyho.cli split 100 3 --weights 1,1,2",
            "Try --weights",
            o.SPLIT_WEIGHTS_OUT,
        ),
        bash("ruff check src tests", "Lint", "All checks passed!"),
        bash("mypy src", "Type-check", o.MYPY_OK, seconds=2.2),
    )
    s.reply("", edit("CHANGELOG.md", *e.CHANGELOG_2))
    s.reply(o.SUMMARY_5)
    s.end_turn()

    s.prompt(o.PROMPT_6, pause=160)
    s.reply(
        "",
        glob("migrations/*.sql"),
        read("migrations/0001_init.sql"),
        read("migrations/0002_payer_index.sql"),
    )
    s.reply(o.ANSWER_6)
    s.end_turn()

    s.prompt(o.PROMPT_7, pause=50)
    s.reply("", bash("git status --short", "Check the working tree", o.git_status(s.fs)))
    s.reply("", bash("git diff --stat", "Summarise the changes", o.diff_stat(s.fs)))
    s.reply("", bash("git branch -vv", "Check the branch and its upstream", o.BRANCH_VV))
    s.reply("", bash(o.COMMIT_CMD, "Commit the changes", o.commit_output(s.fs), seconds=0.6))
    s.reply(
        "",
        bash(
            "git log --oneline -3 && git status -sb | head -1", "Show the new commit", o.LOG_AFTER
        ),
    )
    s.reply(o.SUMMARY_7)
    s.end_turn()


def main(argv: list[str]) -> int:
    default = Path(__file__).resolve().parents[2] / "examples" / "session.jsonl"
    out = Path(argv[1]) if len(argv) > 1 else default
    session = Session()
    story(session)
    out.write_text(session.dump(), encoding="utf-8")
    print(f"wrote {out} ({len(session.records)} lines, {out.stat().st_size:,} bytes)")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
