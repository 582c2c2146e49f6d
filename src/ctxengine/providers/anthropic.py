"""Anthropic provider on the official ``anthropic`` SDK (extra ``ctxengine[anthropic]``).

Configuration follows the SDK: ``api_key`` / ``base_url`` arguments, else
``ANTHROPIC_API_KEY`` (or ``ANTHROPIC_AUTH_TOKEN``) / ``ANTHROPIC_BASE_URL``. The SDK's own
retries are off (``max_retries=0``): retries are ours.

Caching: with ``cache=False`` (the default, used for summary requests) every
``cache_control`` marker is removed from the body, top-level automatic caching included, so
the call writes nothing to the prefix cache. With ``cache=True`` a body we build from
``messages`` is marked as every agent request is (``render_anthropic(cache=True)``: at most
four breakpoints on stable boundaries, see :mod:`ctxengine.projection.render.anthropic`); a
prebuilt body is sent with its own markers.

Replies are read from the raw HTTP body (whole, or the event stream line by line), never
through the SDK's models, so that thinking signatures and ``compaction`` blocks are stored
exactly as sent. A request with ``native`` settings asks the API to compact at a threshold
and to clear tool uses and thinking as configured; :meth:`AnthropicProvider.compact` asks
for a compaction now (:mod:`ctxengine.providers.native`).
"""

from __future__ import annotations

import os
import time
from collections.abc import Callable, Mapping
from typing import Any

import orjson

from ctxengine.errors import ConfigError, ProviderRequestError
from ctxengine.policy.defaults import PROVIDER_TIMEOUT_S
from ctxengine.providers._call import CallControl, SDKProvider, sdk_kwargs
from ctxengine.providers._parse_anthropic import MessageStreamAccumulator, parse_message
from ctxengine.providers._render import render_messages
from ctxengine.providers._sse import json_events
from ctxengine.providers.base import Completion, CompletionRequest, RetrySettings
from ctxengine.providers.classify import PayloadError
from ctxengine.providers.native import anthropic_on_demand, anthropic_threshold, beta_header


def load_anthropic_sdk() -> Any:
    """Import the ``anthropic`` SDK, or raise :class:`~ctxengine.errors.ConfigError` naming the
    extra to install."""
    try:
        import anthropic
    except ImportError as exc:
        raise ConfigError(
            "the Anthropic provider needs the anthropic SDK: pip install 'ctxengine[anthropic]'"
        ) from exc
    return anthropic


class AnthropicProvider(SDKProvider):
    """Messages API through the official SDK.

    Args:
        model: default model id.
        api_key / base_url: override ``ANTHROPIC_API_KEY`` / ``ANTHROPIC_BASE_URL``.
        timeout: SDK timeout in seconds.
        retry / sleep / now: see :class:`~ctxengine.providers._call.SDKProvider`.
        client: a ready ``anthropic.Anthropic`` client (its retries should be 0).

    Raises:
        ConfigError: the SDK is missing, or no key or token is configured.
    """

    name = "anthropic"

    def __init__(
        self,
        model: str,
        *,
        api_key: str | None = None,
        base_url: str | None = None,
        timeout: float = PROVIDER_TIMEOUT_S,
        retry: RetrySettings | None = None,
        sleep: Callable[[float], None] | None = None,
        now: Callable[[], float] = time.time,
        client: Any = None,
    ) -> None:
        super().__init__(model, retry=retry, sleep=sleep, now=now)
        self.base_url = base_url or os.environ.get("ANTHROPIC_BASE_URL") or None
        if client is None:
            client = self._make_client(api_key, self.base_url, timeout)
        self._client = client

    @staticmethod
    def _make_client(api_key: str | None, base: str | None, timeout: float) -> Any:
        sdk = load_anthropic_sdk()
        key = api_key or os.environ.get("ANTHROPIC_API_KEY") or None
        token = os.environ.get("ANTHROPIC_AUTH_TOKEN") or None
        if key is None and token is None:
            raise ConfigError("no Anthropic API key: set ANTHROPIC_API_KEY or pass api_key")
        return sdk.Anthropic(
            api_key=key, auth_token=token, base_url=base, timeout=timeout, max_retries=0
        )

    def body(self, request: CompletionRequest, stream: bool) -> dict[str, Any]:
        """The Messages body this provider sends for ``request``."""
        if request.body is not None:
            body: dict[str, Any] = dict(request.body)
        else:
            body = render_messages(request, self.name)
            if isinstance(body.get("system"), str):
                body["system"] = [{"type": "text", "text": body["system"]}]
        body.setdefault("model", request.model or self.model)
        body.setdefault("max_tokens", request.max_output_tokens)
        if request.temperature is not None:
            body.setdefault("temperature", request.temperature)
        if not request.cache:
            body = strip_cache_control(body)
        if stream:
            body["stream"] = True
        else:
            body.pop("stream", None)
        return body

    def _attempt(self, request: CompletionRequest, control: CallControl) -> Completion:
        stream = request.stream or control.cancellable
        body = self.body(request, stream)
        betas: tuple[str, ...] = ()
        if request.native is not None:
            fields, betas = anthropic_threshold(request.native)
            body.update(fields)
        return self._send(body, betas, stream, control)

    def _compact_attempt(
        self, request: CompletionRequest, control: CallControl, instructions: str | None
    ) -> Completion:
        stream = request.stream or control.cancellable
        body, betas = anthropic_on_demand(self.body(request, stream), instructions)
        reply = self._send(body, betas, stream, control)
        if not reply.native:
            raise ProviderRequestError(
                "the compaction request returned no compaction block "
                f"(stop_reason {reply.raw_finish_reason!r})",
                status=None,
                kind="bad_request",
            )
        return reply

    def _send(
        self, body: dict[str, Any], betas: tuple[str, ...], stream: bool, control: CallControl
    ) -> Completion:
        """One Messages call of ``body`` with the ``betas`` headers, read raw."""
        kwargs = sdk_kwargs(self._client.messages.create, body)
        if betas:
            kwargs["extra_headers"] = {"anthropic-beta": beta_header(betas)}
        if not stream:
            raw = self._client.messages.with_raw_response.create(**kwargs)
            return parse_message(
                orjson.loads(raw.http_response.read()), raw.headers.get("request-id")
            )
        with self._client.messages.with_streaming_response.create(**kwargs) as response:
            control.register(response.close)
            try:
                request_id = response.headers.get("request-id")
                acc = MessageStreamAccumulator()
                for name, data in json_events(response.iter_lines()):
                    control.check()
                    if name == "error":
                        raise stream_error(data)
                    if isinstance(data, dict):
                        acc.add(data)
                control.check()
                return acc.result(request_id)
            finally:
                control.register(None)


#: HTTP status of each error type an Anthropic stream may report in an ``error`` event
#: (platform.claude.com api/errors), so that it is classified like the same error answered
#: before the stream began.
_ERROR_STATUS = {
    "invalid_request_error": 400,
    "authentication_error": 401,
    "permission_error": 403,
    "not_found_error": 404,
    "request_too_large": 413,
    "rate_limit_error": 429,
    "api_error": 500,
    "overloaded_error": 529,
}


def stream_error(data: Any) -> PayloadError:
    """The error of an ``error`` event of a Messages stream (``{"type": "error", "error":
    {"type", "message"}}``), with the HTTP status its type stands for."""
    error = data.get("error") if isinstance(data, dict) else None
    error = error if isinstance(error, dict) else {}
    kind = error.get("type")
    message = str(error.get("message") or f"the stream reported an error: {data!r}")
    status = _ERROR_STATUS.get(kind) if isinstance(kind, str) else None
    return PayloadError(message, code=kind if isinstance(kind, str) else None, status=status)


def strip_cache_control(value: Any) -> Any:
    """A deep copy of a JSON-like value with every ``cache_control`` key removed."""
    if isinstance(value, Mapping):
        return {k: strip_cache_control(v) for k, v in value.items() if k != "cache_control"}
    if isinstance(value, list | tuple):
        return [strip_cache_control(v) for v in value]
    return value
