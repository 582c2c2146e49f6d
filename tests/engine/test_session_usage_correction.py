"""A session learns its provider's tokenizer from usage reports: the ratio of reported to
estimated growth between replies, bounded, scales what the usage anchor does not cover."""

from __future__ import annotations

import math

import pytest

from ctxengine.engine import Session
from ctxengine.engine.view import context_tokens
from ctxengine.model import Usage, assistant, system, user
from ctxengine.policy.defaults import DEFAULT_IMAGE_TOKENS
from ctxengine.tokens import HeuristicEstimator, UsageCorrection

EST = HeuristicEstimator(image_tokens=DEFAULT_IMAGE_TOKENS)  # what a Session uses
TASK = (
    "The agent reads the failing test before it edits any file. When the build breaks, it "
    "runs the linter and reports the exact error line. Every change is small and reviewed. "
)


def converse(session: Session, factor: float, turns: int) -> list[tuple[int, int]]:
    """``turns`` calls against a provider whose prompt count is ``factor`` times our
    estimate of each request; returns the (reported, estimated) growth between replies."""
    growth: list[tuple[int, int]] = []
    last: tuple[int, int] | None = None
    for turn in range(turns):
        session.append(user(f"Step {turn}. " + TASK * (turn + 1)))
        ctx = session.prepare()
        prompt = round(factor * ctx.tokens)
        if last is not None:
            growth.append((prompt - last[0], ctx.tokens - last[1]))
        last = (prompt, ctx.tokens)
        session.record(assistant("Done. " * 10, usage=Usage(input_tokens=prompt, output_tokens=12)))
    return growth


def fresh(correction: UsageCorrection | None = None) -> Session:
    s = Session(1_000_000)
    if correction is not None:
        s.usage_correction = correction
    s.append(system("You are a careful coding agent."))
    return s


class TestSession:
    def test_the_ratio_starts_at_one_and_the_first_reply_teaches_nothing(self) -> None:
        s = fresh()
        assert s.usage_correction is not None
        assert (s.usage_correction.ratio, s.usage_correction.observations) == (1.0, 0)
        converse(s, 1.2, 1)
        s.context_tokens(s.project())
        assert s.usage_correction.observations == 0  # a growth needs two replies

    def test_a_provider_at_1_2_times_our_estimate_moves_the_ratio_to_1_2(self) -> None:
        s = fresh(UsageCorrection(prior_tokens=100, memory_tokens=1_000))
        growth = converse(s, 1.2, 20)
        s.context_tokens(s.project())
        # The session pooled exactly the growth the provider reported between replies.
        expected = UsageCorrection(prior_tokens=100, memory_tokens=1_000)
        for reported, estimated in growth:
            expected.observe(reported, estimated)
        assert s.usage_correction is not None
        assert s.usage_correction.observations == 19
        assert s.usage_correction.ratio == expected.ratio
        assert s.usage_correction.ratio == pytest.approx(1.2, abs=0.005)

    def test_the_estimated_tail_is_scaled_by_the_ratio(self) -> None:
        s = fresh(UsageCorrection(prior_tokens=100, memory_tokens=1_000))
        converse(s, 1.2, 20)
        last = s.entries[-1].message
        assert last is not None and last.usage is not None
        tail = user("Now run the whole suite and report the failures. " * 20)
        s.append(tail)
        ctx = s.project()
        assert s.usage_correction is not None
        ratio = s.usage_correction.ratio
        assert s.context_tokens(ctx) == last.usage.context_tokens + math.ceil(
            EST.message(tail) * ratio
        )
        assert s.context_tokens(ctx) > last.usage.context_tokens + EST.message(tail)

    def test_a_provider_at_3_times_stops_at_the_bound(self) -> None:
        s = fresh(UsageCorrection(prior_tokens=100, memory_tokens=1_000))
        converse(s, 3.0, 20)
        s.context_tokens(s.project())
        assert s.usage_correction is not None
        assert 1.99 < s.usage_correction.ratio <= 2.0

    def test_the_default_prior_holds_the_ratio_back_on_short_turns(self) -> None:
        s = fresh()
        growth = converse(s, 1.2, 4)
        s.context_tokens(s.project())
        estimated = sum(e for _, e in growth)
        reported = sum(r for r, _ in growth)
        assert s.usage_correction is not None
        assert s.usage_correction.ratio == (4_096 + reported) / (4_096 + estimated)
        assert 1.0 < s.usage_correction.ratio < 1.1

    def test_no_correction_when_turned_off(self) -> None:
        s = fresh()
        s.usage_correction = None
        converse(s, 2.0, 4)
        s.append(user(TASK))
        last = s.entries[-2].message
        assert last is not None and last.usage is not None
        assert s.context_tokens(s.project()) == last.usage.context_tokens + EST.message(user(TASK))


class TestMeasuredOnce:
    def test_the_same_context_measured_again_keeps_its_size_until_something_changes(
        self,
    ) -> None:
        """The size of the last context measured is kept while the history, estimator,
        correction and window stay; a change of them measures it again."""
        s = fresh(UsageCorrection(prior_tokens=100, memory_tokens=1_000))
        converse(s, 1.2, 3)
        s.append(user("Next. " + TASK * 5))  # estimated: after the usage anchor
        ctx = s.project()
        size = s.context_tokens(ctx)
        assert s.usage_correction is not None
        assert s.usage_correction.ratio > 1.0
        assert s.context_tokens(ctx) == size
        s.usage_correction = None  # the estimated tail no longer scaled
        plain = context_tokens(ctx, s.log.history, s.log.estimator, None, window=1_000_000)
        assert plain < size
        assert s.context_tokens(ctx) == plain
        s.append(user("One more step."))
        s.usage_correction = UsageCorrection(min_ratio=0.5)  # pools the anchor's growth
        again = UsageCorrection(min_ratio=0.5)
        expected = context_tokens(ctx, s.log.history, s.log.estimator, again, window=1_000_000)
        assert expected != plain
        assert s.context_tokens(ctx) == expected
