"""What every SDK-backed provider shares: bounded retries (tenacity), cancellation, and the
``complete`` / ``acomplete`` / ``classify_error`` surface of the
:class:`~ctxengine.providers.base.Provider` protocol.

Subclasses implement one method, :meth:`SDKProvider._attempt`: a single HTTP call that
returns a :class:`~ctxengine.providers.base.Completion` or raises. Everything it raises is
mapped onto :mod:`ctxengine.errors` here; only rate limits and transient failures are retried.
Tool names the renderer replaced are mapped back on the parsed reply here too.
"""

from __future__ import annotations

import asyncio
import contextlib
import inspect
import threading
import time
from collections.abc import Callable, Mapping
from typing import TYPE_CHECKING, Any, TypeVar

from ctxengine.errors import Cancelled, ConfigError, ProviderError, TransientProviderError
from ctxengine.providers._render import reply_names
from ctxengine.providers.base import Completion, CompletionRequest, RetrySettings
from ctxengine.providers.classify import ErrorClass, classify_error, to_provider_error

if TYPE_CHECKING:
    from tenacity import RetryCallState

T = TypeVar("T")
#: One HTTP call of a provider: the request and the call's control to a reply.
Attempt = Callable[[CompletionRequest, "CallControl"], Completion]

#: How often the caller's thread looks at the cancel event while a call runs (seconds).
_POLL_S = 0.02
#: How long a cancelled call waits for its worker to finish closing the stream (seconds).
_CLOSE_GRACE_S = 0.25


class CallControl:
    """Cancellation state of one call, handed to each attempt.

    An attempt registers a closer for the stream it opens; :meth:`close` (from any thread)
    closes it, and :meth:`check` raises :class:`~ctxengine.errors.Cancelled` once the cancel
    event is set. Streaming code calls :meth:`check` between chunks.
    """

    def __init__(self, cancel: threading.Event | None) -> None:
        self._cancel = cancel
        self._lock = threading.Lock()
        self._closer: Callable[[], object] | None = None

    @property
    def cancelled(self) -> bool:
        """True once the caller asked to cancel."""
        return self._cancel is not None and self._cancel.is_set()

    @property
    def cancellable(self) -> bool:
        """True when the caller passed a cancel event (the reply is then streamed)."""
        return self._cancel is not None

    def check(self) -> None:
        """Raise :class:`~ctxengine.errors.Cancelled` if the call was cancelled."""
        if self.cancelled:
            raise Cancelled("the call was cancelled")

    def register(self, closer: Callable[[], object] | None) -> None:
        """Remember how to close the open stream (``None`` forgets it)."""
        with self._lock:
            self._closer = closer
        if closer is not None and self.cancelled:
            self.close()

    def close(self) -> None:
        """Close the registered stream, ignoring errors (it may be closed already)."""
        with self._lock:
            closer, self._closer = self._closer, None
        if closer is not None:
            with contextlib.suppress(Exception):  # it may be half-closed already
                closer()

    def sleep(self, seconds: float, sleep: Callable[[float], None] | None) -> None:
        """Wait between attempts: ``sleep(seconds)`` when injected, else on the cancel event
        (so a cancel interrupts the wait). Raises ``Cancelled`` if cancelled meanwhile."""
        if sleep is not None:
            sleep(seconds)
        elif self._cancel is not None:
            self._cancel.wait(seconds)
        else:
            time.sleep(seconds)
        self.check()


def _exception(state: RetryCallState) -> BaseException | None:
    return state.outcome.exception() if state.outcome is not None else None


def call_with_retries(
    attempt: Callable[[], T],
    settings: RetrySettings,
    control: CallControl,
    sleep: Callable[[float], None] | None = None,
) -> T:
    """Run ``attempt`` until it succeeds, raises a non-retryable error, or the attempts run out.

    Only :class:`~ctxengine.errors.TransientProviderError` (incl. ``RateLimited``) is retried.
    The wait is the provider's ``retry-after`` when it sent one, else
    :meth:`RetrySettings.backoff`. A ``retry-after`` above ``settings.max_retry_after_s``
    stops at once, and so does a retry whose wait would end past ``settings.max_elapsed_s``
    (seconds since the first attempt began). The final error has ``attempts`` set.
    """
    try:
        from tenacity import Retrying, retry_if_exception
    except ImportError as exc:  # the extras bring it; a bare install may lack it
        raise ConfigError(
            "provider retries need tenacity: pip install 'ctxengine[openai]'"
        ) from exc
    attempts = 0

    def counted() -> T:
        nonlocal attempts
        attempts += 1
        control.check()
        return attempt()

    def wait(state: RetryCallState) -> float:
        exc = _exception(state)
        after = getattr(exc, "retry_after", None)
        if isinstance(after, float | int):
            return float(after)
        return settings.backoff(state.attempt_number)

    def stop(state: RetryCallState) -> bool:
        if state.attempt_number >= settings.max_attempts:
            return True
        after = getattr(_exception(state), "retry_after", None)
        if isinstance(after, float | int) and after > settings.max_retry_after_s:
            return True
        budget = settings.max_elapsed_s
        elapsed = time.monotonic() - started
        return budget is not None and elapsed + wait(state) >= budget

    started = time.monotonic()
    retrying = Retrying(
        stop=stop,
        wait=wait,
        retry=retry_if_exception(lambda e: isinstance(e, TransientProviderError)),
        sleep=lambda s: control.sleep(s, sleep),
        reraise=True,
    )
    try:
        return retrying(counted)
    except TransientProviderError as exc:
        exc.attempts = attempts
        raise


def run_cancellable(fn: Callable[[CallControl], T], cancel: threading.Event | None) -> T:
    """Run ``fn`` so that setting ``cancel`` returns control to the caller promptly.

    Without ``cancel`` it runs in the caller's thread. With it, ``fn`` runs in a worker
    thread while the caller watches the event; on cancel the open stream is closed (which
    releases the connection), the worker gets ``_CLOSE_GRACE_S`` to unwind, and
    :class:`~ctxengine.errors.Cancelled` is raised.
    """
    control = CallControl(cancel)
    if cancel is None:
        return fn(control)
    control.check()
    box: dict[str, object] = {}
    done = threading.Event()

    def work() -> None:
        try:
            box["value"] = fn(control)
        except BaseException as exc:  # handed to the caller's thread
            box["error"] = exc
        finally:
            done.set()

    threading.Thread(target=work, name="ctxengine-provider-call", daemon=True).start()
    while not done.wait(_POLL_S):
        if cancel.is_set():
            control.close()
            done.wait(_CLOSE_GRACE_S)
            raise Cancelled("the call was cancelled; its stream was closed")
    error = box.get("error")
    if isinstance(error, BaseException):
        raise error
    return box["value"]  # type: ignore[return-value]


class SDKProvider:
    """Base of the SDK-backed providers: retries, cancellation and error mapping.

    Args:
        model: default model id.
        retry: retry settings.
        sleep: injectable sleep (seconds) used between attempts; tests record the waits.
        now: clock (seconds since the epoch) for ``retry-after`` HTTP dates.
    """

    name: str = "sdk"

    def __init__(
        self,
        model: str,
        *,
        retry: RetrySettings | None = None,
        sleep: Callable[[float], None] | None = None,
        now: Callable[[], float] = time.time,
    ) -> None:
        self.model = model
        self.retry = retry or RetrySettings()
        self._sleep = sleep
        self._now = now

    def _attempt(self, request: CompletionRequest, control: CallControl) -> Completion:
        raise NotImplementedError(f"{type(self).__name__} must implement _attempt")

    def _compact_attempt(
        self, request: CompletionRequest, control: CallControl, instructions: str | None
    ) -> Completion:
        raise NotImplementedError(f"{type(self).__name__} has no native compaction")

    def _mapped_attempt(
        self, attempt: Attempt, request: CompletionRequest, control: CallControl
    ) -> Completion:
        try:
            reply = attempt(request, control)
        except ProviderError:
            raise
        except Exception as exc:
            if control.cancelled:
                raise Cancelled("the call was cancelled; its stream was closed") from exc
            raise to_provider_error(exc, now=self._now) from exc
        return reply.with_tool_names(reply_names(request, self.name))

    def _run(
        self, attempt: Attempt, request: CompletionRequest, cancel: threading.Event | None
    ) -> Completion:
        """``attempt`` with bounded retries, cancellable, its errors mapped."""

        def whole(control: CallControl) -> Completion:
            return call_with_retries(
                lambda: self._mapped_attempt(attempt, request, control),
                self.retry,
                control,
                self._sleep,
            )

        return run_cancellable(whole, cancel)

    def complete(
        self, request: CompletionRequest, *, cancel: threading.Event | None = None
    ) -> Completion:
        """See :meth:`ctxengine.providers.base.Provider.complete`."""
        return self._run(self._attempt, request, cancel)

    def compact(
        self,
        request: CompletionRequest,
        *,
        instructions: str | None = None,
        cancel: threading.Event | None = None,
    ) -> Completion:
        """Ask the provider to compact ``request``'s conversation now (on demand, see
        :mod:`ctxengine.providers.native`), with the retries and cancellation of
        :meth:`complete`.

        Args:
            request: the conversation to compact (its messages, or a prebuilt body).
            instructions: replace the provider's summarization prompt (Anthropic).
            cancel: see :meth:`complete`.

        Returns:
            A :class:`~ctxengine.providers.base.Completion` whose ``native`` holds what the
            provider returned (Anthropic: the ``compaction`` block; OpenAI: the compacted
            window) and ``finish_reason`` is ``"compaction"``.

        Raises:
            ProviderError: as :meth:`complete`; ``ProviderRequestError`` when the provider
                returned no compaction item.
            NotImplementedError: a provider without native compaction (Chat Completions).
        """
        return self._run(lambda r, c: self._compact_attempt(r, c, instructions), request, cancel)

    async def acomplete(self, request: CompletionRequest) -> Completion:
        """See :meth:`ctxengine.providers.base.Provider.acomplete`."""
        cancel = threading.Event()
        try:
            return await asyncio.to_thread(self.complete, request, cancel=cancel)
        except asyncio.CancelledError:
            cancel.set()
            raise

    def classify_error(self, exc: BaseException) -> ErrorClass:
        """See :func:`ctxengine.providers.classify.classify_error`."""
        return classify_error(exc, now=self._now)


def sdk_kwargs(method: Callable[..., Any], body: Mapping[str, Any]) -> dict[str, Any]:
    """Split a request body into the keyword arguments ``method`` declares and an
    ``extra_body`` holding the rest, so fields newer than the installed SDK still go out."""
    params = inspect.signature(method).parameters
    known = {k: v for k, v in body.items() if k in params}
    extra = {k: v for k, v in body.items() if k not in params}
    if extra:
        known["extra_body"] = extra
    return known
