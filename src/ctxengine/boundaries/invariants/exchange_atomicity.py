"""Exchange atomicity: an assistant reply with parallel calls and all their results stay on
the same side of a cut.

Unsafe: every index strictly inside a tool exchange (after the reply's first message, up to
and including the message holding its last result). Cutting at the exchange's first message
keeps it whole; cutting after its last result drops it whole.
"""

from __future__ import annotations

from collections.abc import Sequence

from ctxengine.boundaries.invariants._spans import uncovered
from ctxengine.boundaries.turns import tool_exchanges
from ctxengine.model import Message


def safe_indices(messages: Sequence[Message]) -> frozenset[int]:
    """Cut indices in ``0..len(messages)`` that split no tool exchange."""
    spans = ((x.start, x.end - 1) for x in tool_exchanges(messages))
    return uncovered(len(messages), spans)
