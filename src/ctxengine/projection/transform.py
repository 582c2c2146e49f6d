"""Per-message steps of the projection: prune placeholders, truncate at source, and
signed-reasoning hygiene. Each is pure and changes only the projected copy.
"""

from __future__ import annotations

import dataclasses
import json
from collections.abc import Mapping, Sequence
from dataclasses import dataclass

from ctxengine.model import (
    DocumentPart,
    ImagePart,
    Message,
    ReasoningPart,
    TextPart,
    ToolCallPart,
    ToolResultPart,
)
from ctxengine.model.json_depth import JsonTooDeep, loads_bounded, opaque_arguments
from ctxengine.model.roles import is_real_user_message
from ctxengine.projection.context import Truncation
from ctxengine.tokens.base import Estimator

#: One-line stand-in for a pruned tool result.
PRUNE_PLACEHOLDER = (
    "[pruned: {tool_name}({short_args}) → {n_chars} chars, ~{n_tokens} tokens; "
    "full output kept in history as entry {entry_id}]"
)
#: Marker between the head and the tail of a truncated tool result.
TRUNCATION_MARKER = (
    "\n[… truncated: {omitted_chars} chars (~{omitted_tokens} tokens) omitted; "
    "full output kept in history as entry {entry_id} …]\n"
)
#: Longest argument summary in a prune placeholder, in characters.
SHORT_ARGS_MAX_CHARS = 80
#: Rounds of shrinking the kept text when its token density is above the average.
_FIT_ROUNDS = 4


def short_args(arguments: str, limit: int = SHORT_ARGS_MAX_CHARS) -> str:
    """Tool-call arguments in at most ``limit`` characters: JSON re-dumped without spaces
    (keys in their original order, non-ASCII kept), other text (and JSON nested deeper than
    :data:`~ctxengine.model.json_depth.MAX_JSON_DEPTH`) with whitespace collapsed; cut to
    ``limit - 1`` characters plus ``…`` when longer."""
    try:
        compact = json.dumps(loads_bounded(arguments), separators=(",", ":"), ensure_ascii=False)
    except ValueError:
        compact = " ".join(arguments.split())
    if len(compact) > limit:
        return compact[: limit - 1] + "…"
    return compact


def tail_of(text: str, tokens: int, estimator: Estimator) -> str:
    """The longest end of ``text`` estimated at most ``tokens`` tokens (``text`` itself when
    it fits); found from the text's own characters-per-token ratio, shrunk for at most four
    rounds."""
    total = estimator.text(text)
    if total <= tokens:
        return text
    keep = min(len(text) - 1, len(text) * tokens // max(total, 1))
    for _ in range(_FIT_ROUNDS):
        kept = estimator.text(text[len(text) - keep :]) if keep else 0
        if kept <= tokens:
            break
        keep = min(keep - 1, keep * tokens // kept)
    return text[len(text) - keep :] if keep > 0 else ""


def prune_placeholder(
    result: ToolResultPart,
    call: ToolCallPart | None,
    entry_id: str,
    estimator: Estimator,
    tail_tokens: int | None = None,
) -> ToolResultPart:
    """``result`` with its content replaced by the one-line :data:`PRUNE_PLACEHOLDER`
    (followed by the last ``tail_tokens`` tokens of its text when given: Gemini CLI cuts an
    old function response down to its tail).

    The size is that of the full result: ``n_chars`` its text length, ``n_tokens``
    ``estimator.part(result)``. The tool name comes from the call, else from the result,
    else ``"tool"``; the arguments from the call (empty when the call is unknown).
    """
    name = call.name if call is not None else (result.name or "tool")
    text = PRUNE_PLACEHOLDER.format(
        tool_name=name,
        short_args=short_args(call.arguments) if call is not None else "",
        n_chars=len(result.text),
        n_tokens=estimator.part(result),
        entry_id=entry_id,
    )
    if tail_tokens is not None:
        tail = tail_of(result.text, tail_tokens, estimator)
        if tail:
            text = f"{text}\n{tail}"
    return dataclasses.replace(result, content=(TextPart(text),))


@dataclass(frozen=True, slots=True)
class TruncateCap:
    """The truncate-at-source cap in force: ``tokens`` (estimated) and ``chars``; the share
    ``head_ratio`` of kept characters comes from the head. ``prune_tail``: a pruned result
    keeps its last ``prune_tail`` tokens after its placeholder line (``None``: the line
    alone)."""

    tokens: int
    chars: int
    head_ratio: float
    prune_tail: int | None = None


def truncate_text(
    text: str, cap: TruncateCap, estimator: Estimator, entry_id: str
) -> tuple[str, int, int] | None:
    """Head + marker + tail of ``text`` when it exceeds the cap, else ``None``.

    ``text`` exceeds the cap when ``estimator.text(text) > cap.tokens`` or
    ``len(text) > cap.chars``. The kept length starts at
    ``min(cap.chars, len(text) * cap.tokens // estimator.text(text))`` characters (the
    text's own characters-per-token ratio) and shrinks, for at most four rounds, while
    the kept head and tail are estimated above ``cap.tokens``.

    Returns:
        ``(new_text, omitted_chars, omitted_tokens)``.
    """
    tokens = estimator.text(text)
    if tokens <= cap.tokens and len(text) <= cap.chars:
        return None
    keep = min(cap.chars, len(text) * cap.tokens // max(tokens, 1), len(text) - 1)
    head_n = tail_n = 0
    for _ in range(_FIT_ROUNDS):
        head_n = int(keep * cap.head_ratio)
        tail_n = keep - head_n
        kept_tokens = estimator.text(text[:head_n] + text[len(text) - tail_n :]) if keep else 0
        if kept_tokens <= cap.tokens:
            break
        keep = min(keep - 1, keep * cap.tokens // kept_tokens)
    else:
        head_n = int(keep * cap.head_ratio)
        tail_n = keep - head_n
    omitted = text[head_n : len(text) - tail_n]
    omitted_tokens = estimator.text(omitted)
    marker = TRUNCATION_MARKER.format(
        omitted_chars=len(omitted), omitted_tokens=omitted_tokens, entry_id=entry_id
    )
    return text[:head_n] + marker + text[len(text) - tail_n :], len(omitted), omitted_tokens


def truncate_result(
    result: ToolResultPart, cap: TruncateCap, estimator: Estimator, entry_id: str
) -> tuple[ToolResultPart, Truncation] | None:
    """``result`` shown as head + tail when its text exceeds the cap, else ``None``.

    Several text parts are joined by newlines and truncated as one text, placed where the
    first text part was; images and documents stay in place.
    """
    texts = [p for p in result.content if isinstance(p, TextPart)]
    if not texts:
        return None
    cut = truncate_text(result.text, cap, estimator, entry_id)
    if cut is None:
        return None
    new_text, omitted_chars, omitted_tokens = cut
    content: list[TextPart | ImagePart | DocumentPart] = []
    for p in result.content:
        if p is texts[0]:
            content.append(TextPart(new_text))
        elif not isinstance(p, TextPart):
            content.append(p)
    record = Truncation(result.call_id, entry_id, omitted_chars, omitted_tokens)
    return dataclasses.replace(result, content=tuple(content)), record


#: String argument values shorter than this (characters) are never truncated.
_ARG_MIN_CHARS = 200


def truncate_arguments(
    arguments: str, cap: TruncateCap, estimator: Estimator, entry_id: str
) -> tuple[str, int, int] | None:
    """Tool-call ``arguments`` (a JSON string) cut to the cap, still valid JSON when they
    were: each long string value at any depth (a file body being written, a patch inside a
    shell command list) is shown as head + marker + tail, sharing the cap equally.
    Non-JSON arguments are truncated as text. JSON nested deeper than
    :data:`~ctxengine.model.json_depth.MAX_JSON_DEPTH` is truncated as text too, and stays
    valid JSON: the cut text goes into
    :func:`~ctxengine.model.json_depth.opaque_arguments` (``{"_raw": cut, "_note": …}``).

    Returns:
        ``(new_arguments, omitted_chars, omitted_tokens)``, or ``None`` when under the cap.
    """
    if len(arguments) <= cap.chars and estimator.text(arguments) <= cap.tokens:
        return None
    try:
        value = loads_bounded(arguments)
    except JsonTooDeep:
        return _truncate_opaque(arguments, cap, estimator, entry_id)
    except ValueError:
        return truncate_text(arguments, cap, estimator, entry_id)
    if not isinstance(value, dict | list):
        return truncate_text(arguments, cap, estimator, entry_id)
    n_long = _count_long_strings(value)
    if not n_long:
        return None
    share = TruncateCap(max(1, cap.tokens // n_long), max(1, cap.chars // n_long), cap.head_ratio)
    totals = [0, 0]
    out = _truncate_strings(value, share, estimator, entry_id, totals)
    if not totals[0]:
        return None
    return json.dumps(out, ensure_ascii=False), totals[0], totals[1]


def _truncate_opaque(
    arguments: str, cap: TruncateCap, estimator: Estimator, entry_id: str
) -> tuple[str, int, int] | None:
    """Over-deep JSON arguments cut as text and wrapped in
    :func:`~ctxengine.model.json_depth.opaque_arguments`, or ``None`` when under the cap.
    The wrapper and the escaped quotes add to the cut text, so the cap of the cut shrinks
    by the excess (at most four rounds) until the wrapped JSON fits ``cap``."""
    inner = cap
    best: tuple[str, int, int] | None = None
    for _ in range(_FIT_ROUNDS):
        cut = truncate_text(arguments, inner, estimator, entry_id)
        if cut is None:
            break
        best = (json.dumps(opaque_arguments(cut[0]), ensure_ascii=False), cut[1], cut[2])
        tokens, chars = estimator.text(best[0]), len(best[0])
        if tokens <= cap.tokens and chars <= cap.chars:
            break
        if tokens > cap.tokens:
            inner = dataclasses.replace(inner, tokens=max(1, inner.tokens - (tokens - cap.tokens)))
        if chars > cap.chars:
            inner = dataclasses.replace(inner, chars=max(1, inner.chars - (chars - cap.chars)))
    return best


def _count_long_strings(value: object) -> int:
    if isinstance(value, str):
        return int(len(value) >= _ARG_MIN_CHARS)
    if isinstance(value, dict):
        return sum(_count_long_strings(v) for v in value.values())
    if isinstance(value, list):
        return sum(_count_long_strings(v) for v in value)
    return 0


def _truncate_strings(
    value: object, cap: TruncateCap, estimator: Estimator, entry_id: str, totals: list[int]
) -> object:
    """``value`` with every long string (at any depth) cut by :func:`truncate_text`;
    adds omitted chars and tokens to ``totals``."""
    if isinstance(value, str):
        if len(value) < _ARG_MIN_CHARS:
            return value
        cut = truncate_text(value, cap, estimator, entry_id)
        if cut is None:
            return value
        totals[0] += cut[1]
        totals[1] += cut[2]
        return cut[0]
    if isinstance(value, dict):
        return {k: _truncate_strings(v, cap, estimator, entry_id, totals) for k, v in value.items()}
    if isinstance(value, list):
        return [_truncate_strings(v, cap, estimator, entry_id, totals) for v in value]
    return value


def rewrite_results(
    message: Message,
    entry_id: str,
    *,
    pruned: frozenset[str],
    calls: Mapping[str, ToolCallPart],
    cap: TruncateCap,
    estimator: Estimator,
    truncations: list[Truncation],
    pruned_out: list[str],
) -> Message:
    """``message`` with its pruned results as placeholders and its long results truncated;
    an over-cap text part of a user or assistant message (a pasted log, say) is truncated
    the same way (its :class:`Truncation` has ``part`` = the role and no call id), and so
    are over-cap tool-call arguments (:func:`truncate_arguments`, ``part="tool_call"``).

    Appends what it did to ``truncations`` and ``pruned_out``. Returns ``message`` itself
    when nothing changed (so unchanged messages stay identical objects).
    """
    parts = list(message.parts)
    changed = False
    for k, part in enumerate(parts):
        if isinstance(part, ToolCallPart):
            arg_cut = truncate_arguments(part.arguments, cap, estimator, entry_id)
            if arg_cut is not None:
                parts[k] = dataclasses.replace(part, arguments=arg_cut[0])
                truncations.append(
                    Truncation(part.id, entry_id, arg_cut[1], arg_cut[2], part="tool_call")
                )
                changed = True
            continue
        if isinstance(part, TextPart) and message.role in ("user", "assistant"):
            text_cut = truncate_text(part.text, cap, estimator, entry_id)
            if text_cut is not None:
                parts[k] = TextPart(text_cut[0])
                truncations.append(
                    Truncation("", entry_id, text_cut[1], text_cut[2], part=message.role)
                )
                changed = True
            continue
        if not isinstance(part, ToolResultPart):
            continue
        if part.call_id in pruned:
            parts[k] = prune_placeholder(
                part, calls.get(part.call_id), entry_id, estimator, cap.prune_tail
            )
            pruned_out.append(part.call_id)
            changed = True
            continue
        cut = truncate_result(part, cap, estimator, entry_id)
        if cut is not None:
            parts[k], record = cut
            truncations.append(record)
            changed = True
    return dataclasses.replace(message, parts=tuple(parts)) if changed else message


def _is_signed(part: object) -> bool:
    return isinstance(part, ReasoningPart) and (part.signature is not None or part.redacted)


def without_signed_reasoning(message: Message) -> Message | None:
    """``message`` without its signed or redacted reasoning parts (stale once the turn they
    belong to is compacted: pi#9391), itself when it has none, ``None`` when nothing else is
    left (it then held no tool call, so no pairing breaks)."""
    if message.role != "assistant" or not any(_is_signed(p) for p in message.parts):
        return message
    kept = tuple(p for p in message.parts if not _is_signed(p))
    return dataclasses.replace(message, parts=kept) if kept else None


def _newest_reply(messages: Sequence[Message], start: int, end: int) -> tuple[int, int]:
    """``(first, stop)`` of the last assistant reply in ``messages[start:end]`` (a run of
    consecutive assistant messages), or ``(end, end)`` when there is none."""
    for i in range(end - 1, start - 1, -1):
        if messages[i].role == "assistant":
            first = i
            while first > start and messages[first - 1].role == "assistant":
                first -= 1
            return first, i + 1
    return end, end


def turn_in_progress(messages: Sequence[Message], first: int, stop: int, end: int) -> bool:
    """True when the reply ``messages[first:stop]`` is mid tool loop as of ``end``: it makes
    tool calls and no real user message (:func:`~ctxengine.model.roles.is_real_user_message`)
    follows it before ``end``, whether its results are pending or have arrived. Anthropic
    then requires its signed thinking back byte-exact. A reply without calls (a final
    answer), or one followed by a new real user message, ends its turn."""
    if not any(messages[i].tool_calls for i in range(first, stop)):
        return False
    return not any(is_real_user_message(messages[i]) for i in range(stop, end))


def drop_stale_signed_reasoning(
    messages: Sequence[Message], sources: Sequence[str | None], start: int, end: int
) -> tuple[list[Message], list[str | None], int]:
    """Drop signed reasoning from the assistant messages kept across a compaction.

    ``messages[start:end]`` are the kept messages written before the compaction entry.
    Their signed or redacted reasoning is stale (pi#9391): each such part is dropped
    whole, never emptied or edited. The one exception is the last assistant reply of that
    range (the newest reply when the compaction ran, possibly written as several
    consecutive assistant messages) while its turn was still in progress when the
    compaction ran (:func:`turn_in_progress`: a tool loop that must echo the thinking); a
    finished turn's reasoning is dropped like any other, so a long final thinking block
    does not outlive the compaction. The decision is taken on the messages before the
    compaction only, and messages after it keep everything, so the context of one epoch
    only grows at its tail. A message left with no parts is dropped (it held no tool
    calls, so no pairing breaks). Unsigned reasoning is kept (renderers decide whether to
    send it).

    Returns:
        ``(messages, sources, dropped_parts)``.
    """
    first, stop = _newest_reply(messages, start, end)
    last = first if turn_in_progress(messages, first, stop, end) else end
    out: list[Message] = list(messages[:start])
    out_sources: list[str | None] = list(sources[:start])
    dropped = 0
    for i in range(start, len(messages)):
        msg = messages[i]
        if i < last and msg.role == "assistant" and any(_is_signed(p) for p in msg.parts):
            kept = tuple(p for p in msg.parts if not _is_signed(p))
            dropped += len(msg.parts) - len(kept)
            if not kept:
                continue
            msg = dataclasses.replace(msg, parts=kept)
        out.append(msg)
        out_sources.append(sources[i])
    return out, out_sources, dropped
