"""Summary validation rules, one by one, on plain Completion values."""

from __future__ import annotations

import pytest
from llm_helpers import EMPTY_VARIANTS, GOOD, every_section, summary_text

from ctxengine.errors import SummaryRejected
from ctxengine.model import ToolCallPart
from ctxengine.providers import Completion
from ctxengine.summarizers.prompts import REQUIRED_HEADINGS, TEMPLATE
from ctxengine.summarizers.validate import (
    check_headings,
    check_reply,
    check_size,
    clean_summary,
    is_empty_body,
    is_refusal,
    is_template_only,
    missing_headings,
    normalize_line,
)


def rejected(completion: Completion) -> tuple[str, str]:
    with pytest.raises(SummaryRejected) as info:
        check_reply(completion)
    return info.value.reason, str(info.value)


class TestCheckReply:
    def test_a_good_summary_passes_unchanged(self) -> None:
        assert check_reply(Completion(GOOD)) == GOOD
        assert missing_headings(GOOD) == ()

    def test_a_reply_cut_by_the_output_limit_is_rejected_with_its_length(self) -> None:
        cut = GOOD[:101]
        assert rejected(Completion(cut, finish_reason="length")) == (
            "length",
            "summary rejected: length (the output limit cut the summary after 101 characters)",
        )

    def test_a_reply_that_ended_without_finishing_is_rejected(self) -> None:
        assert rejected(Completion(GOOD, finish_reason="error"))[0] == "error"

    def test_a_filtered_reply_is_rejected(self) -> None:
        assert rejected(Completion("", finish_reason="content_filter"))[0] == "refused"

    def test_a_tool_call_is_rejected_whatever_the_text(self) -> None:
        reply = Completion(
            GOOD,
            tool_calls=(ToolCallPart("c1", "Bash", '{"command": "ls"}'),),
            finish_reason="tool_calls",
        )
        assert rejected(reply) == (
            "tool_calls",
            "summary rejected: tool_calls (the reply called Bash)",
        )

    @pytest.mark.parametrize("text", ["", "   \n", "<summary></summary>", "<analysis>x</analysis>"])
    def test_empty_output_is_rejected(self, text: str) -> None:
        assert rejected(Completion(text))[0] == "empty"

    def test_every_section_none_is_template_only(self) -> None:
        text = summary_text(**{h.replace(" ", "_"): "(none)" for h in REQUIRED_HEADINGS})
        assert is_template_only(text)
        assert rejected(Completion(text))[0] == "template_only"

    @pytest.mark.parametrize(("body", "normal"), EMPTY_VARIANTS)
    def test_every_spelling_of_none_in_every_section_is_template_only(
        self, body: str, normal: str
    ) -> None:
        assert normalize_line(body) == normal
        assert is_empty_body(body)
        text = every_section(body)
        assert missing_headings(text) == ()
        assert rejected(Completion(text)) == (
            "template_only",
            "summary rejected: template_only (every section is empty)",
        )

    def test_mixed_spellings_and_bullets_are_template_only_too(self) -> None:
        bodies = [v for v, _ in EMPTY_VARIANTS]
        lines: list[str] = []
        for k, heading in enumerate(REQUIRED_HEADINGS):
            lines += [f"## {heading}", f"- {bodies[k % len(bodies)]}", "* N/A"]
        assert rejected(Completion("\n".join(lines)))[0] == "template_only"

    def test_content_under_an_extra_heading_does_not_rescue_empty_required_sections(
        self,
    ) -> None:
        text = every_section("None.") + "\n## Notes\nThe agent edited src/x.py."
        assert rejected(Completion(text))[0] == "template_only"

    @pytest.mark.parametrize(
        "body", ["No force pushes.", "none of the above applies to src/x.py", "`make test`"]
    )
    def test_short_real_content_is_not_empty(self, body: str) -> None:
        assert not is_empty_body(body)
        text = every_section(body)
        assert check_reply(Completion(text)) == text

    def test_the_template_echoed_back_is_template_only(self) -> None:
        assert rejected(Completion(TEMPLATE))[0] == "template_only"

    def test_one_real_section_is_enough(self) -> None:
        blank = {h.replace(" ", "_"): "(none)" for h in REQUIRED_HEADINGS}
        text = summary_text(**{**blank, "Goal": "Migrate module X."})
        assert not is_template_only(text)
        assert check_reply(Completion(text)) == text

    @pytest.mark.parametrize(
        "text",
        [
            "Please provide the conversation you would like me to summarize.",
            "I'm sorry, but I can't help with that.",
            "There is no conversation history to summarize.",
            "I cannot summarize this content.",
        ],
    )
    def test_generic_refusals_are_rejected(self, text: str) -> None:
        assert is_refusal(text)
        assert rejected(Completion(text))[0] == "refusal"

    def test_a_summary_quoting_a_refusal_is_not_a_refusal(self) -> None:
        text = summary_text(Errors_and_fixes="- The tool said: I cannot open the file.")
        assert not is_refusal(text)

    def test_analysis_is_stripped_and_the_summary_tag_unwrapped(self) -> None:
        raw = f"<analysis>thinking it over</analysis>\n<summary>\n{GOOD}\n</summary>"
        assert clean_summary(raw) == GOOD
        assert check_reply(Completion(raw)) == GOOD


class TestHeadings:
    def test_missing_headings_are_named_in_template_order(self) -> None:
        text = summary_text(Blocked="-", Next_step="-")
        assert missing_headings(text) == ("Blocked", "Next step")
        with pytest.raises(SummaryRejected) as info:
            check_headings(text)
        assert (info.value.reason, str(info.value)) == (
            "missing_headings",
            "summary rejected: missing_headings (Blocked, Next step)",
        )

    def test_headings_match_loosely(self) -> None:
        text = GOOD.replace("## Constraints and preferences", "**Constraints & Preferences:**")
        text = text.replace("## Next step", "## 9. NEXT STEP")
        assert missing_headings(text) == ()


class TestSize:
    def test_a_summary_as_large_as_what_it_replaces_is_inflated(self) -> None:
        with pytest.raises(SummaryRejected) as info:
            check_size(500, replaced_tokens=500, target_tokens=800)
        assert (info.value.reason, info.value.tokens_before, info.value.tokens_after) == (
            "inflated",
            500,
            500,
        )

    def test_a_summary_above_its_target_is_over_budget(self) -> None:
        with pytest.raises(SummaryRejected) as info:
            check_size(801, replaced_tokens=5_000, target_tokens=800)
        assert (info.value.reason, info.value.tokens_after) == ("over_budget", 801)

    def test_a_summary_within_both_passes(self) -> None:
        check_size(800, replaced_tokens=801, target_tokens=800)
