"""What the proxy reads from an upstream reply: the provider usage, and the signature of the
assistant message the client will send back in its next request (so the usage can be
attached there as the usage anchor).

A signature is ``("calls", id, …)`` for a message with tool calls (their ids, in order),
else ``("text", the text stripped)``. Replies are read whole (JSON) or as a stream
(:class:`StreamReader`, fed the raw bytes as they pass through, never changing them).
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any, TypeAlias

import orjson

from ctxengine.importers._anthropic import usage_of as anthropic_usage
from ctxengine.importers._chat import openai_usage
from ctxengine.model import Message, Usage

from .wire import Api

__all__ = ["Signature", "StreamReader", "message_signature", "read_reply"]

Signature: TypeAlias = tuple[str, ...]


def message_signature(message: Message) -> Signature:
    """The signature of an assistant message of a request (see the module docstring)."""
    calls = message.tool_calls
    if calls:
        return ("calls", *(c.id for c in calls))
    return ("text", message.text.strip())


def _signature(calls: list[str], texts: list[str]) -> Signature:
    if calls:
        return ("calls", *calls)
    return ("text", "\n".join(texts).strip())


def _responses_usage(raw: Any) -> Usage | None:
    if not isinstance(raw, Mapping) or not isinstance(raw.get("input_tokens"), int):
        return None
    details = raw.get("input_tokens_details")
    cached = details.get("cached_tokens") if isinstance(details, Mapping) else None
    cached = cached if isinstance(cached, int) else 0
    output = raw.get("output_tokens")
    return Usage(
        input_tokens=max(0, raw["input_tokens"] - cached),
        output_tokens=output if isinstance(output, int) else 0,
        cache_read_tokens=cached,
    )


def _responses_reply(response: Any) -> tuple[Signature, Usage | None] | None:
    if not isinstance(response, Mapping):
        return None
    calls: list[str] = []
    texts: list[str] = []
    for item in response.get("output") or ():
        if not isinstance(item, Mapping):
            continue
        if item.get("type") in ("function_call", "custom_tool_call", "local_shell_call"):
            cid = item.get("call_id")
            if isinstance(cid, str):
                calls.append(cid)
        elif item.get("type") == "message":
            for c in item.get("content") or ():
                if isinstance(c, Mapping) and isinstance(c.get("text"), str):
                    texts.append(c["text"])
    return _signature(calls, texts), _responses_usage(response.get("usage"))


def read_reply(api: Api, body: Any) -> tuple[Signature, Usage | None] | None:
    """The signature and usage of a whole (non-streamed) reply body; ``None`` when it is not
    a reply of ``api`` (an error body, say)."""
    if not isinstance(body, Mapping):
        return None
    if api == "chat":
        choices = body.get("choices")
        if not isinstance(choices, list) or not choices or not isinstance(choices[0], Mapping):
            return None
        message = choices[0].get("message")
        if not isinstance(message, Mapping):
            return None
        ids = [
            c["id"]
            for c in message.get("tool_calls") or ()
            if isinstance(c, Mapping) and isinstance(c.get("id"), str)
        ]
        text = message.get("content")
        sig = _signature(ids, [text] if isinstance(text, str) else [])
        return sig, openai_usage(body.get("usage"))
    if api == "responses":
        return _responses_reply(body)
    if body.get("type") != "message":
        return None
    calls, texts = [], []
    for block in body.get("content") or ():
        if not isinstance(block, Mapping):
            continue
        if block.get("type") == "tool_use" and isinstance(block.get("id"), str):
            calls.append(block["id"])
        elif block.get("type") == "text" and isinstance(block.get("text"), str):
            texts.append(block["text"])
    return _signature(calls, texts), anthropic_usage(body.get("usage"))


class StreamReader:
    """Reads a server-sent-event stream of ``api`` as its bytes pass through (:meth:`feed`),
    for :meth:`result`: the reply's signature and usage once the stream has given them."""

    def __init__(self, api: Api) -> None:
        self.api = api
        self._buffer = b""
        self._calls: list[str] = []
        self._texts: list[str] = []
        self._usage: dict[str, int] = {}
        self._done: tuple[Signature, Usage | None] | None = None
        self._chat_calls: dict[int, str] = {}

    def feed(self, chunk: bytes) -> None:
        """Take the next bytes of the stream (any split)."""
        self._buffer += chunk
        while True:
            cut = self._event_end()
            if cut is None:
                return
            event, self._buffer = self._buffer[: cut[0]], self._buffer[cut[1] :]
            self._event(event)

    def _event_end(self) -> tuple[int, int] | None:
        found = [
            (i, i + len(sep))
            for sep in (b"\n\n", b"\r\n\r\n")
            if (i := self._buffer.find(sep)) >= 0
        ]
        return min(found) if found else None

    def _event(self, raw: bytes) -> None:
        data = b"\n".join(
            line[5:].lstrip() for line in raw.splitlines() if line.startswith(b"data:")
        )
        if not data or data == b"[DONE]":
            return
        try:
            obj = orjson.loads(data)
        except orjson.JSONDecodeError:
            return
        if isinstance(obj, dict):
            self._take(obj)

    def _take(self, obj: dict[str, Any]) -> None:
        if self.api == "chat":
            self._chat(obj)
        elif self.api == "responses":
            if obj.get("type") in ("response.completed", "response.incomplete"):
                self._done = _responses_reply(obj.get("response"))
        else:
            self._anthropic(obj)

    def _chat(self, obj: dict[str, Any]) -> None:
        usage = openai_usage(obj.get("usage"))
        if usage is not None:
            self._usage = {
                "input_tokens": usage.input_tokens,
                "output_tokens": usage.output_tokens,
                "cache_read_tokens": usage.cache_read_tokens,
            }
        for choice in obj.get("choices") or ():
            if not isinstance(choice, Mapping) or choice.get("index", 0) != 0:
                continue
            delta = choice.get("delta")
            if not isinstance(delta, Mapping):
                continue
            if isinstance(delta.get("content"), str):
                self._texts.append(delta["content"])
            for call in delta.get("tool_calls") or ():
                if isinstance(call, Mapping) and isinstance(call.get("id"), str):
                    self._chat_calls[int(call.get("index", len(self._chat_calls)))] = call["id"]

    def _anthropic(self, obj: dict[str, Any]) -> None:
        kind = obj.get("type")
        if kind == "message_start":
            message = obj.get("message")
            usage = message.get("usage") if isinstance(message, Mapping) else None
            if isinstance(usage, Mapping):
                self._usage.update({k: v for k, v in usage.items() if isinstance(v, int)})
        elif kind == "content_block_start":
            block = obj.get("content_block")
            if isinstance(block, Mapping) and block.get("type") == "tool_use":
                if isinstance(block.get("id"), str):
                    self._calls.append(block["id"])
            elif isinstance(block, Mapping) and isinstance(block.get("text"), str):
                self._texts.append(block["text"])
        elif kind == "content_block_delta":
            delta = obj.get("delta")
            if isinstance(delta, Mapping) and delta.get("type") == "text_delta":
                text = delta.get("text")
                if isinstance(text, str):
                    self._texts.append(text)
        elif kind == "message_delta":
            usage = obj.get("usage")
            if isinstance(usage, Mapping):
                self._usage.update({k: v for k, v in usage.items() if isinstance(v, int)})

    def result(self) -> tuple[Signature, Usage | None] | None:
        """The reply's signature and usage (``None`` usage when the stream gave none);
        ``None`` for a Responses stream that never completed."""
        if self.api == "responses":
            return self._done
        if self.api == "chat":
            calls = [self._chat_calls[k] for k in sorted(self._chat_calls)]
            u = self._usage
            usage = Usage(**u) if u else None
            return _signature(calls, ["".join(self._texts)]), usage
        u = self._usage
        usage = anthropic_usage(u) if u else None
        return _signature(self._calls, ["".join(self._texts)]), usage
