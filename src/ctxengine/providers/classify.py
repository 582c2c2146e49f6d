"""Classifying a failed provider call, and mapping it onto :mod:`ctxengine.errors`.

Works on any exception by duck typing (``status_code``, ``body``, ``message``,
``response.headers``), so it handles the ``openai`` and ``anthropic`` SDK errors without
importing either SDK, and our own :class:`~ctxengine.errors.ProviderError` subclasses.

========================  ==========================================  ======================
kind                      when                                        raised as
========================  ==========================================  ======================
``overflow``              an overflow wording (any status but 429),   ``ProviderOverflow``
                          413, or a bodiless 400
``rate_limited``          429                                         ``RateLimited``
``transient``             408, 409, 5xx (529 overloaded), timeouts,   ``TransientProviderError``
                          connection errors
``auth``                  401, 403                                    ``ProviderAuthError``
``bad_request``           other 4xx                                   ``ProviderRequestError``
``cancelled``             :class:`~ctxengine.errors.Cancelled`        ``Cancelled``
``other``                 anything else                               ``ProviderRequestError``
========================  ==========================================  ======================
"""

from __future__ import annotations

import json
import time
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from email.utils import parsedate_to_datetime
from typing import Any, Literal, TypeAlias

from ctxengine.errors import (
    Cancelled,
    ContextOverflow,
    ProviderAuthError,
    ProviderError,
    ProviderOverflow,
    ProviderRequestError,
    RateLimited,
    TransientProviderError,
)
from ctxengine.providers.overflow import is_overflow_status, match_overflow

ErrorKind: TypeAlias = Literal[
    "overflow", "rate_limited", "transient", "auth", "bad_request", "cancelled", "other"
]

_TRANSIENT_STATUSES = frozenset({408, 409, 425})
_TRANSIENT_CLASS_NAMES = frozenset(
    {
        "APITimeoutError",
        "APIConnectionError",
        "TimeoutException",
        "ConnectError",
        "ReadError",
        "RemoteProtocolError",
        "ReadTimeout",
        "ConnectTimeout",
    }
)


@dataclass(frozen=True, slots=True)
class ErrorClass:
    """What kind of failure a provider call had.

    Attributes:
        kind: see the module table.
        status: HTTP status, or ``None`` when there was no response.
        message: the provider's error text (from the JSON body when there is one).
        retry_after: seconds the provider asked us to wait (``retry-after-ms``,
            ``retry-after`` in seconds or as an HTTP date), else ``None``.
        tokens / limit: overflow numbers when the message states them.
        source: for overflow, which provider wording matched (or ``"HTTP 413"`` …).
    """

    kind: ErrorKind
    status: int | None = None
    message: str = ""
    retry_after: float | None = None
    tokens: int | None = None
    limit: int | None = None
    source: str | None = None

    @property
    def retryable(self) -> bool:
        """True for rate limits and transient failures."""
        return self.kind in ("rate_limited", "transient")


def parse_retry_after(
    headers: Mapping[str, str] | None, *, now: Callable[[], float] = time.time
) -> float | None:
    """Seconds to wait from ``retry-after-ms`` (OpenAI) or ``retry-after`` (seconds, or an
    HTTP date compared with ``now()``). ``None`` when absent or unparsable; never negative."""
    if not headers:
        return None
    lowered = {k.lower(): v for k, v in headers.items()}
    raw_ms = lowered.get("retry-after-ms")
    if raw_ms is not None:
        try:
            return max(0.0, float(raw_ms) / 1000.0)
        except ValueError:
            pass
    raw = lowered.get("retry-after")
    if raw is None:
        return None
    try:
        return max(0.0, float(raw))
    except ValueError:
        pass
    try:
        when = parsedate_to_datetime(raw)
    except (TypeError, ValueError, IndexError):
        return None
    return max(0.0, when.timestamp() - now())


def _body_message(body: object) -> tuple[str, Mapping[str, Any]]:
    """The error text of a provider body and the error object (OpenAI/Anthropic/Gemini
    ``{"error": {...}}``, llama.cpp ``{"error": {"n_ctx": …}}``, Ollama ``{"error": "…"}``)."""
    if isinstance(body, Mapping):
        err = body.get("error", body)
        if isinstance(err, Mapping):
            msg = err.get("message")
            text = msg if isinstance(msg, str) else json.dumps(dict(err), default=str)
            return text, err
        if isinstance(err, str):
            return err, body
        return json.dumps(dict(body), default=str), body
    if isinstance(body, str):
        return body, {}
    return "", {}


def _headers_of(exc: BaseException) -> Mapping[str, str] | None:
    response = getattr(exc, "response", None)
    headers = getattr(response, "headers", None)
    if headers is None:
        return None
    try:
        return {str(k): str(v) for k, v in headers.items()}
    except AttributeError:
        return None


def _is_connection_failure(exc: BaseException) -> bool:
    if isinstance(exc, TimeoutError | ConnectionError):
        return True
    return any(cls.__name__ in _TRANSIENT_CLASS_NAMES for cls in type(exc).__mro__)


def _from_ours(exc: ProviderError) -> ErrorClass:
    if isinstance(exc, ProviderOverflow):
        tokens = exc.tokens if exc.reported else None
        limit = exc.limit if exc.reported else None
        return ErrorClass("overflow", exc.status, exc.provider_message, None, tokens, limit)
    if isinstance(exc, ContextOverflow):
        return ErrorClass("overflow", None, str(exc), None, exc.tokens, exc.limit)
    if isinstance(exc, RateLimited):
        return ErrorClass("rate_limited", 429, exc.detail, exc.retry_after)
    if isinstance(exc, TransientProviderError):
        return ErrorClass("transient", exc.status, exc.detail, exc.retry_after)
    if isinstance(exc, ProviderAuthError):
        return ErrorClass("auth", exc.status, str(exc))
    if isinstance(exc, Cancelled):
        return ErrorClass("cancelled", None, str(exc))
    if isinstance(exc, ProviderRequestError):
        kind: ErrorKind = "bad_request" if exc.kind == "bad_request" else "other"
        return ErrorClass(kind, exc.status, str(exc))
    return ErrorClass("other", None, str(exc))


def classify_error(exc: BaseException, *, now: Callable[[], float] = time.time) -> ErrorClass:
    """Classify a failed provider call (see the module table). Never raises.

    Args:
        exc: an SDK exception, one of ours, or any other exception.
        now: clock for ``retry-after`` HTTP dates (seconds since the epoch).
    """
    if isinstance(exc, ProviderError):
        return _from_ours(exc)
    status = getattr(exc, "status_code", None)
    status = status if isinstance(status, int) else None
    body = getattr(exc, "body", None)
    body_text, err = _body_message(body)
    text = body_text or str(getattr(exc, "message", "") or "")
    full = f"{text} {err.get('code', '')} {err.get('type', '')}".strip()
    if status is None and _is_connection_failure(exc):
        return ErrorClass("transient", None, text or type(exc).__name__)
    if status != 429:
        found = match_overflow(full)
        if found is not None:
            tokens, limit = found.tokens, found.limit
            if isinstance(err.get("n_prompt_tokens"), int) and isinstance(err.get("n_ctx"), int):
                tokens, limit = err["n_prompt_tokens"], err["n_ctx"]
            return ErrorClass("overflow", status, text, None, tokens, limit, found.source)
        if is_overflow_status(status, body_text):
            return ErrorClass("overflow", status, text, source=f"HTTP {status}")
    if status == 429:
        return ErrorClass("rate_limited", 429, text, parse_retry_after(_headers_of(exc), now=now))
    if status is not None and (status >= 500 or status in _TRANSIENT_STATUSES):
        return ErrorClass("transient", status, text, parse_retry_after(_headers_of(exc), now=now))
    if status in (401, 403):
        return ErrorClass("auth", status, text)
    if status is not None and 400 <= status < 500:
        return ErrorClass("bad_request", status, text)
    return ErrorClass("other", status, text or f"{type(exc).__name__}: {exc}")


def to_provider_error(exc: BaseException, *, now: Callable[[], float] = time.time) -> ProviderError:
    """The :mod:`ctxengine.errors` exception for a failed call (ours are returned as they are).

    The caller raises it ``from exc`` so the SDK error stays attached as the cause.
    """
    if isinstance(exc, ProviderError):
        return exc
    c = classify_error(exc, now=now)
    if c.kind == "overflow":
        return ProviderOverflow(c.tokens, c.limit, status=c.status, provider_message=c.message)
    if c.kind == "rate_limited":
        return RateLimited(c.message, retry_after=c.retry_after)
    if c.kind == "transient":
        return TransientProviderError(c.message, status=c.status, retry_after=c.retry_after)
    if c.kind == "auth":
        return ProviderAuthError(c.message, status=c.status)
    return ProviderRequestError(c.message, status=c.status, kind=c.kind)


class PayloadError(Exception):
    """An error a provider reported inside a reply (a failed Responses object, an error event
    in a stream), shaped like an SDK error so :func:`classify_error` reads it the same way.

    Attributes:
        status_code: the HTTP status to classify it as (``None`` when unknown).
        body: ``{"error": {"message": …, "code": …}}``.
    """

    def __init__(self, message: str, *, code: str | None = None, status: int | None = None):
        self.status_code = status
        self.body = {"error": {"message": message, "code": code}}
        super().__init__(message)
