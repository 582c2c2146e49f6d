"""The next step: the latest request open or answered, a bare acknowledgement resolved to what
it acknowledged, the agent's stated plan, the open errors."""

from __future__ import annotations

import pytest
from summarizer_helpers import call, calls, results

from ctxengine.model import assistant, user
from ctxengine.summarizers.next_step import (
    PLAN_MAX_CHARS,
    Request,
    asks_for_direction,
    latest_request,
    next_step,
    stated_plan,
)


class TestStatedPlan:
    @pytest.mark.parametrize(
        ("text", "plan"),
        [
            # a heading paragraph takes the list after it
            (
                "Done with the parser.\n\nNext steps:\n\n- add tests\n- update docs",
                "Next steps:\n- add tests\n- update docs",
            ),
            # a sentence that starts with "Now"
            (
                "All 18 tests pass. Now run the full test suite and credo:",
                "All 18 tests pass. Now run the full test suite and credo:",
            ),
            # a question to the user, the last paragraph with a marker wins
            (
                "I'll refactor it.\n\nFixed.\n\nWant me to add the --json flag too?",
                "Want me to add the --json flag too?",
            ),
            ("接下来我会更新文档。", "接下来我会更新文档。"),
            ("¿Quieres que siga con los tests?", "¿Quieres que siga con los tests?"),
            # a report with no plan and no question
            ("Fixed the bug. All tests pass.", ""),
            ("", ""),
        ],
    )
    def test_what_the_agent_said_it_will_do_or_asked(self, text: str, plan: str) -> None:
        assert stated_plan(text) == plan

    def test_only_the_last_four_paragraphs_are_read(self) -> None:
        text = "Next I will test.\n\n" + "\n\n".join(["Done."] * 4)
        assert stated_plan(text) == ""
        assert stated_plan("Next I will test.\n\n" + "\n\n".join(["Done."] * 3)) == (
            "Next I will test."
        )

    def test_a_long_plan_is_capped(self) -> None:
        plan = stated_plan("Next I will " + "x" * 1_000)
        assert len(plan) == PLAN_MAX_CHARS and plan.endswith("…")


def test_the_latest_request_skips_slash_commands_and_falls_back_to_earlier_texts() -> None:
    messages = (user("Port the theme."), assistant("ok"), user("/model gpt-4o"))
    assert latest_request(messages) == Request(0, "Port the theme.")
    assert latest_request((assistant("ok"),), ("Port the theme.", "/mode")) == Request(
        -1, "Port the theme."
    )
    assert latest_request((assistant("ok"),)) is None


class TestNextStep:
    def test_an_acknowledgement_resolves_to_the_question_it_answered(self) -> None:
        messages = (
            user("Add a flag."),
            assistant("Added it.\n\nShould I also document it?"),
            user("yes"),
            calls(call("t", "Bash", command="ls docs")),
            results(("t", "index.md")),
        )
        assert next_step(messages, split_turn=False, prior=(), goal="Add a flag.") == (
            'Latest user request (in progress): "yes", accepting the agent\'s proposal: '
            "Should I also document it?"
        )

    def test_a_proposal_of_several_lines_starts_on_a_line_of_its_own(self) -> None:
        # Codex's "Do you want me to:" with its list: the first line of the step does not end
        # on the first line of the quote, and the quote is indented as a list item's lines.
        proposal = "Do you want me to:\n- Add a settings dialog?\n- Start project settings?"
        messages = (
            user("Add a flag."),
            assistant(f"Added it.\n\n{proposal}"),
            user("yes to all."),
            assistant("Both done.\n\nNext up\n- Should I also write the docs?"),
        )
        assert next_step(messages, split_turn=False, prior=(), goal="Add a flag.") == (
            "Latest user request (answered before this point, see Current work): "
            '"yes to all.", accepting the agent\'s proposal:\n'
            "    Do you want me to:\n"
            "    - Add a settings dialog?\n"
            "    - Start project settings?\n"
            "The agent's last message ended with:\n"
            "    Next up\n"
            "    - Should I also write the docs?\n"
            "Go on with the messages after this summary."
        )

    def test_without_a_plan_it_resolves_to_the_last_paragraph_it_answered(self) -> None:
        messages = (user("Add a flag."), assistant("Added it.\n\nAll tests pass."), user("ok"))
        assert next_step(messages, split_turn=False, prior=(), goal="Add a flag.") == (
            'Latest user request (in progress): "ok", answering the agent\'s message: '
            "All tests pass."
        )

    def test_before_the_range_it_resolves_to_the_latest_substantive_request(self) -> None:
        prior = ("Add a flag.", "Now write the docs.", "continue")
        got = next_step(
            (assistant("Intro written. Next I will write the API page."),),
            split_turn=True,
            prior=prior,
            goal="Add a flag.",
        )
        assert got == (
            'Latest user request (in progress): "continue", to go on with: Now write the docs.\n'
            "The agent's stated plan: Intro written. Next I will write the API page."
        )
        # the goal itself is named as "the goal above"
        got = next_step(
            (assistant("ok"),), split_turn=True, prior=prior[:1] + prior[2:], goal="Add a flag."
        )
        assert got == (
            'Latest user request (in progress): "continue", to go on with the goal above. '
            "Next: check the goal above against Done and Current work, and do what is not "
            "done yet."
        )

    def test_an_answered_request_says_what_comes_next_and_the_open_errors(self) -> None:
        messages = (
            user("Add a flag."),
            assistant("Added it."),
            user("Now the docs."),
            assistant("Docs written. Next I will run the linter."),
        )
        got = next_step(
            messages, split_turn=False, prior=(), goal="Add a flag.", open_errors=("E1", "E2")
        )
        assert got == (
            "Latest user request (answered before this point, see Current work): Now the docs.\n"
            "The agent's last message ended with: Docs written. Next I will run the linter.\n"
            "Open errors to resolve: 2 (listed under Errors).\n"
            "Go on with the messages after this summary."
        )

    def test_a_split_turn_keeps_the_request_open_even_after_a_reply(self) -> None:
        messages = (
            user("Add a flag."),
            assistant("Added."),
            user("Test it."),
            assistant("Let me run the suite."),
        )
        got = next_step(messages, split_turn=True, prior=(), goal="Add a flag.")
        assert got == (
            "Latest user request (in progress): Test it.\n"
            "The agent's stated plan: Let me run the suite."
        )

    def test_a_plan_the_agent_went_on_to_carry_out_is_not_the_next_step(self) -> None:
        messages = (
            user("Build the todo app."),
            calls(
                call("w", "Write", file_path="index.html"), text="Let's create the main HTML file:"
            ),
            results(("w", "File created successfully at: index.html")),
        )
        got = next_step(messages, split_turn=True, prior=(), goal="Add a flag.")
        assert got == "Latest user request (in progress): Build the todo app."
        # Stated, then acted on by a later call: not offered either.
        acted = (
            user("Build the todo app."),
            assistant("Now let me close the tasks and commit."),
            calls(call("c", "Bash", command="bd close app-1")),
            results(("c", "Closed app-1")),
        )
        got = next_step(acted, split_turn=True, prior=(), goal="Add a flag.")
        assert got == "Latest user request (in progress): Build the todo app."

    def test_a_turn_that_ends_in_a_tool_call_is_not_answered(self) -> None:
        messages = (
            user("Add a flag."),
            calls(call("t", "Bash", command="make"), text="Building."),
            results(("t", "ok")),
        )
        got = next_step(messages, split_turn=False, prior=(), goal="Add a flag.")
        assert got == (
            "No later request. Next: check the goal above against Done and Current work, and "
            "do what is not done yet."
        )

    def test_the_goal_alone(self) -> None:
        messages = (user("Add a flag."), assistant("Added."))
        assert next_step(messages, split_turn=False, prior=(), goal="Add a flag.") == (
            "The goal above was answered before this point (see Current work).\n"
            "Go on with the messages after this summary."
        )
        assert next_step((assistant("x"),), split_turn=False, prior=(), goal="") == (
            "No user request in the history so far."
        )


class TestDirectionQuestions:
    def test_a_question_that_only_asks_what_to_do_next_proposes_nothing(self) -> None:
        assert asks_for_direction(
            "Therefore, the implementation of the `Executor Factory` is complete. Please "
            "provide the next step in your execution plan."
        )
        assert asks_for_direction("Done. What would you like me to do next?")
        assert asks_for_direction("下一步做什么？")
        assert not asks_for_direction("Next I'll add tests. What would you like next?")
        assert not asks_for_direction("Should I also document it?")

    def test_an_acknowledgement_of_it_resolves_to_the_latest_substantive_request(self) -> None:
        messages = (
            user("Port the CLI to Go."),
            assistant("Started."),
            user("Follow the next steps from my PLAN.md"),
            assistant(
                "The factory is complete.\n\nPlease provide the next step in your execution plan."
            ),
            user("System: Please continue."),
            calls(call("t", "Bash", command="cat PLAN.md")),
            results(("t", "1. factory")),
        )
        got = next_step(messages, split_turn=False, prior=(), goal="Port the CLI to Go.")
        assert got == (
            'Latest user request (in progress): "System: Please continue.", to go on with: '
            "Follow the next steps from my PLAN.md"
        )
        # with only the goal before it: the goal
        got = next_step(
            messages[:1] + messages[3:], split_turn=False, prior=(), goal="Port the CLI to Go."
        )
        assert got == (
            'Latest user request (in progress): "System: Please continue.", to go on with the '
            "goal above. Next: check the goal above against Done and Current work, and do what "
            "is not done yet."
        )

    def test_it_is_not_shown_as_the_agent_plan(self) -> None:
        messages = (
            user("Port the CLI to Go."),
            assistant("Started."),
            user("Add the factory."),
            assistant("The factory is complete. What would you like me to do next?"),
        )
        got = next_step(messages, split_turn=False, prior=(), goal="Port the CLI to Go.")
        assert got == (
            "Latest user request (answered before this point, see Current work): Add the "
            "factory.\n"
            "Go on with the messages after this summary."
        )
