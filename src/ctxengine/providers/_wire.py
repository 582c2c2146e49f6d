"""A minimal mapping of our messages onto the three wire formats, for requests the provider
builds itself (summary requests: a system prompt plus a few user/assistant messages).

Full-fidelity rendering with every protocol invariant enforced lives in
:mod:`ctxengine.projection.render`; pass its output as ``CompletionRequest.body``. Here
reasoning is kept only where it is safe (Anthropic signed thinking, byte-exact) and
provider-native compaction items are dropped.
"""

from __future__ import annotations

import inspect
from collections.abc import Callable, Mapping, Sequence
from typing import Any

from ctxengine.model import (
    DocumentPart,
    ImagePart,
    Message,
    ReasoningPart,
    TextPart,
    ToolCallPart,
    ToolResultPart,
)
from ctxengine.model.carriage import carries
from ctxengine.model.json_depth import JsonTooDeep, loads_bounded, opaque_arguments


def _image_url(part: ImagePart) -> str | None:
    if part.data is not None:
        return f"data:{part.media_type};base64,{part.data}"
    return part.url


def _document_text(part: DocumentPart) -> str:
    if part.text is not None:
        return part.text
    return f"[document: {part.title or part.media_type}]"


def _openai_content(parts: Sequence[object], *, responses: bool) -> list[dict[str, Any]]:
    text_type = "input_text" if responses else "text"
    out: list[dict[str, Any]] = []
    for part in parts:
        if isinstance(part, TextPart):
            out.append({"type": text_type, "text": part.text})
        elif isinstance(part, DocumentPart):
            out.append({"type": text_type, "text": _document_text(part)})
        elif isinstance(part, ImagePart) and (url := _image_url(part)) is not None:
            if responses:
                out.append({"type": "input_image", "image_url": url})
            else:
                out.append({"type": "image_url", "image_url": {"url": url}})
    return out


def _flatten(content: list[dict[str, Any]]) -> str | list[dict[str, Any]]:
    """A content list of text items only becomes one string (accepted by every server)."""
    if all(c["type"] in ("text", "input_text") for c in content):
        return "\n".join(c["text"] for c in content)
    return content


def openai_chat_messages(system: str, messages: Sequence[Message]) -> list[dict[str, Any]]:
    """Chat Completions ``messages``: system first, tool results as ``tool`` messages."""
    out: list[dict[str, Any]] = [{"role": "system", "content": system}] if system else []
    for msg in messages:
        if msg.role == "tool":
            for res in msg.tool_results:
                out.append({"role": "tool", "tool_call_id": res.call_id, "content": res.text})
        elif msg.role == "assistant":
            item: dict[str, Any] = {"role": "assistant", "content": msg.text or None}
            if msg.tool_calls:
                item["tool_calls"] = [
                    {
                        "id": c.id,
                        "type": "function",
                        "function": {"name": c.name, "arguments": c.arguments},
                    }
                    for c in msg.tool_calls
                ]
            out.append(item)
        else:
            out.append(
                {"role": msg.role, "content": _flatten(_openai_content(msg.parts, responses=False))}
            )
    return out


def _reasoning_item(part: ReasoningPart) -> dict[str, Any] | None:
    """An OpenAI reasoning item for stateless replay (no id), or ``None`` for reasoning that
    is not OpenAI's encrypted reasoning."""
    if not carries("openai-responses", part) or not part.signature:
        return None
    summary = [{"type": "summary_text", "text": part.text}] if part.text else []
    return {"type": "reasoning", "summary": summary, "encrypted_content": part.signature}


def _responses_assistant(msg: Message) -> list[dict[str, Any]]:
    """Items of one assistant message in part order. An OpenAI reasoning item is kept only
    when an output item of the same message follows it (the API rejects a reasoning item
    with nothing after it); other providers' reasoning is left out."""
    out: list[dict[str, Any]] = []
    pending: list[dict[str, Any]] = []
    texts: list[str] = []

    def flush_text() -> None:
        if texts:
            content = [{"type": "output_text", "text": "".join(texts)}]
            out.append({"type": "message", "role": "assistant", "content": content})
            texts.clear()

    for part in msg.parts:
        if isinstance(part, ReasoningPart):
            item = _reasoning_item(part)
            if item is not None:
                flush_text()
                pending.append(item)
        elif isinstance(part, TextPart) and part.text:
            out.extend(pending)
            pending.clear()
            texts.append(part.text)
        elif isinstance(part, ToolCallPart):
            flush_text()
            out.extend(pending)
            pending.clear()
            call = {"call_id": part.id, "name": part.name, "arguments": part.arguments}
            out.append({"type": "function_call", **call})
    flush_text()
    return out


def openai_responses_input(messages: Sequence[Message]) -> list[dict[str, Any]]:
    """Responses ``input`` items for stateless replay: no item ids; OpenAI reasoning items
    (encrypted) only directly before the item that follows them; other reasoning left out."""
    out: list[dict[str, Any]] = []
    for msg in messages:
        if msg.role == "assistant":
            out.extend(_responses_assistant(msg))
        elif msg.role == "tool":
            for res in msg.tool_results:
                out.append(
                    {"type": "function_call_output", "call_id": res.call_id, "output": res.text}
                )
        else:
            content = _openai_content(msg.parts, responses=True)
            out.append({"type": "message", "role": msg.role, "content": content})
    return out


def _anthropic_block(part: object) -> dict[str, Any] | None:
    if isinstance(part, TextPart):
        return {"type": "text", "text": part.text} if part.text else None
    if isinstance(part, DocumentPart):
        return {"type": "text", "text": _document_text(part)}
    if isinstance(part, ImagePart):
        if part.data is not None:
            source = {"type": "base64", "media_type": part.media_type, "data": part.data}
            return {"type": "image", "source": source}
        return {"type": "image", "source": {"type": "url", "url": part.url}} if part.url else None
    if isinstance(part, ToolCallPart):
        return {
            "type": "tool_use",
            "id": part.id,
            "name": part.name,
            "input": _json_object(part.arguments),
        }
    if isinstance(part, ToolResultPart):
        content = [b for p in part.content if (b := _anthropic_block(p)) is not None]
        return {
            "type": "tool_result",
            "tool_use_id": part.call_id,
            "content": content,
            "is_error": part.is_error,
        }
    if isinstance(part, ReasoningPart) and carries("anthropic", part) and part.signature:
        if part.redacted:
            return {"type": "redacted_thinking", "data": part.signature}
        return {"type": "thinking", "thinking": part.text, "signature": part.signature}
    return None


def _json_object(arguments: str) -> Any:
    try:
        value = loads_bounded(arguments)
    except JsonTooDeep:
        return opaque_arguments(arguments)
    except ValueError:
        return {"_raw_arguments": arguments}
    return value if isinstance(value, dict) else {"_value": value}


def anthropic_messages(messages: Sequence[Message]) -> tuple[str, list[dict[str, Any]]]:
    """Anthropic ``(system, messages)``: system/developer text lifted into ``system``, tool
    results sent as user content, consecutive same-role messages merged."""
    system: list[str] = []
    out: list[dict[str, Any]] = []
    for msg in messages:
        if msg.role in ("system", "developer"):
            system.append(msg.text)
            continue
        role = "assistant" if msg.role == "assistant" else "user"
        blocks = [b for p in msg.parts if (b := _anthropic_block(p)) is not None]
        if not blocks:
            continue
        if out and out[-1]["role"] == role:
            out[-1]["content"].extend(blocks)
        else:
            out.append({"role": role, "content": blocks})
    return "\n\n".join(s for s in system if s), out


def tool_schemas(tools: Sequence[Mapping[str, Any]], api: str) -> list[dict[str, Any]]:
    """Provider-neutral tool schemas (``name``, ``description``, ``parameters``) in the shape
    of ``api``: ``"chat"``, ``"responses"`` or ``"anthropic"``."""
    out: list[dict[str, Any]] = []
    for t in tools:
        name, desc = t["name"], t.get("description", "")
        params = t.get("parameters", {"type": "object", "properties": {}})
        if api == "chat":
            out.append(
                {
                    "type": "function",
                    "function": {"name": name, "description": desc, "parameters": params},
                }
            )
        elif api == "responses":
            out.append(
                {"type": "function", "name": name, "description": desc, "parameters": params}
            )
        else:
            out.append({"name": name, "description": desc, "input_schema": params})
    return out


def strip_cache_control(value: Any) -> Any:
    """A deep copy of a JSON-like value with every ``cache_control`` key removed."""
    if isinstance(value, Mapping):
        return {k: strip_cache_control(v) for k, v in value.items() if k != "cache_control"}
    if isinstance(value, list | tuple):
        return [strip_cache_control(v) for v in value]
    return value


def sdk_kwargs(method: Callable[..., Any], body: Mapping[str, Any]) -> dict[str, Any]:
    """Split a request body into the keyword arguments ``method`` declares and an
    ``extra_body`` holding the rest, so fields newer than the installed SDK still go out."""
    params = inspect.signature(method).parameters
    known = {k: v for k, v in body.items() if k in params}
    extra = {k: v for k, v in body.items() if k not in params}
    if extra:
        known["extra_body"] = extra
    return known
