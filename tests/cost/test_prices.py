"""The price table: the shipped figures, lookup by model name, overrides and bad input."""

from __future__ import annotations

import pytest

from ctxengine.cost import PriceTable, parse_price_table, shipped_price_table
from ctxengine.errors import ConfigError


def test_every_shipped_figure_names_its_source_and_date() -> None:
    table = shipped_price_table()
    assert len(table.models) >= 10
    for price in table.models.values():
        assert price.source and price.checked == "2026-12-01", price.name
        assert price.cached_input < price.input <= price.cache_write, price.name
    assert sorted(table.rules) == ["anthropic", "openai"]
    assert all(r.source and r.checked for r in table.rules.values())


@pytest.mark.parametrize(
    ("model", "key", "matched"),
    [
        ("claude-opus-4-6", "claude-opus-4-6", "exact"),
        ("claude-sonnet-4-5-20250929", "claude-sonnet-4-5", "prefix"),
        ("openrouter/anthropic/claude-3-haiku-20240307", "claude-3-haiku", "prefix"),
        ("claude-opus-4-1-20250805", "claude-opus-4-1", "prefix"),
        ("gpt-5.1-codex", "gpt-5", "prefix"),
        ("gpt-5-codex", "gpt-5-codex", "exact"),
        ("llama-4-maverick", "gpt-5", "default"),
        ("claude-9-unknown", "claude-sonnet-4-5", "default"),
        (None, "gpt-5", "default"),
    ],
)
def test_lookup_by_name(model: str | None, key: str, matched: str) -> None:
    choice = shipped_price_table().lookup(model)
    assert (choice.price.name, choice.matched) == (key, matched)


def test_the_provider_names_the_default_and_a_note_says_so() -> None:
    choice = shipped_price_table().lookup(None, "anthropic")
    assert choice.price.name == "claude-sonnet-4-5"
    assert choice.rules.mode == "breakpoints"
    assert choice.note == "no model given: prices of claude-sonnet-4-5 used"
    unknown = shipped_price_table().lookup("mystery-1")
    assert unknown.note == "no prices for 'mystery-1': prices of gpt-5 used"


def test_cost_in_dollars() -> None:
    price = shipped_price_table().lookup("claude-sonnet-4-5").price
    # 1M uncached at $3, 2M read at $0.30, 100k written at $3.75, 10k output at $15.
    cost = price.cost(uncached=1_000_000, cache_read=2_000_000, cache_write=100_000, output=10_000)
    assert cost == pytest.approx(3.0 + 0.6 + 0.375 + 0.15)
    long = price.cost(uncached=0, cache_read=0, cache_write=100_000, output=0, long_ttl=True)
    assert long == pytest.approx(0.6)


def test_an_override_replaces_models_and_rules_by_name() -> None:
    override = parse_price_table(
        {
            "models": {
                "gpt-5": {
                    "provider": "openai",
                    "input": 2.0,
                    "cached_input": 0.2,
                    "cache_write": 2.0,
                    "cache_write_long": 2.0,
                    "output": 16.0,
                    "min_prefix_tokens": 2048,
                }
            },
            "cache_rules": {
                "openai": {
                    "mode": "automatic",
                    "min_prefix_tokens": 1024,
                    "granularity_tokens": 64,
                    "max_breakpoints": 0,
                    "lookback_blocks": 0,
                    "ttl_s": 600,
                    "long_ttl_s": 3600,
                }
            },
        },
        "mine.json",
    )
    table = shipped_price_table().merged(override)
    choice = table.lookup("gpt-5")
    assert (choice.price.input, choice.rules.granularity_tokens, choice.rules.ttl_s) == (
        2.0,
        64,
        600.0,
    )
    assert choice.rules.min_prefix_tokens == 2048
    assert table.lookup("claude-opus-4-6").price.input == 5.0


@pytest.mark.parametrize(
    ("doc", "message"),
    [
        ([], "mine.json: expected a JSON object"),
        ({"prices": {}}, "mine.json: unknown field(s) ['prices']"),
        ({"models": []}, "mine.json: models: expected an object"),
        (
            {"models": {"m": {"provider": "openai", "input": "x"}}},
            "mine.json: models.m.input: expected a number, got 'x'",
        ),
        (
            {
                "models": {
                    "m": {
                        "provider": "openai",
                        "input": 1,
                        "cached_input": 1,
                        "cache_write": 1,
                        "cache_write_long": 1,
                    }
                }
            },
            "mine.json: models.m: missing field 'output'",
        ),
        (
            {"models": {"m": {"provider": "openai", "input": -1}}},
            "mine.json: models.m.input: must not be negative, got -1",
        ),
        (
            {"models": {"m": {"colour": "red"}}},
            "mine.json: models.m: unknown field(s) ['colour']",
        ),
        (
            {
                "cache_rules": {
                    "x": {
                        "mode": "sometimes",
                        "min_prefix_tokens": 1,
                        "granularity_tokens": 1,
                        "max_breakpoints": 0,
                        "lookback_blocks": 0,
                        "ttl_s": 1,
                        "long_ttl_s": 1,
                    }
                }
            },
            "mine.json: cache_rules.x.mode: expected one of ('breakpoints', 'automatic'), "
            "got 'sometimes'",
        ),
        (
            {"default_models": {"openai": 3}},
            "mine.json: default_models.openai: expected a model name",
        ),
    ],
)
def test_a_malformed_table_names_the_file_and_field(doc: object, message: str) -> None:
    with pytest.raises(ConfigError) as info:
        parse_price_table(doc, "mine.json")
    assert str(info.value) == message


def test_an_unknown_model_without_a_default_is_a_config_error() -> None:
    with pytest.raises(ConfigError, match="no prices for model 'x' and no default model for"):
        PriceTable({}, {}).lookup("x")
