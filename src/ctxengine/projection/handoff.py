"""Closing a context for hand-off: a session that ended (or was exported) while tool calls
were still unanswered cannot be sent as is. ``close_pending`` gives every pending call (see
:mod:`ctxengine.boundaries.pending`) a synthetic error result, in the projection only."""

from __future__ import annotations

import dataclasses

from ctxengine.boundaries.pending import pending_calls, pending_reply_start
from ctxengine.model import Message, TextPart, ToolResultPart
from ctxengine.projection.context import Context
from ctxengine.tokens.base import Estimator

#: Text of the synthetic result given to a call the session never answered.
SESSION_ENDED_RESULT = "[no result recorded: the session ended before this tool call returned]"


def close_pending(ctx: Context, estimator: Estimator) -> tuple[Context, tuple[str, ...]]:
    """``ctx`` with its pending calls (:func:`~ctxengine.boundaries.pending.pending_calls`)
    answered by :data:`SESSION_ENDED_RESULT` (``is_error=True``), in call order, appended as
    one tool message.

    Returns:
        ``(context, closed_call_ids)``; ``ctx`` itself when nothing was pending.
    """
    start = pending_reply_start(ctx.messages)
    if start is None:
        return ctx, ()
    open_ids = pending_calls(ctx.messages)
    calls = (c.id for m in ctx.messages[start:] for c in m.tool_calls if c.id in open_ids)
    pending = tuple(dict.fromkeys(calls))
    results = tuple(
        ToolResultPart(cid, (TextPart(SESSION_ENDED_RESULT),), is_error=True) for cid in pending
    )
    closing = Message("tool", results, meta={"synthetic": "session_ended"})
    closed = dataclasses.replace(
        ctx,
        messages=(*ctx.messages, closing),
        sources=(*ctx.sources, None),
        tokens=ctx.tokens + estimator.message(closing),
    )
    return closed, pending


def with_next_user(ctx: Context, text: str, estimator: Estimator) -> Context:
    """``ctx`` with ``text`` appended as the next user message (projection only; the caller
    decides whether history records it). Newer Anthropic models reject a request that ends
    with the assistant's turn, so a hand-off body usually needs the user's next message."""
    message = Message("user", (TextPart(text),), meta={"synthetic": "next_user"})
    return dataclasses.replace(
        ctx,
        messages=(*ctx.messages, message),
        sources=(*ctx.sources, None),
        tokens=ctx.tokens + estimator.message(message),
    )
