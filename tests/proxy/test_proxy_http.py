"""The proxy over HTTP with a plain client: streams byte for byte, upstream errors passed
through with their status, refusals in the API's own error shape, other paths passed on,
and ``ctxengine serve`` started as a command."""

from __future__ import annotations

import json
import os
import re
import signal
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

import httpx2
import pytest
from harness import ProxyServer
from servers import ScriptedServer, Step, anthropic_stream, chat_stream, openai_error

from ctxengine.proxy.app import Upstreams
from ctxengine.proxy.core import ProxyCore


def _sse(events: list[tuple[str | None, Any]]) -> bytes:
    """The bytes the scripted server writes for ``events``."""
    out = b""
    for name, data in events:
        text = data if isinstance(data, str) else json.dumps(data)
        out += (f"event: {name}\n" if name else "").encode() + f"data: {text}\n\n".encode()
    return out


CHAT = {
    "model": "gpt-4o",
    "stream": True,
    "messages": [
        {"role": "system", "content": "Be brief."},
        {"role": "user", "content": "Say hello."},
    ],
}
ANTHROPIC = {
    "model": "claude-sonnet-4-5",
    "max_tokens": 100,
    "stream": True,
    "system": [{"type": "text", "text": "Be brief.", "cache_control": {"type": "ephemeral"}}],
    "messages": [{"role": "user", "content": "Say hello."}],
}


@pytest.mark.parametrize(
    ("path", "body", "events"),
    [
        ("/v1/chat/completions", CHAT, chat_stream(["Hel", "lo", "!"], prompt_tokens=12)),
        ("/v1/messages", ANTHROPIC, anthropic_stream(["Hel", "lo"], input_tokens=12)),
    ],
)
def test_a_stream_passes_through_byte_for_byte_and_the_request_unchanged(
    path: str, body: dict[str, Any], events: list[tuple[str | None, Any]]
) -> None:
    raw = json.dumps(body, indent=1).encode()  # not orjson's bytes: forwarded as sent
    with ScriptedServer() as upstream, ProxyServer(ProxyCore(), upstream.url) as proxy:
        upstream.push(Step(events=events, delay_s=0.01))
        with httpx2.Client(timeout=10) as client:
            reply = client.post(proxy.url + path, content=raw, headers={"x-api-key": "k"})
    assert reply.status_code == 200
    assert reply.headers["content-type"] == "text/event-stream"
    assert reply.content == _sse(events)
    (received,) = upstream.received
    assert received.raw == raw
    assert " passed " in proxy.lines[0] and proxy.lines[0].endswith(" stream")


@pytest.mark.parametrize(
    ("status", "error"),
    [
        (401, openai_error("Incorrect API key provided", code="invalid_api_key")),
        (429, openai_error("Rate limit reached", code="rate_limit_exceeded")),
        (500, openai_error("The server had an error", type_="server_error")),
    ],
)
def test_an_upstream_error_passes_through_with_its_status_and_body(
    status: int, error: dict[str, Any]
) -> None:
    with ScriptedServer() as upstream, ProxyServer(ProxyCore(), upstream.url) as proxy:
        upstream.push(Step(status, error, headers={"retry-after": "7"}))
        with httpx2.Client(timeout=10) as client:
            reply = client.post(proxy.url + "/v1/chat/completions", json={**CHAT, "stream": False})
    assert reply.status_code == status
    assert reply.json() == error
    assert reply.headers["retry-after"] == "7"
    assert len(upstream.received) == 1  # no retry of a non-overflow error
    assert f" {status} passed " in proxy.lines[0]


def test_a_request_that_cannot_fit_is_refused_in_the_api_shape() -> None:
    huge = "word " * 30_000  # a system prompt alone over the window
    body = {**ANTHROPIC, "stream": False, "system": huge}
    with (
        ScriptedServer() as upstream,
        ProxyServer(ProxyCore(window=8_000), upstream.url) as p,
        httpx2.Client(timeout=10) as client,
    ):
        reply = client.post(p.url + "/v1/messages", json=body)
        chat = client.post(
            p.url + "/v1/chat/completions",
            json={"model": "gpt-4o", "messages": [{"role": "system", "content": huge}]},
        )
    assert reply.status_code == 400
    error = reply.json()
    # Anthropic's type and wording ("prompt is too long: N tokens > M maximum", which Claude
    # Code reads), then why; OpenAI's code.
    assert error["type"] == "error" and error["error"]["type"] == "invalid_request_error"
    message = error["error"]["message"]
    assert re.match(r"prompt is too long: \d+ tokens > \d+ maximum \(no compaction can", message)
    assert chat.status_code == 400
    assert chat.json()["error"]["type"] == "invalid_request_error"
    assert chat.json()["error"]["code"] == "context_length_exceeded"
    assert chat.json()["error"]["message"].startswith("no compaction can bring the context")
    assert upstream.received == []
    # The refusal's log line names the conversation and the model.
    assert re.match(r"anthropic proxy-[0-9a-f]{16} claude-sonnet-4-5 refused 400: no ", p.lines[0])
    assert re.match(r"chat proxy-[0-9a-f]{16} gpt-4o refused 400: no compaction", p.lines[1])


def test_a_body_it_cannot_read_is_refused_naming_the_field() -> None:
    bad = {"model": "gpt-4o", "messages": [{"role": "user", "content": "hi"}, 5]}
    with (
        ScriptedServer() as upstream,
        ProxyServer(ProxyCore(), upstream.url) as proxy,
        httpx2.Client(timeout=10) as client,
    ):
        not_json = client.post(proxy.url + "/v1/responses", content=b"{oops")
        not_list = client.post(proxy.url + "/v1/messages", json={"model": "m", "messages": "hi"})
        skipped = client.post(proxy.url + "/v1/chat/completions", json=bad)
    assert not_json.status_code == 400
    assert not_json.json()["error"]["message"].startswith("the body is not JSON")
    assert not_list.status_code == 400
    assert not_list.json() == {
        "type": "error",
        "error": {"type": "invalid_request_error", "message": "expected `messages` to be a list"},
    }
    assert not_json.json()["error"]["code"] is None
    # A malformed message the reader skips does not stop the request.
    assert skipped.status_code == 500  # the scripted upstream had no step left
    assert len(upstream.received) == 1


def test_other_paths_pass_through() -> None:
    with ScriptedServer() as upstream, ProxyServer(ProxyCore(), upstream.url) as proxy:
        upstream.push(Step(200, {"object": "list", "data": []}))
        with httpx2.Client(timeout=10) as client:
            reply = client.post(proxy.url + "/v1/embeddings", json={"input": "x"})
    assert reply.status_code == 200 and reply.json() == {"object": "list", "data": []}
    assert upstream.received[0].path == "/v1/embeddings"


def test_serve_prints_the_base_urls_and_logs_one_line_per_request(tmp_path: Path) -> None:
    with ScriptedServer() as upstream:
        upstream.push(Step(200, {"choices": [], "usage": None}))
        env = {**os.environ, "PYTHONUNBUFFERED": "1"}
        argv = [
            sys.executable,
            "-m",
            "ctxengine",
            "serve",
            "--upstream",
            upstream.url + "/v1",
            "--port",
            "0",
            "--db",
            str(tmp_path / "s.db"),
            "--window",
            "9000",
        ]
        proc = subprocess.Popen(argv, stdout=subprocess.PIPE, stderr=subprocess.PIPE, env=env)
        try:
            assert proc.stdout is not None and proc.stderr is not None
            first = proc.stdout.readline().decode()
            openai_line = proc.stdout.readline().decode().strip()
            anthropic_line = proc.stdout.readline().decode().strip()
            base = first.split(" on ")[1].split(" ->")[0]
            assert first == f"ctxengine proxy on {base} -> {upstream.url}/v1\n"
            assert base.startswith("http://127.0.0.1:")
            assert openai_line == f"OPENAI_BASE_URL={base}/v1"
            assert anthropic_line == f"ANTHROPIC_BASE_URL={base}"
            deadline = time.monotonic() + 20
            while True:
                try:
                    reply = httpx2.post(
                        base + "/v1/chat/completions",
                        json={**CHAT, "stream": False},
                        headers={"authorization": "Bearer sk-never-logged"},
                    )
                    break
                except httpx2.ConnectError:
                    if time.monotonic() > deadline:
                        raise
                    time.sleep(0.1)
            assert reply.status_code == 200
            assert upstream.received[0].path == "/v1/chat/completions"
            assert upstream.received[0].headers["authorization"] == "Bearer sk-never-logged"
            line = proc.stderr.readline().decode()
            assert " chat proxy-" in line
            assert " gpt-4o 200 passed tokens " in line and "(window 9,000, epoch 0)" in line
        finally:
            proc.terminate()
            _, err = proc.communicate(timeout=20)
        assert b"sk-never-logged" not in err


def test_count_tokens_counts_the_request_as_it_would_be_forwarded() -> None:
    body = {**ANTHROPIC, "stream": False}
    del body["max_tokens"]
    with (
        ScriptedServer() as upstream,
        ProxyServer(ProxyCore(), upstream.url) as proxy,
        httpx2.Client(timeout=10) as client,
    ):
        upstream.push(Step(200, {"input_tokens": 21}))
        raw = json.dumps(body).encode()
        reply = client.post(proxy.url + "/v1/messages/count_tokens", content=raw)
    assert (reply.status_code, reply.json()) == (200, {"input_tokens": 21})
    (received,) = upstream.received
    assert (received.path, received.raw) == ("/v1/messages/count_tokens", raw)
    # Not a model request: logged as a count, nothing stored.
    (line,) = proxy.lines
    assert re.fullmatch(
        r"anthropic count_tokens proxy-[0-9a-f]{16} claude-sonnet-4-5 200 passed tokens "
        r"\d+ -> \d+ \(window 200,000, epoch 0\) [\d.]+ ms",
        line,
    ), line


def test_a_reply_carries_one_server_and_one_date_header() -> None:
    with ScriptedServer() as upstream, ProxyServer(ProxyCore(), upstream.url) as proxy:
        upstream.push(Step(200, {"choices": [], "usage": None}))
        upstream.push(Step(events=chat_stream(["Hi"], prompt_tokens=3)))
        with httpx2.Client(timeout=10) as client:
            whole = client.post(proxy.url + "/v1/chat/completions", json={**CHAT, "stream": False})
            streamed = client.post(proxy.url + "/v1/chat/completions", json=CHAT)
    for reply in (whole, streamed):
        assert reply.status_code == 200
        assert len(reply.headers.get_list("server")) == 1  # uvicorn's, not the upstream's too
        assert len(reply.headers.get_list("date")) == 1


def test_a_body_over_the_size_limit_is_answered_413_in_the_api_shape() -> None:
    big = {**ANTHROPIC, "stream": False, "messages": [{"role": "user", "content": "x" * 3_000}]}
    with ScriptedServer() as upstream:
        core = ProxyCore()
        app_limit = 2_000  # bytes
        with (
            ProxyServer(core, upstream.url, max_body_bytes=app_limit) as proxy,
            httpx2.Client(timeout=10) as client,
        ):
            anthropic = client.post(proxy.url + "/v1/messages", json=big)
            chat = client.post(
                proxy.url + "/v1/chat/completions",
                json={"model": "gpt-4o", "messages": big["messages"]},
            )
            # No content-length: the body is read up to the limit, then refused.
            chunked = client.post(
                proxy.url + "/v1/chat/completions", content=iter([b"{" + b" " * 2_500 + b"}"])
            )
    message = (
        "the request body is over the proxy's limit of 0.00190735 MB (ctxengine serve "
        "--max-body-mb)"
    )
    assert (anthropic.status_code, anthropic.json()) == (
        413,
        {"type": "error", "error": {"type": "request_too_large", "message": message}},
    )
    error = {"message": message, "type": "invalid_request_error", "param": None, "code": None}
    assert (chat.status_code, chat.json()) == (413, {"error": error})
    assert (chunked.status_code, chunked.json()) == (413, {"error": error})
    assert upstream.received == []
    # Refused before the body is read: no conversation or model to name.
    assert proxy.lines == [
        f"anthropic - - refused 413: {message}",
        f"chat - - refused 413: {message}",
        f"chat - - refused 413: {message}",
    ]


def test_proxy_failures_use_each_apis_server_error_type() -> None:
    with ScriptedServer() as upstream:
        dead = upstream.url  # nothing listens there once the server is stopped
    with ProxyServer(ProxyCore(), dead) as proxy, httpx2.Client(timeout=10) as client:
        anthropic = client.post(proxy.url + "/v1/messages", json={**ANTHROPIC, "stream": False})
        chat = client.post(proxy.url + "/v1/chat/completions", json={**CHAT, "stream": False})
    assert anthropic.status_code == chat.status_code == 502
    assert anthropic.json()["error"]["type"] == "api_error"
    assert anthropic.json()["error"]["message"].startswith("upstream unreachable: ")
    assert (chat.json()["error"]["type"], chat.json()["error"]["code"]) == ("server_error", None)


def test_one_proxy_serves_an_openai_and_an_anthropic_upstream() -> None:
    with (
        ScriptedServer() as openai_up,
        ScriptedServer() as anthropic_up,
        ProxyServer(ProxyCore(), Upstreams(openai_up.url + "/v1", anthropic_up.url)) as proxy,
        httpx2.Client(timeout=10) as client,
    ):
        openai_up.push(Step(200, {"choices": [], "usage": None}))
        openai_up.push(Step(200, {"object": "list", "data": []}))
        anthropic_up.push(Step(200, {"type": "message", "content": [], "usage": None}))
        anthropic_up.push(Step(200, {"data": []}))
        chat = client.post(proxy.url + "/v1/chat/completions", json={**CHAT, "stream": False})
        message = client.post(proxy.url + "/v1/messages", json={**ANTHROPIC, "stream": False})
        # Other paths: to the Anthropic upstream when the request says it is Anthropic's.
        files = client.post(proxy.url + "/v1/files", json={})
        claude_files = client.post(
            proxy.url + "/v1/files", json={}, headers={"anthropic-version": "2023-06-01"}
        )
    assert [r.status_code for r in (chat, message, files, claude_files)] == [200] * 4
    assert [r.path for r in openai_up.received] == ["/v1/chat/completions", "/v1/files"]
    assert [r.path for r in anthropic_up.received] == ["/v1/messages", "/v1/files"]


def test_an_api_without_an_upstream_is_refused_naming_the_option() -> None:
    with (
        ScriptedServer() as anthropic_up,
        ProxyServer(ProxyCore(), Upstreams(None, anthropic_up.url)) as proxy,
        httpx2.Client(timeout=10) as client,
    ):
        chat = client.post(proxy.url + "/v1/chat/completions", json={**CHAT, "stream": False})
    assert chat.status_code == 404
    assert chat.json()["error"]["message"] == (
        "this proxy has no OpenAI upstream (--openai-upstream)"
    )
    assert anthropic_up.received == []


def test_serve_stops_on_ctrl_c_saying_so(tmp_path: Path) -> None:
    argv = [
        sys.executable,
        "-m",
        "ctxengine",
        "serve",
        "--openai-upstream",
        "http://127.0.0.1:9/v1",
        "--anthropic-upstream",
        "http://127.0.0.1:9",
        "--port",
        "0",
        "--no-store",
    ]
    env = {**os.environ, "PYTHONUNBUFFERED": "1"}
    proc = subprocess.Popen(argv, stdout=subprocess.PIPE, stderr=subprocess.PIPE, env=env)
    assert proc.stdout is not None
    first = proc.stdout.readline().decode()
    base = first.removeprefix("ctxengine proxy on ").strip()
    assert first == f"ctxengine proxy on {base}\n"
    assert (
        proc.stdout.readline().decode() == f"  OPENAI_BASE_URL={base}/v1 -> http://127.0.0.1:9/v1\n"
    )
    assert proc.stdout.readline().decode() == f"  ANTHROPIC_BASE_URL={base} -> http://127.0.0.1:9\n"
    deadline = time.monotonic() + 20
    while True:  # listening
        try:
            httpx2.get(base + "/", timeout=5)
            break
        except httpx2.ConnectError:
            assert time.monotonic() < deadline
            time.sleep(0.1)
    proc.send_signal(signal.SIGINT)
    _, err = proc.communicate(timeout=20)
    assert proc.returncode == 0
    assert err.decode().strip().splitlines()[-1] == "stopped"
    assert b"interrupted" not in err
