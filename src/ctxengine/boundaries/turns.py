"""Segment a conversation into turns, assistant replies and tool exchanges.

All functions take the conversation *after* the stable head (system and developer messages
at the start are the caller's, never part of a cut range) and return index ranges into it.

- A **turn** is one real user message plus every message that answers it. What a real user
  message is is defined once, in :func:`ctxengine.model.roles.is_real_user_message`: role
  ``user``, no tool result, and not text the harness injects (``<system-reminder>``,
  ``<environment_context>`` …) nor a message flagged ``synthetic``/``isMeta``; injected
  messages belong to the turn they were written into. Messages before the first real user
  message form a leading turn without a user message (``has_user=False``).
- An **assistant reply** is a maximal run of consecutive assistant messages: sources that
  write one response as several messages (a reasoning block, then text, then each call)
  produce such runs, and providers need them kept together.
- A **tool exchange** is one assistant reply that makes tool calls plus every tool result
  that answers them. A result answers the nearest preceding call with its id; a result
  with no such call answers nothing (an orphan).
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

from ctxengine.model import Message, ToolCallPart, ToolResultPart
from ctxengine.model.roles import is_real_user_message


@dataclass(frozen=True, slots=True)
class Turn:
    """Messages ``[start, end)`` of one turn.

    Attributes:
        start: index of the real user message that opens it (0 for a leading turn).
        end: one past its last message.
        has_user: ``False`` only for a leading turn that has no user message.
    """

    start: int
    end: int
    has_user: bool = True


@dataclass(frozen=True, slots=True)
class ToolExchange:
    """An assistant reply with tool calls and the messages holding their results.

    Attributes:
        start: index of the reply's first assistant message.
        end: one past the last message that holds one of its results, or one past the reply
            when no result arrived.
        call_ids: ids of the calls, in order.
        unanswered: ids of calls that no later message answers.
    """

    start: int
    end: int
    call_ids: tuple[str, ...]
    unanswered: tuple[str, ...] = ()


def holds_results(message: Message) -> bool:
    """True when the message holds at least one tool result."""
    return any(isinstance(p, ToolResultPart) for p in message.parts)


def turn_starts(messages: Sequence[Message]) -> frozenset[int]:
    """Indices of the real user messages (:func:`~ctxengine.model.roles.is_real_user_message`)."""
    return frozenset(i for i, m in enumerate(messages) if is_real_user_message(m))


def segment_turns(messages: Sequence[Message]) -> tuple[Turn, ...]:
    """The turns of ``messages``, in order; they cover every index exactly once."""
    starts = sorted(turn_starts(messages))
    turns: list[Turn] = []
    if messages and (not starts or starts[0] > 0):
        turns.append(Turn(0, starts[0] if starts else len(messages), has_user=False))
    for k, s in enumerate(starts):
        end = starts[k + 1] if k + 1 < len(starts) else len(messages)
        turns.append(Turn(s, end))
    return tuple(turns)


def reply_starts(messages: Sequence[Message]) -> tuple[int, ...]:
    """Per message, the index of the first message of its assistant reply (its own index
    for messages that are not assistant messages)."""
    out: list[int] = []
    for i, m in enumerate(messages):
        same_reply = i > 0 and m.role == "assistant" and messages[i - 1].role == "assistant"
        out.append(out[i - 1] if same_reply else i)
    return tuple(out)


def match_results(messages: Sequence[Message]) -> tuple[tuple[int, int], ...]:
    """``(call_index, result_index)`` for every tool result that answers a call: the call is
    the nearest preceding one with the result's ``call_id``. Orphan results are left out."""
    latest: dict[str, int] = {}
    pairs: list[tuple[int, int]] = []
    for i, m in enumerate(messages):
        for p in m.parts:
            if isinstance(p, ToolResultPart):
                c = latest.get(p.call_id)
                if c is not None:
                    pairs.append((c, i))
            elif isinstance(p, ToolCallPart):
                latest[p.id] = i
    return tuple(pairs)


def tool_exchanges(messages: Sequence[Message]) -> tuple[ToolExchange, ...]:
    """The tool exchanges of ``messages``, ordered by start."""
    starts = reply_starts(messages)
    calls: dict[int, list[str]] = {}
    ends: dict[int, int] = {}
    latest: dict[str, int] = {}
    answered: set[tuple[int, str]] = set()
    for i, m in enumerate(messages):
        for p in m.parts:
            if isinstance(p, ToolCallPart):
                s = starts[i]
                calls.setdefault(s, []).append(p.id)
                ends[s] = max(ends.get(s, 0), i + 1)
                latest[p.id] = s
            elif isinstance(p, ToolResultPart) and p.call_id in latest:
                s = latest[p.call_id]
                ends[s] = max(ends[s], i + 1)
                answered.add((s, p.call_id))
    return tuple(
        ToolExchange(
            s,
            ends[s],
            tuple(ids),
            tuple(c for c in ids if (s, c) not in answered),
        )
        for s, ids in sorted(calls.items())
    )
