"""Repair tool-call pairing that is already broken in the source, in the projection only.

Real transcripts contain calls whose result never arrived (the agent crashed or the user
interrupted it), results whose call is missing, results written twice, and user messages
written between a call and its result. Every provider rejects such a request. ``sanitize``
returns a repaired copy of the messages and reports what it did; history is never changed.

Rules, in the order they apply:

1. A result belongs to the nearest preceding assistant message that made a call with its id.
   A result with no such call (missing, or only later in the context) is dropped.
2. The first result for a call is kept; later ones are dropped as duplicates.
3. A result is moved up to sit right after its call's assistant message, across any user or
   assistant messages written in between, as long as no new model response started in
   between. A result that arrives only after a later model response is too late: that
   response was produced without it, so the request that produced it showed the call as
   interrupted. Such a result is dropped and the call gets the synthetic result below, which
   keeps every earlier request a prefix of the later ones. (An assistant message that follows
   another assistant message directly is the same response written in pieces.)
4. A call that never got a result, and is followed by more messages, gets a synthetic error
   result with :data:`SYNTHETIC_RESULT_TEXT`, placed after the message's other results.
5. Pending calls (:func:`ctxengine.boundaries.pending.pending_calls`: calls of the newest
   reply, unanswered, with only tool results after it; running, or awaiting a human
   confirmation) of the reply's last assistant message are left without a result. Pending
   calls of an earlier piece of the same reply get the synthetic result all the same: the
   piece after them needs their results in front of it.

After ``sanitize`` every assistant message with calls is immediately followed by tool
messages holding exactly one result per call (pending calls of the newest message aside),
and tool results appear nowhere else.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Sequence
from dataclasses import dataclass

from ctxengine.boundaries.pending import pending_calls
from ctxengine.model import Message, Part, TextPart, ToolCallPart, ToolResultPart

#: Text of the synthetic error result given to a call whose result never arrived.
SYNTHETIC_RESULT_TEXT = "[no result recorded: the tool call was interrupted before it returned]"


@dataclass(frozen=True, slots=True)
class SanitizeReport:
    """What the sanitizer repaired in the projection (history itself is never changed).

    Attributes:
        synthetic_results: call ids that got a synthetic error result (result never arrived).
        dropped_results: call ids of results dropped because their call is not in the context
            before them, or because they arrived only after a later model response.
        duplicate_results: call ids of repeated results dropped (only the first is kept).
        moved_results: call ids of results moved up to follow their call directly.
        dropped_reasoning: count of signed reasoning parts dropped from older assistant messages.
    """

    synthetic_results: tuple[str, ...] = ()
    dropped_results: tuple[str, ...] = ()
    duplicate_results: tuple[str, ...] = ()
    moved_results: tuple[str, ...] = ()
    dropped_reasoning: int = 0

    @property
    def changed(self) -> bool:
        """True when anything was repaired."""
        return bool(
            self.synthetic_results
            or self.dropped_results
            or self.duplicate_results
            or self.moved_results
            or self.dropped_reasoning
        )


@dataclass(slots=True)
class _Call:
    index: int
    response: int
    part: ToolCallPart


@dataclass(slots=True)
class _Scan:
    """Where each kept result goes: assistant index -> [(source message index, part)]."""

    accepted: dict[int, list[tuple[int, ToolResultPart]]]
    answered: set[tuple[int, str]]
    dropped: list[str]
    duplicates: list[str]
    moved: list[str]


def _scan(messages: Sequence[Message]) -> _Scan:
    scan = _Scan({}, set(), [], [], [])
    calls: dict[str, _Call] = {}
    response = 0
    last_non_tool = -1
    for i, msg in enumerate(messages):
        if msg.role == "assistant":
            if i == 0 or messages[i - 1].role != "assistant":
                response += 1
            for call in msg.tool_calls:
                calls[call.id] = _Call(i, response, call)
            last_non_tool = i
            continue
        for part in msg.parts:
            if not isinstance(part, ToolResultPart):
                continue
            owner = calls.get(part.call_id)
            if owner is None:
                scan.dropped.append(part.call_id)
            elif (owner.index, part.call_id) in scan.answered:
                scan.duplicates.append(part.call_id)
            elif owner.response != response:
                scan.dropped.append(part.call_id)
            else:
                scan.answered.add((owner.index, part.call_id))
                scan.accepted.setdefault(owner.index, []).append((i, part))
                if last_non_tool > owner.index:
                    scan.moved.append(part.call_id)
        if msg.role != "tool":
            last_non_tool = i
    return scan


def _last_assistant(messages: Sequence[Message]) -> int:
    """Index of the last assistant message, or -1."""
    return next(
        (i for i in range(len(messages) - 1, -1, -1) if messages[i].role == "assistant"), -1
    )


def _synthetic(call: ToolCallPart) -> Message:
    part = ToolResultPart(
        call.id, (TextPart(SYNTHETIC_RESULT_TEXT),), is_error=True, name=call.name
    )
    return Message("tool", (part,))


def sanitize(
    messages: Sequence[Message], sources: Sequence[str | None]
) -> tuple[tuple[Message, ...], tuple[str | None, ...], SanitizeReport]:
    """Repair tool-call pairing in a projected message list (see the module docstring).

    Args:
        messages: the context messages, in order.
        sources: per message, the history entry id it came from (``None`` if synthetic);
            same length as ``messages``.

    Returns:
        ``(messages, sources, report)``: the repaired messages, their sources (a tool message
        split between two calls keeps its entry id on both halves; synthetic results have
        ``None``) and what was repaired. Unchanged input comes back equal. Pure: O(messages).

    Raises:
        ValueError: ``sources`` and ``messages`` differ in length.
    """
    if len(messages) != len(sources):
        raise ValueError(f"{len(messages)} messages but {len(sources)} sources")
    scan = _scan(messages)
    pending = pending_calls(messages)
    last_piece = _last_assistant(messages) if pending else -1
    out: list[Message] = []
    out_sources: list[str | None] = []
    synthetic: list[str] = []
    for i, msg in enumerate(messages):
        if msg.role == "tool":
            continue
        kept: tuple[Part, ...] = tuple(p for p in msg.parts if not isinstance(p, ToolResultPart))
        if len(kept) != len(msg.parts):
            if not kept:
                continue
            msg = dataclasses.replace(msg, parts=kept)
        out.append(msg)
        out_sources.append(sources[i])
        if msg.role != "assistant" or not msg.tool_calls:
            continue
        _emit_results(messages, sources, scan.accepted.get(i, []), out, out_sources)
        for call in msg.tool_calls:
            if i == last_piece and call.id in pending:
                continue
            if (i, call.id) not in scan.answered:
                scan.answered.add((i, call.id))
                synthetic.append(call.id)
                out.append(_synthetic(call))
                out_sources.append(None)
    report = SanitizeReport(
        synthetic_results=tuple(synthetic),
        dropped_results=tuple(scan.dropped),
        duplicate_results=tuple(scan.duplicates),
        moved_results=tuple(scan.moved),
    )
    return tuple(out), tuple(out_sources), report


def _emit_results(
    messages: Sequence[Message],
    sources: Sequence[str | None],
    accepted: list[tuple[int, ToolResultPart]],
    out: list[Message],
    out_sources: list[str | None],
) -> None:
    """Append the kept results of one assistant message, one tool message per source message
    (the original message object when all of its parts are kept)."""
    start = 0
    while start < len(accepted):
        index = accepted[start][0]
        end = start
        while end < len(accepted) and accepted[end][0] == index:
            end += 1
        parts = tuple(p for _, p in accepted[start:end])
        source_msg = messages[index]
        if source_msg.role == "tool" and len(parts) == len(source_msg.parts):
            out.append(source_msg)
        else:
            out.append(dataclasses.replace(source_msg, role="tool", parts=parts))
        out_sources.append(sources[index])
        start = end
