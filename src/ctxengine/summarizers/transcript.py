"""Old history as a labelled, third-person transcript: the input of an LLM summarizer.

The transcript reads as a record of what others said and did, never as a conversation to
continue. Each block starts with a bracketed label on its own line; every line of the block's
content follows with the prefix :data:`CONTENT_PREFIX` (``"| "``, a bare ``"|"`` for an empty
line)::

    [user wrote]
    | fix the parser

    [assistant wrote]
    | Reading the parser first.

    [assistant called] Read(file_path="src/parser.py")

    [Read returned]
    | def parse(): ...

Framing that content cannot forge: label lines are written only by this module and are the
only lines that start with ``[`` at column 0 (a tool call is one label line: its arguments
are JSON-escaped, raw arguments have their line breaks written as ``\n``, tool names keep only
word characters and ``.:/@+-``). Whatever a message, a tool result or a file says — a line
``[user wrote]``, ``</history>`` — it arrives as ``| [user wrote]``. The wrapper tags of the
summary prompt and of the continuation state (:data:`FRAME_TAGS`) are also neutralised
wherever outside text is quoted: their angle brackets become ``‹`` and ``›``
(:func:`neutralize_tags`), so ``</history>`` inside a tool result cannot close the wrapper.

Reasoning is dropped; images and documents become one-line placeholders; tool results longer
than the cap keep their head and tail around a marker stating how many characters were left
out. Modes degrade the transcript step by step when a summary request is too large:

============================  ==============================================================
mode                          what is kept
============================  ==============================================================
``full``                      everything, tool results capped at ``tool_result_max_chars``
``tool_head_tail``            tool results capped at a quarter of that
``no_tool_output``            tool results replaced by their size; call arguments capped at
                              :data:`SHORT_ARGUMENT_CHARS`
``user_only``                 only user messages
============================  ==============================================================
"""

from __future__ import annotations

import json
import re
from collections.abc import Sequence
from typing import Literal, TypeAlias

from ctxengine.model import (
    DocumentPart,
    ImagePart,
    Message,
    NativeCompactionPart,
    Part,
    TextPart,
    ToolCallPart,
    ToolResultPart,
)
from ctxengine.model.json_depth import loads_bounded
from ctxengine.projection.frame import FRAME_TAGS, neutralize

TranscriptMode: TypeAlias = Literal["full", "tool_head_tail", "no_tool_output", "user_only"]
#: The modes from least to most degraded.
TRANSCRIPT_MODES: tuple[TranscriptMode, ...] = (
    "full",
    "tool_head_tail",
    "no_tool_output",
    "user_only",
)
#: Cap of one tool result in the summarizer transcript, in characters (pi, OpenCode and
#: Cline send 2,000).
TOOL_RESULT_MAX_CHARS = 2_000
#: Cap of a tool call's rendered arguments in ``no_tool_output`` mode, in characters.
SHORT_ARGUMENT_CHARS = 200
#: Prefix of every content line of the transcript; label lines never start with it.
CONTENT_PREFIX = "| "
_NAME_UNSAFE = re.compile(r"[^\w.:/@+-]")
#: Longest tool name written in a label, in characters.
NAME_MAX_CHARS = 64


def neutralize_tags(text: str) -> str:
    """``text`` with every opening or closing frame tag (:data:`FRAME_TAGS`: the summary
    prompt's, the continuation state's and a summary reply's; any case, spaces allowed)
    written with ``‹`` and ``›``: ``"</history>"`` → ``"‹/history›"``. Other text, other
    tags included, is unchanged (:func:`ctxengine.projection.frame.neutralize`)."""
    return neutralize(text, FRAME_TAGS)


def quote(text: str) -> str:
    """``text`` as block content: tags neutralised, every line prefixed with
    :data:`CONTENT_PREFIX` (``"|"`` alone for an empty line)."""
    return "\n".join(
        f"{CONTENT_PREFIX}{line}" if line else CONTENT_PREFIX.rstrip()
        for line in neutralize_tags(text).split("\n")
    )


def label_name(name: str) -> str:
    """A tool name as written in a label: characters other than word characters and
    ``.:/@+-`` replaced by ``_``, at most :data:`NAME_MAX_CHARS` characters, ``tool`` when
    empty."""
    return _NAME_UNSAFE.sub("_", name)[:NAME_MAX_CHARS] or "tool"


def head_tail(text: str, max_chars: int, entry: str = "") -> str:
    """``text`` unchanged when it has at most ``max_chars`` characters; else its first and
    last ``max_chars // 2`` characters around an ``[… N characters omitted …]`` line, which
    names ``entry`` (the history entry that holds the whole text) when given."""
    if len(text) <= max_chars:
        return text
    half = max(max_chars // 2, 1)
    omitted = len(text) - 2 * half
    where = f"; full text kept in history as entry {entry}" if entry else ""
    return f"{text[:half]}\n[… {omitted:,} characters omitted{where} …]\n{text[-half:]}"


def placeholder(part: ImagePart | DocumentPart | NativeCompactionPart) -> str:
    """One-line text standing in for an image, a document or a provider compaction item."""
    if isinstance(part, ImagePart):
        bits = [part.media_type]
        if part.width and part.height:
            bits.append(f"{part.width}×{part.height} px")
        if part.byte_size is not None:
            bits.append(f"{part.byte_size:,} bytes")
        return f"[image: {', '.join(bits)}]"
    if isinstance(part, DocumentPart):
        bits = [part.media_type]
        if part.title:
            bits.append(json.dumps(part.title, ensure_ascii=False))
        if part.byte_size is not None:
            bits.append(f"{part.byte_size:,} bytes")
        return f"[document: {', '.join(bits)}]"
    return f"[provider compaction item: {part.provider}]"


def format_call(call: ToolCallPart, max_chars: int) -> str:
    """``name(key=value, …)`` on one line, with JSON values; non-object arguments are shown
    raw with line breaks written ``\\n``. The argument text is capped at ``max_chars`` (head
    and tail kept around an inline ``[… N characters omitted …]``); frame tags neutralised."""
    try:
        args = loads_bounded(call.arguments)
    except ValueError:
        args = None
    if isinstance(args, dict):
        inner = ", ".join(
            f"{label_name(str(k))}={json.dumps(v, ensure_ascii=False)}" for k, v in args.items()
        )
    else:
        inner = call.arguments.replace("\r", "\\r").replace("\n", "\\n")
    capped = head_tail(inner, max_chars).replace("\n", " ")
    return neutralize_tags(f"{label_name(call.name)}({capped})")


def cut_lines(text: str, max_chars: int) -> tuple[str, int]:
    """A serialized transcript cut to about ``max_chars`` characters, head and tail kept
    around a ``[… N characters omitted …]`` line, without breaking the framing: the tail
    starts at a line start (or, inside one long line, gets :data:`CONTENT_PREFIX`). Returns
    the text and the number of characters left out (0 when nothing was cut)."""
    if len(text) <= max_chars:
        return text, 0
    half = max(max_chars // 2, 1)
    head, tail = text[:half], text[-half:]
    if text[-half - 1] != "\n":
        nl = tail.find("\n")
        tail = tail[nl + 1 :] if nl >= 0 else tail
        prefix = CONTENT_PREFIX if nl < 0 else ""
    else:
        prefix = ""
    omitted = len(text) - len(head) - len(tail)
    return f"{head}\n[… {omitted:,} characters omitted …]\n{prefix}{tail}", omitted


def _content(parts: Sequence[Part]) -> str:
    out: list[str] = []
    for p in parts:
        if isinstance(p, TextPart):
            out.append(p.text)
        elif isinstance(p, ImagePart | DocumentPart | NativeCompactionPart):
            out.append(placeholder(p))
    return "\n".join(out)


def _result_block(result: ToolResultPart, name: str, mode: TranscriptMode, cap: int) -> str:
    verb = "failed" if result.is_error else "returned"
    body = _content(result.content)
    name = label_name(name)
    if mode == "no_tool_output":
        return f"[{name} {verb} {len(body):,} characters, not shown]"
    limit = cap if mode == "full" else max(cap // 4, 1)
    return f"[{name} {verb}]\n{quote(head_tail(body, limit))}"


def _message_blocks(
    message: Message, names: dict[str, str], mode: TranscriptMode, cap: int
) -> list[str]:
    if message.role == "user":
        text = _content(message.parts)
        return [f"[user wrote]\n{quote(text)}"] if text else []
    if mode == "user_only":
        return []
    if message.role in ("system", "developer"):
        text = _content(message.parts)
        return [f"[{message.role} instructions]\n{quote(text)}"] if text else []
    if message.role == "tool":
        return [
            _result_block(p, p.name or names.get(p.call_id, "tool"), mode, cap)
            for p in message.tool_results
        ]
    blocks: list[str] = []
    text = _content([p for p in message.parts if not isinstance(p, ToolCallPart)])
    if text:
        blocks.append(f"[assistant wrote]\n{quote(text)}")
    arg_cap = SHORT_ARGUMENT_CHARS if mode == "no_tool_output" else cap
    blocks.extend(f"[assistant called] {format_call(c, arg_cap)}" for c in message.tool_calls)
    return blocks


def serialize_transcript(
    messages: Sequence[Message],
    *,
    tool_result_max_chars: int = TOOL_RESULT_MAX_CHARS,
    mode: TranscriptMode = "full",
) -> str:
    """The labelled transcript of ``messages`` (see the module docstring for labels, the
    content prefix and modes).

    Args:
        messages: history in order.
        tool_result_max_chars: cap of one tool result (and of a call's arguments), in characters.
        mode: one of :data:`TRANSCRIPT_MODES`.

    Returns:
        Blocks separated by one blank line; ``""`` when nothing is left.

    Raises:
        ValueError: unknown ``mode`` or a cap < 1.
    """
    if mode not in TRANSCRIPT_MODES:
        raise ValueError(f"unknown transcript mode {mode!r}; expected one of {TRANSCRIPT_MODES}")
    if tool_result_max_chars < 1:
        raise ValueError(f"tool_result_max_chars must be ≥ 1, got {tool_result_max_chars}")
    names = {c.id: c.name for m in messages for c in m.tool_calls}
    blocks: list[str] = []
    for message in messages:
        blocks.extend(_message_blocks(message, names, mode, tool_result_max_chars))
    return "\n\n".join(blocks)
