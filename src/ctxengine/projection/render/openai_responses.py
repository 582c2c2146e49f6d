"""Render a :class:`Context` as an OpenAI Responses request body, for stateless replay.

Mapping, part by part (every part kind is handled):

=====================  ===============================================================
part                   Responses ``input`` item
=====================  ===============================================================
text                   system, developer and user messages: ``{"type": "input_text"}`` in
                       a ``message`` item; assistant text: one ``output_text`` per run of
                       text in an assistant ``message`` item (empty text is skipped)
image                  user: ``{"type": "input_image", "image_url": data or remote URL}``;
                       elsewhere a text stand-in
document               its inline text; else an ``input_file`` with a data URL (user
                       messages); else a text stand-in
tool_call              ``{"type": "function_call", call_id, name, arguments}``, arguments
                       verbatim; a freeform call (``meta["freeform"]``, Codex's
                       ``apply_patch``: arguments ``{"input": text}``) as
                       ``{"type": "custom_tool_call", call_id, name, input}``
tool_result            a tool message's results: ``{"type": "function_call_output",
                       call_id, output}``, the result's text, with images and files shown
                       as text stand-ins (results in other messages are dropped: the
                       sanitizer has moved them into tool messages); the result of a
                       freeform call is a ``custom_tool_call_output``
reasoning              OpenAI's own encrypted reasoning (``meta["provider"] == "openai"``,
                       signed, not redacted): ``{"type": "reasoning", summary,
                       encrypted_content}``, without its id, and only when an output item
                       of the same message follows it (the API rejects a reasoning item
                       with nothing after it); other reasoning is dropped
native_compaction      OpenAI's own (``provider == "openai"``): the item exactly as
                       stored, in its place among the assistant message's items; another
                       provider's: dropped. A message standing in for OpenAI's own item
                       (:func:`ctxengine.model.carriage.shown`) is left out
=====================  ===============================================================

Which reasoning and native parts are carried is decided by
:func:`ctxengine.model.carriage.carries` (``"openai-responses"``).

Items carry no ids and the body says ``"store": false``: the request stands alone. When the
input holds a compaction item, the system and developer messages it opens with are sent as
``instructions``, so that the compacted window comes first in ``input`` (a client may drop
every item before the latest compaction item: developers.openai.com compaction guide).

Ids and names: call ids are sent as they are; a tool name the API would reject
(``my.tool/v2``) is replaced as for Chat Completions wherever it appears, in
``function_call`` items and ``tools`` (see :mod:`ctxengine.projection.render.ids`).
"""

from __future__ import annotations

import json
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
from ctxengine.model.carriage import carries, native_block, shown
from ctxengine.projection.context import Context
from ctxengine.projection.render._common import (
    data_url,
    document_stand_in,
    document_text,
    image_stand_in,
    tool_declarations,
)
from ctxengine.projection.render.ids import wire_name

Json = dict[str, Any]
PROVIDER = "openai-responses"
#: Roles of the messages an input holding a compaction item lifts into ``instructions``.
_HEAD_ROLES = ("system", "developer")
#: Function names follow the rule of Chat Completions (``^[a-zA-Z0-9_-]{1,64}$``).
NAME_RULES = "openai"


def _input_text(text: str) -> Json:
    return {"type": "input_text", "text": text}


def _document(doc: DocumentPart, *, media: bool) -> Json:
    text = document_text(doc)
    if text is not None:
        return _input_text(text)
    if media and doc.data is not None:
        file_data = f"data:{doc.media_type};base64,{doc.data}"
        return {"type": "input_file", "filename": doc.title or "document", "file_data": file_data}
    return _input_text(document_stand_in(doc))


def _content(parts: Sequence[Part], *, media: bool) -> list[Json]:
    """Content of a system, developer or user message; images and files only when
    ``media`` (user messages)."""
    out: list[Json] = []
    for part in parts:
        match part:
            case TextPart():
                if part.text:
                    out.append(_input_text(part.text))
            case ImagePart():
                url = data_url(part)
                if media and url is not None:
                    out.append({"type": "input_image", "image_url": url})
                else:
                    out.append(_input_text(image_stand_in(part)))
            case DocumentPart():
                out.append(_document(part, media=media))
            case ToolCallPart() | ToolResultPart() | ReasoningPart() | NativeCompactionPart():
                pass
            case _:
                assert_never(part)
    return out


def _reasoning(part: ReasoningPart) -> Json | None:
    """OpenAI's encrypted reasoning as a stateless item, or ``None`` for any other."""
    if not carries(PROVIDER, part) or not part.signature:
        return None
    summary = [{"type": "summary_text", "text": part.text}] if part.text else []
    return {"type": "reasoning", "summary": summary, "encrypted_content": part.signature}


def _assistant(msg: Message) -> list[Json]:
    """Items of one assistant message, in part order."""
    out: list[Json] = []
    held: list[Json] = []  # reasoning waiting for the output item that follows it
    texts: list[str] = []

    def flush_text() -> None:
        if texts:
            content = [{"type": "output_text", "text": "".join(texts)}]
            out.append({"type": "message", "role": "assistant", "content": content})
            texts.clear()

    def output(text: str) -> None:
        out.extend(held)
        held.clear()
        texts.append(text)

    for part in msg.parts:
        match part:
            case ReasoningPart():
                item = _reasoning(part)
                if item is not None:
                    flush_text()
                    held.append(item)
            case TextPart():
                if part.text:
                    output(part.text)
            case ImagePart():
                output(image_stand_in(part))
            case DocumentPart():
                output(document_text(part) or document_stand_in(part))
            case ToolCallPart():
                flush_text()
                out.extend(held)
                held.clear()
                name = wire_name(part.name, NAME_RULES)
                raw = _freeform_input(part)
                if raw is not None:
                    call = {"call_id": part.id, "name": name, "input": raw}
                    out.append({"type": "custom_tool_call", **call})
                else:
                    call = {"call_id": part.id, "name": name, "arguments": part.arguments}
                    out.append({"type": "function_call", **call})
            case NativeCompactionPart():
                native = native_block(part, "openai") if carries(PROVIDER, part) else None
                if native is not None:
                    flush_text()
                    out.extend(held)
                    held.clear()
                    out.append(native)
            case ToolResultPart():
                pass
            case _:
                assert_never(part)
    flush_text()
    return out


def _freeform_input(call: ToolCallPart) -> str | None:
    """The raw input of a freeform call (``meta["freeform"]`` and arguments ``{"input":
    text}``), else ``None``."""
    if not call.meta.get("freeform"):
        return None
    try:
        args = json.loads(call.arguments)
    except ValueError:
        return None
    text = args.get("input") if isinstance(args, dict) else None
    return text if isinstance(text, str) else None


def _output(result: ToolResultPart) -> str:
    """A tool result's content as text: text verbatim, images and files as stand-ins."""
    lines: list[str] = []
    for item in result.content:
        match item:
            case TextPart():
                lines.append(item.text)
            case ImagePart():
                lines.append(image_stand_in(item))
            case DocumentPart():
                lines.append(document_text(item) or document_stand_in(item))
            case _:
                assert_never(item)
    return "\n".join(lines)


def _items(messages: Sequence[Message]) -> list[Json]:
    out: list[Json] = []
    freeform: set[str] = set()
    for msg in messages:
        if not shown(PROVIDER, msg):
            continue
        if msg.role == "assistant":
            items = _assistant(msg)
            freeform.update(i["call_id"] for i in items if i.get("type") == "custom_tool_call")
            out.extend(items)
        elif msg.role == "tool":
            out.extend(
                {
                    "type": "custom_tool_call_output"
                    if r.call_id in freeform
                    else "function_call_output",
                    "call_id": r.call_id,
                    "output": _output(r),
                }
                for r in msg.tool_results
            )
        else:
            content = _content(msg.parts, media=msg.role == "user")
            if content:
                out.append({"type": "message", "role": msg.role, "content": content})
    return out


def render_openai_responses(
    context: Context,
    *,
    model: str | None = None,
    max_tokens: int | None = None,
    declare_tools: bool = False,
    cache: bool = False,
    system_messages: bool = False,
) -> dict[str, Any]:
    """The Responses API request body for ``context`` (see the module docstring).

    Args:
        context: the projected context.
        model: ``model`` field; omitted when ``None``.
        max_tokens: output cap in tokens, sent as ``max_output_tokens``; omitted when
            ``None``.
        declare_tools: also declare every function the messages call that
            ``context.tools`` lacks, with the description "(schema not recorded in the
            transcript)" and parameters ``{"type": "object"}``.
        cache: accepted for a uniform renderer signature; OpenAI caches prefixes
            automatically, so nothing is marked.
        system_messages: accepted for a uniform renderer signature (Anthropic's
            mid-conversation system messages); the state is sent as it is projected.

    Returns:
        ``{"model"?, "instructions"?, "input", "store": False, "tools"?,
        "max_output_tokens"?}`` as plain
        JSON values. Tools are ``{"type": "function", name, description?, parameters}``, one
        per name (the first schema of a name wins); ``tools`` is omitted when there are none.
    """
    del cache, system_messages
    body: dict[str, Any] = {}
    if model is not None:
        body["model"] = model
    items = _items(context.messages)
    instructions = _lifted_instructions(items)
    if instructions:
        body["instructions"] = instructions
    body["input"] = items
    body["store"] = False
    tools = tool_declarations(
        context.tools, context.messages, NAME_RULES, declare_tools=declare_tools
    )
    if tools:
        body["tools"] = [_tool_def(*tool) for tool in tools]
    if max_tokens is not None:
        body["max_output_tokens"] = max_tokens
    return body


def _lifted_instructions(items: list[Json]) -> str:
    """When ``items`` hold a compaction item, take the system and developer messages they
    open with out of ``items`` and return their texts joined by blank lines; else ``""``
    and ``items`` unchanged."""
    if not any(i.get("type") == "compaction" for i in items):
        return ""
    n = 0
    while n < len(items) and items[n].get("type") == "message":
        if items[n].get("role") not in _HEAD_ROLES:
            break
        n += 1
    head = items[:n]
    del items[:n]
    texts = ("\n".join(str(c.get("text") or "") for c in i["content"]) for i in head)
    return "\n\n".join(t for t in texts if t)


def _tool_def(name: str, description: str | None, params: Json) -> Json:
    out: Json = {"type": "function", "name": name}
    if description is not None:
        out["description"] = description
    out["parameters"] = params
    return out
