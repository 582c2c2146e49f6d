"""Tool pairing: a tool result is only sent after its call.

A cut ``keep messages[i:]`` is safe when ``messages[i]`` holds no tool result (the kept tail
never starts on a result) and no result in ``messages[i:]`` answers a call in
``messages[:i]`` (every call before the cut has its results before the cut). Orphan results
of the source (no call anywhere before them) constrain nothing here: the sanitizer drops them
from the projection.
"""

from __future__ import annotations

from collections.abc import Sequence

from ctxengine.boundaries.invariants._spans import uncovered
from ctxengine.boundaries.turns import holds_results, match_results
from ctxengine.model import Message, ToolCallPart, ToolResultPart


def safe_indices(messages: Sequence[Message]) -> frozenset[int]:
    """Cut indices in ``0..len(messages)`` allowed by tool pairing."""
    starts_on_result = (i for i, m in enumerate(messages) if holds_results(m))
    return uncovered(len(messages), match_results(messages), starts_on_result)


def enforce(messages: Sequence[Message]) -> frozenset[int]:
    """Indices of messages to drop from a window (for example the last N messages) so that
    no message is left holding only results whose call is not earlier in the window.

    A message with some answered and some orphan results is kept (the sanitizer drops the
    orphan parts in the projection)."""
    seen: set[str] = set()
    drop: set[int] = set()
    for i, m in enumerate(messages):
        results = [p for p in m.parts if isinstance(p, ToolResultPart)]
        if results and all(p.call_id not in seen for p in results):
            drop.add(i)
        seen.update(p.id for p in m.parts if isinstance(p, ToolCallPart))
    return frozenset(drop)
