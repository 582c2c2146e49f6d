"""The messages kept verbatim after a cut are evidence for the continuation state: an error of
the summarized range that they fix is fixed in the state, in its next step and in its stored
ledgers, though none of their own facts is listed; and a failed shell command retried right
after asking no more of it (:func:`~ctxengine.summarizers.runs.narrows`) counts as fixed."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest
from summarizer_helpers import QuarterEstimator

from corpus import CORPUS, require_corpus
from ctxengine.engine import Session
from ctxengine.model import (
    CompactionRecord,
    ErrorFact,
    Ledgers,
    Message,
    ToolCallPart,
    assistant,
    tool_result,
    user,
)
from ctxengine.model.facts import settle_errors
from ctxengine.policy import DEFAULT_POLICY
from ctxengine.summarizers import ExtractiveSummarizer, Summary, SummaryRequest
from ctxengine.summarizers.anchor import settled_ledgers
from ctxengine.summarizers.ledgers import extract_ledgers, ledgers_and_evidence
from ctxengine.summarizers.runs import invocations, narrows
from hand_estimator import HandEstimator

EST = HandEstimator()
GOAL = "Style the session status badges in assets/app.css and commit the work."
IGNORED = "The following paths are ignored by one of your .gitignore files: priv/static/app.css"
CHECK = (
    "No later request. Next: check the goal above against Done and Current work, and do what "
    "is not done yet."
)


def bash(cid: str, command: str) -> ToolCallPart:
    return ToolCallPart(cid, "Bash", json.dumps({"command": command}))


def section(text: str, heading: str) -> str:
    """The body of ``## heading`` in ``text`` (``""`` when absent)."""
    _, found, rest = text.partition(f"## {heading}\n")
    return rest.split("\n\n## ", 1)[0].split("\n## ", 1)[0] if found else ""


def badge_session(goal: str = GOAL) -> Session:
    """A read, an edit, a commit git refuses (an ignored path), the commit retried without
    that path, and a reply: 475 tokens; a 80-token keep-recent budget keeps the retry on."""
    policy = DEFAULT_POLICY.model_copy(update={"keep_recent_tokens": 80})
    s = Session(8_000, estimator=EST, policy=policy)
    s.append(user(goal), entry_id="goal")
    read = ToolCallPart("r1", "Read", json.dumps({"file_path": "/repo/assets/app.css"}))
    s.append(assistant("Reading the stylesheet.", read), entry_id="read")
    s.append(tool_result("r1", ".badge { color: gray; }\n" * 40), entry_id="css")
    edit = {"file_path": "/repo/assets/app.css", "old_string": "gray", "new_string": "green"}
    s.append(assistant("", ToolCallPart("e1", "Edit", json.dumps(edit))), entry_id="edit")
    s.append(tool_result("e1", "The file /repo/assets/app.css has been updated."), entry_id="ok")
    add = "git add lib/badge.ex priv/static/app.css && git commit -m 'Style the badges'"
    s.append(assistant("", bash("c1", add)), entry_id="add")
    refused = (
        "Exit code 1\nThe following paths are ignored by one of your .gitignore files:\n"
        "priv/static/app.css\nhint: Use -f if you really want to add them."
    )
    s.append(tool_result("c1", refused, is_error=True), entry_id="refused")
    retry = bash("c2", "git add lib/badge.ex && git commit -m 'Style the badges'")
    note = "priv/static/app.css is ignored; committing the rest."
    s.append(assistant(note, retry), entry_id="retry")
    committed = "[main 1a2b3c4] Style the badges\n 1 file changed, 2 insertions(+)"
    s.append(tool_result("c2", committed), entry_id="committed")
    s.append(assistant("Committed the badge styles."), entry_id="reply")
    return s


def records(s: Session) -> list[CompactionRecord]:
    return [e.body for e in s.entries if isinstance(e.body, CompactionRecord)]


class TestTheKeptTailFixesTheStatesErrors:
    def test_a_retry_the_cut_leaves_in_the_tail_fixes_the_refused_commit(self) -> None:
        s = badge_session()
        assert [EST.message(e.body) for e in s.entries] == [22, 22, 246, 27, 17, 29, 41, 38, 22, 11]
        s.compact()
        [record] = records(s)
        assert (record.first_kept_id, record.tokens_before, record.tokens_after) == (
            "retry",
            475,
            303,
        )
        assert section(record.summary, "Errors") == f"- fixed: {IGNORED}"
        assert section(record.summary, "Next step") == CHECK
        assert "Open errors" not in record.summary
        # the tail's own facts are not listed: its commit is not a done step, its command
        # is not run before the cut
        assert section(record.summary, "Done") == "- edited /repo/assets/app.css"
        assert section(record.summary, "Commands run") == (
            "- git add lib/badge.ex priv/static/app.css && git commit -m 'Style the badges'"
        )
        [error] = record.ledgers.error_facts
        assert (error.text, error.status, error.command) == (
            IGNORED,
            "fixed",
            "git add lib/badge.ex priv/static/app.css && git commit -m 'Style the badges'",
        )

    def test_without_the_tail_the_error_is_open_and_the_next_step(self) -> None:
        s = badge_session()
        messages = tuple(e.body for e in s.entries[:7])  # up to the refused commit
        request = SummaryRequest(messages, None, GOAL, 2_000)  # type: ignore[arg-type]
        summary = ExtractiveSummarizer(user_messages_budget=200).summarize(request, EST)
        assert section(summary.text, "Errors") == f"- open: {IGNORED}"
        assert section(summary.text, "Next step") == (
            f"No later request. Next: resolve the latest open error: {IGNORED}\n"
            "Open errors to resolve: 1 (listed under Errors)."
        )

    def test_the_next_compaction_does_not_bring_the_error_back(self) -> None:
        s = badge_session()
        s.compact()
        s.append(user("Now add a test for the badge."), entry_id="u2")
        s.append(assistant("Adding test/badge_test.exs."), entry_id="a2")
        s.compact()
        _, second = records(s)
        # the retry is now summarized, the refused commit only in the carried ledgers
        assert second.first_kept_id == "reply"
        [error] = second.ledgers.error_facts
        assert (error.text, error.status) == (IGNORED, "fixed")
        assert section(second.summary, "Errors") == f"- fixed: {IGNORED}"
        assert "Open errors" not in second.summary

    def test_in_the_state_s_language(self) -> None:
        s = badge_session("给会话状态徽章加样式（assets/app.css），然后提交。")
        s.compact()
        [record] = records(s)
        assert section(record.summary, "错误") == (
            "- 已修复: The following paths are ignored by one of your .gitignore files: "
            "priv/static/app.css"
        )
        assert section(record.summary, "下一步") == (
            "之后没有新的请求。下一步：对照“已完成”和“当前工作”检查上面的目标，完成尚未完成的部分。"
        )


def _ran(cid: str, command: str, output: str, *, failed: bool = False) -> tuple[Message, ...]:
    return (assistant("", bash(cid, command)), tool_result(cid, output, is_error=failed))


FAILED_TEST = "FAILED tests/test_badge.py::test_color - AssertionError: 'gray' != 'green'"
PYTEST_FAILS = _ran(
    "p1",
    "pytest tests/test_badge.py",
    f"Exit code 1\n{FAILED_TEST}\n1 failed, 2 passed in 0.04s",
    failed=True,
)


def _state(
    messages: tuple[Message, ...], kept: tuple[Message, ...], previous: CompactionRecord | None
) -> Summary:
    request = SummaryRequest(messages, previous, GOAL, 2_000, kept=kept)
    return ExtractiveSummarizer(user_messages_budget=200).summarize(request, QuarterEstimator())


class TestEvidence:
    def test_the_same_test_passing_in_the_tail_fixes_it_and_is_not_listed(self) -> None:
        kept = _ran("p2", "pytest tests/test_badge.py", "3 passed in 0.03s")
        summary = _state((user(GOAL), *PYTEST_FAILS), kept, None)
        assert (
            section(summary.text, "Errors")
            == f"- fixed: {FAILED_TEST} — `pytest tests/test_badge.py`"
        )
        assert section(summary.text, "Done") == ""
        assert section(summary.text, "Next step") == CHECK

    def test_a_failure_the_tail_reports_again_stays_open(self) -> None:
        kept = _ran(
            "p2",
            "pytest tests/test_badge.py",
            f"Exit code 1\n{FAILED_TEST}\n1 failed, 2 passed in 0.04s",
            failed=True,
        )
        summary = _state((user(GOAL), *PYTEST_FAILS), kept, None)
        assert (
            section(summary.text, "Errors")
            == f"- open: {FAILED_TEST} — `pytest tests/test_badge.py`"
        )
        assert "Open errors to resolve: 1 (listed under Errors)." in summary.text

    def test_a_failure_fixed_then_broken_again_in_the_tail_stays_open(self) -> None:
        kept = (
            *_ran("p2", "pytest tests/test_badge.py", "3 passed in 0.03s"),
            *_ran(
                "p3",
                "pytest tests/test_badge.py",
                f"Exit code 1\n{FAILED_TEST}\n1 failed, 2 passed in 0.04s",
                failed=True,
            ),
        )
        summary = _state((user(GOAL), *PYTEST_FAILS), kept, None)
        [error] = summary.ledgers.error_facts
        assert error.status == "open"

    def test_an_error_carried_from_the_previous_compaction(self) -> None:
        carried = ErrorFact("main.c:3:1: error: expected ';'", "open", 4, "make build")
        previous = CompactionRecord(
            summary="(earlier)",
            first_kept_id="x",
            tokens_before=1_000,
            tokens_after=100,
            policy="default",
            summarizer="extractive",
            reason="threshold",
            ledgers=Ledgers(goal=GOAL, error_facts=(carried,)),
        )
        range_ = (assistant("Fixing main.c."),)
        kept = _ran("m2", "make build", "cc -c main.c\ncc -o app main.o")
        summary = _state(range_, kept, previous)
        assert [(e.text, e.status) for e in summary.ledgers.error_facts] == [
            ("main.c:3:1: error: expected ';'", "fixed")
        ]
        # without the tail, still open
        assert [e.status for e in _state(range_, (), previous).ledgers.error_facts] == ["open"]

    def test_a_rerun_in_the_tail_that_stops_elsewhere_fixes_it(self) -> None:
        failed = _ran(
            "m1",
            "make build",
            "Exit code 2\nmain.c:3:1: error: expected ';' before '}' token\n"
            "make: *** [Makefile:4: main.o] Error 1",
            failed=True,
        )
        kept = _ran(
            "m2",
            "make build",
            "Exit code 2\nutil.c:9:5: error: 'n' undeclared\n"
            "make: *** [Makefile:4: util.o] Error 1",
            failed=True,
        )
        summary = _state((user(GOAL), *failed), kept, None)
        assert section(summary.text, "Errors") == (
            "- fixed: main.c:3:1: error: expected ';' before '}' token — `make build`"
        )

    def test_settle_errors_adds_nothing_and_keeps_the_order(self) -> None:
        a = ErrorFact("a failed", "open", 1, "make a")
        b = ErrorFact("b failed", "open", 2, "make b")
        c = ErrorFact("c failed", "fixed", 3, "make c")
        later = (ErrorFact("b failed", "fixed", 9, "make b", fixed_by=11),)
        out = settle_errors((a, b, c), later, ("cmd:make a", "cmd:make z"))
        assert [(e.text, e.status, e.fixed_by) for e in out] == [
            ("a failed", "fixed", None),
            ("b failed", "fixed", 11),
            ("c failed", "fixed", None),
        ]

    def test_the_settled_ledgers_name_the_errors_the_tail_fixed(self) -> None:
        kept = _ran("p2", "pytest tests/test_badge.py", "3 passed in 0.03s")
        request = SummaryRequest((user(GOAL), *PYTEST_FAILS), None, GOAL, 2_000, kept=kept)
        ledgers, fixed = settled_ledgers(request)
        assert [(e.text, e.status) for e in fixed] == [(FAILED_TEST, "open")]
        assert [e.status for e in ledgers.error_facts] == ["fixed"]
        assert settled_ledgers(SummaryRequest(request.messages, None, GOAL, 2_000))[1] == ()

    def test_the_evidence_holds_the_tail_s_keys_and_errors_only(self) -> None:
        kept = (
            *_ran("p2", "pytest tests/test_badge.py", "3 passed in 0.03s"),
            *_ran(
                "l1",
                "ruff check src",
                "Exit code 1\nsrc/a.py:1:8: F401 `os` imported but unused",
                failed=True,
            ),
        )
        ledgers, evidence = ledgers_and_evidence((user(GOAL), *PYTEST_FAILS), GOAL, later=kept)
        assert ledgers == extract_ledgers((user(GOAL), *PYTEST_FAILS), GOAL)
        assert evidence.passed == (
            "cmd:pytest tests/test_badge.py",
            "test:tests/test_badge.py",
            "rerun:ruff check src",
        )
        assert [(e.text, e.status, e.source) for e in evidence.errors] == [
            ("src/a.py:1:8: F401 `os` imported but unused", "open", 6)
        ]


def _walked(*runs: tuple[str, str, bool] | str) -> list[tuple[str, str]]:
    """The (text, status) of the error facts of a turn of shell runs, each (command, output,
    failed), a plain string being a user message that opens a new turn."""
    messages: list[Message] = [user(GOAL)]
    for k, run in enumerate(runs):
        if isinstance(run, str):
            messages.append(user(run))
        else:
            messages += _ran(f"c{k}", run[0], run[1], failed=run[2])
    return [(e.text, e.status) for e in extract_ledgers(messages).error_facts]


REFUSED = (
    "git add a.ex b.css && git commit -m x",
    "Exit code 1\nThe following paths are ignored by one of your .gitignore files:\nb.css",
    True,
)
B_CSS = "The following paths are ignored by one of your .gitignore files: b.css"


class TestRetries:
    def test_the_shape_of_a_command(self) -> None:
        [add, commit] = invocations(
            "cd /repo && git add a.ex b.css && git commit -m x 2>&1 | tail -3"
        )
        assert (add.program, add.subcommand, add.operands, add.options) == (
            "git",
            "add",
            frozenset({"a.ex", "b.css"}),
            frozenset(),
        )
        assert (commit.program, commit.subcommand, commit.operands, commit.check) == (
            "git",
            "commit",
            frozenset({"x"}),
            False,
        )
        assert invocations("mypy src/a.py")[0].check is True

    @pytest.mark.parametrize(
        ("retry", "failed", "expected"),
        [
            ("git add a.ex && git commit -m x", "git add a.ex b.css && git commit -m x", True),
            ("git add -f b.css && git commit -m x", "git add a.ex b.css && git commit -m x", True),
            ("npm install --legacy-peer-deps", "npm install", True),
            ("git add c.ex && git commit -m x", "git add a.ex b.css && git commit -m x", False),
            ("git add a.ex", "git add a.ex b.css && git commit -m x", False),
            ("pytest tests/b.py", "pytest tests/a.py", False),
            ("pytest tests/a.py", "pytest tests/a.py tests/b.py", False),
            ("make lint", "make build", False),
            ("make build", "make build", False),
            ("mypy src/b.py", "mypy src/a.py src/b.py", False),
            ("mypy --strict src", "mypy src", True),
            ("python deploy.py --dry-run", "python deploy.py", False),
        ],
    )
    def test_what_narrows(self, retry: str, failed: str, expected: bool) -> None:
        assert narrows(retry, failed) is expected

    def test_the_next_run_in_the_turn_fixes_the_failure(self) -> None:
        retry = ("git add a.ex && git commit -m x", "[main 1a2b3c4] x\n 1 file changed", False)
        assert _walked(REFUSED, retry) == [(B_CSS, "fixed")]

    def test_not_across_a_user_message(self) -> None:
        retry = ("git add a.ex && git commit -m x", "[main 1a2b3c4] x\n 1 file changed", False)
        assert _walked(REFUSED, "Go on.", retry) == [(B_CSS, "open")]

    def test_only_the_next_run_of_its_shape(self) -> None:
        other = ("git add c.ex && git commit -m y", "[main 1a2b3c4] y\n 1 file changed", False)
        retry = ("git add a.ex && git commit -m x", "[main 5d6e7f8] x\n 1 file changed", False)
        assert _walked(REFUSED, other, retry) == [(B_CSS, "open")]
        # a run of another shape in between does not count
        status = ("git status", "On branch main", False)
        assert _walked(REFUSED, status, retry) == [(B_CSS, "fixed")]

    def test_a_passing_test_file_does_not_fix_another_s_failure(self) -> None:
        import_error = "E   ModuleNotFoundError: No module named 'badge'"
        failed = (
            "pytest tests/a.py",
            f"Exit code 1\nImportError while importing test module '/repo/tests/a.py'.\n"
            f"{import_error}\n1 error in 0.05s",
            True,
        )
        assert _walked(failed, ("pytest tests/b.py", "3 passed in 0.02s", False)) == [
            (import_error, "open")
        ]

    def test_a_lint_does_not_fix_a_build(self) -> None:
        failed = (
            "make build",
            "Exit code 2\nmain.c:3:1: error: expected ';' before '}' token\n"
            "make: *** [Makefile:4: main.o] Error 1",
            True,
        )
        assert _walked(failed, ("make lint", "All checks passed.", False)) == [
            ("main.c:3:1: error: expected ';' before '}' token", "open")
        ]

    def test_a_check_of_fewer_files_does_not_fix_it(self) -> None:
        line = 'src/a.py:3: error: Incompatible return value type (got "int", expected "str")'
        failed = ("mypy src/a.py src/b.py", f"Exit code 1\n{line}\nFound 1 error in 1 file", True)
        passed = ("mypy src/b.py", "Success: no issues found in 1 source file", False)
        assert _walked(failed, passed) == [(line, "open")]

    def test_a_changed_option_fixes_an_install(self) -> None:
        failed = (
            "npm install",
            "Exit code 1\nnpm ERR! ERESOLVE unable to resolve dependency tree",
            True,
        )
        passed = ("npm install --legacy-peer-deps", "added 212 packages in 4s", False)
        assert _walked(failed, passed) == [
            ("npm ERR! ERESOLVE unable to resolve dependency tree", "fixed")
        ]


#: A Claude Code session that ends with a commit git refuses for an ignored stylesheet, the
#: commit retried without it, the stylesheet added with ``-f``, a push and "Epic complete".
SPOTTER = "claude-code/spotter-long-a0y-main.jsonl"


def test_the_corpus_session_whose_tail_retries_the_refused_commit(tmp_path: Path) -> None:
    """``ctxengine compact FILE --window 32000 -o req.json``: the request's first message is
    the state, the kept tail follows it verbatim."""
    require_corpus(SPOTTER)
    # no summary model nor store configured: the extractive state, as in the reproduction
    skip = ("OPENAI_", "ANTHROPIC_", "CTXENGINE_")
    env = {k: v for k, v in os.environ.items() if not k.startswith(skip)}
    env["PYTHONPATH"] = str(Path(__file__).resolve().parents[2] / "src")
    done = subprocess.run(
        [
            sys.executable,
            "-m",
            "ctxengine",
            "compact",
            str(CORPUS / SPOTTER),
            "--window",
            "32000",
            "-o",
            "req.json",
        ],
        cwd=tmp_path,
        env=env,
        capture_output=True,
        text=True,
        timeout=300,
        stdin=subprocess.DEVNULL,
    )
    assert done.returncode == 0, done.stderr
    assert "first kept entry 9f869bbc-6477-4711-853a-670354c1645d" in done.stdout
    messages = json.loads((tmp_path / "req.json").read_text())["messages"]
    state = messages[0]["content"]
    assert section(state, "Errors") == (
        "- fixed: The following paths are ignored by one of your .gitignore files: "
        "priv/static/assets"
    )
    assert section(state, "Next step") == (
        'Latest user request (in progress): "continue until all are done", to go on with the '
        "goal above. Next: check the goal above against Done and Current work, and do what is "
        "not done yet."
    )
    assert "open:" not in state and "Open errors" not in state
    # the retry that fixed it is the first kept message, verbatim after the state
    [retry] = messages[1]["tool_calls"]
    assert json.loads(retry["function"]["arguments"])["command"].startswith(
        "git add lib/spotter_web/live/pane_list_live.ex lib/spotter_web/live/session_live.ex "
        "test/spotter_web/live/session_live_test.exs && git commit -m"
    )
    assert messages[2]["content"].endswith("4 files changed, 155 insertions(+), 1 deletion(-)")
