"""The breaker, the overflow latch and the one fallback rule (ladder/recover.py)."""

from __future__ import annotations

import pytest

from ctxengine.ladder.recover import OverflowLatch, SummarizerBreaker, fallback_reason


class TestBreakerAndLatch:
    def test_the_third_failure_opens_the_breaker_and_a_success_closes_it(self) -> None:
        b = SummarizerBreaker(3)
        assert [b.failure(), b.failure(), b.failure()] == [False, False, True]
        assert (b.open, b.failures) == (True, 3)
        assert b.failure() is False
        b.success()
        assert (b.open, b.failures) == (False, 0)

    def test_the_overflow_latch_allows_one_recovery_until_cleared(self) -> None:
        latch = OverflowLatch()
        assert [latch.try_recover(), latch.try_recover()] == [True, False]
        latch.clear()
        assert latch.try_recover() is True


class TestFallbackRule:
    @pytest.mark.parametrize(
        ("opened", "hard", "mode", "retryable", "expected"),
        [
            (True, False, "breaker", True, "breaker"),
            (True, True, "on_failure", False, "breaker"),
            (False, True, "breaker", False, "must_fit"),
            (False, False, "breaker", True, None),
            (False, False, "on_failure", True, "on_failure"),
            (False, False, "on_failure", False, None),
        ],
    )
    def test_each_case(
        self, opened: bool, hard: bool, mode: str, retryable: bool, expected: str | None
    ) -> None:
        got = fallback_reason(
            opened_breaker=opened,
            hard=hard,
            mode=mode,  # type: ignore[arg-type]
            retryable=retryable,
        )
        assert got == expected
