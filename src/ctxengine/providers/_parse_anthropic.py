"""Reading Anthropic Messages replies (whole, or folded from stream events) as plain dicts
into a :class:`~ctxengine.providers.base.Completion`. Signed thinking is kept byte-exact, and
so is a ``compaction`` block (:mod:`ctxengine.providers.native`): the dicts are read from the
raw body, key order kept; a streamed block is its ``content_block_start`` block with the
fields of its ``compaction_delta`` events set (the SDK's own accumulation)."""

from __future__ import annotations

import json
from collections.abc import Mapping
from typing import Any

from ctxengine.model import ReasoningPart, ToolCallPart, Usage
from ctxengine.providers.base import Completion, FinishReason
from ctxengine.providers.native import COMPACTION_STOP, anthropic_usages, native_parts

_STOP: dict[str, FinishReason] = {
    "end_turn": "stop",
    "stop_sequence": "stop",
    "max_tokens": "length",
    "model_context_window_exceeded": "length",
    "tool_use": "tool_calls",
    "refusal": "content_filter",
    COMPACTION_STOP: "compaction",
}


def _int(value: object) -> int:
    return value if isinstance(value, int) else 0


def anthropic_usage(usage: object) -> Usage:
    """Anthropic usage → ours (same convention: input excludes cache reads and writes)."""
    u = usage if isinstance(usage, Mapping) else {}
    return Usage(
        _int(u.get("input_tokens")),
        _int(u.get("output_tokens")),
        _int(u.get("cache_read_input_tokens")),
        _int(u.get("cache_creation_input_tokens")),
    )


def parse_message(data: Mapping[str, Any], request_id: str | None) -> Completion:
    """A Messages reply (``{"content": [...], "stop_reason": …, "usage": …}``)."""
    texts: list[str] = []
    calls: list[ToolCallPart] = []
    reasoning: list[ReasoningPart] = []
    for block in data.get("content") or ():
        kind = block.get("type")
        if kind == "text":
            texts.append(str(block.get("text") or ""))
        elif kind in ("tool_use", "server_tool_use"):
            args = block.get("input")
            arguments = args if isinstance(args, str) else json.dumps(args or {})
            calls.append(ToolCallPart(str(block.get("id")), str(block.get("name")), arguments))
        elif kind == "thinking":
            reasoning.append(
                ReasoningPart(str(block.get("thinking") or ""), block.get("signature"))
            )
        elif kind == "redacted_thinking":
            reasoning.append(ReasoningPart("", block.get("data"), redacted=True))
    raw = data.get("stop_reason")
    finish: FinishReason = _STOP.get(raw or "", "error")
    if calls and finish == "stop":
        finish = "tool_calls"
    usage, compacted = anthropic_usages(data.get("usage"))
    return Completion(
        text="".join(texts),
        tool_calls=tuple(calls),
        finish_reason=finish,
        usage=usage,
        model=data.get("model"),
        request_id=request_id,
        response_id=data.get("id"),
        raw_finish_reason=raw,
        reasoning=tuple(reasoning),
        native=native_parts("anthropic", data.get("content") or ()),
        native_usage=compacted,
    )


class MessageStreamAccumulator:
    """Folds Messages stream events (``message_start``, ``content_block_*``,
    ``message_delta``) back into the shape of a whole reply."""

    def __init__(self) -> None:
        self.message: dict[str, Any] = {"content": [], "usage": {}}
        self._json: dict[int, str] = {}

    def add(self, event: Mapping[str, Any]) -> None:
        """Take one event."""
        kind = event.get("type")
        if kind == "message_start":
            start = dict(event.get("message") or {})
            self.message.update({k: v for k, v in start.items() if k != "content"})
            self.message["usage"] = dict(start.get("usage") or {})
        elif kind == "content_block_start":
            self.message["content"].append(dict(event.get("content_block") or {}))
        elif kind == "content_block_delta":
            self._delta(_int(event.get("index")), event.get("delta") or {})
        elif kind == "message_delta":
            delta = event.get("delta") or {}
            if delta.get("stop_reason") is not None:
                self.message["stop_reason"] = delta["stop_reason"]
            usage = event.get("usage") or {}
            self.message["usage"].update({k: v for k, v in usage.items() if v is not None})

    def _delta(self, index: int, delta: Mapping[str, Any]) -> None:
        blocks = self.message["content"]
        if index >= len(blocks):
            return
        block = blocks[index]
        kind = delta.get("type")
        if kind == "text_delta":
            block["text"] = str(block.get("text") or "") + str(delta.get("text") or "")
        elif kind == "thinking_delta":
            block["thinking"] = str(block.get("thinking") or "") + str(delta.get("thinking") or "")
        elif kind == "signature_delta":
            block["signature"] = str(block.get("signature") or "") + str(delta.get("signature"))
        elif kind == "compaction_delta":
            block.update((k, v) for k, v in delta.items() if k != "type")
        elif kind == "input_json_delta":
            self._json[index] = self._json.get(index, "") + str(delta.get("partial_json") or "")
            block["input"] = self._json[index]

    def result(self, request_id: str | None) -> Completion:
        """The reply so far; a stream cut before ``message_delta`` reports ``error``."""
        return parse_message(self.message, request_id)
