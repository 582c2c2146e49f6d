"""``ProjectionMemo``: reuse of per-entry projection work across calls.

``project()`` is pure; a memo only lets it reuse what it already computed for the same
immutable entry under the same caps, so that projecting an epoch again costs
O(new entries) in estimation and truncation work. Results are identical with or without a
memo (tested).
"""

from __future__ import annotations

from dataclasses import dataclass, field

from ctxengine.model import Message
from ctxengine.projection.context import Truncation

#: (entry id, cap tokens, cap chars, head ratio, pruned call ids in this message)
RewriteKey = tuple[str, int, int, float, tuple[str, ...]]


@dataclass(slots=True)
class ProjectionMemo:
    """Mutable cache owned by one caller (the engine keeps one per session).

    Attributes:
        rewrites: per key, the rewritten tool message, its truncations and pruned call ids.
        continuations: per summary text, the continuation-state message.
        max_items: when a cache reaches this size it is cleared.
    """

    rewrites: dict[RewriteKey, tuple[Message, tuple[Truncation, ...], tuple[str, ...]]] = field(
        default_factory=dict
    )
    continuations: dict[str, Message] = field(default_factory=dict)
    max_items: int = 100_000

    def trim(self) -> None:
        """Clear caches that grew past ``max_items``."""
        if len(self.rewrites) > self.max_items:
            self.rewrites.clear()
        if len(self.continuations) > 16:
            self.continuations.clear()
