"""The per-session usage correction: pooled reports, bounds, fading, and the growth between
two usage anchors."""

from __future__ import annotations

import itertools

import pytest

from ctxengine.model import Message, Usage, assistant, tool_result, user
from ctxengine.model.parts import ToolCallPart
from ctxengine.policy.defaults import (
    USAGE_CORRECTION_MAX_RATIO,
    USAGE_CORRECTION_MIN_RATIO,
    USAGE_CORRECTION_PRIOR_TOKENS,
)
from ctxengine.tokens import HeuristicEstimator, UsageCorrection, anchor_growth

EST = HeuristicEstimator()


def small() -> UsageCorrection:
    """A correction with round numbers: 1,000 tokens of prior, 10,000 remembered."""
    return UsageCorrection(prior_tokens=1_000, memory_tokens=10_000)


class TestRatio:
    def test_starts_at_one_and_scales_nothing(self) -> None:
        c = UsageCorrection()
        assert (c.ratio, c.observations, c.scale(12_345)) == (1.0, 0, 12_345)
        assert (c.min_ratio, c.max_ratio) == (0.5, 2.0)
        assert (USAGE_CORRECTION_MIN_RATIO, USAGE_CORRECTION_MAX_RATIO) == (0.5, 2.0)
        assert c.prior_tokens == USAGE_CORRECTION_PRIOR_TOKENS == 4_096

    def test_reports_are_pooled_with_the_prior(self) -> None:
        c = small()
        # (1,000 + 1,200) / (1,000 + 1,000)
        assert c.observe(1_200, 1_000) == 1.1
        # (2,200 + 1,200) / (2,000 + 1,000)
        assert c.observe(1_200, 1_000) == 3_400 / 3_000
        assert c.observations == 2
        assert c.scale(1_000) == 1_134  # ceil(1,133.3)

    def test_a_provider_at_1_2_times_converges_to_1_2(self) -> None:
        c = small()
        # First report: (1,000 + 12,000) / (1,000 + 10,000) = 13/11; the pool then holds
        # 11,000 estimated tokens, over the memory: both sums fade to 10/11 (same ratio).
        assert c.observe(12_000, 10_000) == pytest.approx(13 / 11, rel=1e-12)
        # Each later report is half the pool after fading: the gap to 1.2 halves.
        ratios = [c.observe(12_000, 10_000) for _ in range(9)]
        gaps = [1.2 - r for r in ratios]
        assert gaps[0] == pytest.approx((1.2 - 13 / 11) / 2, rel=1e-9)
        assert all(b == pytest.approx(a / 2, rel=1e-6) for a, b in itertools.pairwise(gaps))
        assert 0 < gaps[-1] < 1e-4
        assert c.scale(10_000) == 12_000

    def test_a_provider_at_3_times_stops_at_the_upper_bound(self) -> None:
        c = small()
        # The report counts as 2 × 10,000: (1,000 + 20,000) / 11,000.
        assert c.observe(30_000, 10_000) == pytest.approx(21 / 11, rel=1e-12)
        for _ in range(30):
            assert c.observe(30_000, 10_000) <= 2.0
        assert c.ratio == pytest.approx(2.0, abs=1e-8)
        assert c.scale(1_000) == 2_000

    def test_a_provider_at_a_third_stops_at_the_lower_bound(self) -> None:
        c = small()
        assert c.observe(3_000, 9_000) == 0.55  # (1,000 + 0.5 × 9,000) / 10,000
        for _ in range(60):
            c.observe(3_000, 9_000)
        assert c.ratio == pytest.approx(0.5, abs=1e-8)
        assert c.ratio >= 0.5

    def test_reports_that_measured_nothing_are_ignored(self) -> None:
        c = small()
        assert c.observe(-300, 1_000) == 1.0  # the prompt shrank: dropped thinking blocks
        assert c.observe(500, 0) == 1.0
        assert c.observations == 0

    @pytest.mark.parametrize(
        ("kwargs", "message"),
        [
            ({"min_ratio": 0.0}, "0 < min_ratio <= 1 <= max_ratio"),
            ({"min_ratio": 1.2}, "0 < min_ratio <= 1 <= max_ratio"),
            ({"max_ratio": 0.9}, "0 < min_ratio <= 1 <= max_ratio"),
            ({"prior_tokens": 0}, "prior_tokens must be positive, got 0"),
            ({"prior_tokens": 100, "memory_tokens": 50}, "memory_tokens (50) must be at least"),
        ],
    )
    def test_bad_settings_are_refused(self, kwargs: dict[str, float], message: str) -> None:
        with pytest.raises(ValueError, match=message.replace("(", r"\(").replace(")", r"\)")):
            UsageCorrection(**kwargs)  # type: ignore[arg-type]


def session_messages() -> list[Message]:
    call = ToolCallPart("c1", "read", '{"path":"a.py"}')
    return [
        user("Fix the failing test in a.py."),  # 0
        assistant("Reading it.", call, usage=Usage(input_tokens=900, output_tokens=20)),  # 1
        tool_result("c1", "def add(a, b):\n    return a - b\n"),  # 2
        assistant("Found it.", usage=Usage(input_tokens=100, cache_read_tokens=880)),  # 3
        user("Also run the tests."),  # 4
        assistant("Running.", usage=Usage(input_tokens=40, cache_read_tokens=980)),  # 5
    ]


class TestAnchorGrowth:
    def test_growth_is_the_prompt_difference_against_the_estimate_between(self) -> None:
        msgs = session_messages()
        estimates = [EST.message(m) for m in msgs]
        # Reply 3's prompt (980) holds reply 1 and the tool result that reply 1's (900) did not.
        assert anchor_growth(msgs, 3, EST) == (980 - 900, estimates[1] + estimates[2])
        assert anchor_growth(msgs, 5, EST) == (1_020 - 980, estimates[3] + estimates[4])

    def test_no_growth_without_an_earlier_anchor_in_the_epoch(self) -> None:
        msgs = session_messages()
        assert anchor_growth(msgs, 1, EST) is None
        assert anchor_growth(msgs, 3, EST, fresh_from=2) is None

    def test_each_anchor_is_pooled_once(self) -> None:
        msgs = session_messages()
        c = small()
        assert c.observe_anchor("e3", msgs, 3, EST) is True
        assert c.observe_anchor("e3", msgs, 3, EST) is False
        assert c.observe_anchor("e1", msgs, 1, EST) is False  # nothing before it
        assert c.observations == 1
        reported, estimated = 80, EST.message(msgs[1]) + EST.message(msgs[2])
        assert c.ratio == (1_000 + reported) / (1_000 + estimated)
