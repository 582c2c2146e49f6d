"""Reading OpenAI replies (Chat Completions and Responses, whole or streamed) as plain dicts
into a :class:`~ctxengine.providers.base.Completion`: Chat Completions from ``model_dump()``
of the SDK objects; Responses from the raw body (key order kept), so that ``compaction``
items are stored exactly as returned (:mod:`ctxengine.providers.native`).

Usage: OpenAI's ``prompt_tokens`` / ``input_tokens`` include cached tokens; ours exclude them
(``cached_tokens`` goes to ``cache_read_tokens``). DeepSeek's ``prompt_cache_hit_tokens`` is
read the same way.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from ctxengine.errors import ProviderRequestError
from ctxengine.model import ReasoningPart, ToolCallPart, Usage
from ctxengine.providers.base import Completion, FinishReason
from ctxengine.providers.classify import PayloadError
from ctxengine.providers.native import COMPACTION, native_parts

_CHAT_FINISH: dict[str, FinishReason] = {
    "stop": "stop",
    "eos": "stop",
    "length": "length",
    "tool_calls": "tool_calls",
    "function_call": "tool_calls",
    "content_filter": "content_filter",
}
_STATUS_FOR_CODE = {"rate_limit_exceeded": 429, "server_error": 500, "internal_error": 500}
#: Reasoning from OpenAI-style APIs is marked so it is never echoed as Anthropic thinking.
_OPENAI = {"provider": "openai"}


def _int(value: object) -> int:
    return value if isinstance(value, int) else 0


def _dict(value: object) -> Mapping[str, Any]:
    return value if isinstance(value, Mapping) else {}


def chat_usage(usage: object) -> Usage:
    """Chat Completions usage → ours (input excludes cached tokens)."""
    u = _dict(usage)
    prompt = _int(u.get("prompt_tokens"))
    cached = _int(_dict(u.get("prompt_tokens_details")).get("cached_tokens"))
    if not cached:
        cached = _int(u.get("prompt_cache_hit_tokens"))
    return Usage(max(0, prompt - cached), _int(u.get("completion_tokens")), cached, 0)


def responses_usage(usage: object) -> Usage:
    """Responses usage → ours (input excludes cached tokens)."""
    u = _dict(usage)
    prompt = _int(u.get("input_tokens"))
    cached = _int(_dict(u.get("input_tokens_details")).get("cached_tokens"))
    return Usage(max(0, prompt - cached), _int(u.get("output_tokens")), cached, 0)


def _finish(raw: str | None, has_calls: bool) -> FinishReason:
    reason: FinishReason = _CHAT_FINISH.get(raw or "", "error")
    return "tool_calls" if has_calls and reason == "stop" else reason


def _reasoning_text(message: Mapping[str, Any]) -> str:
    for key in ("reasoning_content", "reasoning"):
        value = message.get(key)
        if isinstance(value, str) and value:
            return value
    return ""


def parse_chat_completion(data: Mapping[str, Any], request_id: str | None) -> Completion:
    """A whole Chat Completions reply (first choice) as a Completion."""
    choices = data.get("choices") or [{}]
    choice = _dict(choices[0])
    message = _dict(choice.get("message"))
    calls = tuple(
        ToolCallPart(
            str(c.get("id") or f"call_{i}"),
            str(_dict(c.get("function")).get("name") or ""),
            str(_dict(c.get("function")).get("arguments") or ""),
        )
        for i, c in enumerate(message.get("tool_calls") or ())
    )
    reasoning = _reasoning_text(message)
    raw = choice.get("finish_reason")
    return Completion(
        text=str(message.get("content") or ""),
        tool_calls=calls,
        finish_reason=_finish(raw, bool(calls)),
        usage=chat_usage(data.get("usage")),
        model=data.get("model"),
        request_id=request_id,
        response_id=data.get("id"),
        raw_finish_reason=raw,
        reasoning=(ReasoningPart(reasoning, meta=_OPENAI),) if reasoning else (),
    )


class ChatStreamAccumulator:
    """Folds streamed ``chat.completion.chunk`` dicts into one reply."""

    def __init__(self) -> None:
        self._text: list[str] = []
        self._reasoning: list[str] = []
        self._calls: dict[int, dict[str, str]] = {}
        self._finish: str | None = None
        self._usage: object = None
        self._model: str | None = None
        self._id: str | None = None

    def add(self, chunk: Mapping[str, Any]) -> None:
        """Take one chunk (content, tool-call fragments, finish reason, final usage)."""
        self._id = self._id or chunk.get("id")
        self._model = self._model or chunk.get("model")
        if chunk.get("usage"):
            self._usage = chunk["usage"]
        for choice in chunk.get("choices") or ():
            delta = _dict(choice.get("delta"))
            if isinstance(delta.get("content"), str):
                self._text.append(delta["content"])
            if text := _reasoning_text(delta):
                self._reasoning.append(text)
            for frag in delta.get("tool_calls") or ():
                slot = self._calls.setdefault(
                    _int(frag.get("index")), {"id": "", "name": "", "arguments": ""}
                )
                fn = _dict(frag.get("function"))
                slot["id"] = slot["id"] or str(frag.get("id") or "")
                slot["name"] += str(fn.get("name") or "")
                slot["arguments"] += str(fn.get("arguments") or "")
            if choice.get("finish_reason"):
                self._finish = choice["finish_reason"]

    def result(self, request_id: str | None) -> Completion:
        """The reply so far; a stream that ended without a finish reason reports ``error``."""
        calls = tuple(
            ToolCallPart(c["id"] or f"call_{i}", c["name"], c["arguments"])
            for i, c in sorted(self._calls.items())
        )
        reasoning = "".join(self._reasoning)
        return Completion(
            text="".join(self._text),
            tool_calls=calls,
            finish_reason=_finish(self._finish, bool(calls)),
            usage=chat_usage(self._usage),
            model=self._model,
            request_id=request_id,
            response_id=self._id,
            raw_finish_reason=self._finish,
            reasoning=(ReasoningPart(reasoning, meta=_OPENAI),) if reasoning else (),
        )


def _responses_finish(data: Mapping[str, Any], has_calls: bool, refused: bool) -> FinishReason:
    status = data.get("status")
    if status == "incomplete":
        reason = _dict(data.get("incomplete_details")).get("reason")
        return "content_filter" if reason == "content_filter" else "length"
    if status not in (None, "completed"):
        return "error"
    if refused:
        return "content_filter"
    return "tool_calls" if has_calls else "stop"


def raise_if_failed(data: Mapping[str, Any]) -> None:
    """Raise the provider's error when a Responses object has ``status == "failed"``."""
    if data.get("status") != "failed":
        return
    err = _dict(data.get("error"))
    code = err.get("code")
    message = str(err.get("message") or "response failed")
    raise PayloadError(message, code=code, status=_STATUS_FOR_CODE.get(str(code)))


def parse_response(data: Mapping[str, Any], request_id: str | None) -> Completion:
    """A Responses object as a Completion (messages, function calls, reasoning items)."""
    raise_if_failed(data)
    texts: list[str] = []
    calls: list[ToolCallPart] = []
    reasoning: list[ReasoningPart] = []
    refused = False
    for item in data.get("output") or ():
        kind = item.get("type")
        if kind == "message":
            for c in item.get("content") or ():
                if c.get("type") == "output_text":
                    texts.append(str(c.get("text") or ""))
                elif c.get("type") == "refusal":
                    refused = True
        elif kind == "function_call":
            calls.append(
                ToolCallPart(
                    str(item.get("call_id") or item.get("id") or f"call_{len(calls)}"),
                    str(item.get("name") or ""),
                    str(item.get("arguments") or ""),
                )
            )
        elif kind == "reasoning":
            summary = "\n".join(str(s.get("text") or "") for s in item.get("summary") or ())
            reasoning.append(ReasoningPart(summary, item.get("encrypted_content"), meta=_OPENAI))
    status = data.get("status")
    return Completion(
        text="".join(texts),
        tool_calls=tuple(calls),
        finish_reason=_responses_finish(data, bool(calls), refused),
        usage=responses_usage(data.get("usage")),
        model=data.get("model"),
        request_id=request_id,
        response_id=data.get("id"),
        raw_finish_reason=str(status) if status is not None else None,
        reasoning=tuple(reasoning),
        native=native_parts("openai", data.get("output") or ()),
    )


def parse_compacted(data: Mapping[str, Any], request_id: str | None) -> Completion:
    """A ``/responses/compact`` reply (object ``response.compaction``: ``output`` holds the
    compacted window, the user messages then one ``compaction`` item) as a Completion whose
    ``native`` is every output item exactly as returned, in order, and whose
    ``native_usage`` is the compaction's usage.

    Raises:
        ProviderRequestError: the output holds no ``compaction`` item, or more than one.
    """
    raise_if_failed(data)
    output = [item for item in data.get("output") or () if isinstance(item, Mapping)]
    found = sum(1 for item in output if item.get("type") == COMPACTION)
    if found != 1:
        raise ProviderRequestError(
            f"the compaction reply holds {found} compaction items (expected one)",
            kind="bad_request",
        )
    usage = responses_usage(data.get("usage"))
    return Completion(
        text="",
        finish_reason="compaction",
        usage=usage,
        model=data.get("model"),
        request_id=request_id,
        response_id=data.get("id"),
        raw_finish_reason=str(data.get("object") or ""),
        native=native_parts("openai", output, types=tuple({str(i.get("type")) for i in output})),
        native_usage=usage,
    )
