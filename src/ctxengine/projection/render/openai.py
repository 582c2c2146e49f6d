"""Render a :class:`Context` as an OpenAI Chat Completions request body.

Mapping, part by part (every part kind is handled):

=====================  ===============================================================
part                   Chat Completions
=====================  ===============================================================
text                   a string content, or ``{"type": "text"}`` parts when a message has
                       several parts (empty text is skipped)
image                  user: ``{"type": "image_url", "image_url": {"url": data URL}}``;
                       elsewhere a text stand-in (see tool results below)
document               its inline text; else a ``{"type": "file"}`` part with a data URL
                       (user messages); else a text stand-in
tool_call              assistant ``tool_calls`` entry ``{id, type: "function", function:
                       {name, arguments}}``, arguments verbatim
tool_result            one ``{"role": "tool", "tool_call_id", "content"}`` message each.
                       Tool messages cannot carry images: the result shows a stand-in
                       ``[image: …]`` and, after the last tool message of the exchange,
                       one user message carries the images themselves
reasoning              dropped (Chat Completions takes no reasoning input)
native_compaction      dropped (OpenAI's compaction items exist only in the Responses API)
=====================  ===============================================================

What is dropped is decided by :func:`ctxengine.model.carriage.carries`, the definition the
token estimate counts by.

Ids and names: a tool-call id over 40 characters and a tool name the API would reject
(``my.tool/v2``) are replaced the same way wherever they appear, in ``tool_calls``, tool
messages and ``tools`` (see :mod:`ctxengine.projection.render.ids`).

A message left with nothing to send is skipped. When the first message after the system
messages is not a user message, a user message ``"(continuing)"`` is put before it, so the
request always holds a user message.
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
from ctxengine.model.carriage import carries
from ctxengine.projection.context import Context
from ctxengine.projection.render._common import (
    CONTINUING_TEXT,
    data_url,
    document_stand_in,
    document_text,
    image_stand_in,
    tool_declarations,
)
from ctxengine.projection.render.ids import wire_id, wire_name

Json = dict[str, Any]
PROVIDER = "openai"


def _text(text: str) -> Json:
    return {"type": "text", "text": text}


def _content_parts(parts: Sequence[Part], *, media: bool) -> list[Json]:
    """Content parts of a system, user or assistant message; images and files only when
    ``media`` (user messages)."""
    out: list[Json] = []
    for part in parts:
        if not carries(PROVIDER, part):
            continue  # reasoning and native compaction items
        match part:
            case TextPart():
                if part.text:
                    out.append(_text(part.text))
            case ImagePart():
                url = data_url(part)
                if media and url is not None:
                    out.append({"type": "image_url", "image_url": {"url": url}})
                else:
                    out.append(_text(image_stand_in(part)))
            case DocumentPart():
                out.append(_document(part, media=media))
            case ToolCallPart() | ToolResultPart() | ReasoningPart() | NativeCompactionPart():
                pass
            case _:
                assert_never(part)
    return out


def _document(doc: DocumentPart, *, media: bool) -> Json:
    text = document_text(doc)
    if text is not None:
        return _text(text)
    if media and doc.data is not None:
        file_data = f"data:{doc.media_type};base64,{doc.data}"
        return {
            "type": "file",
            "file": {"filename": doc.title or "document", "file_data": file_data},
        }
    return _text(document_stand_in(doc))


def _collapse(parts: list[Json]) -> str | list[Json]:
    """A single text part becomes a plain string."""
    if len(parts) == 1 and parts[0]["type"] == "text":
        text: str = parts[0]["text"]
        return text
    return parts


def _assistant(msg: Message) -> Json | None:
    content = _content_parts(msg.parts, media=False)
    calls = [
        {
            "id": wire_id(c.id, PROVIDER),
            "type": "function",
            "function": {"name": wire_name(c.name, PROVIDER), "arguments": c.arguments},
        }
        for c in msg.tool_calls
    ]
    if not content and not calls:
        return None
    out: Json = {"role": "assistant", "content": _collapse(content) if content else None}
    if calls:
        out["tool_calls"] = calls
    return out


def _tool(result: ToolResultPart, images: list[Json]) -> Json:
    call_id = wire_id(result.call_id, PROVIDER)
    parts: list[Json] = []
    own_images = 0
    for item in result.content:
        match item:
            case TextPart():
                if item.text:
                    parts.append(_text(item.text))
            case ImagePart():
                parts.append(_text(image_stand_in(item)))
                url = data_url(item)
                if url is not None:
                    own_images += 1
                    images.append({"type": "image_url", "image_url": {"url": url}})
            case DocumentPart():
                parts.append(_document(item, media=False))
            case _:
                assert_never(item)
    if own_images:
        images.insert(len(images) - own_images, _text(f"Images returned by tool call {call_id}:"))
    content: str | list[Json] = _collapse(parts) if parts else ""
    return {"role": "tool", "tool_call_id": call_id, "content": content}


def _messages(messages: Sequence[Message]) -> list[Json]:
    out: list[Json] = []
    images: list[Json] = []
    for msg in messages:
        if msg.role != "tool" and images:
            out.append({"role": "user", "content": images})
            images = []
        if msg.role == "tool":
            out.extend(_tool(r, images) for r in msg.tool_results)
        elif msg.role == "assistant":
            rendered = _assistant(msg)
            if rendered is not None:
                out.append(rendered)
        else:
            content = _content_parts(msg.parts, media=msg.role == "user")
            if content:
                out.append({"role": msg.role, "content": _collapse(content)})
    if images:
        out.append({"role": "user", "content": images})
    return out


def _ensure_user_first(messages: list[Json]) -> None:
    for i, m in enumerate(messages):
        if m["role"] in ("system", "developer"):
            continue
        if m["role"] != "user":
            messages.insert(i, {"role": "user", "content": CONTINUING_TEXT})
        return
    messages.append({"role": "user", "content": CONTINUING_TEXT})


def render_openai(
    context: Context,
    *,
    model: str | None = None,
    max_tokens: int | None = None,
    declare_tools: bool = False,
    cache: bool = False,
    system_messages: bool = False,
) -> dict[str, Any]:
    """The Chat Completions request body for ``context`` (see the module docstring).

    Args:
        context: the projected context.
        model: ``model`` field; omitted when ``None``.
        max_tokens: output cap in tokens, sent as ``max_completion_tokens`` (the field
            current OpenAI models accept); omitted when ``None``.
        declare_tools: also declare every function the messages call that
            ``context.tools`` lacks, as ``{"type": "function", "function": {name,
            description: "(schema not recorded in the transcript)", parameters:
            {"type": "object"}}}``, so a transcript without its tool schemas can be sent
            as is.
        cache: accepted for a uniform renderer signature; OpenAI caches prefixes
            automatically, so nothing is marked.
        system_messages: accepted for a uniform renderer signature (Anthropic's
            mid-conversation system messages); the state is sent as it is projected.

    Returns:
        ``{"model"?, "messages", "tools"?, "max_completion_tokens"?}`` as plain JSON values.
        Tools are ``{"type": "function", "function": {name, description?, parameters}}``,
        one per name (the first schema of a name wins); ``tools`` is omitted when there are
        none. With ``model`` and ``declare_tools=True`` the body passes
        ``validate(body, "openai", strict=True)``.
    """
    del cache, system_messages
    body: dict[str, Any] = {}
    if model is not None:
        body["model"] = model
    messages = _messages(context.messages)
    _ensure_user_first(messages)
    body["messages"] = messages
    tools = tool_declarations(
        context.tools, context.messages, PROVIDER, declare_tools=declare_tools
    )
    if tools:
        body["tools"] = [_tool_def(*tool) for tool in tools]
    if max_tokens is not None:
        body["max_completion_tokens"] = max_tokens
    return body


def _tool_def(name: str, description: str | None, params: Json) -> Json:
    function: Json = {"name": name}
    if description is not None:
        function["description"] = description
    function["parameters"] = params
    return {"type": "function", "function": function}
