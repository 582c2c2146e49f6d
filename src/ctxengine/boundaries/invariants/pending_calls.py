"""Pending calls are never inside a compacted prefix.

A call is **pending** when no later message answers it and nothing but tool messages follows
its reply: the tool is still running, or awaits a human confirmation. Its result will come,
and must find the call verbatim in the context. Every index after the start of that reply is
unsafe, so the reply (and everything after it) stays in the kept tail.

A call that never got a result but is followed by a user message or a later reply was
abandoned by the source (the agent went on without it): it constrains nothing here, and the
sanitizer gives it a synthetic error result. Treating it as pending would forbid every later
cut, so such a history could never be compacted again.
"""

from __future__ import annotations

from collections.abc import Sequence

from ctxengine.boundaries.turns import ToolExchange, holds_results, tool_exchanges
from ctxengine.model import Message


def _pending(messages: Sequence[Message]) -> list[ToolExchange]:
    out: list[ToolExchange] = []
    for x in tool_exchanges(messages):
        if not x.unanswered:
            continue
        reply_end = x.start
        while reply_end < len(messages) and messages[reply_end].role == "assistant":
            reply_end += 1
        if all(holds_results(m) for m in messages[reply_end:]):
            out.append(x)
    return out


def pending_call_ids(messages: Sequence[Message]) -> tuple[str, ...]:
    """Ids of the pending calls, in order."""
    return tuple(c for x in _pending(messages) for c in x.unanswered)


def safe_indices(messages: Sequence[Message]) -> frozenset[int]:
    """Cut indices in ``0..len(messages)`` that keep every pending call's reply."""
    pending = _pending(messages)
    limit = min((x.start for x in pending), default=len(messages))
    return frozenset(range(limit + 1))
