"""Boundaries: turns and tool exchanges, one module per protocol invariant, valid cut points
and the cut for a keep-recent budget."""

from ctxengine.boundaries.cut import (
    SAFE_INDEX_RULES,
    CutPoint,
    find_cut,
    valid_cut_points,
)
from ctxengine.boundaries.turns import (
    ToolExchange,
    Turn,
    segment_turns,
    tool_exchanges,
    turn_starts,
)

__all__ = [
    "SAFE_INDEX_RULES",
    "CutPoint",
    "ToolExchange",
    "Turn",
    "find_cut",
    "segment_turns",
    "tool_exchanges",
    "turn_starts",
    "valid_cut_points",
]
