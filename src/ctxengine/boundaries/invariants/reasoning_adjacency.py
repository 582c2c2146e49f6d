"""Reasoning adjacency: reasoning stays with the assistant reply it belongs to.

Within one :class:`~ctxengine.model.Message` this holds by construction. Sources that write
one response as several messages (a reasoning-only message, then text, then each call) give
consecutive assistant messages with no user or tool message between them; they are one reply,
and a signed reasoning block is only accepted back next to the rest of its reply. So a cut
between two consecutive assistant messages is unsafe.
"""

from __future__ import annotations

from collections.abc import Sequence

from ctxengine.model import Message


def safe_indices(messages: Sequence[Message]) -> frozenset[int]:
    """Cut indices in ``0..len(messages)`` that separate no two chunks of one reply."""
    return frozenset(
        i
        for i in range(len(messages) + 1)
        if not (
            0 < i < len(messages)
            and messages[i].role == "assistant"
            and messages[i - 1].role == "assistant"
        )
    )
