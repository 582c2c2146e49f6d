"""Prices and a simulated provider prompt cache: what each request of a session would read,
write and cost. Pure."""

from ctxengine.cost.cache import (
    Block,
    CacheOutcome,
    CacheRequest,
    PrefixCache,
    break_cause,
)
from ctxengine.cost.prices import (
    CacheRules,
    ModelPrice,
    PriceChoice,
    PriceTable,
    check_complete,
    normalize_model,
    parse_price_table,
    provider_of,
    shipped_price_table,
)

__all__ = [
    "Block",
    "CacheOutcome",
    "CacheRequest",
    "CacheRules",
    "ModelPrice",
    "PrefixCache",
    "PriceChoice",
    "PriceTable",
    "break_cause",
    "check_complete",
    "normalize_model",
    "parse_price_table",
    "provider_of",
    "shipped_price_table",
]
