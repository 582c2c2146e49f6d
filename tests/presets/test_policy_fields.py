"""The policy fields the presets are made of, on any policy: sizes, per-model overrides,
check points, the event-count trigger, a cold-cache prune, and their validation."""

from __future__ import annotations

import pytest
from presets_helpers import EST, answer, assistant, calling, text_of, user

from ctxengine.engine import Session
from ctxengine.errors import ConfigError
from ctxengine.ladder.prune import cache_cold
from ctxengine.ladder.trigger import requirement
from ctxengine.policy import Policy
from ctxengine.policy.policy import ModelOverride, size_tokens


class TestSizes:
    def test_a_size_is_tokens_or_a_fraction_of_the_window(self) -> None:
        assert size_tokens(("tokens", 150_000), 200_000) == 150_000
        assert size_tokens(("fraction", 0.8), 200_000) == 160_000
        assert size_tokens(7, 200_000) == 7

    def test_trigger_as_a_size_replaces_the_ratio(self) -> None:
        assert Policy(trigger=("fraction", 0.8), reserve_tokens=0).resolve(200_000).trigger == (
            160_000
        )
        assert Policy(trigger=("tokens", 150_000), reserve_tokens=0).resolve(200_000).trigger == (
            150_000
        )
        # Still the least of the three: window − reserve, the size, the absolute cap.
        p = Policy(trigger=("tokens", 150_000), reserve_tokens=60_000, max_context_tokens=120_000)
        assert p.resolve(200_000).trigger == 120_000

    def test_a_reserve_may_be_a_fraction_capped_by_reserve_max_ratio(self) -> None:
        assert Policy(reserve_tokens=("fraction", 0.1)).resolve(100_000).reserve == 10_000
        p = Policy(reserve_tokens=30_000, reserve_max_ratio=0.25, trigger_ratio=1.0)
        assert (p.resolve(100_000).reserve, p.resolve(200_000).reserve) == (25_000, 30_000)

    @pytest.mark.parametrize(
        "bad",
        [("fraction", 1.5), ("tokens", -1), ("percent", 50), ("tokens",)],
    )
    def test_an_invalid_size_is_a_config_error_naming_the_field(self, bad: object) -> None:
        with pytest.raises(ConfigError, match="trigger"):
            Policy(trigger=bad)

    def test_keep_recent_base_and_floor(self) -> None:
        # 25 % of the usable window (100,000 − 20,000), at least 2,000, at most 15,000.
        p = Policy(
            reserve_tokens=20_000,
            keep_recent_tokens=15_000,
            keep_recent_base="usable",
            keep_recent_min_tokens=2_000,
        )
        assert p.resolve(100_000).keep_recent == 15_000
        assert p.resolve(40_000).keep_recent == 5_000  # 25 % of 20,000
        assert p.resolve(24_000).keep_recent == 2_000  # 25 % of 4,000 = 1,000 → 2,000


class TestModelOverrides:
    POLICY = Policy(
        model_overrides=(
            ModelOverride(model="gpt-5*", trigger_ratio=0.8),
            ModelOverride(model="claude-*", max_context_tokens=150_000, keep_recent_tokens=8_000),
        )
    )

    def test_the_first_matching_override_applies(self) -> None:
        assert self.POLICY.for_model("gpt-5-codex").trigger_ratio == 0.8
        claude = self.POLICY.for_model("claude-sonnet-4-5")
        assert (claude.max_context_tokens, claude.keep_recent_tokens) == (150_000, 8_000)
        assert claude.trigger_ratio == 0.9
        assert claude.resolve(1_000_000).trigger == 150_000

    def test_no_match_or_no_model_is_the_policy_itself(self) -> None:
        assert self.POLICY.for_model("gemini-2.5-pro") is self.POLICY
        assert self.POLICY.for_model(None) is self.POLICY

    def test_an_override_rejects_unknown_fields(self) -> None:
        with pytest.raises(ConfigError, match="invalid model override"):
            ModelOverride(model="x", summarizer="llm")


class TestCheckPoints:
    def test_turn_start_checks_only_before_a_call_that_opens_a_turn(self) -> None:
        # Window 20,000, reserve 6,000: trigger 14,000; soft up to 20,000 − 4,096 of output.
        policy = Policy(
            check_points="turn_start",
            reserve_tokens=6_000,
            prune_enabled=False,
            keep_recent_tokens=500,
        )
        s = Session(20_000, policy=policy, estimator=EST)
        s.append(user("task", 3_996))  # 4,000
        for k, size in ((1, 3_990), (2, 3_990), (3, 1_990)):
            s.append(calling(f"c{k}"))  # 11
            s.append(answer(f"c{k}", text_of(f"out{k}", size)))  # size + 5
        assert s.project().tokens == 14_018
        ctx = s.prepare()  # mid-turn (after tool results): not a check point
        assert (ctx.epoch, s.events) == (0, [])
        s.append(assistant("done", 20))
        s.append(user("next", 20))
        ctx = s.prepare()  # a new turn: checked, compacted
        assert ctx.epoch == 1

    def test_a_context_over_the_window_is_compacted_at_any_call(self) -> None:
        budget = Policy(check_points="turn_start").resolve(10_000)
        req = requirement(
            9_000,
            budget,
            reason="threshold",
            output_tokens=2_000,
            new_entries=True,
            check_point=False,
        )
        assert req is not None and req.level == "hard"
        soft = requirement(
            8_000,
            budget,
            reason="threshold",
            output_tokens=1_000,
            new_entries=True,
            check_point=False,
        )
        assert soft is None


def test_the_event_count_trigger_is_soft_and_counts_messages() -> None:
    budget = Policy().resolve(100_000)
    req = requirement(
        1_000,
        budget,
        reason="threshold",
        output_tokens=1_000,
        new_entries=True,
        messages=50,
        max_messages=50,
    )
    assert req is not None
    assert (req.level, req.detail) == ("soft", "context holds 50 messages ≥ 50")
    assert (
        requirement(
            1_000,
            budget,
            reason="threshold",
            output_tokens=1_000,
            new_entries=True,
            messages=49,
            max_messages=50,
        )
        is None
    )


class TestCacheCold:
    def test_the_cache_is_cold_after_its_ttl(self) -> None:
        assert cache_cold("2026-01-01T10:00:00+00:00", "2026-01-01T10:05:00+00:00", 300)
        assert not cache_cold("2026-01-01T10:00:00+00:00", "2026-01-01T10:04:59+00:00", 300)
        assert not cache_cold(None, "2026-01-01T10:05:00+00:00", 300)
        assert not cache_cold("yesterday", "2026-01-01T10:05:00+00:00", 300)

    def test_a_cold_cache_only_prune_waits_for_the_ttl(self) -> None:
        policy = Policy(
            prune_when="always",
            prune_cache_cold_only=True,
            prune_protect_tokens=0,
            prune_minimum_tokens=0,
            prune_protect_turns=0,
            prune_protect_results=1,
        )

        def build(last_at: str) -> Session:
            s = Session(100_000, policy=policy, estimator=EST)
            s.append(user("task", 20), created_at="2026-01-01T10:00:00+00:00")
            for k, t in ((1, "10:00:10"), (2, "10:00:20")):
                s.append(calling(f"c{k}"), created_at=f"2026-01-01T{t}+00:00")
                s.append(answer(f"c{k}", text_of("out", 200)), created_at=f"2026-01-01T{t}+00:00")
            s.append(assistant("done", 10), created_at="2026-01-01T10:00:30+00:00")
            s.append(user("next", 10), created_at=last_at)
            return s

        warm = build("2026-01-01T10:05:29+00:00")
        assert warm.prepare().pruned == ()
        cold = build("2026-01-01T10:05:30+00:00")
        assert cold.prepare().pruned == ("c1",)
