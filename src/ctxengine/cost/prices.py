"""Prices per model and prompt-cache rules per provider, as data.

The shipped table is ``prices.json`` beside this module: for every model the USD price per
million tokens of uncached input, cached input (a cache read), a cache write (5-minute and
1-hour lifetimes) and output, each with the page it was read from and the date it was
checked; for every provider the rules of its prompt cache (:class:`CacheRules`). A user
table of the same shape, parsed with :func:`parse_price_table` and laid over the shipped one
with :meth:`PriceTable.merged`, replaces models and rules by name.

Pure: :func:`shipped_price_table` reads the package's own data file; reading a user's file
is the caller's business (the CLI does it).
"""

from __future__ import annotations

import json
from collections.abc import Mapping
from dataclasses import dataclass, field, replace
from functools import cache
from importlib import resources
from typing import Any, Literal, TypeAlias

from ctxengine.errors import ConfigError

CacheMode: TypeAlias = Literal["breakpoints", "automatic"]
#: Cache modes: ``breakpoints`` (the request marks the prefixes to write, as Anthropic's
#: ``cache_control``), ``automatic`` (every prefix is written, as OpenAI's).
CACHE_MODES: tuple[str, ...] = ("breakpoints", "automatic")
#: Characters that may follow a table key inside a longer model id (``claude-sonnet-4-5`` in
#: ``claude-sonnet-4-5-20250929``).
_BOUNDARY = "-:@/"


@dataclass(frozen=True, slots=True)
class CacheRules:
    """How one provider's prompt cache works.

    Attributes:
        provider: ``"anthropic"``, ``"openai"`` (or a name a user table adds).
        mode: ``"breakpoints"`` or ``"automatic"`` (:data:`CACHE_MODES`).
        min_prefix_tokens: a prefix shorter than this is never cached (tokens).
        granularity_tokens: a hit counts in multiples of this (tokens; 1 = exact).
        max_breakpoints: breakpoints one request may mark (``breakpoints`` mode).
        lookback_blocks: how many blocks before a breakpoint a hit is looked for.
        ttl_s: a cached prefix expires this many seconds after its last use.
        long_ttl_s: the longer lifetime a request may ask for (seconds).
        source / checked: where the rules were read and when (ISO date).
    """

    provider: str
    mode: CacheMode
    min_prefix_tokens: int
    granularity_tokens: int
    max_breakpoints: int
    lookback_blocks: int
    ttl_s: float
    long_ttl_s: float
    source: str = ""
    checked: str = ""


@dataclass(frozen=True, slots=True)
class ModelPrice:
    """One model's prices, USD per million tokens.

    Attributes:
        name: the table key (``claude-sonnet-4-5``).
        provider: whose cache rules apply (a key of :attr:`PriceTable.rules`).
        input: uncached input.
        cached_input: input read from the prompt cache.
        cache_write: input written to the cache with the default lifetime.
        cache_write_long: input written with the long lifetime.
        output: output (reasoning included).
        min_prefix_tokens: this model's smallest cacheable prefix when it differs from its
            provider's (tokens), else ``None``.
        source / checked: where the prices were read and when (ISO date).
    """

    name: str
    provider: str
    input: float
    cached_input: float
    cache_write: float
    cache_write_long: float
    output: float
    min_prefix_tokens: int | None = None
    source: str = ""
    checked: str = ""

    def cost(
        self,
        *,
        uncached: int,
        cache_read: int,
        cache_write: int,
        output: int,
        long_ttl: bool = False,
    ) -> float:
        """USD for token counts (each in tokens): uncached input, cache reads, cache writes
        (priced at :attr:`cache_write_long` when ``long_ttl``) and output."""
        write = self.cache_write_long if long_ttl else self.cache_write
        total = (
            uncached * self.input
            + cache_read * self.cached_input
            + cache_write * write
            + output * self.output
        )
        return total / 1_000_000


@dataclass(frozen=True, slots=True)
class PriceChoice:
    """The price used for a model name, and how it was found.

    Attributes:
        price: the entry used.
        rules: its provider's cache rules (with the model's own minimum prefix, if any).
        requested: the model name asked for (``None`` when none was known).
        matched: ``"exact"``, ``"prefix"`` (a table key that starts the name) or
            ``"default"`` (the provider's default model: the name is unknown or missing).
    """

    price: ModelPrice
    rules: CacheRules
    requested: str | None
    matched: Literal["exact", "prefix", "default"]

    @property
    def note(self) -> str:
        """One line saying which prices are used, for reports."""
        if self.matched == "default":
            asked = f"no prices for {self.requested!r}" if self.requested else "no model given"
            return f"{asked}: prices of {self.price.name} used"
        return f"prices of {self.price.name} ({self.price.source}, checked {self.price.checked})"


@dataclass(frozen=True, slots=True)
class PriceTable:
    """Models, cache rules and each provider's default model.

    Attributes:
        rules: provider name → :class:`CacheRules`.
        models: table key → :class:`ModelPrice`.
        default_models: provider name → the table key used for an unknown model.
    """

    rules: Mapping[str, CacheRules]
    models: Mapping[str, ModelPrice]
    default_models: Mapping[str, str] = field(default_factory=dict)

    def lookup(self, model: str | None, provider: str | None = None) -> PriceChoice:
        """The price of ``model``: the exact key, else the longest key that starts the
        normalised name at a boundary (``-:@/``), else the default model of ``provider``
        (or of the provider the name suggests: :func:`provider_of`).

        Raises:
            ConfigError: nothing matches and the provider has no default model.
        """
        if model:
            norm = normalize_model(model)
            if norm in self.models:
                return self._choice(self.models[norm], model, "exact")
            best = max(
                (k for k in self.models if norm.startswith(k) and norm[len(k)] in _BOUNDARY),
                key=len,
                default=None,
            )
            if best is not None:
                return self._choice(self.models[best], model, "prefix")
        chosen = provider or provider_of(model)
        key = self.default_models.get(chosen)
        if key is None or key not in self.models:
            raise ConfigError(f"no prices for model {model!r} and no default model for {chosen!r}")
        return self._choice(self.models[key], model, "default")

    def _choice(
        self, price: ModelPrice, model: str | None, matched: Literal["exact", "prefix", "default"]
    ) -> PriceChoice:
        rules = self.rules.get(price.provider)
        if rules is None:
            raise ConfigError(f"model {price.name!r}: no cache rules for {price.provider!r}")
        if price.min_prefix_tokens is not None:
            rules = replace(rules, min_prefix_tokens=price.min_prefix_tokens)
        return PriceChoice(price, rules, model, matched)

    def merged(self, other: PriceTable) -> PriceTable:
        """This table with ``other``'s models, rules and defaults replacing them by name."""
        return PriceTable(
            rules={**self.rules, **other.rules},
            models={**self.models, **other.models},
            default_models={**self.default_models, **other.default_models},
        )


def normalize_model(model: str) -> str:
    """The form model names are matched in: lower case, the part after the last ``/``
    (``openrouter/anthropic/claude-3-haiku`` → ``claude-3-haiku``), dots as dashes."""
    return model.strip().lower().rsplit("/", 1)[-1].replace(".", "-")


def provider_of(model: str | None) -> str:
    """``"anthropic"`` for a Claude model name, else ``"openai"`` (the rules of automatic
    prefix caching, which OpenAI-compatible servers follow)."""
    return "anthropic" if model and "claude" in model.lower() else "openai"


_RULE_FIELDS = {
    "mode": str,
    "min_prefix_tokens": int,
    "granularity_tokens": int,
    "max_breakpoints": int,
    "lookback_blocks": int,
    "ttl_s": float,
    "long_ttl_s": float,
    "source": str,
    "checked": str,
}
_PRICE_FIELDS = {
    "provider": str,
    "input": float,
    "cached_input": float,
    "cache_write": float,
    "cache_write_long": float,
    "output": float,
    "min_prefix_tokens": int,
    "source": str,
    "checked": str,
}
_OPTIONAL = {"source", "checked", "min_prefix_tokens"}


def _fields(where: str, raw: object, spec: Mapping[str, type]) -> dict[str, Any]:
    """Checked fields of one entry: every field of ``spec`` not in :data:`_OPTIONAL` is
    required; numbers are non-negative (positive for token counts and lifetimes)."""
    if not isinstance(raw, Mapping):
        raise ConfigError(f"{where}: expected an object")
    unknown = sorted(set(raw) - set(spec))
    if unknown:
        raise ConfigError(f"{where}: unknown field(s) {unknown}")
    out: dict[str, Any] = {}
    for name, kind in spec.items():
        if name not in raw:
            if name not in _OPTIONAL:
                raise ConfigError(f"{where}: missing field {name!r}")
            continue
        value = raw[name]
        if kind is str:
            if not isinstance(value, str):
                raise ConfigError(f"{where}.{name}: expected a string, got {value!r}")
        elif isinstance(value, bool) or not isinstance(value, int | float):
            raise ConfigError(f"{where}.{name}: expected a number, got {value!r}")
        elif kind is int and not isinstance(value, int):
            raise ConfigError(f"{where}.{name}: expected a whole number, got {value!r}")
        elif value < 0:
            raise ConfigError(f"{where}.{name}: must not be negative, got {value!r}")
        out[name] = float(value) if kind is float else value
    return out


def parse_price_table(doc: object, origin: str) -> PriceTable:
    """A table from a parsed JSON document of the shape of ``prices.json``
    (``{"cache_rules": {provider: rules}, "models": {key: prices}, "default_models":
    {provider: key}}``; each of the three may be left out of an override).

    Raises:
        ConfigError: a malformed entry, naming ``origin`` and the field
            (``prices.json: models.gpt-5.input: expected a number, got 'x'``).
    """
    if not isinstance(doc, Mapping):
        raise ConfigError(f"{origin}: expected a JSON object")
    unknown = sorted(set(doc) - {"about", "cache_rules", "models", "default_models"})
    if unknown:
        raise ConfigError(f"{origin}: unknown field(s) {unknown}")
    rules: dict[str, CacheRules] = {}
    for provider, raw in _section(doc, "cache_rules", origin).items():
        where = f"{origin}: cache_rules.{provider}"
        fields = _fields(where, raw, _RULE_FIELDS)
        if fields["mode"] not in CACHE_MODES:
            raise ConfigError(
                f"{where}.mode: expected one of {CACHE_MODES}, got {fields['mode']!r}"
            )
        if fields["granularity_tokens"] < 1 or fields["ttl_s"] <= 0:
            raise ConfigError(f"{where}: granularity_tokens and ttl_s must be positive")
        rules[str(provider)] = CacheRules(provider=str(provider), **fields)
    models: dict[str, ModelPrice] = {}
    for key, raw in _section(doc, "models", origin).items():
        fields = _fields(f"{origin}: models.{key}", raw, _PRICE_FIELDS)
        name = normalize_model(str(key))
        models[name] = ModelPrice(name=name, **fields)
    defaults = _section(doc, "default_models", origin)
    for provider, key in defaults.items():
        if not isinstance(key, str):
            raise ConfigError(f"{origin}: default_models.{provider}: expected a model name")
    return PriceTable(
        rules,
        models,
        {str(p): normalize_model(str(k)) for p, k in defaults.items()},
    )


def _section(doc: Mapping[str, Any], name: str, origin: str) -> Mapping[str, Any]:
    value = doc.get(name, {})
    if not isinstance(value, Mapping):
        raise ConfigError(f"{origin}: {name}: expected an object")
    return value


def check_complete(table: PriceTable, origin: str) -> PriceTable:
    """``table`` when every model's provider has rules and every default names a model.

    Raises:
        ConfigError: naming the model or provider that does not resolve.
    """
    for price in table.models.values():
        if price.provider not in table.rules:
            raise ConfigError(
                f"{origin}: models.{price.name}.provider: no cache_rules for {price.provider!r}"
            )
    for provider, key in table.default_models.items():
        if key not in table.models:
            raise ConfigError(f"{origin}: default_models.{provider}: no model {key!r}")
    return table


@cache
def shipped_price_table() -> PriceTable:
    """The table shipped with ctxengine (``ctxengine/cost/prices.json``)."""
    text = resources.files("ctxengine.cost").joinpath("prices.json").read_text("utf-8")
    origin = "ctxengine/cost/prices.json"
    return check_complete(parse_price_table(json.loads(text), origin), origin)
