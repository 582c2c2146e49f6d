"""What ``replay --policy`` and ``report`` share: policies by name, the price table with the
user's overrides, the comparison run with a progress bar, and the cache check."""

from __future__ import annotations

import json
from collections.abc import Sequence
from pathlib import Path
from typing import Annotated

import typer

from ctxengine.cli.load import Target
from ctxengine.cli.progress import Tracker
from ctxengine.cost import PriceTable, check_complete, parse_price_table, shipped_price_table
from ctxengine.errors import ConfigError
from ctxengine.policy import Policy
from ctxengine.policy.presets import PRESET_NAMES, preset
from ctxengine.replay.compare import Comparison, compare
from ctxengine.replay.source import check_cache

PolicyOpt = Annotated[
    str | None,
    typer.Option(
        "--policy",
        help="Policies to replay side by side, comma-separated presets "
        f"({', '.join(PRESET_NAMES)}); prints one comparison table.",
    ),
]
SampleOpt = Annotated[
    int,
    typer.Option(
        "--sample",
        min=0,
        help="Validate every Nth request in full and leave the others unchecked (default 0: "
        "every request, its new tail within an epoch).",
    ),
]
PriceModelOpt = Annotated[
    str | None,
    typer.Option("--model", help="Model to price (default: the one the transcript records)."),
]
PricesOpt = Annotated[
    str | None,
    typer.Option(
        "--prices",
        help="JSON file of prices and cache rules laid over the shipped table "
        "(ctxengine/cost/prices.json has the shape).",
    ),
]
CacheTtlOpt = Annotated[
    str,
    typer.Option("--cache-ttl", help="Lifetime cache writes ask for: 5m (default) or 1h."),
]
CacheProviderOpt = Annotated[
    str | None,
    typer.Option(
        "--cache-provider",
        help="Cache rules to simulate (anthropic, openai; default: those of the priced model).",
    ),
]


def policies_from(names: str, keep_recent: int | None = None) -> list[tuple[str, Policy]]:
    """``(name, policy)`` per comma-separated preset name, in order (each once), with an
    explicit keep-recent budget (tokens) applied to every one.

    Raises:
        ConfigError: an unknown preset, or no name at all.
    """
    chosen = list(dict.fromkeys(n.strip() for n in names.split(",") if n.strip()))
    if not chosen:
        raise ConfigError(f"--policy needs preset names; known: {', '.join(PRESET_NAMES)}")
    out: list[tuple[str, Policy]] = []
    for name in chosen:
        policy = preset(name)
        if keep_recent is not None:
            update = {"keep_recent_tokens": keep_recent, "keep_recent_max_ratio": 1.0}
            policy = policy.model_copy(update=update)
        out.append((name, policy))
    return out


def price_table(path: str | None) -> PriceTable:
    """The shipped prices, with the file at ``path`` laid over them.

    Raises:
        ConfigError: the file cannot be read, is not JSON, or has a malformed entry (named).
    """
    table = shipped_price_table()
    if path is None:
        return table
    try:
        doc = json.loads(Path(path).read_text(encoding="utf-8"))
    except OSError as exc:
        raise ConfigError(f"prices file {path}: {exc.strerror or exc}") from exc
    except ValueError as exc:
        raise ConfigError(f"prices file {path}: not valid JSON ({exc})") from exc
    return check_complete(table.merged(parse_price_table(doc, path)), path)


def long_ttl_of(value: str) -> bool:
    """``--cache-ttl``: ``5m`` → False, ``1h`` → True.

    Raises:
        ConfigError: any other value.
    """
    if value not in ("5m", "1h"):
        raise ConfigError(f"--cache-ttl must be 5m or 1h, got {value!r}")
    return value == "1h"


def run_comparison(
    target: Target,
    policies: Sequence[tuple[str, Policy]],
    *,
    window: int,
    prices: PriceTable,
    model: str | None,
    cache_provider: str | None,
    long_ttl: bool,
    sample: int,
    tracker: Tracker,
) -> Comparison:
    """Replay ``target`` under every policy (counted on ``tracker``), then check the cache
    model against the transcript's recorded cache reads.

    Raises:
        ConfigError: an unknown cache provider, or what
            :func:`~ctxengine.replay.compare.compare` raises.
    """
    if cache_provider is not None and cache_provider not in prices.rules:
        known = ", ".join(sorted(prices.rules))
        raise ConfigError(f"no cache rules for {cache_provider!r}; known: {known}")
    replies = sum(
        1 for e in target.entries if e.message is not None and e.message.role == "assistant"
    )
    tracker.step("replaying calls", total=replies * len(policies))
    comparison = compare(
        target.entries,
        policies,
        window=window,
        prices=prices,
        source=target.label,
        model=model,
        rules=None if cache_provider is None else prices.rules[cache_provider],
        long_ttl=long_ttl,
        sample=sample,
        on_step=lambda name, _s: tracker.advance(),
    )
    tracker.step("checking the cache model against the recorded reads")
    check = check_cache(target.entries, comparison.price.rules, long_ttl=long_ttl)
    comparison.cache_check = None if check is None else check.to_dict()
    return comparison
