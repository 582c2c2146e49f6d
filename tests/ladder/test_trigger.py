"""``requirement()`` (ladder/trigger.py): when a compaction must run and how hard.

The budget is built by hand: a 10,000-token window with its trigger at 8,000.
"""

from __future__ import annotations

import pytest

from ctxengine.errors import NothingToCompact
from ctxengine.ladder.plan import Requirement
from ctxengine.ladder.trigger import requirement
from ctxengine.policy import Budget

BUDGET = Budget(
    window=10_000,
    reserve=2_000,
    trigger=8_000,
    keep_recent=1_000,
    truncate_tokens=2_000,
    prune_protect=2_000,
    prune_minimum=1_000,
    summary_max=1_500,
    goal_max=1_800,
    headroom=3_200,
)


class TestThreshold:
    def test_under_the_trigger_nothing_is_due(self) -> None:
        got = requirement(7_999, BUDGET, reason="threshold", output_tokens=1_000, new_entries=True)
        assert got is None

    def test_at_the_trigger_a_soft_compaction_is_due(self) -> None:
        got = requirement(8_000, BUDGET, reason="threshold", output_tokens=1_000, new_entries=True)
        assert got == Requirement("soft", "threshold", "context 8,000 ≥ trigger 8,000", 8_000, 0)
        assert got.hard is False

    def test_over_the_trigger_within_the_window_is_soft(self) -> None:
        # 9,000 + 1,000 of output = 10,000: not over the 10,000-token window.
        got = requirement(9_000, BUDGET, reason="threshold", output_tokens=1_000, new_entries=True)
        assert got == Requirement("soft", "threshold", "context 9,000 ≥ trigger 8,000", 9_000)

    def test_tokens_and_output_over_the_window_are_hard(self) -> None:
        # 9,000 + 1,001 = 10,001 > 10,000.
        got = requirement(9_000, BUDGET, reason="threshold", output_tokens=1_001, new_entries=True)
        assert got == Requirement(
            "hard",
            "threshold",
            "context 9,000 ≥ trigger 8,000; over the 10,000-token window beside 1,001 of output",
            9_000,
            0,
        )
        assert got.hard is True

    @pytest.mark.parametrize("tokens", [8_000, 9_000, 12_000])
    def test_no_new_entries_means_nothing_is_due_whatever_the_size(self, tokens: int) -> None:
        got = requirement(
            tokens, BUDGET, reason="threshold", output_tokens=1_000, new_entries=False
        )
        assert got is None


class TestManual:
    def test_no_new_entries_under_the_trigger_raises(self) -> None:
        with pytest.raises(NothingToCompact, match=r"^already compacted: no new entries since"):
            requirement(7_999, BUDGET, reason="manual", output_tokens=1_000, new_entries=False)

    def test_no_new_entries_at_or_over_the_trigger_still_runs(self) -> None:
        for tokens in (8_000, 9_500):
            got = requirement(
                tokens, BUDGET, reason="manual", output_tokens=1_000, new_entries=False
            )
            assert got == Requirement("soft", "manual", "requested by the caller", tokens, 0)

    @pytest.mark.parametrize(
        ("tokens", "output"),
        [
            (10, 0),  # far under the trigger
            (8_000, 1_000),  # at the trigger
            (9_500, 4_000),  # 13,500 > 10,000: over the window, still soft
        ],
    )
    def test_with_new_entries_it_is_always_soft(self, tokens: int, output: int) -> None:
        got = requirement(tokens, BUDGET, reason="manual", output_tokens=output, new_entries=True)
        assert got == Requirement("soft", "manual", "requested by the caller", tokens, 0)
        assert got.hard is False


class TestOverflow:
    @pytest.mark.parametrize("new_entries", [True, False])
    def test_an_overflow_is_hard_and_carries_the_reported_limit(self, new_entries: bool) -> None:
        # Under the trigger and without new entries: an overflow runs anyway.
        got = requirement(
            5_000,
            BUDGET,
            reason="overflow",
            output_tokens=0,
            new_entries=new_entries,
            limit=8_192,
        )
        assert got == Requirement(
            "hard", "overflow", "the provider reported an overflow (limit 8,192)", 5_000, 8_192
        )
        assert got.hard is True

    def test_an_overflow_without_a_limit_says_so(self) -> None:
        got = requirement(12_345, BUDGET, reason="overflow", output_tokens=1_000, new_entries=True)
        assert got == Requirement("hard", "overflow", "the provider reported an overflow", 12_345)
        assert got.limit == 0
