"""``find_cut``: walk back to the keep-recent budget, then slide to a valid boundary.

Sizes are given per message (``per_message``) so every expected index is exact.
"""

from __future__ import annotations

import pytest
from boundary_helpers import Sizes, a, r, u

from ctxengine.boundaries import CutPoint, find_cut, valid_cut_points
from ctxengine.model import Message
from ctxengine.tokens import HeuristicEstimator

EST = Sizes()


def cut(
    msgs: list[Message], sizes: list[int], budget: int, *, split: bool = True
) -> CutPoint | None:
    return find_cut(msgs, budget, EST, per_message=sizes, allow_split_turn=split)


class TestReportedFailures:
    def test_an_earlier_call_that_never_got_a_result_does_not_block_later_cuts(self) -> None:
        msgs = [u(), a("lost"), u(), a("c2"), r("c2"), a(), u(), a()]
        sizes = [10] * 8
        assert cut(msgs, sizes, 25) == CutPoint(6, 6, False, 20)
        assert cut(msgs, sizes, 45) == CutPoint(5, 2, True, 30)
        assert cut(msgs, sizes, 45, split=False) == CutPoint(6, 6, False, 20)

    def test_a_split_point_between_two_calls_and_their_results_slides_forward(self) -> None:
        # A cut by share (keep the newest ~80 % of 110 tokens) would land on index 2, the
        # first result of the two-call message at 1: the cut slides past both results.
        msgs = [u(), a("c1", "c2"), r("c1"), r("c2"), a(), u(), a()]
        sizes = [10, 10, 30, 30, 10, 10, 10]
        assert valid_cut_points(msgs) == {0, 1, 4, 5, 6, 7}
        assert cut(msgs, sizes, 95) == CutPoint(4, 0, True, 30)
        assert cut(msgs, sizes, 95, split=False) == CutPoint(5, 5, False, 20)

    def test_a_cut_never_starts_on_a_result_whose_call_it_leaves_behind(self) -> None:
        msgs = [u(), a("c1", "c2"), r("c1"), r("c2"), a(), u(), a()]
        # a 4-message budget would start on 3 (the result of c2): the first valid point is
        # 4, and the turn start 5 still keeps half the budget, so it wins
        assert cut(msgs, [10] * 7, 40) == CutPoint(5, 5, False, 20)
        assert cut(msgs, [10] * 7, 41) == CutPoint(4, 0, True, 30)

    def test_a_two_call_exchange_under_budget_is_kept_unchanged(self) -> None:
        msgs = [u(), a(), u(), a("c1", "c2"), r("c1"), r("c2"), a()]
        sizes = [10] * 7
        assert cut(msgs, sizes, 50) == CutPoint(2, 2, False, 50)

    def test_a_two_call_exchange_over_budget_is_dropped_or_kept_whole(self) -> None:
        msgs = [u(), a(), u(), a("c1", "c2"), r("c1"), r("c2"), a()]
        sizes = [10] * 7
        for budget in (20, 30, 35):  # the walk stops at 5 or 4: inside the exchange
            assert cut(msgs, sizes, budget) == CutPoint(6, 2, True, 10)
            assert cut(msgs, sizes, budget, split=False) == CutPoint(2, 2, False, 50)

    def test_a_call_awaiting_human_confirmation_stays_uncompacted(self) -> None:
        msgs = [u(), a(), u(), a(), u("deploy"), a("c1", "confirm"), r("c1")]
        sizes = [10] * 7
        assert cut(msgs, sizes, 15) == CutPoint(5, 4, True, 20)
        assert cut(msgs, sizes, 15, split=False) == CutPoint(4, 4, False, 30)
        answered = [*msgs, r("confirm"), a(), u(), a()]
        assert cut(answered, [10] * 11, 15) == CutPoint(10, 9, True, 10)


class TestRule:
    def test_everything_within_budget_is_nothing_to_compact(self) -> None:
        msgs = [u(), a(), u(), a()]
        assert cut(msgs, [10] * 4, 40) is None
        assert cut([], [], 0) is None

    def test_a_near_turn_start_is_preferred_to_splitting(self) -> None:
        msgs = [u(), a("c1"), r("c1"), a(), u(), a()]
        # walk reaches index 3 (kept 30 ≤ 35); turn start 4 keeps 20 ≥ 35/2: take it
        assert cut(msgs, [10] * 6, 35) == CutPoint(4, 4, False, 20)
        # with a budget of 45 the walk reaches 2 (a result) → first valid 3; 4 keeps 20 < 22.5
        assert cut(msgs, [10] * 6, 45) == CutPoint(3, 0, True, 30)

    def test_a_single_turn_larger_than_the_budget_is_cut_at_an_assistant_boundary(self) -> None:
        msgs = [u(), a("c1"), r("c1"), a("c2"), r("c2"), a("c3"), r("c3"), a()]
        assert cut(msgs, [10] * 8, 35) == CutPoint(5, 0, True, 30)
        assert cut(msgs, [10] * 8, 35, split=False) is None

    def test_one_newest_message_over_the_budget_is_still_kept(self) -> None:
        msgs = [u(), a(), u(), a()]
        assert cut(msgs, [10, 10, 10, 500], 100) == CutPoint(3, 2, True, 500)
        assert cut(msgs, [10, 10, 10, 500], 100, split=False) == CutPoint(2, 2, False, 510)

    def test_no_valid_cut_at_all_gives_none(self) -> None:
        msgs = [u(), a("c1"), r("c1")]  # one turn, walk lands on the result
        assert cut(msgs, [10, 10, 10], 5, split=False) is None
        only_chunks = [a(), a(), a()]
        assert cut(only_chunks, [10] * 3, 5) is None

    def test_the_estimator_prices_messages_when_no_sizes_are_given(self) -> None:
        msgs = [u("x" * 400), a(text="y" * 400), u("z" * 40), a(text="w" * 40)]
        # 234, 234, 26, 26 tokens: an unbroken letter run costs 0.53 per letter on top
        got = find_cut(msgs, 60, HeuristicEstimator())
        assert got == CutPoint(2, 2, False, 52)

    def test_sizes_of_the_wrong_length_are_rejected(self) -> None:
        with pytest.raises(ValueError, match="2 estimates for 3 messages"):
            cut([u(), a(), u()], [1, 2], 10)
