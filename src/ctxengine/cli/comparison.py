"""What ``replay --policy`` and ``report`` share: policies by name, the price table with the
user's overrides, the comparison run with a progress bar, and the cache check."""

from __future__ import annotations

import json
import os
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Annotated

import typer

from ctxengine.cli.load import Target
from ctxengine.cli.options import TokenizerChoice
from ctxengine.cli.progress import Tracker
from ctxengine.cost import (
    CacheRules,
    PriceTable,
    check_complete,
    parse_price_table,
    shipped_price_table,
)
from ctxengine.errors import ConfigError
from ctxengine.policy import Policy
from ctxengine.policy.presets import PRESET_NAMES, preset
from ctxengine.replay.compare import Comparison, PolicyReplay, compare
from ctxengine.replay.source import check_cache

#: The ``--policy`` name that stands for every preset, in :data:`PRESET_NAMES` order.
ALL_PRESETS = "all"

PolicyOpt = Annotated[
    list[str] | None,
    typer.Option(
        "--policy",
        help="Policies to replay side by side: presets, comma-separated or the option "
        f"repeated ({', '.join(PRESET_NAMES)}; {ALL_PRESETS}: every one); prints one "
        "comparison table.",
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
JobsOpt = Annotated[
    int,
    typer.Option(
        "--jobs",
        min=0,
        help="Policies replayed at once, each in its own process (default 0: one per CPU "
        "this process may use; 1: one after another). The results do not depend on it.",
    ),
]


@dataclass(frozen=True, slots=True)
class ComparisonSpec:
    """What a comparison replays and how it prices, from the command's options.

    Attributes:
        policies: ``(name, policy)`` pairs in report order.
        window: the model window, in tokens.
        prices: the price table (shipped, with the user's file laid over it).
        model: the model to price (``None``: the one the transcript records).
        cache_provider: whose cache rules to simulate (``None``: the priced model's).
        long_ttl: cache writes ask for the long lifetime.
        sample: validate every Nth request in full (0: every request).
        jobs: policies replayed at once (see :func:`jobs_of`).
        keep_recent: the keep-recent budget laid over every policy (tokens), or ``None``.
        tokenizer: how the replays count tokens (``--tokenizer``, resolved).
    """

    policies: list[tuple[str, Policy]]
    window: int
    prices: PriceTable
    model: str | None
    cache_provider: str | None
    long_ttl: bool
    sample: int
    jobs: int
    keep_recent: int | None = None
    tokenizer: TokenizerChoice = field(default_factory=TokenizerChoice)

    @classmethod
    def of(
        cls,
        policy: str | Sequence[str],
        *,
        keep_recent: int | None,
        window: int,
        prices: str | None,
        model: str | None,
        cache_ttl: str,
        cache_provider: str | None,
        sample: int,
        jobs: int,
        tokenizer: TokenizerChoice | None = None,
    ) -> ComparisonSpec:
        """The spec of the options ``--policy``, ``--keep-recent``, ``--window``,
        ``--prices``, ``--model``, ``--cache-ttl``, ``--cache-provider``, ``--sample``,
        ``--jobs`` and ``--tokenizer`` (resolved; default: the default estimate).

        Raises:
            ConfigError: an unknown preset, an unreadable prices file, a bad ``--cache-ttl``;
                an exact count without tiktoken (checked here, before any replay).
        """
        counting = tokenizer or TokenizerChoice()
        counting.session_estimator()
        return cls(
            policies=policies_from(policy, keep_recent),
            window=window,
            prices=price_table(prices),
            model=model,
            cache_provider=cache_provider,
            long_ttl=long_ttl_of(cache_ttl),
            sample=sample,
            jobs=jobs_of(jobs),
            keep_recent=keep_recent,
            tokenizer=counting,
        )


def jobs_of(value: int) -> int:
    """``--jobs``: ``0`` → the CPUs this process may run on (``os.sched_getaffinity`` where
    the platform has it, else ``os.cpu_count()``, at least 1); any other value as given."""
    if value:
        return value
    if hasattr(os, "sched_getaffinity"):
        return max(1, len(os.sched_getaffinity(0)))
    return max(1, os.cpu_count() or 1)


def policies_from(
    names: str | Sequence[str], keep_recent: int | None = None
) -> list[tuple[str, Policy]]:
    """``(name, policy)`` per preset name, in order (each once), with an explicit
    keep-recent budget (tokens) applied to every one. ``names`` is one ``--policy`` value or
    several (the option repeated), each comma-separated; :data:`ALL_PRESETS` stands for every
    preset of :data:`PRESET_NAMES`, in that order.

    Raises:
        ConfigError: an unknown preset, an empty name between commas, or no name at all.
    """
    values = [names] if isinstance(names, str) else list(names)
    named: list[str] = []
    for value in values:
        parts = [n.strip() for n in value.split(",")]
        if any(parts) and not all(parts):
            raise ConfigError(f"--policy {value!r} has an empty name between its commas")
        for part in parts:
            named.extend(PRESET_NAMES if part == ALL_PRESETS else [part] if part else [])
    chosen = list(dict.fromkeys(named))
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


def cache_rules(spec: ComparisonSpec) -> CacheRules | None:
    """The cache rules ``--cache-provider`` names (``None``: the priced model's).

    Raises:
        ConfigError: no rules for that provider (the message lists the known ones).
    """
    provider, prices = spec.cache_provider, spec.prices
    if provider is None:
        return None
    if provider not in prices.rules:
        known = ", ".join(sorted(prices.rules))
        raise ConfigError(f"no cache rules for {provider!r}; known: {known}")
    return prices.rules[provider]


def keep_recent_note(comparison: Comparison, spec: ComparisonSpec) -> None:
    """Add the note an explicit ``--keep-recent`` puts on every comparison."""
    if spec.keep_recent is not None:
        comparison.notes.append(
            f"--keep-recent {spec.keep_recent:,} replaced every policy's own keep-recent budget"
        )


def run_comparison(
    target: Target,
    spec: ComparisonSpec,
    tracker: Tracker,
    *,
    on_error: Callable[[str, Exception], None] | None = None,
    on_run: Callable[[str, PolicyReplay], None] | None = None,
) -> Comparison:
    """Replay ``target`` under every policy (each model call counted on ``tracker`` unless
    ``on_run`` is given, which is told of each policy's replay as it ends instead), then
    check the cache model against the transcript's recorded cache reads. ``on_error``: see
    :func:`~ctxengine.replay.compare.compare`.

    Raises:
        ConfigError: an unknown cache provider, or what
            :func:`~ctxengine.replay.compare.compare` raises.
    """
    rules = cache_rules(spec)
    if on_run is None:
        replies = sum(
            1 for e in target.entries if e.message is not None and e.message.role == "assistant"
        )
        tracker.step("replaying calls", total=replies * len(spec.policies))
    comparison = compare(
        target.entries,
        spec.policies,
        window=spec.window,
        prices=spec.prices,
        source=target.label,
        model=spec.model,
        rules=rules,
        long_ttl=spec.long_ttl,
        sample=spec.sample,
        on_step=None if on_run is not None else lambda name, _s: tracker.advance(),
        jobs=spec.jobs,
        cwd=target.cwd,
        on_error=on_error,
        on_run=on_run,
        estimator=spec.tokenizer.session_estimator(),
    )
    keep_recent_note(comparison, spec)
    if on_run is None:
        tracker.step("checking the cache model against the recorded reads")
    check = check_cache(target.entries, comparison.price.rules, long_ttl=spec.long_ttl)
    comparison.cache_check = None if check is None else check.to_dict()
    return comparison
