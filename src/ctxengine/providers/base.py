"""The provider seam: one request shape, one reply shape, one small protocol.

A :class:`Provider` completes a :class:`CompletionRequest` and returns a :class:`Completion`
(text, tool calls, a normalised finish reason, usage), raising only
:class:`~ctxengine.errors.ProviderError` subclasses. Implementations live in
:mod:`ctxengine.providers.openai` and :mod:`ctxengine.providers.anthropic` (optional extras).
"""

from __future__ import annotations

import dataclasses
import threading
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any, Literal, Protocol, TypeAlias, runtime_checkable

from ctxengine.errors import InvalidRequest
from ctxengine.model import (
    Message,
    NativeCompactionPart,
    Part,
    ReasoningPart,
    TextPart,
    ToolCallPart,
    Usage,
)
from ctxengine.policy.defaults import DEFAULT_MAX_OUTPUT_TOKENS as DEFAULT_MAX_OUTPUT_TOKENS
from ctxengine.policy.defaults import (
    PROVIDER_INITIAL_WAIT_S,
    PROVIDER_MAX_ATTEMPTS,
    PROVIDER_MAX_RETRY_AFTER_S,
    PROVIDER_MAX_WAIT_S,
)
from ctxengine.providers.classify import ErrorClass
from ctxengine.providers.native import NativeSettings, usage_dict

FinishReason: TypeAlias = Literal[
    "stop", "length", "tool_calls", "error", "content_filter", "compaction"
]


@dataclass(frozen=True, slots=True)
class RetrySettings:
    """How a provider retries rate limits and transient failures (tenacity underneath).

    Attributes:
        max_attempts: attempts per call including the first (1 disables retries).
        initial_wait_s: first backoff wait in seconds when no ``retry-after`` is given.
        max_wait_s: ceiling of the exponential backoff in seconds.
        max_retry_after_s: longest ``retry-after`` honoured; longer ones fail at once.
        max_elapsed_s: the whole call's time budget in seconds, attempts and waits
            included (``None``: no budget, only ``max_attempts``). No retry starts when its
            wait would end past the budget, so a call that timed out after the whole
            budget is not tried again.
    """

    max_attempts: int = PROVIDER_MAX_ATTEMPTS
    initial_wait_s: float = PROVIDER_INITIAL_WAIT_S
    max_wait_s: float = PROVIDER_MAX_WAIT_S
    max_retry_after_s: float = PROVIDER_MAX_RETRY_AFTER_S
    max_elapsed_s: float | None = None

    def backoff(self, attempt: int) -> float:
        """Seconds to wait after failed attempt number ``attempt`` (1-based) without a
        ``retry-after``: ``initial * 2 ** (attempt - 1)``, capped at ``max_wait_s``."""
        return float(min(self.max_wait_s, self.initial_wait_s * 2 ** (attempt - 1)))


def _no_tools() -> tuple[Mapping[str, Any], ...]:
    return ()


@dataclass(frozen=True, slots=True)
class CompletionRequest:
    """One model call.

    Either ``messages`` (our values; the provider renders them with the renderer of its name,
    :func:`ctxengine.projection.render.registry.renderer_for`, as every agent request is) or
    ``body`` (a request body already rendered for this provider's API, sent as it is apart
    from the fields below) must be given.

    Attributes:
        system: system prompt (ignored when ``body`` is given): the first system message (the
            ``instructions`` of a Responses request).
        messages: the conversation, oldest first.
        body: a prebuilt provider request body.
        model: model id; ``None`` uses the provider's default model.
        max_output_tokens: output budget in tokens (``max_tokens`` /
            ``max_completion_tokens`` / ``max_output_tokens``); set on ``body`` only when the
            body has none.
        temperature: sampling temperature, or ``None`` to leave the provider default.
        cache: ``False`` asks the provider not to write its prefix cache. Anthropic: every
            ``cache_control`` marker is removed from the body. OpenAI caches prefixes
            automatically and offers no switch, so nothing changes there.
        tools: tool schemas (``name``, ``description``, ``parameters`` JSON schema), declared
            with ``messages``; a prebuilt ``body`` holds its own. None by default: a summary
            request offers no tools.
        stream: consume the reply as a stream (always so when a cancel event is given).
        tool_names: ``{name as sent: the caller's name}`` for the tool names the renderer of a
            prebuilt ``body`` replaced
            (:func:`~ctxengine.projection.render.registry.original_tool_names`); the reply's
            tool calls are mapped back through it. With ``messages`` the provider works it
            out itself.
        native: ask the provider to compact on its own at a threshold and to clear tool
            uses and thinking (:class:`~ctxengine.providers.native.NativeSettings`; the
            Anthropic Messages and OpenAI Responses APIs); ``None``: nothing asked.
    """

    system: str = ""
    messages: tuple[Message, ...] = ()
    body: Mapping[str, Any] | None = None
    model: str | None = None
    max_output_tokens: int = DEFAULT_MAX_OUTPUT_TOKENS
    temperature: float | None = None
    cache: bool = False
    tools: tuple[Mapping[str, Any], ...] = field(default_factory=_no_tools)
    stream: bool = False
    tool_names: Mapping[str, str] = field(default_factory=dict)
    native: NativeSettings | None = None

    def __post_init__(self) -> None:
        problems: list[str] = []
        if self.body is None and not self.messages:
            problems.append("a request needs messages or a prebuilt body")
        if self.body is not None and self.messages:
            problems.append("give messages or a prebuilt body, not both")
        if self.body is not None and self.tools:
            problems.append("a prebuilt body declares its own tools: give tools with messages")
        if self.max_output_tokens <= 0:
            problems.append(f"max_output_tokens must be positive, got {self.max_output_tokens}")
        if problems:
            raise InvalidRequest("completion", problems)


@dataclass(frozen=True, slots=True)
class Completion:
    """A finished model reply.

    Attributes:
        text: the reply text (all text blocks joined).
        tool_calls: tool calls the model made (a summary reply must have none).
        finish_reason: ``stop`` (natural end), ``length`` (output limit), ``tool_calls``,
            ``content_filter`` (refusal / filtered), ``compaction`` (the reply holds only a
            native compaction: on demand, or paused after it) or ``error`` (failed, cut or
            unknown).
        usage: tokens; ``input_tokens`` excludes cache reads and writes.
        model: model id the provider reports.
        request_id: the provider's request id header, when sent.
        response_id: id of the reply object.
        raw_finish_reason: the provider's own finish/stop reason string.
        reasoning: reasoning parts returned with the reply (signed thinking kept byte-exact).
        native: the provider's native compaction items in the reply, exactly as returned
            (:mod:`ctxengine.providers.native`), in order: Anthropic's ``compaction`` block;
            OpenAI's ``compaction`` item (and, from ``/responses/compact``, the whole
            compacted window: the user messages it kept, then the item).
        native_usage: tokens the provider's compaction itself took (Anthropic
            ``usage.iterations``, OpenAI's ``/responses/compact`` usage), when it compacted;
            not part of :attr:`usage`, which describes the reply (the usage anchor).
    """

    text: str
    tool_calls: tuple[ToolCallPart, ...] = ()
    finish_reason: FinishReason = "stop"
    usage: Usage = field(default_factory=Usage)
    model: str | None = None
    request_id: str | None = None
    response_id: str | None = None
    raw_finish_reason: str | None = None
    reasoning: tuple[ReasoningPart, ...] = ()
    native: tuple[NativeCompactionPart, ...] = ()
    native_usage: Usage | None = None

    def to_message(self) -> Message:
        """The reply as an assistant :class:`~ctxengine.model.Message` (native compaction
        items first, then reasoning, text, tool calls; ``stop_reason``
        ``stop``/``tool_use``/``length``/``error``/``compaction``). A reply that compacted
        keeps the compaction's usage in ``meta["native_usage"]``; a reply holding only the
        compaction has no ``usage`` (the compaction request's measured the context it
        replaced, not the one that follows)."""
        parts: list[Part] = [*self.native, *self.reasoning]
        if self.text:
            parts.append(TextPart(self.text))
        parts.extend(self.tool_calls)
        stop = {"tool_calls": "tool_use", "content_filter": "stop"}.get(
            self.finish_reason, self.finish_reason
        )
        meta = {"native_usage": usage_dict(self.native_usage)} if self.native_usage else {}
        usage = None if self.finish_reason == "compaction" else self.usage
        return Message("assistant", tuple(parts), usage, self.model, stop, meta=meta)

    def with_tool_names(self, names: Mapping[str, str]) -> Completion:
        """This reply with each tool call's name mapped through ``names`` (``{name as sent:
        the caller's name}``; names not in it are kept); ``self`` when nothing changes."""
        if not any(c.name in names for c in self.tool_calls):
            return self
        calls = tuple(
            dataclasses.replace(c, name=names.get(c.name, c.name)) for c in self.tool_calls
        )
        return dataclasses.replace(self, tool_calls=calls)


@runtime_checkable
class Provider(Protocol):
    """A model provider.

    Attributes:
        name: ``"openai"`` (Chat Completions), ``"openai-responses"`` or ``"anthropic"``.
        model: default model id used when a request names none.
    """

    name: str
    model: str

    def complete(
        self, request: CompletionRequest, *, cancel: threading.Event | None = None
    ) -> Completion:
        """Run one call with bounded retries.

        Args:
            request: what to send.
            cancel: when given, the reply is streamed and the call stops as soon as the event
                is set: the stream is closed and :class:`~ctxengine.errors.Cancelled` raised.

        Raises:
            ProviderOverflow: the request is larger than the window (never retried).
            RateLimited / TransientProviderError: retries exhausted.
            ProviderAuthError, ProviderRequestError, Cancelled.
        """
        ...

    async def acomplete(self, request: CompletionRequest) -> Completion:
        """:meth:`complete` for asyncio; cancelling the awaiting task cancels the call."""
        ...

    def classify_error(self, exc: BaseException) -> ErrorClass:
        """Classify a failure of this provider (see :mod:`ctxengine.providers.classify`)."""
        ...


@runtime_checkable
class NativeProvider(Provider, Protocol):
    """A :class:`Provider` that can compact a conversation itself, on demand
    (:mod:`ctxengine.providers.native`): the Anthropic Messages and OpenAI Responses
    providers."""

    def compact(
        self,
        request: CompletionRequest,
        *,
        instructions: str | None = None,
        cancel: threading.Event | None = None,
    ) -> Completion:
        """Compact ``request``'s conversation now; the reply's ``native`` holds the items the
        provider returned, exactly as returned.

        Raises:
            ProviderError: the call failed, or returned no compaction item.
        """
        ...
