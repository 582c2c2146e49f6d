"""Every preset by name, its budget at a 200k window, and the exact token at which it
compacts a constructed history (one token under: no compaction)."""

from __future__ import annotations

import pytest
from presets_helpers import EST, fill_to, session, system

from ctxengine.errors import ConfigError
from ctxengine.policy import DEFAULT_POLICY, Policy
from ctxengine.policy.presets import (
    BASELINE_PRESETS,
    PRESET_NAMES,
    SYSTEM_PRESETS,
    offline,
    preset,
)


def test_the_preset_names_systems_first_then_baselines() -> None:
    assert PRESET_NAMES == (
        "default",
        "pi",
        "codex",
        "gemini-cli",
        "opencode",
        "claude-code",
        "roo-code",
        "openhands",
        "none",
        "keep-last-n",
        "observation-masking",
    )
    assert SYSTEM_PRESETS + BASELINE_PRESETS == PRESET_NAMES
    assert BASELINE_PRESETS == ("none", "keep-last-n", "observation-masking")


@pytest.mark.parametrize("name", PRESET_NAMES)
def test_each_preset_is_a_policy_named_after_it(name: str) -> None:
    p = preset(name)
    assert isinstance(p, Policy)
    assert p.name == name
    assert preset(name) == p  # a fresh, equal value each time


def test_the_default_preset_is_the_default_policy() -> None:
    assert preset("default") == DEFAULT_POLICY


def test_an_unknown_name_is_a_config_error_listing_the_known_ones() -> None:
    with pytest.raises(ConfigError) as info:
        preset("cursor")
    assert str(info.value) == (
        "no preset named 'cursor'; known: default, pi, codex, gemini-cli, opencode, "
        "claude-code, roo-code, openhands, none, keep-last-n, observation-masking"
    )


def test_offline_replaces_only_a_model_summarizer() -> None:
    assert preset("pi").summarizer == "hybrid"
    assert offline(preset("pi")) == preset("pi").model_copy(update={"summarizer": "extractive"})
    assert preset("codex").summarizer == "llm"
    assert offline(preset("codex")).summarizer == "extractive"
    keep_last = preset("keep-last-n")
    assert offline(keep_last) is keep_last  # "none" is no model summarizer


@pytest.mark.parametrize(
    ("name", "trigger", "reserve", "keep_recent"),
    [
        # min(200,000 − min(20,000 + 13,000, 20 %), 90 %); tail 20,000
        ("default", 167_000, 33_000, 20_000),
        # window − reserveTokens 16,384; keepRecentTokens 20,000
        ("pi", 183_616, 16_384, 20_000),
        # (window × 9) / 10; no tail (user messages are retained instead)
        ("codex", 180_000, 20_000, 0),
        # 50 % (the automatic reserve of 33,000 does not bind); the tail is a share of
        # the conversation, planned per compaction
        ("gemini-cli", 100_000, 33_000, 20_000),
        # window − min(20,000, max output 4,096); tail min(15,000, 25 % of usable)
        ("opencode", 195_904, 4_096, 15_000),
        # window − min(max output 20,000, 20,000) − 13,000; no tail
        ("claude-code", 167_000, 33_000, 0),
        # 0.9 × window − max output 4,096
        ("roo-code", 175_904, 24_096, 0),
        # the token trigger: the window less the automatic reserve (soft)
        ("openhands", 167_000, 33_000, 20_000),
        ("none", 167_000, 33_000, 20_000),
        ("keep-last-n", 167_000, 33_000, 20_000),
        ("observation-masking", 167_000, 33_000, 20_000),
    ],
)
def test_budget_at_a_200k_window(name: str, trigger: int, reserve: int, keep_recent: int) -> None:
    b = preset(name).resolve(200_000)
    assert (b.trigger, b.reserve, b.keep_recent) == (trigger, reserve, keep_recent)


def test_the_output_cap_moves_the_trigger_of_the_presets_that_reserve_it() -> None:
    # OpenCode: window − min(20,000, max output); Roo Code: 0.9 × window − max output;
    # Claude Code: window − min(max output, 20,000) − 13,000.
    assert preset("opencode").resolve(200_000, max_output=32_000).trigger == 180_000
    assert preset("opencode").resolve(200_000, max_output=8_192).trigger == 191_808
    assert preset("roo-code").resolve(200_000, max_output=8_192).trigger == 171_808
    assert preset("claude-code").resolve(200_000, max_output=8_192).trigger == 178_808
    assert preset("claude-code").resolve(200_000, max_output=64_000).trigger == 167_000
    # pi and Codex reserve no output.
    assert preset("pi").resolve(200_000, max_output=64_000).trigger == 183_616


def test_a_fixed_reserve_takes_at_most_half_a_small_window() -> None:
    # pi at 32,000: 16,384 > 16,000 → 16,000; Claude Code: 33,000 → 16,000.
    assert preset("pi").resolve(32_000).trigger == 16_000
    assert preset("claude-code").resolve(32_000).trigger == 16_000


#: (preset, window, trigger): the window chosen so that each preset's own formula binds.
TRIGGERS: list[tuple[str, int, int]] = [
    ("default", 40_000, 32_000),  # min(40,000 − 8,000 (20 %), 36,000)
    ("pi", 40_000, 23_616),  # 40,000 − 16,384
    ("codex", 40_000, 36_000),  # 90 %
    ("gemini-cli", 40_000, 20_000),  # 50 %
    ("opencode", 40_000, 35_904),  # 40,000 − min(20,000, 4,096)
    ("claude-code", 100_000, 67_000),  # 100,000 − 20,000 − 13,000
    ("roo-code", 40_000, 31_904),  # 36,000 − 4,096
    ("openhands", 40_000, 32_000),  # the token trigger (few messages: the count is far)
    ("keep-last-n", 40_000, 32_000),
    ("observation-masking", 40_000, 32_000),
]


@pytest.mark.parametrize(("name", "window", "trigger"), TRIGGERS)
def test_a_preset_compacts_exactly_at_its_trigger(name: str, window: int, trigger: int) -> None:
    assert preset(name).resolve(window).trigger == trigger
    under = session(name, window)
    under.append(system(20))
    fill_to(under, trigger - 1)
    assert under.plan(reason="threshold") is None
    ctx = under.prepare()
    under.close()
    # Codex starts its background compaction at 65 % of the window (given up on close).
    background = ["precompute_started", "precompute_cancelled"] if name == "codex" else []
    assert (ctx.epoch, ctx.tokens) == (0, trigger - 1)
    assert [e.step for e in under.events] == background

    at = session(name, window)
    at.append(system(20))
    fill_to(at, trigger)
    plan = at.plan(reason="threshold")
    assert plan is not None and plan.tokens_before == trigger
    assert plan.requirement.detail == f"context {trigger:,} ≥ trigger {trigger:,}"
    ctx = at.prepare()
    assert ctx.epoch == 1
    steps = [(e.step, e.tokens_before) for e in at.events]
    assert steps == [("compaction", trigger)]
    assert ctx.tokens < trigger


def test_none_never_compacts_even_over_the_window() -> None:
    s = session("none", 40_000)
    fill_to(s, 45_000)
    assert s.plan(reason="threshold") is None
    ctx = s.prepare()
    assert (ctx.epoch, ctx.tokens, s.events) == (0, 45_000, [])
    assert EST.message(ctx.messages[0]) == 2_000


@pytest.mark.parametrize("name", PRESET_NAMES)
def test_every_preset_resolves_down_to_the_smallest_window(name: str) -> None:
    b = preset(name).resolve(1_000)
    assert 0 < b.trigger <= 900 and b.keep_recent < b.trigger


def test_a_tail_floor_takes_at_most_half_the_trigger() -> None:
    # OpenCode at 1,000: reserve min(20,000, 4,096) capped at half the window: trigger 500;
    # 25 % of usable is 125, the 2,000 floor is held to 250.
    b = preset("opencode").resolve(1_000)
    assert (b.trigger, b.keep_recent) == (500, 250)
