"""``ProjectionMemo``: reuse of projection work across calls.

``project()`` is pure; a memo only lets it reuse what it already computed: per entry, for the
same immutable entry under the same caps; per epoch, the previous projection when only
message entries were appended since and it was closed (:class:`EpochProjection`), so that
projecting an epoch again costs O(new entries). Results are identical with or without a memo
(tested).
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any

from ctxengine.model import Entry, Message, ToolCallPart
from ctxengine.projection.context import Context, Truncation

#: (entry id, cap tokens, cap chars, head ratio, pruned call ids in this message, pruned tail)
RewriteKey = tuple[str, int, int, float, tuple[str, ...], int | None]


#: What a projection depends on besides its entries: the head, the compaction in force, the
#: truncate-at-source cap, whether rules messages are shown whole, the durable state, the
#: pins, the pruned call ids, the compaction's lead entries and the texts it re-injected.
EpochKey = tuple[Any, ...]


@dataclass(slots=True)
class EpochProjection:
    """The previous projection of one epoch, kept to extend it when only message entries
    were appended since (``project()`` then projects the new entries alone).

    Attributes:
        key: what the projection depended on besides its entries (:data:`EpochKey`).
        count: entries projected.
        first / last: the first and last of them (the next call's entries must hold the
            same objects at the same places).
        calls: tool calls seen in the tail, by id.
        truncations / pruned: of the whole projection.
        context: the context returned.
        message_tokens: estimated tokens of its messages (tools left out).
        closed: the sanitizer repaired nothing and no call awaits its result: appended
            entries cannot change what is already projected.
    """

    key: EpochKey
    count: int
    first: Entry
    last: Entry
    calls: dict[str, ToolCallPart]
    truncations: list[Truncation]
    pruned: list[str]
    context: Context
    message_tokens: int
    closed: bool
    tools: tuple[Mapping[str, Any], ...] = ()


@dataclass(slots=True)
class ProjectionMemo:
    """Mutable cache owned by one caller (the engine keeps one per session).

    Attributes:
        rewrites: per key, the rewritten tool message, its truncations and pruned call ids.
        continuations: per summary text and injection shape, the messages that show it.
        max_items: when a cache reaches this size it is cleared.
    """

    rewrites: dict[RewriteKey, tuple[Message, tuple[Truncation, ...], tuple[str, ...]]] = field(
        default_factory=dict
    )
    continuations: dict[tuple[str, str | None], tuple[Message, ...]] = field(default_factory=dict)
    max_items: int = 100_000
    epoch: EpochProjection | None = None

    def trim(self) -> None:
        """Clear caches that grew past ``max_items``."""
        if len(self.rewrites) > self.max_items:
            self.rewrites.clear()
        if len(self.continuations) > 16:
            self.continuations.clear()
