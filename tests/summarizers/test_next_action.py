"""The next step never offers "continue" alone: with the goal still the latest request, it
names the concrete next action (the agent's stated plan, the first open todo item, the
latest open error, else what to check), or the user's message the kept tail holds."""

from __future__ import annotations

import json

from summarizer_helpers import QuarterEstimator, call, calls, results

from ctxengine.engine import Session
from ctxengine.model import (
    CompactionRecord,
    Message,
    ToolCallPart,
    Usage,
    assistant,
    tool_result,
    user,
)
from ctxengine.summarizers.base import SummaryRequest
from ctxengine.summarizers.extractive import ExtractiveSummarizer
from ctxengine.summarizers.next_step import next_action, next_step
from ctxengine.summarizers.step_wording import STEP_WORDINGS

GOAL = "Migrate every module to the new logging API."
CHECK = (
    "No later request. Next: check the goal above against Done and Current work, and do what "
    "is not done yet."
)


def _todos(*items: tuple[str, str]) -> tuple[Message, Message]:
    todos = [{"content": text, "status": status} for status, text in items]
    return calls(call("t", "TodoWrite", todos=todos)), results(("t", "ok"))


def _edit(cid: str) -> tuple[Message, Message]:
    return (
        calls(call(cid, "Edit", file_path=f"src/{cid}.py", old_string="a", new_string="b")),
        results((cid, "ok")),
    )


class TestNextAction:
    def test_nothing_stated_says_what_to_check(self) -> None:
        msgs = (user(GOAL), *_edit("m1"))
        assert next_step(msgs, split_turn=True, prior=(), goal=GOAL) == CHECK

    def test_the_agents_stated_plan(self) -> None:
        msgs = (user(GOAL), *_edit("m1"), assistant("m1 is done. Next I will migrate m2.py."))
        assert next_step(msgs, split_turn=True, prior=(), goal=GOAL) == (
            "No later request. Next: the agent's stated plan: m1 is done. Next I will migrate "
            "m2.py."
        )

    def test_a_plan_it_went_on_to_carry_out_is_not_next(self) -> None:
        msgs = (user(GOAL), assistant("Next I will migrate m2.py."), *_edit("m2"))
        assert next_step(msgs, split_turn=True, prior=(), goal=GOAL) == CHECK

    def test_the_first_open_todo_item(self) -> None:
        todos = _todos(("completed", "Migrate m1"), ("in_progress", "Migrate m2"), ("pending", "x"))
        msgs = (user(GOAL), *todos, *_edit("m1"))
        assert next_step(msgs, split_turn=True, prior=(), goal=GOAL) == (
            "No later request. Next: the first open todo item (in_progress): Migrate m2"
        )

    def test_the_latest_open_error(self) -> None:
        msgs = (user(GOAL), *_edit("m1"))
        got = next_step(
            msgs,
            split_turn=True,
            prior=(),
            goal=GOAL,
            open_errors=("open: E1", "open: E2"),
            latest_error="FAILED tests/test_m2.py::test_log",
        )
        assert got == (
            "No later request. Next: resolve the latest open error: "
            "FAILED tests/test_m2.py::test_log\n"
            "Open errors to resolve: 2 (listed under Errors)."
        )

    def test_the_plan_comes_before_the_todo_list_and_the_error(self) -> None:
        todos = _todos(("pending", "Migrate m2"))
        msgs = [user(GOAL), *todos, assistant("Next I will migrate m3.py.")]
        assert (
            next_action(msgs, "E", start=1) == "the agent's stated plan: Next I will migrate m3.py."
        )
        assert (
            next_action(msgs[:-1], "E", start=1) == "the first open todo item (pending): Migrate m2"
        )
        assert next_action(msgs[:1], "E") == "resolve the latest open error: E"

    def test_the_kept_tail_names_the_users_latest_message(self) -> None:
        msgs = (user(GOAL), *_edit("m1"))
        tail = (assistant("Next I will migrate m11.py."), user("continue"))
        assert next_step(msgs, split_turn=True, prior=(), goal=GOAL, later=tail) == (
            "No later request before this point; the user's latest message after it: "
            '"continue", accepting the agent\'s proposal: Next I will migrate m11.py.'
        )
        tail = (assistant("Done with m1."), user("Now update the changelog."))
        assert next_step(msgs, split_turn=True, prior=(), goal=GOAL, later=tail) == (
            "No later request before this point; the user's latest message after it: "
            "Now update the changelog."
        )

    def test_an_acknowledgement_of_the_goal_names_the_action(self) -> None:
        todos = _todos(("pending", "Migrate m2"))
        msgs = (user(GOAL), *todos, assistant("What would you like me to do next?"))
        tail = (user("continue"),)
        assert next_step(msgs, split_turn=True, prior=(), goal=GOAL, later=tail) == (
            "No later request before this point; the user's latest message after it: "
            '"continue", to go on with the goal above. Next: the first open todo item '
            "(pending): Migrate m2"
        )

    def test_every_language_has_the_sentences(self) -> None:
        for language, words in STEP_WORDINGS.items():
            phrase = words.action_todo.format(status="pending", item="X")
            assert "X" in phrase and "pending" in phrase, language
            assert "{" not in words.goal_later.format(request="R"), language
            assert "{" not in words.ack_goal.format(ack="ok", action="A"), language
            assert "{" not in words.action_check.format(done="D", current_work="C"), language


def _rules_session() -> tuple[Message, ...]:
    """The cc_rules shape: the goal's turn cut inside, the tail ending with the agent's
    announcement and "continue"."""
    todos = _todos(("completed", "Migrate module m09.py"), ("in_progress", "Migrate m10.py"))
    return (user(GOAL), *todos, *_edit("m02"), assistant("Reading module m27."))


def test_the_extractive_state_reads_the_kept_tail() -> None:
    tail = (assistant("Next I will migrate m11.py."), user("continue"))
    request = SummaryRequest((), None, GOAL, 1_000, turn_prefix=_rules_session(), kept=tail)
    summary = ExtractiveSummarizer(user_messages_budget=200).summarize(request, QuarterEstimator())
    assert (
        "## Next step\nNo later request before this point; the user's latest message after it: "
        '"continue", accepting the agent\'s proposal: Next I will migrate m11.py.\n\n'
    ) in summary.text
    # without the tail: the first open todo item
    request = SummaryRequest((), None, GOAL, 1_000, turn_prefix=_rules_session())
    summary = ExtractiveSummarizer(user_messages_budget=200).summarize(request, QuarterEstimator())
    assert (
        "## Next step\nNo later request. Next: the first open todo item (in_progress): "
        "Migrate m10.py\n\n"
    ) in summary.text


def test_the_engine_hands_the_kept_tail_to_the_summarizer() -> None:
    s = Session(window=8_000)
    s.append(user(GOAL))

    def step(cid: str, name: str, args: dict[str, object], result: str) -> None:
        part = ToolCallPart(cid, name, json.dumps(args))
        s.record(assistant("", part, usage=Usage(input_tokens=100, output_tokens=1)))
        s.append(tool_result(cid, result))

    for i in range(12):
        step(f"r{i}", "Read", {"file_path": f"f{i}.py"}, "x = 1\n" * 400)
    s.append(assistant("Next I will migrate m11.py."))
    s.append(user("continue"))
    s.compact()
    (record,) = [e.body for e in s.entries if isinstance(e.body, CompactionRecord)]
    assert (
        "## Next step\nNo later request before this point; the user's latest message after it: "
        '"continue", accepting the agent\'s proposal: Next I will migrate m11.py.'
    ) in record.summary
