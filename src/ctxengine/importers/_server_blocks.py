"""Anthropic provider-side tool blocks as text parts.

Server tools (``web_search``, ``web_fetch``, ``code_execution`` …), the MCP connector and
container uploads run on the provider's side: the reply that holds a ``server_tool_use`` or
``mcp_tool_use`` block also holds its result block (``web_search_tool_result``,
``mcp_tool_result``, ``code_execution_tool_result`` …), and the client never answers them.
They are therefore not tool calls of ours (a :class:`~ctxengine.model.ToolCallPart` would be
an unanswered call); each block becomes one :class:`~ctxengine.model.TextPart` of the
assistant message that states what happened, with the whole block kept byte-for-byte in the
part's ``meta["provider_block"]``:

==============================  =========================================================
block                           text
==============================  =========================================================
``server_tool_use``             ``[provider-side tool call] web_search({"query": "…"})``
``mcp_tool_use``                ``[provider-side tool call] SERVER/NAME({…})``
``*_tool_result``               ``[provider-side tool result: NAME]`` then the readable
                                content: search hits as ``- TITLE <URL>``, a fetched page's
                                URL and text, code output with its return code, MCP text,
                                ``error: CODE``; at most :data:`RESULT_MAX_CHARS`
``container_upload``            ``[provider-side container upload: FILE_ID]``
==============================  =========================================================

Encrypted search content and base64 payloads are never put into the text.
"""

from __future__ import annotations

import json
from typing import Any

from ctxengine.model import TextPart

#: Block types of provider-side calls.
CALL_BLOCKS = frozenset({"server_tool_use", "mcp_tool_use"})
#: Other provider-side blocks that are neither calls nor results.
OTHER_BLOCKS = frozenset({"container_upload"})
#: Most characters of a result's readable content kept in the text part.
RESULT_MAX_CHARS = 4_000
#: Key of the part meta holding the original block.
META_KEY = "provider_block"


def is_provider_block(kind: object) -> bool:
    """True for a provider-side tool block type: a call (:data:`CALL_BLOCKS`), any
    ``*_tool_result`` other than the client's ``tool_result``, or :data:`OTHER_BLOCKS`."""
    if not isinstance(kind, str):
        return False
    if kind in CALL_BLOCKS or kind in OTHER_BLOCKS:
        return True
    return kind.endswith("_tool_result") and kind != "tool_result"


class ProviderBlocks:
    """Converts the provider-side blocks of one file; remembers call names by id so that a
    result block is labelled with the tool that produced it."""

    def __init__(self) -> None:
        self.names: dict[str, str] = {}

    def part(self, block: dict[str, Any]) -> TextPart:
        """The text part standing for ``block`` (see the module docstring)."""
        kind = block["type"]
        meta = {META_KEY: block}
        if kind in CALL_BLOCKS:
            name = str(block.get("name", "tool"))
            if kind == "mcp_tool_use" and block.get("server_name"):
                name = f"{block['server_name']}/{name}"
            if isinstance(block.get("id"), str):
                self.names[block["id"]] = name
            args = json.dumps(block.get("input", {}), ensure_ascii=False, sort_keys=True)
            return TextPart(f"[provider-side tool call] {name}({args})", meta=meta)
        if kind == "container_upload":
            return TextPart(f"[provider-side container upload: {block.get('file_id', '?')}]", meta)
        name = self.names.get(str(block.get("tool_use_id")), kind.removesuffix("_tool_result"))
        failed = " (error)" if block.get("is_error") is True else ""
        head = f"[provider-side tool result: {name}{failed}]"
        body = _cap(readable(block.get("content")).strip())
        return TextPart(f"{head}\n{body}" if body else head, meta=meta)


def readable(content: Any) -> str:
    """The human-readable part of a provider-side result's ``content`` (recursive)."""
    if isinstance(content, str):
        return content
    if isinstance(content, list):
        return "\n".join(t for t in (readable(c) for c in content) if t)
    if not isinstance(content, dict):
        return ""
    kind = content.get("type")
    if "error_code" in content:
        return f"error: {content['error_code']}"
    if kind == "web_search_result":
        return f"- {content.get('title', '')} <{content.get('url', '')}>"
    if kind == "text":
        return str(content.get("text", ""))
    if "return_code" in content:
        out = [f"return code {content['return_code']}"]
        for stream in ("stdout", "stderr"):
            if content.get(stream):
                out.append(f"{stream}:\n{content[stream]}")
        return "\n".join(out)
    if kind == "document":
        source = content.get("source")
        text = source.get("data") if isinstance(source, dict) else None
        title = content.get("title")
        if isinstance(source, dict) and source.get("type") == "text" and isinstance(text, str):
            return f"{title}\n{text}" if title else text
        return f"[document{': ' + str(title) if title else ''}]"
    parts = [str(content["url"])] if isinstance(content.get("url"), str) else []
    if "content" in content:
        parts.append(readable(content["content"]))
    return "\n".join(p for p in parts if p) or (f"[{kind}]" if kind else "")


def _cap(text: str) -> str:
    if len(text) <= RESULT_MAX_CHARS:
        return text
    more = len(text) - RESULT_MAX_CHARS
    return f"{text[:RESULT_MAX_CHARS]}\n[… {more:,} more characters in the provider block]"


__all__ = ["CALL_BLOCKS", "META_KEY", "OTHER_BLOCKS", "ProviderBlocks", "is_provider_block"]
