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
"""

from __future__ import annotations

import os
import time
from collections.abc import Callable, Mapping
from typing import Any

from ctxengine.errors import ConfigError
from ctxengine.policy.defaults import PROVIDER_TIMEOUT_S
from ctxengine.providers._call import CallControl, SDKProvider, sdk_kwargs
from ctxengine.providers._parse_anthropic import MessageStreamAccumulator, parse_message
from ctxengine.providers._render import render_messages
from ctxengine.providers.base import Completion, CompletionRequest, RetrySettings


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
        create = self._client.messages.create
        result = create(**sdk_kwargs(create, self.body(request, stream)))
        if not stream:
            return parse_message(result.model_dump(), getattr(result, "_request_id", None))
        control.register(result.close)
        try:
            request_id = result.response.headers.get("request-id")
            acc = MessageStreamAccumulator()
            for event in result:
                control.check()
                acc.add(event.model_dump())
            control.check()
            return acc.result(request_id)
        finally:
            control.register(None)
            result.close()


def strip_cache_control(value: Any) -> Any:
    """A deep copy of a JSON-like value with every ``cache_control`` key removed."""
    if isinstance(value, Mapping):
        return {k: strip_cache_control(v) for k, v in value.items() if k != "cache_control"}
    if isinstance(value, list | tuple):
        return [strip_cache_control(v) for v in value]
    return value
