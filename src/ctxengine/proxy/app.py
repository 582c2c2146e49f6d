"""The proxy's ASGI application (Starlette), forwarding to the upstream with httpx2.

Routes: ``POST /v1/chat/completions``, ``/v1/responses``, ``/v1/messages`` (compacted by
:class:`~ctxengine.proxy.core.ProxyCore`) and ``/v1/messages/count_tokens`` (the compacted
form is counted: what the next request will send); any other path and method is passed to
the upstream as it is (``GET /v1/models`` …).

Upstream: a request path ``/v1/X`` goes to ``UPSTREAM/X`` when the upstream URL ends with
``/v1``, else to ``UPSTREAM/v1/X``. Headers pass both ways except the hop-by-hop ones,
``host``, ``content-length`` and ``x-ctxengine-session``; the upstream is asked for an
uncompressed reply (``accept-encoding: identity``) so its bytes pass through as they are.
Credentials (``authorization``, ``x-api-key``) are forwarded and never logged or stored.

Replies: a stream (server-sent events) is passed through chunk by chunk, byte for byte, while
its usage is read on the side; a whole reply is passed back with its status. An upstream
error that is a context overflow is answered by one compaction and one retry; any other
error passes through with its status and body. The proxy's own refusals use the API's
error shape (:func:`error_response`).
"""

from __future__ import annotations

import contextlib
import os
import sys
import time
from collections.abc import AsyncIterator, Callable, Mapping
from typing import Any

import anyio.to_thread
import httpx2
import orjson
from starlette.applications import Starlette
from starlette.requests import Request
from starlette.responses import Response, StreamingResponse
from starlette.routing import Route

from ctxengine.model import Usage
from ctxengine.policy.defaults import PROXY_UPSTREAM_TIMEOUT_S

from .core import SESSION_HEADER, Prepared, ProxyCore, Refused
from .replies import Signature, StreamReader, read_reply
from .wire import Api

__all__ = ["WORKER_HEADER", "create_app", "error_response", "upstream_url"]

#: Headers never forwarded either way.
_HOP = frozenset(
    {
        "host",
        "content-length",
        "connection",
        "keep-alive",
        "transfer-encoding",
        "te",
        "trailer",
        "upgrade",
        "proxy-authorization",
        "proxy-connection",
        "accept-encoding",
        "content-encoding",
        SESSION_HEADER,
    }
)


def upstream_url(upstream: str, path: str) -> str:
    """The upstream URL for the proxy path ``path`` (``/v1/…``)."""
    base = upstream.rstrip("/")
    if base.endswith("/v1") and (path == "/v1" or path.startswith("/v1/")):
        return base + path[3:]
    return base + path


def error_response(api: Api | None, status: int, kind: str, message: str) -> Response:
    """An error in the API's own shape: ``{"type": "error", "error": {type, message}}`` for
    Anthropic, ``{"error": {message, type, param, code}}`` for OpenAI's APIs."""
    if api == "anthropic":
        body: dict[str, Any] = {"type": "error", "error": {"type": kind, "message": message}}
    else:
        body = {"error": {"message": message, "type": kind, "param": None, "code": kind}}
    return Response(orjson.dumps(body), status, media_type="application/json")


def _forward_headers(headers: Mapping[str, str]) -> dict[str, str]:
    out = {k: v for k, v in headers.items() if k.lower() not in _HOP}
    out["accept-encoding"] = "identity"
    return out


def _reply_headers(headers: httpx2.Headers) -> dict[str, str]:
    return {k: v for k, v in headers.items() if k.lower() not in _HOP}


#: The reply header naming the worker process that served a request (``serve --workers``).
WORKER_HEADER = "x-ctxengine-worker"


def _stderr(line: str) -> None:
    stamp = time.strftime("%H:%M:%S")
    print(f"{stamp} {line}", file=sys.stderr, flush=True)


def create_app(
    core: ProxyCore,
    upstream: str,
    *,
    log: Callable[[str], None] = _stderr,
    client: httpx2.AsyncClient | None = None,
    worker_header: bool = False,
    on_shutdown: Callable[[], None] | None = None,
) -> Starlette:
    """The proxy application for ``upstream`` (a base URL).

    Args:
        core: decides what to forward (and stores the conversations).
        upstream: the base URL of the real API (``https://api.openai.com/v1``,
            ``http://127.0.0.1:9000``).
        log: takes the one line logged per request.
        client: the HTTP client for the upstream (default: one made here, closed on
            shutdown, without proxies from the environment).
        worker_header: add :data:`WORKER_HEADER` (this process's id) to the replies of the
            model routes and the passed-through ones (one of several worker processes).
        on_shutdown: called when the application shuts down (after the client is closed).
    """
    pid = str(os.getpid())

    def reply_headers(headers: httpx2.Headers) -> dict[str, str]:
        out = _reply_headers(headers)
        if worker_header:
            out[WORKER_HEADER] = pid
        return out

    own_client = client is None
    http = client or httpx2.AsyncClient(
        timeout=httpx2.Timeout(PROXY_UPSTREAM_TIMEOUT_S), trust_env=False
    )

    async def observe(prepared: Prepared, reply: tuple[Signature, Usage | None] | None) -> None:
        """Remember the reply's usage: in a thread when that writes to a shared store."""
        if core.shared:
            await anyio.to_thread.run_sync(core.observe, prepared, reply)
        else:
            core.observe(prepared, reply)

    async def send(request: Request, path: str, content: bytes) -> httpx2.Response:
        req = http.build_request(
            request.method,
            upstream_url(upstream, path),
            content=content,
            headers=_forward_headers(request.headers),
            params=request.query_params,
        )
        return await http.send(req, stream=True)

    async def compacted(request: Request, api: Api, path: str) -> Response:
        raw = await request.body()
        headers = {k.lower(): v for k, v in request.headers.items()}
        try:
            prepared = await anyio.to_thread.run_sync(core.prepare, api, raw, headers)
        except Refused as exc:
            log(f"{api} refused {exc.status}: {exc}")
            return error_response(api, exc.status, exc.kind, str(exc))
        return await forward(request, prepared, path)

    async def forward(request: Request, prepared: Prepared, path: str) -> Response:
        api = prepared.api
        try:
            reply = await send(request, path, prepared.raw)
        except httpx2.HTTPError as exc:
            log(prepared.log_line(502, ms=_ms(prepared)))
            return error_response(api, 502, "upstream_error", f"upstream unreachable: {exc}")
        if reply.status_code >= 400:
            data = await reply.aread()
            await reply.aclose()
            error = _json(data)
            if not prepared.recovered:
                try:
                    retry = await anyio.to_thread.run_sync(
                        core.recover, prepared, reply.status_code, error
                    )
                except Refused as exc:
                    log(prepared.log_line(exc.status, ms=_ms(prepared)) + f" refused: {exc}")
                    return error_response(api, exc.status, exc.kind, str(exc))
                if retry is not None:
                    return await forward(request, retry, path)
            log(prepared.log_line(reply.status_code, ms=_ms(prepared)))
            return Response(data, reply.status_code, reply_headers(reply.headers))
        if "text/event-stream" in reply.headers.get("content-type", ""):
            return StreamingResponse(
                stream(prepared, reply), reply.status_code, reply_headers(reply.headers)
            )
        data = await reply.aread()
        await reply.aclose()
        await observe(prepared, read_reply(api, _json(data)))
        log(prepared.log_line(reply.status_code, ms=_ms(prepared)))
        return Response(data, reply.status_code, reply_headers(reply.headers))

    async def stream(prepared: Prepared, reply: httpx2.Response) -> AsyncIterator[bytes]:
        reader = StreamReader(prepared.api)
        held: bytes | None = None
        observed = False
        try:
            async for chunk in reply.aiter_raw():
                reader.feed(chunk)
                if held is not None:
                    yield held
                held = chunk
            # The reply's usage is remembered before its last bytes go out: the client's next
            # request (maybe to another worker) comes only after them.
            await observe(prepared, reader.result())
            observed = True
            if held is not None:
                yield held
        finally:
            await reply.aclose()
            if not observed:
                core.observe(prepared, reader.result())
            log(prepared.log_line(reply.status_code, ms=_ms(prepared)) + " stream")

    async def passthrough(request: Request) -> Response:
        try:
            reply = await send(request, request.url.path, await request.body())
        except httpx2.HTTPError as exc:
            return error_response(None, 502, "upstream_error", f"upstream unreachable: {exc}")

        async def body() -> AsyncIterator[bytes]:
            try:
                async for chunk in reply.aiter_raw():
                    yield chunk
            finally:
                await reply.aclose()

        return StreamingResponse(body(), reply.status_code, reply_headers(reply.headers))

    def route(api: Api, path: str) -> Route:
        async def endpoint(request: Request) -> Response:
            return await compacted(request, api, path)

        return Route(path, endpoint, methods=["POST"])

    async def count_tokens(request: Request) -> Response:
        raw = await request.body()
        headers = {k.lower(): v for k, v in request.headers.items()}
        try:
            prepared = await anyio.to_thread.run_sync(
                lambda: core.prepare("anthropic", raw, headers, record=False)
            )
        except Refused as exc:
            return error_response("anthropic", exc.status, exc.kind, str(exc))
        try:
            reply = await send(request, "/v1/messages/count_tokens", prepared.raw)
        except httpx2.HTTPError as exc:
            return error_response("anthropic", 502, "upstream_error", f"upstream: {exc}")
        data = await reply.aread()
        await reply.aclose()
        return Response(data, reply.status_code, _reply_headers(reply.headers))

    @contextlib.asynccontextmanager
    async def lifespan(app: Starlette) -> AsyncIterator[None]:
        try:
            yield
        finally:
            if own_client:
                await http.aclose()
            if on_shutdown is not None:
                await anyio.to_thread.run_sync(on_shutdown)

    routes = [
        route("chat", "/v1/chat/completions"),
        route("responses", "/v1/responses"),
        Route("/v1/messages/count_tokens", count_tokens, methods=["POST"]),
        route("anthropic", "/v1/messages"),
        Route(
            "/{path:path}",
            passthrough,
            methods=["GET", "POST", "PUT", "PATCH", "DELETE", "HEAD", "OPTIONS"],
        ),
    ]
    return Starlette(routes=routes, lifespan=lifespan)


def _json(data: bytes) -> Any:
    try:
        return orjson.loads(data)
    except orjson.JSONDecodeError:
        return data.decode("utf-8", "replace")


def _ms(prepared: Prepared) -> float:
    return (time.perf_counter() - prepared.started) * 1000.0
