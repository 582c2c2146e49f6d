"""The model-call path of a session: render the context for the provider's API, send it,
and tell an overflow (an error matching the provider pattern table, 413, more input reported
than the window holds, or a length stop with no output on a full window) from a reply.

The session drives these functions: it prepares the context, compacts on an overflow and
records the reply.
"""

from __future__ import annotations

import re
import threading
from collections.abc import Callable

from ctxengine.errors import ContextOverflow, ProviderOverflow, ProviderRequestError
from ctxengine.model import Usage
from ctxengine.policy.defaults import SYSTEM_ROLE_REFUSED_PATTERN
from ctxengine.projection.context import Context
from ctxengine.projection.render.registry import original_tool_names, renderer_for
from ctxengine.providers import classify_error, to_provider_error
from ctxengine.providers.base import Completion, CompletionRequest, Provider
from ctxengine.providers.native import NativeSettings
from ctxengine.providers.overflow import is_length_stop_on_full_window, is_silent_overflow
from ctxengine.summarizers.base import LiveRequest

#: A reply, a usage, or the error a model call raised.
Signal = Completion | Usage | BaseException


def overflow_of(outcome: Signal, window: int) -> ContextOverflow | None:
    """The overflow a model call signals, else ``None``: a failed call classified as
    overflow, a reply (or its usage) reporting more input than ``window`` tokens (silent
    overflow), or a reply stopped by the output limit with no output on a full window."""
    if isinstance(outcome, Usage):
        outcome = Completion("", usage=outcome)
    if isinstance(outcome, BaseException):
        if isinstance(outcome, ContextOverflow):
            return outcome
        if classify_error(outcome).kind != "overflow":
            return None
        error = to_provider_error(outcome)
        return error if isinstance(error, ContextOverflow) else None
    usage = outcome.usage
    if is_silent_overflow(usage, window):
        detail = "silent overflow: the reply reports more input than the window holds"
        return ContextOverflow(usage.prompt_tokens, window, detail)
    stop, out, prompt = outcome.finish_reason, usage.output_tokens, usage.prompt_tokens
    if is_length_stop_on_full_window(stop, out, prompt, window):
        detail = "the reply hit the output limit with no output on a full window"
        return ContextOverflow(prompt, window, detail)
    return None


def final_overflow(
    overflow: ContextOverflow, tokens: int, window: int, why: str
) -> ContextOverflow:
    """The overflow to raise when recovery is over: the provider's numbers when it gave
    them, else ``tokens`` (our estimate) and ``window``; ``why`` leads the message."""
    used = overflow.tokens or tokens
    limit = overflow.limit or window
    source = "the provider said" if isinstance(overflow, ProviderOverflow) else "detected"
    return ContextOverflow(used, limit, f"{why}; {source}: {overflow}")


def build_request(
    ctx: Context,
    provider: Provider,
    max_output: int,
    temperature: float | None,
    *,
    system_messages: bool = False,
    native: NativeSettings | None = None,
) -> tuple[CompletionRequest, LiveRequest]:
    """The request for ``ctx``: the body rendered for ``provider.name`` by the one renderer
    registry (with prompt-cache breakpoints; with ``system_messages``, the state as
    mid-conversation system messages where the API takes them), the tool names it renamed
    (mapped back in the reply), and the :class:`LiveRequest` a model summarizer can extend.
    ``max_output`` is in tokens; ``native``: what the provider is asked to compact or clear
    on its own (:class:`~ctxengine.providers.native.NativeSettings`).

    Raises:
        ConfigError: no renderer for the provider's name.
    """
    body = renderer_for(provider.name)(ctx, cache=True, system_messages=system_messages)
    request = CompletionRequest(
        body=body,
        max_output_tokens=max_output,
        temperature=temperature,
        cache=True,
        tool_names=original_tool_names(ctx, provider.name),
        native=native,
    )
    return request, LiveRequest(provider.name, body, ctx.tokens)


def refuses_system_messages(error: BaseException, request: CompletionRequest) -> bool:
    """True when ``error`` is the provider refusing the ``role: "system"`` messages that
    ``request`` carries inside its ``messages`` (its text matches
    :data:`~ctxengine.policy.defaults.SYSTEM_ROLE_REFUSED_PATTERN`); a request without such
    a message, or another error, gives ``False``."""
    messages = request.body.get("messages") if isinstance(request.body, dict) else None
    if not isinstance(messages, list):
        return False
    carries = any(isinstance(m, dict) and m.get("role") == "system" for m in messages)
    return carries and re.search(SYSTEM_ROLE_REFUSED_PATTERN, str(error), re.IGNORECASE) is not None


def send(
    provider: Provider,
    request: CompletionRequest,
    window: int,
    cancel: threading.Event | None,
) -> Completion | ContextOverflow:
    """Send ``request``; the reply, or the overflow it (or the provider's error) signals.

    Raises:
        ProviderError: any other provider failure, after its retries.
        Cancelled: ``cancel`` was set.
    """
    try:
        reply = provider.complete(request, cancel=cancel)
    except ContextOverflow as exc:
        return exc
    found = overflow_of(reply, window)
    return reply if found is None else found


def estimated_overflow(tokens: int, window: int, max_output: int) -> ContextOverflow | None:
    """The overflow of a request we estimate at ``tokens`` of input plus ``max_output`` of
    output, when that exceeds ``window`` (all tokens); else ``None``. Such a request is never
    sent."""
    if tokens + max_output <= window:
        return None
    detail = (
        f"estimated before sending: {tokens} tokens of context plus an output budget of "
        f"{max_output}; not sent"
    )
    return ContextOverflow(tokens + max_output, window, detail)


def call_until_fit(
    provider: Provider,
    *,
    prepare: Callable[[], Context],
    measure: Callable[[Context], int],
    recover: Callable[[ContextOverflow], object],
    window: Callable[[], int],
    max_output: int,
    temperature: float | None,
    cancel: threading.Event | None,
    system_messages: bool = False,
    on_system_refused: Callable[[], None] | None = None,
    native: NativeSettings | None = None,
) -> tuple[Completion, Context, LiveRequest | None]:
    """Prepare, send, and on an overflow ``recover`` (which compacts, or raises when the
    recovery is spent) and send again. A context that ``measure`` puts over the window
    beside ``max_output`` is not sent: it is an overflow like a provider's. ``window`` gives
    the window in tokens before each try (a recovery may learn a smaller limit);
    ``system_messages``: see :func:`build_request`. A request with mid-conversation system
    messages that the provider refuses (:func:`refuses_system_messages`: Anthropic models
    before Opus 4.8 answer "role 'system' is not supported on this model") is sent once
    more with the state as user turns, and every later try of this call too;
    ``on_system_refused`` is told, so that the caller stops asking. ``native``: see
    :func:`build_request`.

    Returns:
        The reply, the context it answered and the live request sent (``None`` for a
        provider that maps messages itself).

    Raises:
        Whatever ``prepare``, ``recover`` and :func:`send` raise.
    """
    while True:
        ctx = prepare()
        outcome: Completion | ContextOverflow | None
        outcome = estimated_overflow(measure(ctx), window(), max_output)
        live: LiveRequest | None = None
        if outcome is None:
            request, live = build_request(
                ctx,
                provider,
                max_output,
                temperature,
                system_messages=system_messages,
                native=native,
            )
            try:
                outcome = send(provider, request, window(), cancel)
            except ProviderRequestError as exc:
                if not (system_messages and refuses_system_messages(exc, request)):
                    raise
                system_messages = False
                if on_system_refused is not None:
                    on_system_refused()
                request, live = build_request(ctx, provider, max_output, temperature, native=native)
                outcome = send(provider, request, window(), cancel)
        if isinstance(outcome, Completion):
            return outcome, ctx, live
        recover(outcome)
