"""``CachingEstimator``: memoises another estimator's per-message and per-text results.

Entries are immutable, so a message object's estimate never changes; the engine projects the
same message objects on every call of an epoch. Caching by object identity turns the
per-call estimate from O(epoch characters) into O(new messages).
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

from ctxengine.model import Message, Part
from ctxengine.tokens.base import Estimator


class CachingEstimator:
    """Wraps ``base`` (any :class:`~ctxengine.tokens.base.Estimator`); same results, cached.

    ``message()`` and ``part()`` are cached by object identity (the object is kept alive by
    the cache, so its id cannot be reused); ``text()`` by string value for strings of at
    least ``min_text_chars`` characters. ``max_items`` bounds each cache: when full it is
    cleared (a simple, predictable policy; a cleared cache only costs re-estimation).
    """

    __slots__ = ("_messages", "_parts", "_texts", "base", "max_items", "min_text_chars")

    def __init__(
        self, base: Estimator, *, max_items: int = 200_000, min_text_chars: int = 256
    ) -> None:
        self.base = base
        self.max_items = max_items
        self.min_text_chars = min_text_chars
        self._messages: dict[int, tuple[Message, int]] = {}
        self._parts: dict[int, tuple[Part, int]] = {}
        self._texts: dict[str, int] = {}

    def text(self, text: str) -> int:
        """Tokens of ``text`` (cached for long strings)."""
        if len(text) < self.min_text_chars:
            return self.base.text(text)
        hit = self._texts.get(text)
        if hit is None:
            if len(self._texts) >= self.max_items:
                self._texts.clear()
            hit = self._texts[text] = self.base.text(text)
        return hit

    def part(self, part: Part) -> int:
        """Tokens of ``part`` (cached by identity)."""
        hit = self._parts.get(id(part))
        if hit is not None and hit[0] is part:
            return hit[1]
        if len(self._parts) >= self.max_items:
            self._parts.clear()
        tokens = self.base.part(part)
        self._parts[id(part)] = (part, tokens)
        return tokens

    def message(self, message: Message) -> int:
        """Tokens of ``message`` (cached by identity)."""
        hit = self._messages.get(id(message))
        if hit is not None and hit[0] is message:
            return hit[1]
        if len(self._messages) >= self.max_items:
            self._messages.clear()
        tokens = self.base.message(message)
        self._messages[id(message)] = (message, tokens)
        return tokens

    def absorb(self, other: CachingEstimator) -> None:
        """Take over ``other``'s cached estimates (of the same base estimator) while they fit
        under ``max_items``: the work another cache did on the same objects and texts (a
        log copy that projected the same entries) is not done again."""
        limit = self.max_items
        if len(self._messages) + len(other._messages) <= limit:
            self._messages.update(other._messages)
        if len(self._parts) + len(other._parts) <= limit:
            self._parts.update(other._parts)
        if len(self._texts) + len(other._texts) <= limit:
            self._texts.update(other._texts)

    def clear(self) -> None:
        """Forget every cached estimate (e.g. when a new epoch starts)."""
        self._messages.clear()
        self._parts.clear()
        self._texts.clear()

    def tools(self, schemas: Sequence[Mapping[str, Any]]) -> int:
        """Tokens of the tool schemas (not cached: schemas are small and few)."""
        return self.base.tools(schemas)
