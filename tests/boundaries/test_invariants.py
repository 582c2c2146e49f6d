"""Each protocol invariant alone, with exact safe index sets."""

from __future__ import annotations

from boundary_helpers import a, r, u

from ctxengine.boundaries import valid_cut_points
from ctxengine.boundaries.invariants import (
    exchange_atomicity,
    pending_calls,
    reasoning_adjacency,
    tool_pairing,
)

HISTORY = [
    u(),  # 0
    a("c1", "c2"),  # 1
    r("c1"),  # 2
    r("c2"),  # 3
    a(text="done"),  # 4
    u(),  # 5
    a(thinking=True),  # 6
    a("c3"),  # 7
    r("c3"),  # 8
    a(text="fixed"),  # 9
]
ALL = frozenset(range(11))


class TestToolPairing:
    def test_never_starts_on_a_result_nor_leaves_a_call_behind(self) -> None:
        assert tool_pairing.safe_indices(HISTORY) == ALL - {2, 3, 8}

    def test_a_late_result_blocks_every_cut_between_it_and_its_call(self) -> None:
        msgs = [u(), a("c1"), u("interjection"), a(text="meanwhile"), r("c1"), a()]
        assert tool_pairing.safe_indices(msgs) == {0, 1, 5, 6}

    def test_source_orphans_only_block_their_own_index(self) -> None:
        msgs = [u(), r("ghost"), a(), u()]
        assert tool_pairing.safe_indices(msgs) == {0, 2, 3, 4}


class TestExchangeAtomicity:
    def test_no_cut_inside_an_exchange(self) -> None:
        assert exchange_atomicity.safe_indices(HISTORY) == ALL - {2, 3, 7, 8}

    def test_an_unanswered_exchange_spans_only_its_reply(self) -> None:
        msgs = [u(), a("c1"), u(), a(text="moved on")]
        assert exchange_atomicity.safe_indices(msgs) == {0, 1, 2, 3, 4}


class TestReasoningAdjacency:
    def test_chunks_of_one_reply_stay_together(self) -> None:
        assert reasoning_adjacency.safe_indices(HISTORY) == ALL - {7}
        assert reasoning_adjacency.safe_indices([a(), a(), a()]) == {0, 3}


class TestPendingCalls:
    def test_a_call_awaiting_its_result_keeps_its_reply_in_the_tail(self) -> None:
        msgs = [u(), a(text="plan"), u("deploy it"), a("confirm")]
        assert pending_calls.safe_indices(msgs) == {0, 1, 2, 3}

    def test_parallel_calls_with_one_still_running(self) -> None:
        msgs = [u(), a("c1", "c2"), r("c1")]
        assert pending_calls.safe_indices(msgs) == {0, 1}

    def test_a_reply_in_pieces_is_kept_from_its_first_piece(self) -> None:
        msgs = [u(), a(), u(), a(thinking=True), a("c1"), a("c2"), r("c2")]
        assert pending_calls.safe_indices(msgs) == {0, 1, 2, 3}

    def test_a_call_abandoned_before_more_work_is_not_pending(self) -> None:
        msgs = [u(), a("lost"), u("try again"), a("c2"), r("c2"), a()]
        assert pending_calls.safe_indices(msgs) == frozenset(range(7))


class TestIntersection:
    def test_valid_cut_points_are_the_intersection(self) -> None:
        assert valid_cut_points(HISTORY) == {0, 1, 4, 5, 6, 9, 10}
        assert valid_cut_points([]) == {0}
