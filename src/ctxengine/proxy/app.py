"""The proxy's ASGI application (Starlette), forwarding to the upstream with httpx2.

Routes: ``POST /v1/chat/completions``, ``/v1/responses``, ``/v1/messages`` (compacted by
:class:`~ctxengine.proxy.core.ProxyCore`) and ``/v1/messages/count_tokens`` (the compacted
form is counted: what the next request will send); any other path and method is passed to
the upstream as it is (``GET /v1/models`` …).

Upstreams (:class:`Upstreams`): the OpenAI APIs go to the OpenAI upstream, the Anthropic
ones to the Anthropic upstream; one URL may serve both. Another path goes to the Anthropic
upstream when it is ``/v1/messages…`` or the request carries ``anthropic-version``, else to
the OpenAI one (to whichever is configured when only one is). A request path ``/v1/X`` goes
to ``UPSTREAM/X`` when the upstream URL ends with ``/v1``, else to ``UPSTREAM/v1/X``. Headers
pass both ways except the hop-by-hop ones, ``host``, ``content-length`` and
``x-ctxengine-session`` (and the upstream's ``server`` and ``date``: the proxy's server sends
its own); the upstream is asked for an uncompressed reply (``accept-encoding: identity``) so
its bytes pass through as they are. Credentials (``authorization``, ``x-api-key``) are
forwarded and never logged or stored.

Bodies over ``max_body_bytes`` are answered 413 (``request_too_large``) without being read
whole.

Replies: a stream (server-sent events) is passed through chunk by chunk, byte for byte, while
its usage is read on the side; a whole reply is passed back with its status. An upstream
error that is a context overflow is answered by one compaction and one retry (not for a
stateful request, whose history the proxy does not hold); any other error passes through
with its status and body. The proxy's own refusals use the API's error shape
(:func:`~ctxengine.proxy.refusal.error_body`).
"""

from __future__ import annotations

import contextlib
import os
import sys
import time
from collections.abc import AsyncIterator, Callable, Mapping
from dataclasses import dataclass
from typing import Any

import anyio.to_thread
import httpx2
import orjson
from starlette.applications import Starlette
from starlette.requests import Request
from starlette.responses import Response, StreamingResponse
from starlette.routing import Route

from ctxengine.model import Usage
from ctxengine.policy.defaults import PROXY_MAX_BODY_MB, PROXY_UPSTREAM_TIMEOUT_S

from .core import SESSION_HEADER, Prepared, ProxyCore
from .refusal import Refused, error_body
from .replies import Signature, StreamReader, read_reply
from .wire import Api

__all__ = ["WORKER_HEADER", "Upstreams", "create_app", "error_response", "upstream_url"]

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
#: Upstream reply headers the proxy's own server writes (sent once, not twice).
_SERVER_HEADERS = frozenset({"server", "date"})


@dataclass(frozen=True, slots=True)
class Upstreams:
    """Where each API's requests go: base URLs, ``None`` where none is configured.

    Attributes:
        openai: the upstream of Chat Completions and Responses.
        anthropic: the upstream of Anthropic Messages.
    """

    openai: str | None
    anthropic: str | None

    @classmethod
    def of(cls, upstream: str | Upstreams) -> Upstreams:
        """``upstream`` as :class:`Upstreams` (one URL: both APIs go there)."""
        return upstream if isinstance(upstream, Upstreams) else cls(upstream, upstream)

    def for_api(self, api: Api) -> str | None:
        """The upstream of ``api``."""
        return self.anthropic if api == "anthropic" else self.openai

    def for_path(self, path: str, headers: Mapping[str, str]) -> str:
        """The upstream of a request the proxy only passes on (see the module docstring)."""
        anthropic = path.startswith("/v1/messages") or "anthropic-version" in headers
        first, second = (
            (self.anthropic, self.openai) if anthropic else (self.openai, self.anthropic)
        )
        found = first or second
        assert found is not None  # at least one is configured (create_app checks)
        return found


def upstream_url(upstream: str, path: str) -> str:
    """The upstream URL for the proxy path ``path`` (``/v1/…``)."""
    base = upstream.rstrip("/")
    if base.endswith("/v1") and (path == "/v1" or path.startswith("/v1/")):
        return base + path[3:]
    return base + path


def error_response(api: Api | None, refused: Refused) -> Response:
    """``refused`` as a response in the API's own error shape
    (:func:`~ctxengine.proxy.refusal.error_body`)."""
    return Response(
        orjson.dumps(error_body(api, refused)), refused.status, media_type="application/json"
    )


def _forward_headers(headers: Mapping[str, str]) -> dict[str, str]:
    out = {k: v for k, v in headers.items() if k.lower() not in _HOP}
    out["accept-encoding"] = "identity"
    return out


def _reply_headers(headers: httpx2.Headers) -> dict[str, str]:
    return {
        k: v
        for k, v in headers.items()
        if k.lower() not in _HOP and k.lower() not in _SERVER_HEADERS
    }


#: The reply header naming the worker process that served a request (``serve --workers``).
WORKER_HEADER = "x-ctxengine-worker"


def _stderr(line: str) -> None:
    stamp = time.strftime("%H:%M:%S")
    print(f"{stamp} {line}", file=sys.stderr, flush=True)


async def _read_body(request: Request, limit: int) -> bytes:
    """The request body, at most ``limit`` bytes.

    Raises:
        Refused: 413 ``request_too_large``: a ``content-length`` or a body over ``limit``
            (reading stops at the first byte past it).
    """
    mb = limit / 2**20
    too_large = Refused(
        413,
        "request_too_large",
        f"the request body is over the proxy's limit of {mb:g} MB (ctxengine serve --max-body-mb)",
    )
    declared = request.headers.get("content-length")
    if declared is not None and declared.isdigit() and int(declared) > limit:
        raise too_large
    chunks: list[bytes] = []
    size = 0
    async for chunk in request.stream():
        size += len(chunk)
        if size > limit:
            raise too_large
        chunks.append(chunk)
    return b"".join(chunks)


def _refused_line(api: Api, refused: Refused, what: str = "") -> str:
    """The log line of a request the proxy refused: API, session, model, status, why."""
    key = refused.key or "-"
    model = refused.model or "-"
    return f"{api}{what} {key} {model} refused {refused.status}: {refused.message}"


def create_app(
    core: ProxyCore,
    upstream: str | Upstreams,
    *,
    log: Callable[[str], None] = _stderr,
    client: httpx2.AsyncClient | None = None,
    worker_header: bool = False,
    on_shutdown: Callable[[], None] | None = None,
    max_body_bytes: int = PROXY_MAX_BODY_MB * 2**20,
) -> Starlette:
    """The proxy application for ``upstream`` (a base URL for every API, or one per API).

    Args:
        core: decides what to forward (and stores the conversations).
        upstream: the base URL of the real API (``https://api.openai.com/v1``,
            ``http://127.0.0.1:9000``), or :class:`Upstreams`.
        log: takes the one line logged per request.
        client: the HTTP client for the upstream (default: one made here, closed on
            shutdown, without proxies from the environment).
        worker_header: add :data:`WORKER_HEADER` (this process's id) to the replies of the
            model routes and the passed-through ones (one of several worker processes).
        on_shutdown: called when the application shuts down (after the client is closed).
        max_body_bytes: the largest request body read (bytes); a larger one is answered 413.

    Raises:
        ValueError: no upstream at all, or ``max_body_bytes`` below 1.
    """
    upstreams = Upstreams.of(upstream)
    if upstreams.openai is None and upstreams.anthropic is None:
        raise ValueError("the proxy needs an upstream")
    if max_body_bytes < 1:
        raise ValueError(f"max_body_bytes must be positive, got {max_body_bytes}")
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

    async def send(request: Request, base: str, path: str, content: bytes) -> httpx2.Response:
        req = http.build_request(
            request.method,
            upstream_url(base, path),
            content=content,
            headers=_forward_headers(request.headers),
            params=request.query_params,
        )
        return await http.send(req, stream=True)

    def no_upstream(api: Api) -> Refused:
        option = "--anthropic-upstream" if api == "anthropic" else "--openai-upstream"
        name = "Anthropic" if api == "anthropic" else "OpenAI"
        return Refused(404, "no_upstream", f"this proxy has no {name} upstream ({option})")

    async def compacted(request: Request, api: Api, path: str) -> Response:
        base = upstreams.for_api(api)
        headers = {k.lower(): v for k, v in request.headers.items()}
        try:
            if base is None:
                raise no_upstream(api)
            raw = await _read_body(request, max_body_bytes)
            prepared = await anyio.to_thread.run_sync(core.prepare, api, raw, headers)
        except Refused as exc:
            log(_refused_line(api, exc))
            return error_response(api, exc)
        return await forward(request, prepared, base, path)

    async def forward(request: Request, prepared: Prepared, base: str, path: str) -> Response:
        api = prepared.api
        try:
            reply = await send(request, base, path, prepared.raw)
        except httpx2.HTTPError as exc:
            log(prepared.log_line(502, ms=_ms(prepared)))
            return error_response(api, Refused(502, "upstream", f"upstream unreachable: {exc}"))
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
                    return error_response(api, exc)
                if retry is not None:
                    return await forward(request, retry, base, path)
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
        base = upstreams.for_path(request.url.path, request.headers)
        try:
            raw = await _read_body(request, max_body_bytes)
            reply = await send(request, base, request.url.path, raw)
        except Refused as exc:
            return error_response(None, exc)
        except httpx2.HTTPError as exc:
            failed = Refused(502, "upstream", f"upstream unreachable: {exc}")
            return error_response(None, failed)

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
        what = " count_tokens"
        base = upstreams.anthropic
        headers = {k.lower(): v for k, v in request.headers.items()}
        try:
            if base is None:
                raise no_upstream("anthropic")
            raw = await _read_body(request, max_body_bytes)
            prepared = await anyio.to_thread.run_sync(
                lambda: core.prepare("anthropic", raw, headers, record=False)
            )
        except Refused as exc:
            log(_refused_line("anthropic", exc, what))
            return error_response("anthropic", exc)
        try:
            reply = await send(request, base, "/v1/messages/count_tokens", prepared.raw)
        except httpx2.HTTPError as exc:
            log(prepared.log_line(502, ms=_ms(prepared), what=what.strip()))
            failed = Refused(502, "upstream", f"upstream unreachable: {exc}")
            return error_response("anthropic", failed)
        data = await reply.aread()
        await reply.aclose()
        log(prepared.log_line(reply.status_code, ms=_ms(prepared), what=what.strip()))
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
