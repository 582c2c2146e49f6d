"""OpenAI provider on the official ``openai`` SDK (extra ``ctxengine[openai]``).

Two APIs: Chat Completions (``api="chat"``, the one every OpenAI-compatible server speaks:
vLLM, Ollama, llama.cpp server, OpenRouter, DeepSeek, Groq …) and Responses
(``api="responses"``, stateless: ``store`` is false unless the body says otherwise).

Configuration follows the SDK: ``api_key`` / ``base_url`` arguments, else the
``OPENAI_API_KEY`` / ``OPENAI_BASE_URL`` variables. A custom base URL needs no key (local
servers); a placeholder is sent. The SDK's own retries are off (``max_retries=0``): retries
are ours (:mod:`ctxengine.providers._call`).

Responses replies are read from the raw HTTP body (whole, or the event stream line by
line), so that ``compaction`` items are stored exactly as returned. A Responses request with
``native`` settings carries ``context_management`` (compaction at a threshold);
:meth:`OpenAIProvider.compact` calls ``/responses/compact``
(:mod:`ctxengine.providers.native`).
"""

from __future__ import annotations

import os
import threading
import time
from collections.abc import Callable, Iterable, Mapping
from typing import Any, Literal

import orjson

from ctxengine.errors import ConfigError
from ctxengine.policy.defaults import PROVIDER_TIMEOUT_S
from ctxengine.providers import _parse_openai as parse
from ctxengine.providers._call import CallControl, SDKProvider, sdk_kwargs
from ctxengine.providers._render import render_messages
from ctxengine.providers._sse import json_events
from ctxengine.providers.base import Completion, CompletionRequest, RetrySettings
from ctxengine.providers.native import openai_threshold

#: Key sent to servers that need none (a custom ``base_url`` and no key configured).
PLACEHOLDER_API_KEY = "not-needed"
_TERMINAL_EVENTS = ("response.completed", "response.incomplete", "response.failed")


def load_openai_sdk() -> Any:
    """Import the ``openai`` SDK, or raise :class:`~ctxengine.errors.ConfigError` naming the
    extra to install."""
    try:
        import openai
    except ImportError as exc:
        raise ConfigError(
            "the OpenAI provider needs the openai SDK: pip install 'ctxengine[openai]'"
        ) from exc
    return openai


class OpenAIProvider(SDKProvider):
    """Chat Completions or Responses through the official SDK.

    Args:
        model: default model id.
        api: ``"chat"`` (Chat Completions) or ``"responses"``.
        api_key / base_url: override ``OPENAI_API_KEY`` / ``OPENAI_BASE_URL``.
        timeout: SDK timeout in seconds (connect, and each read while streaming).
        max_tokens_param: Chat Completions field for the output budget. Default
            ``max_completion_tokens`` on api.openai.com (reasoning models reject
            ``max_tokens``) and ``max_tokens`` elsewhere (what compatible servers accept).
        retry / sleep / now: see :class:`~ctxengine.providers._call.SDKProvider`.
        client: a ready ``openai.OpenAI`` client (its retries should be 0).

    Raises:
        ConfigError: the SDK is missing, or no API key is configured for api.openai.com.
    """

    def __init__(
        self,
        model: str,
        *,
        api: Literal["chat", "responses"] = "chat",
        api_key: str | None = None,
        base_url: str | None = None,
        timeout: float = PROVIDER_TIMEOUT_S,
        max_tokens_param: Literal["max_tokens", "max_completion_tokens"] | None = None,
        retry: RetrySettings | None = None,
        sleep: Callable[[float], None] | None = None,
        now: Callable[[], float] = time.time,
        client: Any = None,
    ) -> None:
        super().__init__(model, retry=retry, sleep=sleep, now=now)
        self.api = api
        self.name = "openai" if api == "chat" else "openai-responses"
        base = base_url or os.environ.get("OPENAI_BASE_URL") or None
        official = base is None or "api.openai.com" in base
        self.max_tokens_param = max_tokens_param or (
            "max_completion_tokens" if official else "max_tokens"
        )
        self.base_url = base
        self._client = client if client is not None else self._make_client(api_key, base, timeout)

    @staticmethod
    def _make_client(api_key: str | None, base: str | None, timeout: float) -> Any:
        sdk = load_openai_sdk()
        key = api_key or os.environ.get("OPENAI_API_KEY") or None
        if key is None and base is not None:
            key = PLACEHOLDER_API_KEY
        if key is None:
            raise ConfigError("no OpenAI API key: set OPENAI_API_KEY or pass api_key")
        return sdk.OpenAI(api_key=key, base_url=base, timeout=timeout, max_retries=0)

    def _common(self, request: CompletionRequest, body: dict[str, Any], stream: bool) -> None:
        body.setdefault("model", request.model or self.model)
        if request.temperature is not None:
            body.setdefault("temperature", request.temperature)
        if stream:
            body["stream"] = True
        else:
            body.pop("stream", None)
            body.pop("stream_options", None)

    def chat_body(self, request: CompletionRequest, stream: bool) -> dict[str, Any]:
        """The Chat Completions body this provider sends for ``request``."""
        if request.body is not None:
            body = dict(request.body)
        else:
            body = render_messages(request, self.name)
        if "max_tokens" not in body and "max_completion_tokens" not in body:
            body[self.max_tokens_param] = request.max_output_tokens
        self._common(request, body, stream)
        if stream:
            body.setdefault("stream_options", {"include_usage": True})
        return body

    def responses_body(self, request: CompletionRequest, stream: bool) -> dict[str, Any]:
        """The Responses body this provider sends for ``request``."""
        if request.body is not None:
            body = dict(request.body)
        else:
            body = render_messages(request, self.name, system_message=False)
            if request.system:
                body["instructions"] = request.system
        body.setdefault("max_output_tokens", request.max_output_tokens)
        self._common(request, body, stream)
        return body

    def _attempt(self, request: CompletionRequest, control: CallControl) -> Completion:
        stream = request.stream or control.cancellable
        if self.api == "responses":
            body = self.responses_body(request, stream)
            if request.native is not None:
                body.update(openai_threshold(request.native))
            return self._responses(body, stream, control)
        create = self._client.chat.completions.create
        result = create(**sdk_kwargs(create, self.chat_body(request, stream)))
        if not stream:
            data, request_id = result.model_dump(), getattr(result, "_request_id", None)
            return parse.parse_chat_completion(data, request_id)
        control.register(result.close)
        try:
            request_id = result.response.headers.get("x-request-id")
            return _consume_chat(result, control, request_id)
        finally:
            control.register(None)
            result.close()

    def _responses(self, body: dict[str, Any], stream: bool, control: CallControl) -> Completion:
        """One Responses call of ``body``, read raw."""
        responses = self._client.responses
        kwargs = sdk_kwargs(responses.create, body)
        if not stream:
            raw = responses.with_raw_response.create(**kwargs)
            return parse.parse_response(
                orjson.loads(raw.http_response.read()), raw.headers.get("x-request-id")
            )
        with responses.with_streaming_response.create(**kwargs) as response:
            control.register(response.close)
            try:
                request_id = response.headers.get("x-request-id")
                return _consume_responses(response.iter_lines(), control, request_id)
            finally:
                control.register(None)

    def compact(
        self,
        request: CompletionRequest,
        *,
        instructions: str | None = None,
        cancel: threading.Event | None = None,
    ) -> Completion:
        """``POST /responses/compact`` of the request's input (see
        :meth:`~ctxengine.providers._call.SDKProvider.compact`). The prompt replacement
        ``instructions`` is Anthropic's and is not sent: this endpoint's ``instructions`` is
        the system prompt, which the request carries.

        Raises:
            NotImplementedError: a Chat Completions provider (no native compaction).
        """
        if self.api != "responses":
            raise NotImplementedError("native compaction needs the Responses API (api='responses')")
        return super().compact(request, instructions=instructions, cancel=cancel)

    def _compact_attempt(
        self, request: CompletionRequest, control: CallControl, instructions: str | None
    ) -> Completion:
        del instructions
        body = self.responses_body(request, False)
        compact = self._client.responses.compact
        known = {"model", "input", "instructions", "previous_response_id", "prompt_cache_key"}
        kwargs = sdk_kwargs(compact, {k: v for k, v in body.items() if k in known})
        raw = self._client.responses.with_raw_response.compact(**kwargs)
        return parse.parse_compacted(
            orjson.loads(raw.http_response.read()), raw.headers.get("x-request-id")
        )


def _consume_chat(stream: Any, control: CallControl, request_id: str | None) -> Completion:
    acc = parse.ChatStreamAccumulator()
    for chunk in stream:
        control.check()
        acc.add(chunk.model_dump())
    control.check()
    return acc.result(request_id)


def _consume_responses(
    lines: Iterable[str], control: CallControl, request_id: str | None
) -> Completion:
    """Read the Responses events of ``lines`` until a terminal one, which carries the whole
    response."""
    texts: list[str] = []
    for _name, data in json_events(lines):
        control.check()
        if not isinstance(data, Mapping):
            continue
        kind = data.get("type")
        if kind == "response.output_text.delta":
            texts.append(str(data.get("delta") or ""))
        elif kind in _TERMINAL_EVENTS:
            return parse.parse_response(data.get("response") or {}, request_id)
        elif kind == "error":
            parse.raise_if_failed({"status": "failed", "error": data})
    control.check()
    return Completion(text="".join(texts), finish_reason="error", request_id=request_id)
