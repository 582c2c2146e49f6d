"""Background commands in the ledgers: started is not succeeded; the poll that shows the exit
code gives the outcome (Claude Code ``BashOutput``/``TaskOutput``/``<task-notification>``,
Codex ``write_stdin``), also across compactions."""

from __future__ import annotations

import json

from summarizer_helpers import QuarterEstimator, call, calls, results

from ctxengine import Session
from ctxengine.model import (
    CompactionRecord,
    Message,
    ToolCallPart,
    Usage,
    assistant,
    tool_result,
    user,
)
from ctxengine.projection.wording import CHINESE_FACTS
from ctxengine.summarizers.anchor import carry
from ctxengine.summarizers.background import notifications, output_of, read_poll
from ctxengine.summarizers.base import SummaryRequest
from ctxengine.summarizers.extractive import ExtractiveSummarizer
from ctxengine.summarizers.fact_items import done_line
from ctxengine.summarizers.ledgers import extract_ledgers
from ctxengine.summarizers.signals import exit_code

LAUNCHED = "Command running in background with ID: bash_2"
POLL_FAILED = (
    "<status>completed</status>\n<exit_code>1</exit_code>\n"
    "<stdout>FAILED tests/test_a.py::test_x - AssertionError\n1 failed</stdout>"
)
POLL_RUNNING = "<status>running</status>\n<stdout>collected 3 items</stdout>"
POLL_PASSED = "<status>completed</status>\n<exit_code>0</exit_code>\n<stdout>3 passed</stdout>"
CODEX_LAUNCHED = (
    "Chunk ID: 1\nWall time: 10.0 seconds\nProcess running with session ID 4242\n"
    "Output:\n   Compiling foo"
)
CODEX_EXITED = (
    "Chunk ID: 2\nWall time: 5.0 seconds\nProcess exited with code 101\nOutput:\n"
    "test tests::parse ... FAILED\nerror: test failed, to rerun pass `--lib`"
)


def _launch(command: str = "pytest -x") -> list[Message]:
    return [
        user("run the tests"),
        calls(call("b2", "Bash", command=command, run_in_background=True)),
        results(("b2", LAUNCHED)),
    ]


def _poll(cid: str, text: str) -> list[Message]:
    return [calls(call(cid, "BashOutput", bash_id="bash_2")), results((cid, text))]


class TestPollParsing:
    def test_claude_code_poll(self) -> None:
        poll = read_poll(POLL_FAILED)
        assert (poll.finished, poll.exit_code, poll.status) == (True, 1, "completed")
        assert poll.output == "FAILED tests/test_a.py::test_x - AssertionError\n1 failed"

    def test_running_poll_and_task_output(self) -> None:
        poll = read_poll(POLL_RUNNING)
        assert (poll.finished, poll.exit_code, poll.output) == (False, None, "collected 3 items")
        task_output = (
            "<retrieval_status>success</retrieval_status>\n\n<task_id>b7b23b2</task_id>\n\n"
            "<status>completed</status>\n\n<exit_code>0</exit_code>\n\n<output>\nok\n</output>"
        )
        poll = read_poll(task_output)
        assert (poll.finished, poll.exit_code, poll.output) == (True, 0, "ok")

    def test_codex_poll(self) -> None:
        poll = read_poll(CODEX_EXITED)
        assert (poll.finished, poll.exit_code, poll.status) == (True, 101, "")
        assert poll.output == (
            "test tests::parse ... FAILED\nerror: test failed, to rerun pass `--lib`"
        )
        assert output_of(CODEX_LAUNCHED) == "   Compiling foo"
        assert exit_code(CODEX_EXITED) == 101

    def test_notification(self) -> None:
        text = (
            "<task-notification>\n<task-id>b7b23b2</task-id>\n<status>failed</status>\n"
            '<summary>Background command "Run new tests" failed (exit code 2)</summary>\n'
            "</task-notification>"
        )
        (note,) = notifications(text)
        assert (note.id, note.status, note.exit_code, note.finished) == (
            "b7b23b2",
            "failed",
            2,
            True,
        )
        assert note.summary == 'Background command "Run new tests" failed (exit code 2)'


class TestLedgers:
    def test_started_is_not_succeeded(self) -> None:
        ledgers = extract_ledgers(_launch())
        assert ledgers.done == ("started `pytest -x` in the background (id bash_2)",)
        assert ledgers.error_facts == ()
        assert ledgers.commands == ("pytest -x",)

    def test_a_failed_poll_gives_the_errors_and_no_done_step(self) -> None:
        ledgers = extract_ledgers(
            [*_launch(), *_poll("o1", POLL_RUNNING), *_poll("o2", POLL_FAILED)]
        )
        assert ledgers.done == ()
        assert [(e.text, e.status, e.command, e.test, e.source) for e in ledgers.error_facts] == [
            (
                "FAILED tests/test_a.py::test_x - AssertionError",
                "open",
                "pytest -x",
                "tests/test_a.py::test_x",
                6,
            )
        ]
        assert "background:bash_2" in ledgers.passed

    def test_failure_lines_of_an_earlier_poll_count(self) -> None:
        # BashOutput returns only the output since the last poll
        early = (
            "<status>running</status>\n<stdout>FAILED tests/test_a.py::test_y - KeyError</stdout>"
        )
        last = "<status>completed</status>\n<exit_code>1</exit_code>\n<stdout>1 failed</stdout>"
        ledgers = extract_ledgers([*_launch(), *_poll("o1", early), *_poll("o2", last)])
        assert ledgers.errors == ("FAILED tests/test_a.py::test_y - KeyError",)

    def test_a_passing_poll_is_a_foreground_success(self) -> None:
        earlier = [
            user("run the tests"),
            calls(call("f1", "Bash", command="pytest -x")),
            results(("f1", "Exit code 1\nFAILED tests/test_a.py::test_x - AssertionError")),
        ]
        launch = _launch()[1:]
        ledgers = extract_ledgers([*earlier, *launch, *_poll("o2", POLL_PASSED)])
        assert ledgers.done == ("ran `pytest -x` (succeeded)",)
        assert [(e.status, e.fixed_by) for e in ledgers.error_facts] == [("fixed", 6)]

    def test_a_stopped_task_has_no_outcome(self) -> None:
        stop = [calls(call("k", "KillShell", shell_id="bash_2")), results(("k", "Killed: bash_2"))]
        ledgers = extract_ledgers([*_launch("npm run dev"), *stop])
        assert (ledgers.done, ledgers.error_facts) == ((), ())

    def test_codex_session(self) -> None:
        msgs = [
            user("run the test suite and fix failures"),
            calls(call("e1", "exec_command", cmd="cargo test")),
            results(("e1", CODEX_LAUNCHED)),
        ]
        assert extract_ledgers(msgs).done == ("started `cargo test` in the background (id 4242)",)
        poll = [
            calls(call("w1", "write_stdin", session_id=4242, chars="")),
            results(("w1", CODEX_EXITED)),
        ]
        ledgers = extract_ledgers([*msgs, *poll])
        assert ledgers.done == ()
        assert [(e.text, e.status, e.command) for e in ledgers.error_facts] == [
            ("test tests::parse ... FAILED", "open", "cargo test")
        ]

    def test_a_notification_ends_the_task(self) -> None:
        note = user(
            "<task-notification>\n<task-id>bash_2</task-id>\n<status>failed</status>\n"
            '<summary>Background command "pytest -x" failed (exit code 1)</summary>\n'
            "</task-notification>"
        )
        ledgers = extract_ledgers([*_launch(), note])
        assert ledgers.done == ()
        assert ledgers.errors == ('Background command "pytest -x" failed (exit code 1)',)

    def test_an_unknown_task_failure_is_kept_under_the_poll(self) -> None:
        ledgers = extract_ledgers([user("check"), *_poll("o2", POLL_FAILED)])
        assert [(e.text, e.command) for e in ledgers.error_facts] == [
            ("FAILED tests/test_a.py::test_x - AssertionError", "BashOutput(bash_2)")
        ]

    def test_the_started_step_is_translated(self) -> None:
        step = "started `pytest -x` in the background (id bash_2)"
        assert done_line(step, CHINESE_FACTS) == "在后台启动 `pytest -x`（ID bash_2）"


class TestAcrossCompactions:
    def test_a_poll_after_the_compaction_ends_the_earlier_start(self) -> None:
        first = extract_ledgers(_launch(), "run the tests")
        assert first.done == ("started `pytest -x` in the background (id bash_2)",)
        later = _poll("o2", POLL_FAILED)
        new = extract_ledgers(later, cwd=first.cwd, start=3, earlier_done=first.done)
        assert [(e.text, e.command, e.source) for e in new.error_facts] == [
            ("FAILED tests/test_a.py::test_x - AssertionError", "pytest -x", 4)
        ]
        merged = carry(first, new)
        assert merged.done == ()
        assert merged.errors == ("FAILED tests/test_a.py::test_x - AssertionError",)

    def test_the_extractive_state_after_the_poll(self) -> None:
        first = extract_ledgers(_launch(), "run the tests")
        previous = CompactionRecord(
            summary="s",
            first_kept_id="x",
            tokens_before=1,
            tokens_after=1,
            policy="default",
            summarizer="extractive",
            reason="manual",
            ledgers=first,
        )
        request = SummaryRequest(
            messages=tuple(_poll("o2", POLL_FAILED)),
            previous=previous,
            goal="run the tests",
            budget_tokens=2_000,
        )
        summary = ExtractiveSummarizer(user_messages_budget=500).summarize(
            request, QuarterEstimator()
        )
        assert "started `pytest -x`" not in summary.text
        assert (
            "## Errors\n- open: FAILED tests/test_a.py::test_x - AssertionError — `pytest -x`"
            in summary.text
        )


def _session_state(finish: list[tuple[str, str, dict[str, object], str]]) -> str:
    s = Session(window=8_000)
    s.append(user("start servers"))

    def step(cid: str, name: str, args: dict[str, object], result: str) -> None:
        part = ToolCallPart(cid, name, json.dumps(args))
        s.record(assistant("", part, usage=Usage(input_tokens=100, output_tokens=1)))
        s.append(tool_result(cid, result))

    step("b2", "Bash", {"command": "pytest -x", "run_in_background": True}, LAUNCHED)
    for item in finish:
        step(*item)
    for i in range(12):
        step(f"r{i}", "Read", {"file_path": f"f{i}.py"}, "x = 1\n" * 400)
    s.compact()
    return s.prepare().messages[0].text


class TestSessionState:
    def test_running_background_command(self) -> None:
        text = _session_state([])
        assert "## Done\n- started `pytest -x` in the background (id bash_2)\n" in text
        assert "(succeeded)" not in text
        assert (
            "Already done in that turn: started `pytest -x` in the background (id bash_2)." in text
        )

    def test_failed_background_command(self) -> None:
        text = _session_state([("o2", "BashOutput", {"bash_id": "bash_2"}, POLL_FAILED)])
        assert "## Done" not in text
        assert "(succeeded)" not in text
        assert (
            "## Errors\n- open: FAILED tests/test_a.py::test_x - AssertionError — `pytest -x`\n"
            in text
        )
        assert "Open errors to resolve: 1 (listed under Errors)." in text
