"""Sizing an overflow recovery: the room an output budget leaves for history, the target a
recovery compacts to, and the budget resolved for that target."""

from __future__ import annotations

import pytest

from ctxengine.errors import ConfigError, ContextOverflow, ProviderOverflow
from ctxengine.ladder.recover import check_output_room, recovery_budget, recovery_target
from ctxengine.policy import DEFAULT_POLICY


def target(overflow: ContextOverflow, **kw: int | bool) -> int:
    args: dict[str, int | bool] = {
        "trigger": 51_200,
        "window": 64_000,
        "tokens": 10_939,
        "fixed": 300,
        "output": 4_096,
        "just_compacted": True,
    }
    args.update(kw)
    return recovery_target(overflow, **args)  # type: ignore[arg-type]


class TestCheckOutputRoom:
    def test_the_room_is_the_limit_less_output_margin_and_fixed_part(self) -> None:
        assert check_output_room(64_000, 300, 4_096) == 64_000 - 4_096 - 3_200 - 300

    def test_less_than_the_minimum_room_is_a_config_error(self) -> None:
        assert check_output_room(10_000, 0, 9_244) == 256
        with pytest.raises(ConfigError, match="leave 255 tokens of the 10000-token window"):
            check_output_room(10_000, 0, 9_245)


class TestRecoveryTarget:
    def test_a_reported_limit_below_the_trigger_sets_the_target(self) -> None:
        assert target(ProviderOverflow(14_210, 8_192)) == 8_192 - 4_096 - 409

    def test_a_reported_limit_above_the_trigger_leaves_the_trigger(self) -> None:
        assert target(ProviderOverflow(210_000, 200_000)) == 51_200

    def test_no_reported_limit_right_after_a_compaction_aims_at_70_percent(self) -> None:
        assert target(ProviderOverflow(None, None, status=413)) == 7_657

    def test_no_reported_limit_with_new_entries_aims_at_the_trigger(self) -> None:
        overflow = ProviderOverflow(None, None, status=413)
        assert target(overflow, just_compacted=False) == 51_200

    def test_an_output_budget_filling_the_reported_limit_is_a_config_error(self) -> None:
        with pytest.raises(ConfigError, match="of the provider's reported 64000-token window"):
            target(ProviderOverflow(74_012, 64_000), output=63_000)


class TestRecoveryBudget:
    def test_caps_shrink_with_the_target(self) -> None:
        budget = DEFAULT_POLICY.resolve(64_000)
        got = recovery_budget(budget, DEFAULT_POLICY, 3_687)
        # scaled window: 3687 * 64000 // 51200 = 4608
        assert (got.trigger, got.keep_recent, got.summary_max, got.truncate_tokens) == (
            3_687,
            1_152,
            691,
            921,
        )
        # headroom int(3687 * 0.55) = 2027; the task stays verbatim up to 60 % of the
        # recovery's target: int((3687 - 2027) * 0.6) = 996, as resolve() computes it.
        assert (got.headroom, got.target) == (2_027, 1_660)
        assert got.goal_max == 996 and got.window == 64_000

    def test_a_target_at_the_trigger_keeps_the_budget(self) -> None:
        budget = DEFAULT_POLICY.resolve(64_000)
        assert recovery_budget(budget, DEFAULT_POLICY, 51_200) is budget
