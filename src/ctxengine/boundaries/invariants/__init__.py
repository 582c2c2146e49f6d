"""Protocol invariants, one module each. Every module exposes
``safe_indices(messages) -> frozenset[int]``: the indices ``i`` in ``0..len(messages)`` where
keeping ``messages[i:]`` verbatim (and compacting ``messages[:i]``) respects that invariant.
Index 0 compacts nothing; ``len(messages)`` keeps nothing.
Valid cut points are the intersection (:func:`ctxengine.boundaries.cut.valid_cut_points`).
"""

from ctxengine.boundaries.invariants import (
    exchange_atomicity,
    pending_calls,
    reasoning_adjacency,
    tool_pairing,
)

__all__ = ["exchange_atomicity", "pending_calls", "reasoning_adjacency", "tool_pairing"]
