"""A proxy on 127.0.0.1 in front of a scripted upstream, for tests that drive it with the
official SDK clients.

:class:`ToolModel` is the upstream's model: it answers a request whose last message is a
user message with one tool call, and a request whose last message is the tool's result with
a short text; its usage reports the size of what it received: the proxy's estimator over
the request as read, times ``usage_ratio`` (1.0: the proxy's usage anchor is true; 0.7 or
1.3: a tokenizer that counts fewer or more tokens than ctxengine estimates, which the
proxy's usage correction learns). Every request it receives is checked:
``validate(body)`` and its size against the window.

:class:`ProxyServer` runs the proxy's ASGI app on uvicorn in a thread.
"""

from __future__ import annotations

import json
import socket
import threading
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

import uvicorn
from servers import Received, ScriptedServer, Step

from ctxengine.model import Message, TextPart, ToolCallPart
from ctxengine.projection.validate import validate
from ctxengine.proxy.app import Upstreams, create_app
from ctxengine.proxy.core import ProxyCore
from ctxengine.proxy.wire import PROVIDERS, Api, ConversationReader
from ctxengine.tokens.estimate import HeuristicEstimator

PATHS: dict[str, Api] = {
    "/v1/chat/completions": "chat",
    "/v1/responses": "responses",
    "/v1/messages": "anthropic",
}


def request_tokens(api: Api, body: dict[str, Any]) -> int:
    """The estimated size of a request body (tokens): its messages and tools, as the proxy
    reads them."""
    conv = ConversationReader(api).read(body)
    est = HeuristicEstimator()
    return sum(est.message(m) for m in conv.messages) + est.tools(conv.tools)


@dataclass
class Seen:
    """One request the upstream received, checked."""

    api: Api
    body: dict[str, Any]
    problems: list[str]
    tokens: int
    messages: int


@dataclass
class ToolModel:
    """The upstream's scripted model (see the module docstring).

    Attributes:
        overflow_at: request numbers (1-based, counted over model requests) answered with a
            context-overflow error instead.
        usage_ratio: the reported input tokens are the estimate times this.
    """

    overflow_at: set[int] = field(default_factory=set)
    seen: list[Seen] = field(default_factory=list)
    errors_sent: int = 0
    usage_ratio: float = 1.0

    def reported(self, seen: Seen) -> int:
        """The input tokens the usage of the reply to ``seen`` reported."""
        return round(seen.tokens * self.usage_ratio)

    def __call__(self, req: Received) -> Step:
        api = PATHS.get(req.path.split("?")[0])
        if api is None:
            return Step(404, {"error": {"message": f"no route {req.path}"}})
        body = req.body
        tokens = request_tokens(api, body)
        problems = validate(body, PROVIDERS[api])
        items = body["input"] if api == "responses" else body["messages"]
        self.seen.append(Seen(api, body, problems, tokens, len(items)))
        if len(self.seen) in self.overflow_at:
            self.errors_sent += 1
            return overflow_error(api, tokens)
        last = items[-1]
        n = len(self.seen)
        if _ends_with_user_text(api, last):
            reply = ("call", f"call_{n}", "read_file", {"path": f"src/module_{n}.py"})
        else:
            reply = ("text", f"Done with step {n}: the file looks fine.")
        stream = body.get("stream") is True
        reported = self.reported(self.seen[-1])
        return REPLIES[api](
            reply, reported, round(_output_tokens(api, reply) * self.usage_ratio), stream
        )


def _output_tokens(api: Api, reply: Reply) -> int:
    """The reply's size as the proxy will estimate it when the client sends it back."""
    if reply[0] == "call":
        cid = f"toolu_{reply[1]}" if api == "anthropic" else reply[1]
        part: Any = ToolCallPart(cid, reply[2], json.dumps(reply[3]))
    else:
        part = TextPart(reply[1])
    return HeuristicEstimator().message(Message("assistant", (part,)))


def _ends_with_user_text(api: Api, last: dict[str, Any]) -> bool:
    if api == "responses":
        return last.get("type", "message") == "message" and last.get("role") == "user"
    if last.get("role") != "user":
        return False
    content = last.get("content")
    if isinstance(content, list):
        return not any(isinstance(b, dict) and b.get("type") == "tool_result" for b in content)
    return True


def overflow_error(api: Api, tokens: int, limit: int = 16_000) -> Step:
    """The upstream's context-overflow error, in each API's wording: it counts ``limit`` +
    1,000 tokens where the proxy counted ``tokens`` (a tokenizer the proxy's estimate
    underrates)."""
    over = limit + 1_000
    if api == "anthropic":
        message = f"prompt is too long: {over} tokens > {limit} maximum"
        body = {"type": "error", "error": {"type": "invalid_request_error", "message": message}}
        return Step(400, body)
    message = (
        f"This model's maximum context length is {limit} tokens. However, your messages "
        f"resulted in {over} tokens (we counted {tokens}). Please reduce the length of the "
        "messages."
    )
    body = {
        "error": {
            "message": message,
            "type": "invalid_request_error",
            "param": "messages",
            "code": "context_length_exceeded",
        }
    }
    return Step(400, body)


Reply = tuple[Any, ...]


def _chat(reply: Reply, tokens: int, out: int, stream: bool) -> Step:
    usage = {"prompt_tokens": tokens, "completion_tokens": out, "total_tokens": tokens + out}
    if reply[0] == "call":
        _, cid, name, args = reply
        message: dict[str, Any] = {
            "role": "assistant",
            "content": None,
            "tool_calls": [
                {
                    "id": cid,
                    "type": "function",
                    "function": {"name": name, "arguments": json.dumps(args)},
                }
            ],
        }
        finish = "tool_calls"
    else:
        message, finish = {"role": "assistant", "content": reply[1]}, "stop"
    if not stream:
        return Step(
            200,
            {
                "id": "chatcmpl-1",
                "object": "chat.completion",
                "created": 1_700_000_000,
                "model": "gpt-test",
                "choices": [{"index": 0, "message": message, "finish_reason": finish}],
                "usage": usage,
            },
        )

    def chunk(delta: dict[str, Any], finish_reason: str | None) -> dict[str, Any]:
        return {
            "id": "chatcmpl-1",
            "object": "chat.completion.chunk",
            "created": 1_700_000_000,
            "model": "gpt-test",
            "choices": [{"index": 0, "delta": delta, "finish_reason": finish_reason}],
        }

    events: list[tuple[str | None, Any]] = [(None, chunk({"role": "assistant"}, None))]
    if reply[0] == "call":
        call = dict(message["tool_calls"][0])
        call["index"] = 0
        events.append((None, chunk({"tool_calls": [call]}, None)))
    else:
        text = reply[1]
        for piece in (text[: len(text) // 2], text[len(text) // 2 :]):
            events.append((None, chunk({"content": piece}, None)))
    events.append((None, chunk({}, finish)))
    events.append((None, {**chunk({}, None), "choices": [], "usage": usage}))
    events.append((None, "[DONE]"))
    return Step(200, events=events)


def _responses(reply: Reply, tokens: int, out: int, stream: bool) -> Step:
    usage = {
        "input_tokens": tokens,
        "input_tokens_details": {"cached_tokens": 0},
        "output_tokens": out,
        "output_tokens_details": {"reasoning_tokens": 0},
        "total_tokens": tokens + out,
    }
    if reply[0] == "call":
        _, cid, name, args = reply
        item: dict[str, Any] = {
            "type": "function_call",
            "id": f"fc_{cid}",
            "call_id": cid,
            "name": name,
            "arguments": json.dumps(args),
            "status": "completed",
        }
    else:
        item = {
            "type": "message",
            "id": "msg_1",
            "status": "completed",
            "role": "assistant",
            "content": [{"type": "output_text", "text": reply[1], "annotations": []}],
        }
    response = {
        "id": "resp_1",
        "object": "response",
        "created_at": 1_700_000_000,
        "model": "gpt-test",
        "status": "completed",
        "output": [item],
        "parallel_tool_calls": True,
        "tool_choice": "auto",
        "tools": [],
        "usage": usage,
    }
    if not stream:
        return Step(200, response)
    created = {**response, "status": "in_progress", "output": [], "usage": None}
    events: list[tuple[str | None, Any]] = [
        (
            "response.created",
            {"type": "response.created", "sequence_number": 0, "response": created},
        ),
        (
            "response.output_item.added",
            {
                "type": "response.output_item.added",
                "sequence_number": 1,
                "output_index": 0,
                "item": item,
            },
        ),
        (
            "response.output_item.done",
            {
                "type": "response.output_item.done",
                "sequence_number": 2,
                "output_index": 0,
                "item": item,
            },
        ),
        (
            "response.completed",
            {"type": "response.completed", "sequence_number": 3, "response": response},
        ),
    ]
    return Step(200, events=events)


def _anthropic(reply: Reply, tokens: int, out: int, stream: bool, msg_id: str = "msg_1") -> Step:
    if reply[0] == "call":
        _, cid, name, args = reply
        block: dict[str, Any] = {
            "type": "tool_use",
            "id": f"toolu_{cid}",
            "name": name,
            "input": args,
        }
        stop = "tool_use"
    else:
        block, stop = {"type": "text", "text": reply[1]}, "end_turn"
    usage = {
        "input_tokens": tokens,
        "output_tokens": out,
        "cache_read_input_tokens": 0,
        "cache_creation_input_tokens": 0,
    }
    message = {
        "id": msg_id,
        "type": "message",
        "role": "assistant",
        "model": "claude-test",
        "content": [block],
        "stop_reason": stop,
        "stop_sequence": None,
        "usage": usage,
    }
    if not stream:
        return Step(200, message)
    start = {**message, "content": [], "stop_reason": None, "usage": {**usage, "output_tokens": 1}}
    if block["type"] == "tool_use":
        opened = {**block, "input": {}}
        delta = {"type": "input_json_delta", "partial_json": json.dumps(block["input"])}
    else:
        opened = {"type": "text", "text": ""}
        delta = {"type": "text_delta", "text": block["text"]}
    events: list[tuple[str | None, Any]] = [
        ("message_start", {"type": "message_start", "message": start}),
        (
            "content_block_start",
            {"type": "content_block_start", "index": 0, "content_block": opened},
        ),
        ("content_block_delta", {"type": "content_block_delta", "index": 0, "delta": delta}),
        ("content_block_stop", {"type": "content_block_stop", "index": 0}),
        (
            "message_delta",
            {
                "type": "message_delta",
                "delta": {"stop_reason": stop, "stop_sequence": None},
                "usage": {"output_tokens": out},
            },
        ),
        ("message_stop", {"type": "message_stop"}),
    ]
    return Step(200, events=events)


REPLIES: dict[Api, Callable[[Reply, int, int, bool], Step]] = {
    "chat": _chat,
    "responses": _responses,
    "anthropic": _anthropic,
}


class ProxyServer:
    """The proxy app for ``upstream`` on uvicorn, on a free port of 127.0.0.1, in a thread.
    Log lines are kept in :attr:`lines`."""

    def __init__(
        self, core: ProxyCore, upstream: str | Upstreams, *, max_body_bytes: int | None = None
    ) -> None:
        self.core = core
        self.lines: list[str] = []
        limit = {} if max_body_bytes is None else {"max_body_bytes": max_body_bytes}
        app = create_app(core, upstream, log=self.lines.append, **limit)
        self._sock = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
        self._sock.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)  # as serve does
        self._sock.bind(("127.0.0.1", 0))
        self._sock.listen(64)
        config = uvicorn.Config(app, log_level="error", access_log=False, lifespan="on")
        self._server = uvicorn.Server(config)
        self._thread = threading.Thread(
            target=self._server.run, kwargs={"sockets": [self._sock]}, daemon=True
        )

    @property
    def url(self) -> str:
        """``http://127.0.0.1:PORT`` (no ``/v1``)."""
        return f"http://127.0.0.1:{self._sock.getsockname()[1]}"

    def __enter__(self) -> ProxyServer:
        self._thread.start()
        deadline = time.monotonic() + 10
        while not self._server.started:
            if time.monotonic() > deadline:
                raise RuntimeError("the proxy did not start")
            time.sleep(0.01)
        return self

    def __exit__(self, *exc: object) -> None:
        self._server.should_exit = True
        self._thread.join(timeout=10)
        self._sock.close()


def upstream_with(model: ToolModel) -> ScriptedServer:
    """A scripted server answering with ``model``."""
    return ScriptedServer(responder=model)


# ------------------------------------------------------------------ the clients
#
# The history goes in ``extra_body``: the SDKs walk a typed parameter item by item in Python
# to transform it (0.6 s per request for a 200,000-token Responses history, most of a test's
# time), and ``extra_body`` is sent as given. The request is the same JSON either way: the
# transform changes nothing in plain dicts of these shapes.

SYSTEM = "You are a careful coding agent. Read files before you change them."
PARAMS = {"type": "object", "properties": {"path": {"type": "string"}}, "required": ["path"]}


def user_text(turn: int) -> str:
    """The user's message of ``turn`` (about 60 tokens)."""
    return f"Turn {turn}: please read src/module_{turn}.py and tell me whether " + " ".join(
        f"function_{turn}_{k} handles empty input" for k in range(6)
    )


def tool_output(turn: int, path: str) -> str:
    """What the tool returns for ``path`` at ``turn`` (12 to 29 lines, about 170 to 420
    tokens)."""
    lines = 12 + (turn * 7) % 18
    return "\n".join(f"{path}:{n}: value_{turn}_{n} = compute({n}, {turn})" for n in range(lines))


def _args(arguments: str | dict[str, Any]) -> dict[str, Any]:
    loaded = json.loads(arguments) if isinstance(arguments, str) else arguments
    assert isinstance(loaded, dict)
    return loaded


def drive_chat(client: Any, turns: int, *, stream_every: int = 2, model: str = "gpt-4o") -> int:
    """A tool-using conversation of ``turns`` turns through the ``openai`` SDK's Chat
    Completions; every ``stream_every``-th request streams. Returns the requests made."""
    tools = [{"type": "function", "function": {"name": "read_file", "parameters": PARAMS}}]
    messages: list[dict[str, Any]] = [{"role": "system", "content": SYSTEM}]
    n = 0
    for turn in range(turns):
        messages.append({"role": "user", "content": user_text(turn)})
        while True:
            n += 1
            kwargs: dict[str, Any] = {
                "model": model,
                "messages": [],
                "tools": tools,
                "extra_body": {"messages": messages},
            }
            if n % stream_every == 0:
                text, calls = "", {}
                chunks = client.chat.completions.create(
                    **kwargs, stream=True, stream_options={"include_usage": True}
                )
                for chunk in chunks:
                    for choice in chunk.choices:
                        text += choice.delta.content or ""
                        for c in choice.delta.tool_calls or ():
                            calls.setdefault(c.index, {"id": c.id, "name": "", "args": ""})
                            calls[c.index]["name"] += c.function.name or ""
                            calls[c.index]["args"] += c.function.arguments or ""
                message: dict[str, Any] = {"role": "assistant", "content": text or None}
                if calls:
                    message["tool_calls"] = [
                        {
                            "id": c["id"],
                            "type": "function",
                            "function": {"name": c["name"], "arguments": c["args"]},
                        }
                        for c in calls.values()
                    ]
            else:
                reply = client.chat.completions.create(**kwargs)
                message = reply.choices[0].message.model_dump(exclude_none=True)
            messages.append(message)
            if not message.get("tool_calls"):
                break
            for call in message["tool_calls"]:
                path = _args(call["function"]["arguments"])["path"]
                messages.append(
                    {"role": "tool", "tool_call_id": call["id"], "content": tool_output(turn, path)}
                )
    return n


def drive_responses(
    client: Any, turns: int, *, stream_every: int = 2, model: str = "gpt-4o"
) -> int:
    """The same conversation through the ``openai`` SDK's Responses API."""
    tools = [{"type": "function", "name": "read_file", "parameters": PARAMS}]
    items: list[dict[str, Any]] = []
    n = 0
    for turn in range(turns):
        items.append({"role": "user", "content": user_text(turn)})
        while True:
            n += 1
            kwargs: dict[str, Any] = {
                "model": model,
                "instructions": SYSTEM,
                "tools": tools,
                "extra_body": {"input": items},
            }
            if n % stream_every == 0:
                output = None
                for event in client.responses.create(**kwargs, stream=True):
                    if event.type == "response.completed":
                        output = event.response.output
                assert output is not None
            else:
                output = client.responses.create(**kwargs).output
            produced = [item.model_dump(exclude_none=True) for item in output]
            items.extend(produced)
            calls = [i for i in produced if i["type"] == "function_call"]
            if not calls:
                break
            for call in calls:
                path = _args(call["arguments"])["path"]
                items.append(
                    {
                        "type": "function_call_output",
                        "call_id": call["call_id"],
                        "output": tool_output(turn, path),
                    }
                )
    return n


def drive_anthropic(
    client: Any, turns: int, *, stream_every: int = 2, model: str = "claude-sonnet-4-5"
) -> int:
    """The same conversation through the ``anthropic`` SDK's Messages API."""
    tools = [{"name": "read_file", "input_schema": PARAMS}]
    messages: list[dict[str, Any]] = []
    n = 0
    for turn in range(turns):
        messages.append({"role": "user", "content": user_text(turn)})
        while True:
            n += 1
            kwargs: dict[str, Any] = {
                "model": model,
                "max_tokens": 1024,
                "system": SYSTEM,
                "messages": [],
                "tools": tools,
                "extra_body": {"messages": messages},
            }
            if n % stream_every == 0:
                with client.messages.stream(**kwargs) as stream:
                    reply = stream.get_final_message()
            else:
                reply = client.messages.create(**kwargs)
            content = [b.model_dump(exclude_none=True) for b in reply.content]
            messages.append({"role": "assistant", "content": content})
            uses = [b for b in content if b["type"] == "tool_use"]
            if not uses:
                break
            messages.append(
                {
                    "role": "user",
                    "content": [
                        {
                            "type": "tool_result",
                            "tool_use_id": b["id"],
                            "content": tool_output(turn, b["input"]["path"]),
                        }
                        for b in uses
                    ],
                }
            )
    return n
