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
from ctxengine.model import Message


def safe_indices(messages: Sequence[Message]) -> frozenset[int]:
    """Cut indices in ``0..len(messages)`` allowed by tool pairing."""
    starts_on_result = (i for i, m in enumerate(messages) if holds_results(m))
    return uncovered(len(messages), match_results(messages), starts_on_result)
