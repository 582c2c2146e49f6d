"""The one definition of a real user message and a goal candidate (``model/roles.py``)."""

from __future__ import annotations

import pytest

from ctxengine.model import (
    ImagePart,
    Message,
    TextPart,
    ToolResultPart,
    assistant,
    system,
    tool_result,
    user,
)
from ctxengine.model.roles import (
    INJECTED_PREFIXES,
    injected_parts,
    is_goal_candidate,
    is_goal_text,
    is_injected_text,
    is_real_user_message,
    user_text,
)


class TestInjectedText:
    @pytest.mark.parametrize("prefix", INJECTED_PREFIXES)
    def test_every_prefix_is_injected_after_leading_whitespace(self, prefix: str) -> None:
        assert is_injected_text(" \n\t" + prefix + " rest") is True

    @pytest.mark.parametrize(
        ("text", "expected"),
        [
            ("", True),
            (" \n", True),
            ("fix it", False),
            ("please read <system-reminder>", False),  # only an opening counts
            ("<system-reminder", False),  # the tag must be whole
            ("[Request interrupted by user for tool use]", True),
        ],
    )
    def test_only_blank_text_and_openings_count(self, text: str, expected: bool) -> None:
        assert is_injected_text(text) is expected


class TestRealUserMessage:
    def test_typed_text_is_real(self) -> None:
        assert is_real_user_message(user("fix the bug")) is True

    @pytest.mark.parametrize(
        "text",
        [
            "<environment_context>\n  <cwd>/x</cwd>\n</environment_context>",
            "# AGENTS.md instructions for /repo\n...",
            "<command-name>/mcp</command-name>",
            "<local-command-stdout>Reconnected.</local-command-stdout>",
            "<system-reminder>The file changed.</system-reminder>",
            "<task-notification>\n<task-id>1</task-id>",
            "[Request interrupted by user]",
            "This session is being continued from a previous conversation that ran out of context.",
            "   ",
        ],
    )
    def test_injected_text_is_not(self, text: str) -> None:
        assert is_real_user_message(user(text)) is False

    @pytest.mark.parametrize("flag", ["synthetic", "isMeta", "isCompactSummary"])
    def test_a_meta_flag_makes_it_the_harness_s(self, flag: str) -> None:
        flagged = Message("user", (TextPart("fix the bug"),), meta={flag: True})
        assert is_real_user_message(flagged) is False
        unset = Message("user", (TextPart("fix the bug"),), meta={flag: False, "other": 1})
        assert is_real_user_message(unset) is True

    def test_other_roles_and_tool_results_are_not(self) -> None:
        assert is_real_user_message(assistant("fix the bug")) is False
        assert is_real_user_message(system("fix the bug")) is False
        assert is_real_user_message(tool_result("c1", "fix the bug")) is False
        with_result = Message("user", (ToolResultPart("c1", (TextPart("x"),)), TextPart("and")))
        assert is_real_user_message(with_result) is False

    def test_any_text_part_a_person_wrote_decides(self) -> None:
        # Claude Code's first prompt: a reminder part, then the request part.
        reminder_first = Message(
            "user", (TextPart("<system-reminder>x</system-reminder>"), TextPart("fix it"))
        )
        assert is_real_user_message(reminder_first) is True
        typed_first = Message(
            "user", (TextPart("fix it"), TextPart("<system-reminder>x</system-reminder>"))
        )
        assert is_real_user_message(typed_first) is True

    def test_an_image_without_text_is_not(self) -> None:
        image_only = Message("user", (ImagePart("image/png", data="AAAA"),))
        assert is_real_user_message(image_only) is False
        with_text = Message("user", (ImagePart("image/png", data="AAAA"), TextPart("see this")))
        assert is_real_user_message(with_text) is True


class TestParts:
    REMINDER = "<system-reminder>\nContents of /repo/CLAUDE.md:\n\nBe brief.\n</system-reminder>"
    REQUEST = "Please refactor the billing module to use Decimal."

    def test_a_reminder_part_then_a_request_part_is_a_real_message_of_the_request(self) -> None:
        m = Message("user", (TextPart(self.REMINDER), TextPart(self.REQUEST)))
        assert is_real_user_message(m) is True
        assert is_goal_candidate(m) is True
        assert user_text(m) == self.REQUEST
        assert injected_parts(m) == (TextPart(self.REMINDER),)

    def test_a_request_then_a_reminder_part_keeps_the_request_alone(self) -> None:
        m = Message("user", (TextPart(self.REQUEST), TextPart(self.REMINDER)))
        assert is_real_user_message(m) is True
        assert user_text(m) == self.REQUEST

    def test_injected_parts_only_are_not_a_real_message_and_keep_their_text(self) -> None:
        m = Message("user", (TextPart(self.REMINDER), TextPart("  ")))
        assert is_real_user_message(m) is False
        assert user_text(m) == self.REMINDER + "\n  "
        one = Message("user", (TextPart(self.REMINDER + "\n" + self.REQUEST),))
        assert is_real_user_message(one) is False

    def test_a_slash_command_beside_a_reminder_is_no_goal(self) -> None:
        m = Message("user", (TextPart(self.REMINDER), TextPart("/model opus")))
        assert is_real_user_message(m) is True
        assert is_goal_candidate(m) is False


class TestGoalCandidate:
    def test_a_goal_candidate_is_a_real_user_message_that_is_not_a_command(self) -> None:
        assert is_goal_candidate(user("/mode")) is False
        assert is_goal_candidate(user("/model gpt-4o")) is False
        assert is_goal_candidate(user("port the theme")) is True
        assert is_goal_candidate(user("/home/u/a.py is broken")) is True
        assert is_goal_candidate(user("<system-reminder>x</system-reminder>")) is False
        assert is_goal_candidate(assistant("port the theme")) is False

    @pytest.mark.parametrize(
        ("text", "expected"),
        [("port the theme", True), ("/mode", False), ("<environment_context>", False), ("", False)],
    )
    def test_goal_text_applies_the_same_rule_to_text(self, text: str, expected: bool) -> None:
        assert is_goal_text(text) is expected
        assert is_goal_candidate(user(text)) is expected
