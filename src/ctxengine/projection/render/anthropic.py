"""Render a :class:`Context` as an Anthropic Messages request body.

Mapping, part by part (every part kind is handled):

=====================  ===============================================================
part                   Anthropic Messages
=====================  ===============================================================
text                   ``{"type": "text"}`` block; blank text is skipped (the API
                       rejects it)
image                  ``{"type": "image", "source": base64 | url}`` in user messages and
                       tool results; a text stand-in elsewhere
document               inline text: ``document`` block with a ``text`` source; PDF data:
                       ``base64`` source; URL: ``url`` source; else a text stand-in
tool_call              ``tool_use`` block; arguments parsed to an object (see
                       :func:`~ctxengine.projection.render._common.parse_arguments`)
tool_result            ``tool_result`` block in the user message right after the call,
                       before any other block of that message; ``is_error`` when set
reasoning              signed: ``thinking`` block with its ``signature``; redacted:
                       ``redacted_thinking`` with ``data``; both byte-exact and first in
                       the assistant content. Unsigned reasoning, and reasoning whose
                       ``meta["provider"]`` names another provider, is dropped (the API
                       accepts only its own signatures)
native_compaction      Anthropic's own: the payload passed through as a content block,
                       exactly as stored (never marked for the cache); another
                       provider's: dropped. A message standing in for Anthropic's own
                       item (:func:`ctxengine.model.carriage.shown`) is left out

Which reasoning and native parts are carried is decided by
:func:`ctxengine.model.carriage.carries`, the definition the token estimate counts by.
=====================  ===============================================================

Ids and names: tool-call ids and tool names the API would reject (``call_1#2``,
``my.tool/v2``) are replaced the same way wherever they appear, in ``tool_use``,
``tool_result`` and ``tools`` (see :mod:`ctxengine.projection.render.ids`).

Roles: every system and developer message, wherever it stands, goes into the top-level
``system`` string (joined by blank lines, in order). Tool messages become user messages.
Consecutive messages of the same role are merged into one, since roles must alternate. When
the first message would be an assistant message, a user message ``"(continuing)"`` is put
first, unless it opens with a ``compaction`` block: the API takes that block first in
``messages``, in place of the messages it summarizes (platform.claude.com compaction). In an
assistant message a ``compaction`` block comes first, then thinking, then the rest.

Mid-conversation system messages (``system_messages=True``, for a model whose profile sets
``mid_conversation_system``: Claude Opus 4.8 and later take ``role: "system"`` inside
``messages``; older models answer "role 'system' is not supported on this model"): the
synthetic user messages of the context's preamble (continuation state, re-injected state,
pinned items) are sent as system messages where the API allows one, else as user turns as
without the flag. Allowed: after the first user or assistant message (a leading system
message must use the top-level field), and a run of system messages must precede an
assistant message or end the request ("role 'system' must precede an 'assistant' message or
end the array", the API's own error, observed 2026-10-02 on claude-opus-5-5).

Prompt-cache breakpoints (``cache=True``): at most four ``cache_control`` markers, each on
a stable boundary, a block that every later request of the epoch repeats with everything
before it (:func:`cache_breakpoints` lists them):

1. the last tool definition (the tools come first in the cached prefix);
2. the system prompt;
3. the end of the preamble: the last block of the continuation state, the re-injected
   state and the pinned items (when the context has any after its head);
4. the newest stable message: the last block of the message before the last one (not a
   thinking block). The last message is volatile: it is what this call adds, and a result
   arriving for a call still open may take the place of its stand-in; the next request
   reads the cache at marker 4 of this one, within the API's 20-block look-back.

Markers that fall on the same block count once.
"""

from __future__ import annotations

import re
from collections.abc import Mapping, Sequence
from typing import Any, assert_never

from ctxengine.model import (
    DocumentPart,
    ImagePart,
    Message,
    NativeCompactionPart,
    Part,
    ReasoningPart,
    TextPart,
    ToolCallPart,
    ToolResultPart,
)
from ctxengine.model.carriage import carries, native_block, shown
from ctxengine.projection._check_anthropic import MAX_CACHE_BREAKPOINTS, cache_control_paths
from ctxengine.projection.context import Context
from ctxengine.projection.render._common import (
    CONTINUING_TEXT,
    document_stand_in,
    document_text,
    image_stand_in,
    parse_arguments,
    tool_declarations,
)
from ctxengine.projection.render.ids import wire_id, wire_name

Json = dict[str, Any]
PROVIDER = "anthropic"
#: Block types that must open a message of each role, in this order (stable order otherwise
#: kept): an assistant turn opens with its compaction block, then its thinking.
_LEADING = {"assistant": ("compaction", "thinking", "redacted_thinking"), "user": ("tool_result",)}
#: Content block of Anthropic's compaction.
COMPACTION = "compaction"


def _text(text: str) -> Json:
    return {"type": "text", "text": text}


def _image(image: ImagePart, *, media: bool) -> Json:
    if media and image.data is not None:
        source: Json = {"type": "base64", "media_type": image.media_type, "data": image.data}
        return {"type": "image", "source": source}
    if media and image.url is not None:
        return {"type": "image", "source": {"type": "url", "url": image.url}}
    return _text(image_stand_in(image))


def _document(doc: DocumentPart, *, media: bool) -> Json:
    source: Json | None = None
    if media and doc.text is not None:
        source = {"type": "text", "media_type": "text/plain", "data": doc.text}
    elif media and doc.data is not None and doc.media_type == "application/pdf":
        source = {"type": "base64", "media_type": doc.media_type, "data": doc.data}
    elif media and doc.url is not None:
        source = {"type": "url", "url": doc.url}
    if source is None:
        text = document_text(doc)
        return _text(text if text is not None and text.strip() else document_stand_in(doc))
    block: Json = {"type": "document", "source": source}
    if doc.title:
        block["title"] = doc.title
    return block


def _reasoning(part: ReasoningPart) -> Json | None:
    if not carries(PROVIDER, part) or part.signature is None:
        return None
    if part.redacted:
        return {"type": "redacted_thinking", "data": part.signature}
    return {"type": "thinking", "thinking": part.text, "signature": part.signature}


def _native(part: NativeCompactionPart) -> Json | None:
    return native_block(part) if carries(PROVIDER, part) else None


def _blocks(parts: Sequence[Part], *, assistant: bool) -> list[Json]:
    """Blocks of a user (``assistant=False``) or assistant message."""
    out: list[Json] = []
    for part in parts:
        block: Json | None = None
        match part:
            case TextPart():
                block = _text(part.text) if part.text.strip() else None
            case ImagePart():
                block = _image(part, media=not assistant)
            case DocumentPart():
                block = _document(part, media=not assistant)
            case ToolCallPart():
                if assistant:
                    block = {
                        "type": "tool_use",
                        "id": wire_id(part.id, PROVIDER),
                        "name": wire_name(part.name, PROVIDER),
                        "input": parse_arguments(part.arguments),
                    }
            case ReasoningPart():
                block = _reasoning(part) if assistant else None
            case NativeCompactionPart():
                block = _native(part)
            case ToolResultPart():
                block = None
            case _:
                assert_never(part)
        if block is not None:
            out.append(block)
    return out


def _tool_result(result: ToolResultPart) -> Json:
    content: list[Json] = []
    for item in result.content:
        match item:
            case TextPart():
                if item.text.strip():
                    content.append(_text(item.text))
            case ImagePart():
                content.append(_image(item, media=True))
            case DocumentPart():
                content.append(_document(item, media=True))
            case _:
                assert_never(item)
    block: Json = {"type": "tool_result", "tool_use_id": wire_id(result.call_id, PROVIDER)}
    if content:
        block["content"] = content
    if result.is_error:
        block["is_error"] = True
    return block


def _system_text(msg: Message) -> str:
    lines: list[str] = []
    for part in msg.parts:
        if isinstance(part, TextPart) and part.text:
            lines.append(part.text)
        elif isinstance(part, DocumentPart):
            lines.append(document_text(part) or document_stand_in(part))
        elif isinstance(part, ImagePart):
            lines.append(image_stand_in(part))
    return "\n".join(lines)


def _items(
    messages: Sequence[Message], state: frozenset[int]
) -> tuple[list[str], list[tuple[str, list[Json], int]]]:
    """The system texts, and per message that renders blocks: its role in ``messages``
    (``"system"`` for the indexes of ``state`` that :func:`_placed` accepts), its blocks and
    its index."""
    system: list[str] = []
    items: list[tuple[str, list[Json], int]] = []
    for i, msg in enumerate(messages):
        if not shown(PROVIDER, msg):
            continue
        if msg.role in ("system", "developer"):
            text = _system_text(msg)
            if text:
                system.append(text)
            continue
        if msg.role == "tool":
            role, blocks = "user", [_tool_result(r) for r in msg.tool_results]
        else:
            role = "assistant" if msg.role == "assistant" else "user"
            blocks = _blocks(msg.parts, assistant=role == "assistant")
        if blocks:
            items.append((role, blocks, i))
    return system, _placed(items, state)


def _placed(
    items: list[tuple[str, list[Json], int]], state: frozenset[int]
) -> list[tuple[str, list[Json], int]]:
    """``items`` with the user items of ``state`` (text blocks only) turned into system
    items where the API allows a mid-conversation system message: after the first user or
    assistant item, in a run that precedes an assistant item or ends the list."""
    out = list(items)
    k = 0
    while k < len(out):
        if not _state_item(out[k], state):
            k += 1
            continue
        end = k
        while end < len(out) and _state_item(out[end], state):
            end += 1
        start = k if k > 0 else k + 1  # the first message of a request is never a system one
        if end == len(out) or out[end][0] == "assistant":
            for j in range(start, end):
                out[j] = ("system", out[j][1], out[j][2])
        k = end
    return out


def _state_item(item: tuple[str, list[Json], int], state: frozenset[int]) -> bool:
    role, blocks, index = item
    return role == "user" and index in state and all(b["type"] == "text" for b in blocks)


def _turns(
    messages: Sequence[Message], state: frozenset[int] = frozenset()
) -> tuple[list[str], list[Json], dict[int, Json]]:
    """The system texts, the ``messages`` turns, and the last block each message index
    rendered (the same object as in the turns)."""
    system, items = _items(messages, state)
    turns: list[Json] = []
    last: dict[int, Json] = {}
    for role, blocks, index in items:
        last[index] = blocks[-1]
        if turns and turns[-1]["role"] == role and role != "system":
            turns[-1]["content"].extend(blocks)
        else:
            turns.append({"role": role, "content": blocks})
    for turn in turns:
        lead = _LEADING.get(turn["role"], ())
        turn["content"].sort(
            key=lambda block: lead.index(block["type"]) if block["type"] in lead else len(lead)
        )
    if not turns or (turns[0]["role"] != "user" and turns[0]["content"][0]["type"] != COMPACTION):
        turns.insert(0, {"role": "user", "content": [_text(CONTINUING_TEXT)]})
    return system, turns, last


def state_indexes(context: Context) -> frozenset[int]:
    """Indexes of the context's synthetic user messages before its tail: the continuation
    state, re-injected state and pinned items (none when the preamble is unknown)."""
    if context.preamble is None:
        return frozenset()
    return frozenset(
        i
        for i in range(context.preamble)
        if context.sources[i] is None and context.messages[i].role == "user"
    )


def render_anthropic(
    context: Context,
    *,
    model: str | None = None,
    max_tokens: int | None = None,
    declare_tools: bool = False,
    cache: bool = False,
    system_messages: bool = False,
) -> dict[str, Any]:
    """The Messages API request body for ``context`` (see the module docstring).

    Args:
        context: the projected context.
        model: ``model`` field; omitted when ``None``.
        max_tokens: output cap in tokens. The API requires it; it is omitted when ``None``
            so the caller (the provider) can set it.
        declare_tools: also declare every tool the messages call that ``context.tools``
            lacks, as ``{name, description: "(schema not recorded in the transcript)",
            input_schema: {"type": "object"}}``: the API rejects ``tool_use`` blocks of
            undeclared tools, so a transcript without its tool schemas can be sent as is.
        cache: mark the prefix for the provider's prompt cache: ``cache_control:
            {"type": "ephemeral"}`` on at most four stable boundaries (the module
            docstring; the system prompt then becomes a list of one text block).
        system_messages: the model takes mid-conversation system messages: the state goes
            there where the API allows it (the module docstring).

    Returns:
        ``{"model"?, "max_tokens"?, "system"?, "messages", "tools"?}`` as plain JSON values.
        Message content is always a list of blocks. Tools are
        ``{name, description?, input_schema}``, one per name (the first schema of a name
        wins); ``tools`` is omitted when there are none. With ``model``, ``max_tokens`` and
        ``declare_tools=True`` the body passes ``validate(body, "anthropic", strict=True)``.
    """
    return _render(context, model, max_tokens, declare_tools, cache, system_messages)[0]


def _render(
    context: Context,
    model: str | None,
    max_tokens: int | None,
    declare_tools: bool,
    cache: bool,
    system_messages: bool,
) -> tuple[dict[str, Any], list[tuple[Json, str]]]:
    """:func:`render_anthropic`'s body, and the blocks it marked for the cache with the
    boundary each stands for."""
    state = state_indexes(context) if system_messages else frozenset()
    system, turns, last = _turns(context.messages, state)
    body: dict[str, Any] = {}
    if model is not None:
        body["model"] = model
    if max_tokens is not None:
        body["max_tokens"] = max_tokens
    if system:
        body["system"] = "\n\n".join(system)
    body["messages"] = turns
    tools = tool_declarations(
        context.tools, context.messages, PROVIDER, declare_tools=declare_tools
    )
    if tools:
        body["tools"] = [_tool_def(*tool) for tool in tools]
    marks = _mark_cache(body, _preamble_end(context, last)) if cache else []
    return body, marks


def cache_layout(
    context: Context, *, declare_tools: bool = False, system_messages: bool = False
) -> list[tuple[str, str]]:
    """Where ``render_anthropic(context, cache=True)`` puts its cache breakpoints, in request
    order: ``(JSON path, boundary)`` with the boundary one of ``"last tool"``, ``"system
    prompt"``, ``"end of the preamble"`` (continuation state, re-injected state, pinned
    items) and ``"newest stable message"``."""
    body, marks = _render(context, None, None, declare_tools, True, system_messages)
    paths = cache_control_paths(body)
    blocks = _blocks_at(body, paths)
    return [
        (path, next(label for b, label in marks if b is block))
        for path, block in zip(paths, blocks, strict=True)
    ]


def _blocks_at(body: Mapping[str, Any], paths: Sequence[str]) -> list[Json]:
    """The blocks at ``paths`` (as :func:`cache_breakpoints` writes them)."""
    out: list[Json] = []
    for path in paths:
        value: Any = body
        for name, index in _PATH_STEP.findall(path):
            value = value[name][int(index)]
        out.append(value)
    return out


#: The prompt-cache breakpoint marker of the Messages API.
CACHE_CONTROL: dict[str, str] = {"type": "ephemeral"}
_THINKING = ("thinking", "redacted_thinking")
#: Blocks never marked: thinking (the API refuses), compaction (sent exactly as returned).
_UNMARKED = (*_THINKING, COMPACTION)
_PATH_STEP = re.compile(r"(\w+)\[(\d+)\]")


def _preamble_end(context: Context, last: dict[int, Json]) -> Json | None:
    """The last block of the context's preamble after its head (continuation state,
    re-injected state, pinned items), or ``None`` when it has none."""
    if context.preamble is None:
        return None
    head = 0
    while head < len(context.messages) and context.messages[head].role in ("system", "developer"):
        head += 1
    for i in range(context.preamble - 1, head - 1, -1):
        block = last.get(i)
        if block is not None:
            return block
    return None


def _mark_cache(body: dict[str, Any], preamble_end: Json | None) -> list[tuple[Json, str]]:
    """Put the cache breakpoints of the module docstring on ``body``: the last tool, the
    system prompt, ``preamble_end`` and the newest stable message, each block once. Returns
    the blocks marked with the boundary each stands for."""
    marked: list[tuple[Json, str]] = []

    def mark(block: Json | None, label: str) -> None:
        if block is None or block.get("type") in _UNMARKED:
            return
        if any(block is m for m, _ in marked) or len(marked) == MAX_CACHE_BREAKPOINTS:
            return
        block["cache_control"] = dict(CACHE_CONTROL)
        marked.append((block, label))

    tools = body.get("tools") or []
    if tools:
        mark(tools[-1], "last tool")
    if isinstance(body.get("system"), str):
        body["system"] = [{"type": "text", "text": body["system"]}]
    if body.get("system"):
        mark(body["system"][-1], "system prompt")
    mark(preamble_end, "end of the preamble")
    messages = body.get("messages") or []
    if len(messages) >= 2:
        stable = [b for b in messages[-2]["content"] if b.get("type") not in _UNMARKED]
        mark(stable[-1] if stable else None, "newest stable message")
    return marked


def cache_breakpoints(body: Mapping[str, Any]) -> list[str]:
    """Where a request body carries ``cache_control`` markers, in request order, as JSON
    paths: ``tools[3]``, ``system[0]``, ``messages[2].content[1]`` (a marker inside a tool
    result: ``messages[4].content[0].content[1]``)."""
    return cache_control_paths(body)


def _tool_def(name: str, description: str | None, params: Json) -> Json:
    out: Json = {"name": name}
    if description is not None:
        out["description"] = description
    out["input_schema"] = params
    return out
