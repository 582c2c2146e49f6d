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
native_compaction      Anthropic's own: the payload passed through as a content block;
                       another provider's: dropped

Which reasoning and native parts are carried is decided by
:func:`ctxengine.model.carriage.carries`, the definition the token estimate counts by.
=====================  ===============================================================

Ids and names: tool-call ids and tool names the API would reject (``call_1#2``,
``my.tool/v2``) are replaced the same way wherever they appear, in ``tool_use``,
``tool_result`` and ``tools`` (see :mod:`ctxengine.projection.render.ids`).

Roles: every system and developer message, wherever it stands, goes into the top-level
``system`` string (joined by blank lines, in order); Anthropic has no system role inside
``messages``. Tool messages become user messages. Consecutive messages of the same role are
merged into one, since roles must alternate. When the first message would be an assistant
message, a user message ``"(continuing)"`` is put first.
"""

from __future__ import annotations

from collections.abc import Sequence
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
from ctxengine.model.carriage import carries, native_block
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
#: Block types that must open a message of each role (stable order otherwise kept).
_LEADING = {"assistant": ("thinking", "redacted_thinking"), "user": ("tool_result",)}


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


def _turns(messages: Sequence[Message]) -> tuple[list[str], list[Json]]:
    system: list[str] = []
    turns: list[Json] = []
    for msg in messages:
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
        if not blocks:
            continue
        if turns and turns[-1]["role"] == role:
            turns[-1]["content"].extend(blocks)
        else:
            turns.append({"role": role, "content": blocks})
    for turn in turns:
        lead = _LEADING[turn["role"]]
        turn["content"].sort(key=lambda block: 0 if block["type"] in lead else 1)
    if not turns or turns[0]["role"] != "user":
        turns.insert(0, {"role": "user", "content": [_text(CONTINUING_TEXT)]})
    return system, turns


def render_anthropic(
    context: Context,
    *,
    model: str | None = None,
    max_tokens: int | None = None,
    declare_tools: bool = False,
    cache: bool = False,
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
            {"type": "ephemeral"}`` on the system prompt (which then becomes a list of one
            text block; it covers the tools too) and on the last block of the last message,
            so the next request of the epoch, which only grows at its tail, reads the cache.

    Returns:
        ``{"model"?, "max_tokens"?, "system"?, "messages", "tools"?}`` as plain JSON values.
        Message content is always a list of blocks. Tools are
        ``{name, description?, input_schema}``, one per name (the first schema of a name
        wins); ``tools`` is omitted when there are none. With ``model``, ``max_tokens`` and
        ``declare_tools=True`` the body passes ``validate(body, "anthropic", strict=True)``.
    """
    system, turns = _turns(context.messages)
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
    if cache:
        _mark_cache(body)
    return body


#: The prompt-cache breakpoint marker of the Messages API.
CACHE_CONTROL: dict[str, str] = {"type": "ephemeral"}


def _mark_cache(body: dict[str, Any]) -> None:
    """Put a cache breakpoint on the system prompt and on the last message's last block."""
    if isinstance(body.get("system"), str):
        body["system"] = [
            {"type": "text", "text": body["system"], "cache_control": dict(CACHE_CONTROL)}
        ]
    messages = body.get("messages") or []
    if messages and messages[-1].get("content"):
        last = messages[-1]["content"][-1]
        if last.get("type") not in ("thinking", "redacted_thinking"):
            last["cache_control"] = dict(CACHE_CONTROL)


def _tool_def(name: str, description: str | None, params: Json) -> Json:
    out: Json = {"name": name}
    if description is not None:
        out["description"] = description
    out["input_schema"] = params
    return out
