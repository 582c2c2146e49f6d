"""Pending tool calls: the one definition, used by the cut invariant, the sanitizer and the
hand-off.

A call is **pending** when it belongs to the newest assistant reply (the run of consecutive
assistant messages nearest the end), no later message answers it, and every message after
that reply is made of tool results only (any role; non-message entries of a log are the
caller's to skip): the tool is still running, or awaits a human confirmation, and its result
will come. A call left unanswered by a reply that anything else follows (a user's text, even
in the same message as other results, or a later reply) was abandoned by the source: it is
not pending.

Both functions walk back from the newest message and stop at the start of the newest reply:
O(newest reply + the results after it).
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence

from ctxengine.model import Message, ToolResultPart


def _only_results(message: Message) -> bool:
    return bool(message.parts) and all(isinstance(p, ToolResultPart) for p in message.parts)


def pending_calls_newest_first(newest_first: Iterable[Message]) -> frozenset[str]:
    """:func:`pending_calls` over messages given newest first; reads only as far back as
    the start of the newest reply (for a log whose non-message entries the caller skips)."""
    answered: set[str] = set()
    calls: set[str] = set()
    in_reply = False
    for m in newest_first:
        if m.role == "assistant":
            in_reply = True
            calls.update(c.id for c in m.tool_calls)
        elif in_reply:
            break
        elif not _only_results(m):
            return frozenset()
        else:
            answered.update(r.call_id for r in m.tool_results)
    return frozenset(calls - answered)


def pending_calls(messages: Sequence[Message]) -> frozenset[str]:
    """Ids of the pending calls of ``messages`` (see the module docstring); empty when the
    newest reply made no call, when all its calls are answered, or when a message that is not
    made of tool results only follows it."""
    return pending_calls_newest_first(reversed(messages))


def pending_reply_start(messages: Sequence[Message]) -> int | None:
    """Index of the first message of the newest reply when it has pending calls, else
    ``None``: a cut must keep that reply and everything after it."""
    if not pending_calls(messages):
        return None
    i = len(messages) - 1
    while messages[i].role != "assistant":
        i -= 1
    while i > 0 and messages[i - 1].role == "assistant":
        i -= 1
    return i
