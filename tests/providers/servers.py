"""Local scripted servers that speak the OpenAI (``/v1/chat/completions``, ``/v1/responses``)
and Anthropic (``/v1/messages``) HTTP APIs, for tests that drive the official SDK clients.

A :class:`ScriptedServer` listens on 127.0.0.1 (random port) in a thread and answers each
request with the next queued :class:`Step` (or, given a ``responder``, the step it makes
of the request): a JSON reply, an error (status, body, headers
such as ``retry-after``), or a server-sent-event stream paced by ``delay_s``. Every request
is recorded (path, headers, JSON body, arrival time); a client that drops a stream is
recorded with the time it was noticed. A request with no step left gets a 500 and is listed
in ``unexpected``.
"""

from __future__ import annotations

import json
import threading
import time
from collections import deque
from collections.abc import Callable
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any


@dataclass
class Step:
    """One scripted answer.

    Attributes:
        status: HTTP status.
        body: dict/list (sent as JSON), str (sent as is) or ``None`` (empty body).
        headers: extra response headers.
        events: for a stream: ``(event name or None, data)`` pairs, data a dict or a string.
        delay_s: pause before each event (seconds).
        hold_s: after the last event, keep the connection open this long without writing.
    """

    status: int = 200
    body: Any = None
    headers: dict[str, str] = field(default_factory=dict)
    events: list[tuple[str | None, Any]] | None = None
    delay_s: float = 0.0
    hold_s: float = 0.0


@dataclass
class Received:
    """One request as the server saw it."""

    method: str
    path: str
    headers: dict[str, str]
    body: Any
    at: float
    raw: bytes = b""


class ScriptedServer:
    """See the module docstring. Use as a context manager or call start()/stop()."""

    def __init__(self, responder: Callable[[Received], Step] | None = None) -> None:
        #: Answers every request when set (the queued steps are then unused).
        self.responder = responder
        self.steps: deque[Step] = deque()
        self.received: list[Received] = []
        self.unexpected: list[Received] = []
        self.disconnects: list[float] = []
        self.stopping = threading.Event()
        self._lock = threading.Lock()
        self._httpd = ThreadingHTTPServer(("127.0.0.1", 0), _handler_for(self))
        self._httpd.daemon_threads = True
        self._thread = threading.Thread(
            target=self._httpd.serve_forever, kwargs={"poll_interval": 0.05}, daemon=True
        )

    @property
    def url(self) -> str:
        """Base URL without the ``/v1`` suffix (the Anthropic SDK adds it itself)."""
        host, port = self._httpd.server_address[:2]
        return f"http://{host!s}:{port}"

    def push(self, *steps: Step) -> None:
        """Queue answers, in order."""
        with self._lock:
            self.steps.extend(steps)

    def next_step(self, req: Received) -> Step | None:
        with self._lock:
            self.received.append(req)
            if self.responder is not None:
                return self.responder(req)
            if self.steps:
                return self.steps.popleft()
            self.unexpected.append(req)
            return None

    def start(self) -> ScriptedServer:
        self._thread.start()
        return self

    def stop(self) -> None:
        self.stopping.set()
        self._httpd.shutdown()
        self._httpd.server_close()

    def __enter__(self) -> ScriptedServer:
        return self.start()

    def __exit__(self, *exc: object) -> None:
        self.stop()


def _handler_for(server: ScriptedServer) -> type[BaseHTTPRequestHandler]:
    class Handler(BaseHTTPRequestHandler):
        protocol_version = "HTTP/1.1"

        def log_message(self, format: str, *args: Any) -> None:
            return

        def do_POST(self) -> None:
            length = int(self.headers.get("content-length") or 0)
            raw = self.rfile.read(length) if length else b""
            try:
                body = json.loads(raw) if raw else None
            except ValueError:
                body = raw.decode("utf-8", "replace")
            headers = {k.lower(): v for k, v in self.headers.items()}
            received = Received("POST", self.path, headers, body, time.monotonic(), raw)
            step = server.next_step(received)
            if step is None:
                step = Step(500, {"error": {"message": "no scripted step left", "type": "test"}})
            if step.events is None:
                self._send_whole(step)
            else:
                self._send_stream(step)

        def _send_whole(self, step: Step) -> None:
            if step.body is None:
                payload = b""
            elif isinstance(step.body, str):
                payload = step.body.encode()
            else:
                payload = json.dumps(step.body).encode()
            self.send_response(step.status)
            if step.body is not None and not isinstance(step.body, str):
                self.send_header("content-type", "application/json")
            for k, v in step.headers.items():
                self.send_header(k, v)
            self.send_header("content-length", str(len(payload)))
            self.end_headers()
            self.wfile.write(payload)

        def _send_stream(self, step: Step) -> None:
            self.close_connection = True
            self.send_response(step.status)
            self.send_header("content-type", "text/event-stream")
            self.send_header("cache-control", "no-cache")
            self.send_header("connection", "close")
            for k, v in step.headers.items():
                self.send_header(k, v)
            self.end_headers()
            try:
                self.wfile.flush()
                for name, data in step.events or ():
                    if step.delay_s and server.stopping.wait(step.delay_s):
                        return
                    text = data if isinstance(data, str) else json.dumps(data)
                    prefix = f"event: {name}\n" if name else ""
                    self.wfile.write(f"{prefix}data: {text}\n\n".encode())
                    self.wfile.flush()
                if step.hold_s:
                    server.stopping.wait(step.hold_s)
            except (BrokenPipeError, ConnectionResetError):
                server.disconnects.append(time.monotonic())

    return Handler


class SleepRecorder:
    """Injectable ``sleep``: records each requested wait (seconds) instead of sleeping."""

    def __init__(self) -> None:
        self.waits: list[float] = []

    def __call__(self, seconds: float) -> None:
        self.waits.append(seconds)


# ---------------------------------------------------------------- OpenAI Chat Completions


def chat_reply(
    text: str = "",
    *,
    finish: str = "stop",
    tool_calls: list[tuple[str, str, str]] | None = None,
    prompt_tokens: int = 100,
    completion_tokens: int = 20,
    cached_tokens: int = 0,
    model: str = "gpt-test",
) -> dict[str, Any]:
    """A ``chat.completion`` object; ``tool_calls`` as ``(id, name, arguments)``."""
    message: dict[str, Any] = {"role": "assistant", "content": text or None}
    if tool_calls:
        message["tool_calls"] = [
            {"id": i, "type": "function", "function": {"name": n, "arguments": a}}
            for i, n, a in tool_calls
        ]
    return {
        "id": "chatcmpl-test",
        "object": "chat.completion",
        "created": 1_700_000_000,
        "model": model,
        "choices": [{"index": 0, "message": message, "finish_reason": finish}],
        "usage": {
            "prompt_tokens": prompt_tokens,
            "completion_tokens": completion_tokens,
            "total_tokens": prompt_tokens + completion_tokens,
            "prompt_tokens_details": {"cached_tokens": cached_tokens},
        },
    }


def chat_stream(
    pieces: list[str], *, finish: str = "stop", prompt_tokens: int = 100, model: str = "gpt-test"
) -> list[tuple[str | None, Any]]:
    """``chat.completion.chunk`` events: one per piece, a finish chunk, a usage chunk, [DONE]."""

    def chunk(delta: dict[str, Any], finish_reason: str | None) -> dict[str, Any]:
        return {
            "id": "chatcmpl-stream",
            "object": "chat.completion.chunk",
            "created": 1_700_000_000,
            "model": model,
            "choices": [{"index": 0, "delta": delta, "finish_reason": finish_reason}],
        }

    events: list[tuple[str | None, Any]] = [(None, chunk({"role": "assistant"}, None))]
    events += [(None, chunk({"content": p}, None)) for p in pieces]
    events.append((None, chunk({}, finish)))
    usage = {
        "prompt_tokens": prompt_tokens,
        "completion_tokens": len(pieces),
        "total_tokens": prompt_tokens + len(pieces),
    }
    events.append((None, {**chunk({}, None), "choices": [], "usage": usage}))
    events.append((None, "[DONE]"))
    return events


def openai_error(
    message: str, *, code: str | None = None, type_: str = "invalid_request_error"
) -> dict[str, Any]:
    """An OpenAI-style error body."""
    return {"error": {"message": message, "type": type_, "param": None, "code": code}}


# ---------------------------------------------------------------- OpenAI Responses


def responses_reply(
    text: str = "",
    *,
    status: str = "completed",
    incomplete_reason: str | None = None,
    function_calls: list[tuple[str, str, str]] | None = None,
    input_tokens: int = 100,
    output_tokens: int = 20,
    cached_tokens: int = 0,
    model: str = "gpt-test",
) -> dict[str, Any]:
    """A Responses ``response`` object."""
    output: list[dict[str, Any]] = []
    if text:
        output.append(
            {
                "type": "message",
                "id": "msg_1",
                "status": "completed",
                "role": "assistant",
                "content": [{"type": "output_text", "text": text, "annotations": []}],
            }
        )
    for call_id, name, args in function_calls or ():
        output.append(
            {
                "type": "function_call",
                "id": f"fc_{call_id}",
                "call_id": call_id,
                "name": name,
                "arguments": args,
                "status": "completed",
            }
        )
    return {
        "id": "resp_test",
        "object": "response",
        "created_at": 1_700_000_000,
        "model": model,
        "status": status,
        "incomplete_details": {"reason": incomplete_reason} if incomplete_reason else None,
        "output": output,
        "parallel_tool_calls": True,
        "tool_choice": "auto",
        "tools": [],
        "usage": {
            "input_tokens": input_tokens,
            "input_tokens_details": {"cached_tokens": cached_tokens},
            "output_tokens": output_tokens,
            "output_tokens_details": {"reasoning_tokens": 0},
            "total_tokens": input_tokens + output_tokens,
        },
    }


def responses_stream(pieces: list[str], **kwargs: Any) -> list[tuple[str | None, Any]]:
    """Responses events: created, one text delta per piece, completed (whole response)."""
    final = responses_reply("".join(pieces), **kwargs)
    created = {**final, "status": "in_progress", "output": [], "usage": None}
    events: list[tuple[str | None, Any]] = [
        (
            "response.created",
            {"type": "response.created", "sequence_number": 0, "response": created},
        )
    ]
    for n, p in enumerate(pieces, start=1):
        delta = {
            "type": "response.output_text.delta",
            "sequence_number": n,
            "item_id": "msg_1",
            "output_index": 0,
            "content_index": 0,
            "delta": p,
            "logprobs": [],
        }
        events.append(("response.output_text.delta", delta))
    done = {"type": "response.completed", "sequence_number": len(pieces) + 1, "response": final}
    events.append(("response.completed", done))
    return events


# ---------------------------------------------------------------- Anthropic Messages


def anthropic_reply(
    text: str = "",
    *,
    stop_reason: str = "end_turn",
    tool_uses: list[tuple[str, str, dict[str, Any]]] | None = None,
    input_tokens: int = 100,
    output_tokens: int = 20,
    cache_read: int = 0,
    cache_write: int = 0,
    model: str = "claude-test",
) -> dict[str, Any]:
    """A Messages ``message`` object; ``tool_uses`` as ``(id, name, input)``."""
    content: list[dict[str, Any]] = [{"type": "text", "text": text}] if text else []
    content += [{"type": "tool_use", "id": i, "name": n, "input": a} for i, n, a in tool_uses or ()]
    return {
        "id": "msg_test",
        "type": "message",
        "role": "assistant",
        "model": model,
        "content": content,
        "stop_reason": stop_reason,
        "stop_sequence": None,
        "usage": {
            "input_tokens": input_tokens,
            "output_tokens": output_tokens,
            "cache_read_input_tokens": cache_read,
            "cache_creation_input_tokens": cache_write,
        },
    }


def anthropic_stream(
    pieces: list[str], *, stop_reason: str = "end_turn", input_tokens: int = 100
) -> list[tuple[str | None, Any]]:
    """Messages stream events for a text reply made of ``pieces``."""
    start = anthropic_reply(input_tokens=input_tokens, output_tokens=1)
    start["stop_reason"] = None
    events: list[tuple[str | None, Any]] = [
        ("message_start", {"type": "message_start", "message": start}),
        (
            "content_block_start",
            {
                "type": "content_block_start",
                "index": 0,
                "content_block": {"type": "text", "text": ""},
            },
        ),
    ]
    for p in pieces:
        delta = {
            "type": "content_block_delta",
            "index": 0,
            "delta": {"type": "text_delta", "text": p},
        }
        events.append(("content_block_delta", delta))
    events += [
        ("content_block_stop", {"type": "content_block_stop", "index": 0}),
        (
            "message_delta",
            {
                "type": "message_delta",
                "delta": {"stop_reason": stop_reason, "stop_sequence": None},
                "usage": {"output_tokens": len(pieces)},
            },
        ),
        ("message_stop", {"type": "message_stop"}),
    ]
    return events


def anthropic_error(message: str, *, type_: str = "invalid_request_error") -> dict[str, Any]:
    """An Anthropic-style error body."""
    return {"type": "error", "error": {"type": type_, "message": message}}


def cancel_mid_stream(
    server: ScriptedServer, cancel: threading.Event, after_s: float = 0.4
) -> Callable[[], float]:
    """Set ``cancel`` ``after_s`` seconds after ``server`` got its first request (so that the
    stream has started, however long the client took to send it), in a thread. Returns a
    function that waits for that thread and gives the time (``time.monotonic``) the event
    was set."""
    cancelled_at: list[float] = []

    def run() -> None:
        until = time.monotonic() + 30.0
        while not server.received and time.monotonic() < until:
            time.sleep(0.01)
        time.sleep(after_s)
        cancelled_at.append(time.monotonic())
        cancel.set()

    thread = threading.Thread(target=run, daemon=True)
    thread.start()

    def when() -> float:
        thread.join()
        return cancelled_at[0]

    return when
