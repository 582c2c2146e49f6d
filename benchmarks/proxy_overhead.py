"""What the compacting proxy adds to a request (p50/p95), against a plain pass-through of the
same request (not a test).

Run: ``.venv/bin/python benchmarks/proxy_overhead.py [--tokens 100000] [--requests 200]
[--stream]``.

Three processes on 127.0.0.1, each started by this script:

* the upstream: a threaded HTTP server that reads the whole request body and answers a
  fixed chat completion (or a short SSE stream with ``--stream``) in one write, with
  ``TCP_NODELAY`` as production servers (a reply split in two writes without it waits for
  the reader's delayed ACK, about 40 ms, and the comparison measures that instead);
* ``ctxengine serve`` (the proxy: Starlette on uvicorn, httpx2 to the upstream) with a
  window far above the history, so nothing is compacted and the client's bytes go through;
* a plain pass-through: the same stack (Starlette on uvicorn, httpx2) forwarding the body
  and the reply without reading either (this script with ``--plain-proxy``).

The client (httpx2, one keep-alive connection to each) holds a chat-completions
conversation of a coding agent (a system prompt, user requests, tool calls and 1,000 to
2,000-token tool results) grown to ``--tokens`` tokens (the proxy's estimate), then adds one
turn (user message, tool call, a 4-line result: about 200 tokens) per round and sends the
round's request to the proxy and to the pass-through, in alternating order, timing each from
the first byte sent to the last byte received. The overhead of a round is the proxy's time minus the
pass-through's for the same request; the table gives p50/p95 of both times, of the
overhead, and the ratio of the p50s; and the proxy's own work per request (parse, read,
prefix-cache lookup, projection: :meth:`ProxyCore.prepare`), timed in-process for the same
requests. The proxy stores conversations (SQLite, in a temporary folder) as ``serve`` does.
"""

from __future__ import annotations

import argparse
import json
import os
import socket
import statistics
import subprocess
import sys
import tempfile
import time
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any

import httpx2
import orjson

REPLY = orjson.dumps(
    {
        "id": "chatcmpl-1",
        "object": "chat.completion",
        "created": 1,
        "model": "gpt-test",
        "choices": [
            {"index": 0, "message": {"role": "assistant", "content": "ok"}, "finish_reason": "stop"}
        ],
        "usage": {"prompt_tokens": 1, "completion_tokens": 1, "total_tokens": 2},
    }
)
STREAM = (
    b"".join(
        b"data: " + orjson.dumps({"choices": [{"index": 0, "delta": {"content": p}}]}) + b"\n\n"
        for p in ("o", "k")
    )
    + b"data: [DONE]\n\n"
)


# ------------------------------------------------------------------ the processes


def _upstream(port: int) -> None:
    class Handler(BaseHTTPRequestHandler):
        protocol_version = "HTTP/1.1"

        def log_message(self, format: str, *args: Any) -> None:
            return

        def do_POST(self) -> None:
            body = self.rfile.read(int(self.headers.get("content-length") or 0))
            stream = b'"stream":true' in body[-200:] or b'"stream": true' in body[-200:]
            payload = STREAM if stream else REPLY
            kind = b"text/event-stream" if stream else b"application/json"
            head = b"HTTP/1.1 200 OK\r\ncontent-type: %s\r\ncontent-length: %d\r\n\r\n"
            self.wfile.write(head % (kind, len(payload)) + payload)  # one write, as servers do

    class Server(ThreadingHTTPServer):
        def server_bind(self) -> None:
            self.socket.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
            super().server_bind()

    Server(("127.0.0.1", port), Handler).serve_forever()


def _plain_proxy(port: int, upstream: str) -> None:
    import uvicorn
    from starlette.applications import Starlette
    from starlette.requests import Request
    from starlette.responses import Response, StreamingResponse
    from starlette.routing import Route

    http = httpx2.AsyncClient(timeout=600, trust_env=False)
    skip = {"host", "content-length", "connection", "accept-encoding", "transfer-encoding"}

    async def forward(request: Request) -> Response:
        headers = {k: v for k, v in request.headers.items() if k not in skip}
        headers["accept-encoding"] = "identity"
        req = http.build_request(
            "POST", upstream + request.url.path[3:], content=await request.body(), headers=headers
        )
        reply = await http.send(req, stream=True)
        out = {k: v for k, v in reply.headers.items() if k not in skip}

        async def body():  # type: ignore[no-untyped-def]
            try:
                async for chunk in reply.aiter_raw():
                    yield chunk
            finally:
                await reply.aclose()

        return StreamingResponse(body(), reply.status_code, out)

    app = Starlette(routes=[Route("/v1/chat/completions", forward, methods=["POST"])])
    uvicorn.run(app, host="127.0.0.1", port=port, log_level="warning", access_log=False)


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


def _wait(url: str) -> None:
    deadline = time.monotonic() + 30
    while True:
        try:
            httpx2.get(url, timeout=1)
            return
        except httpx2.HTTPError:
            if time.monotonic() > deadline:
                raise
            time.sleep(0.1)


# ------------------------------------------------------------------ the conversation

SYSTEM = "You are a coding agent. Read files before changing them; run the tests after."


def _output(turn: int) -> str:
    lines = 60 + (turn * 13) % 60
    return "\n".join(
        f"src/pkg/module_{turn}.py:{n}: def handler_{n}(request, limit={n}): return {turn}"
        for n in range(lines)
    )


def _turn(messages: list[dict[str, Any]], turn: int, *, lines: int | None = None) -> None:
    messages.append({"role": "user", "content": f"Step {turn}: check module_{turn} and fix it."})
    call = {
        "id": f"call_{turn}",
        "type": "function",
        "function": {"name": "read_file", "arguments": json.dumps({"path": f"module_{turn}.py"})},
    }
    messages.append({"role": "assistant", "content": None, "tool_calls": [call]})
    output = _output(turn)
    if lines is not None:
        output = "\n".join(output.splitlines()[:lines])
    messages.append({"role": "tool", "tool_call_id": f"call_{turn}", "content": output})


def _tokens(body: dict[str, Any]) -> int:
    from ctxengine.proxy.wire import ConversationReader
    from ctxengine.tokens.estimate import HeuristicEstimator

    conv = ConversationReader("chat").read(body)
    est = HeuristicEstimator()
    return sum(est.message(m) for m in conv.messages) + est.tools(conv.tools)


def _pct(values: list[float], q: float) -> float:
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, int(q * len(ordered)))]


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--tokens", type=int, default=100_000, help="history size (tokens)")
    parser.add_argument("--requests", type=int, default=200, help="rounds timed")
    parser.add_argument("--stream", action="store_true", help="ask for streamed replies")
    parser.add_argument("--no-store", action="store_true", help="serve --no-store")
    parser.add_argument("--plain-proxy", nargs=2, metavar=("PORT", "UPSTREAM"))
    parser.add_argument("--upstream-server", type=int, metavar="PORT")
    args = parser.parse_args()
    if args.plain_proxy:
        _plain_proxy(int(args.plain_proxy[0]), args.plain_proxy[1])
        return
    if args.upstream_server:
        _upstream(args.upstream_server)
        return

    up_port, px_port, plain_port = _free_port(), _free_port(), _free_port()
    upstream = f"http://127.0.0.1:{up_port}"
    py = sys.executable
    here = str(Path(__file__).resolve())
    with tempfile.TemporaryDirectory() as tmp:
        procs = [
            subprocess.Popen([py, here, "--upstream-server", str(up_port)]),
            subprocess.Popen(
                [py, "-m", "ctxengine", "serve", "--upstream", upstream, "--port", str(px_port),
                 "--window", "2000000", "--db", os.path.join(tmp, "proxy.db"),
                 *(["--no-store"] if args.no_store else [])],
                stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL,
            ),
            subprocess.Popen([py, here, "--plain-proxy", str(plain_port), upstream]),
        ]  # fmt: skip
        try:
            for port in (up_port, px_port, plain_port):
                _wait(f"http://127.0.0.1:{port}/")
            _run(args, f"http://127.0.0.1:{px_port}", f"http://127.0.0.1:{plain_port}")
        finally:
            for p in procs:
                p.terminate()
            for p in procs:
                p.wait(timeout=30)


def _run(args: argparse.Namespace, proxy: str, plain: str) -> None:
    from ctxengine.proxy.core import ProxyCore

    messages: list[dict[str, Any]] = [{"role": "system", "content": SYSTEM}]
    tools = [{"type": "function", "function": {"name": "read_file", "parameters": {
        "type": "object", "properties": {"path": {"type": "string"}}}}}]  # fmt: skip
    body: dict[str, Any] = {"model": "gpt-4o", "messages": messages, "tools": tools}
    if args.stream:
        body["stream"] = True
    turn = 0
    while _tokens(body) < args.tokens:
        _turn(messages, turn)
        turn += 1
    core = ProxyCore(window=2_000_000)  # the proxy's own work, in this process
    headers = {"authorization": "Bearer sk-bench", "content-type": "application/json"}
    times: dict[str, list[float]] = {"proxy": [], "plain": []}
    work: list[float] = []
    sizes: list[int] = []
    with httpx2.Client(timeout=60, trust_env=False) as client:
        start_tokens = _tokens(body)
        for n in range(args.requests + 10):  # the first 10 rounds warm up
            _turn(messages, turn, lines=4)
            turn += 1
            raw = orjson.dumps(body)
            order = [("proxy", proxy), ("plain", plain)]
            if n % 2:
                order.reverse()
            for name, url in order:
                start = time.perf_counter()
                reply = client.post(url + "/v1/chat/completions", content=raw, headers=headers)
                reply.read()
                took = (time.perf_counter() - start) * 1000
                assert reply.status_code == 200, reply.text
                if n >= 10:
                    times[name].append(took)
            start = time.perf_counter()
            prepared = core.prepare("chat", raw, {})
            if n >= 10:
                work.append((time.perf_counter() - start) * 1000)
                sizes.append(len(raw))
            assert not prepared.changed
    tokens = _tokens(body)
    over = [a - b for a, b in zip(times["proxy"], times["plain"], strict=True)]
    p50 = {k: statistics.median(v) for k, v in times.items()}
    print(
        f"history: {start_tokens:,} to {tokens:,} tokens ({statistics.median(sizes) / 1e6:.2f} MB "
        f"median body), {args.requests} requests, {'streamed' if args.stream else 'whole'} "
        "replies, nothing compacted"
    )
    print(f"{'':28}{'p50 ms':>10}{'p95 ms':>10}")
    rows = [
        ("plain pass-through", times["plain"]),
        ("ctxengine proxy", times["proxy"]),
        ("overhead (paired)", over),
        ("proxy's own work (prepare)", work),
    ]
    for label, values in rows:
        print(f"{label:28}{statistics.median(values):>10.2f}{_pct(values, 0.95):>10.2f}")
    print(f"ratio of p50s (proxy / pass-through): {p50['proxy'] / p50['plain']:.3f}")


if __name__ == "__main__":
    main()
