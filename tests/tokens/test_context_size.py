"""Context size: usage anchor plus estimate of the messages after it."""

from __future__ import annotations

import dataclasses

import pytest

from ctxengine.model import Message, Usage, assistant, system, tool_result, user
from ctxengine.model.parts import ToolCallPart
from ctxengine.tokens import ContextSize, HeuristicEstimator, context_size, find_anchor

EST = HeuristicEstimator()
CALL = ToolCallPart("c1", "read", '{"path":"a.py"}')


def reply(usage: Usage | None, stop: str | None = None) -> Message:
    return dataclasses.replace(assistant("done", usage=usage), stop_reason=stop)


def history() -> list[Message]:
    return [
        system("You are a coding agent."),  # 0: 10
        user("Fix the failing test."),  # 1: 9
        assistant("Reading it.", CALL, usage=Usage(1_000, 50, 2_000, 0)),  # 2: anchor, 25
        tool_result("c1", "x = 1\n" * 40),  # 3: 8 + 211 (o200k_base: 200)
        user("Also run the linter."),  # 4: 9
    ]


class TestAnchor:
    def test_total_is_anchor_usage_plus_estimate_after_it(self) -> None:
        msgs = history()
        after = [EST.message(m) for m in msgs[3:]]
        assert after == [219, 9]
        assert context_size(msgs, EST) == ContextSize(3_050 + 228, 3_050, 228, 2)

    def test_anchor_counts_prompt_cache_and_output(self) -> None:
        assert Usage(1_000, 50, 2_000, 0).context_tokens == 3_050

    def test_aborted_errored_and_empty_usage_are_skipped(self) -> None:
        msgs = [*history(), reply(Usage(9_000, 10), "aborted"), reply(Usage(9_000, 10), "error")]
        msgs += [reply(Usage()), reply(Usage(0, 30))]  # all-zero, output-only
        size = context_size(msgs, EST)
        assert size.anchor_index == 2
        assert size.anchored == 3_050
        assert size.estimated == 219 + 9 + 4 * 5  # each skipped reply: 4 + "done" (1)

    def test_latest_usable_anchor_wins(self) -> None:
        msgs = [*history(), reply(Usage(4_000, 100))]
        assert context_size(msgs, EST) == ContextSize(4_100, 4_100, 0, 5)

    def test_a_reply_reporting_more_prompt_tokens_than_the_window_is_passed_over(self) -> None:
        # prompt tokens 3,000 (1,000 + 2,000 cached): over a 2,999-token window, within 3,000
        msgs = [*history(), reply(Usage(40_000, 100))]
        assert find_anchor(msgs, window=40_000) == 5
        assert find_anchor(msgs, window=39_999) == 2
        assert find_anchor(msgs, window=3_000) == 2
        assert find_anchor(msgs, window=2_999) is None
        assert find_anchor(msgs) == 5  # no window: every usable reply

    def test_usage_before_the_latest_compaction_is_stale(self) -> None:
        msgs = history()
        size = context_size(msgs, EST, fresh_from=3, extra_tokens=500)
        full = sum(EST.message(m) for m in msgs)
        assert full == 10 + 9 + 25 + 219 + 9
        assert size == ContextSize(full + 500, 0, full + 500, None)

    def test_no_usage_falls_back_to_the_full_estimate_plus_tools(self) -> None:
        msgs = [system("rules"), user("hello")]
        assert context_size(msgs, EST, extra_tokens=300) == ContextSize(310, 0, 310, None)
        assert context_size([], EST) == ContextSize(0, 0, 0, None)

    def test_cached_estimates_are_used_instead_of_the_estimator(self) -> None:
        msgs = history()
        size = context_size(msgs, EST, per_message=[1, 2, 3, 40, 500])
        assert size == ContextSize(3_590, 3_050, 540, 2)

    def test_cached_estimates_of_the_wrong_length_are_rejected(self) -> None:
        with pytest.raises(ValueError, match="4 estimates for 5 messages"):
            context_size(history(), EST, per_message=[1, 2, 3, 4])

    def test_find_anchor_scans_back_only_to_fresh_from(self) -> None:
        msgs = [*history(), user("more")]
        assert find_anchor(msgs) == 2
        assert find_anchor(msgs, fresh_from=2) == 2
        assert find_anchor(msgs, fresh_from=3) is None
