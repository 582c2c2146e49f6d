"""What every model-backed summarizer shares: the record of its calls (:class:`SummaryCall`),
the :class:`ModelSummarizer` protocol the engine recognises, the cumulative ledgers, and
:class:`ModelCaller`, which sends one validated summary request (one nudge retry for missing
headings, an optional verification pass) and accounts every call.

Summary calls are accounted here, never in the session's history or its usage anchor.
"""

from __future__ import annotations

import threading
from dataclasses import dataclass
from typing import Literal, Protocol, TypeAlias, runtime_checkable

from ctxengine.errors import Cancelled, ProviderError, SummaryRejected
from ctxengine.model import Message, Usage, assistant, user
from ctxengine.providers.base import Completion, CompletionRequest, Provider
from ctxengine.summarizers import prompts, validate
from ctxengine.summarizers.anchor import cumulative_ledgers
from ctxengine.summarizers.base import Summary, SummaryRequest
from ctxengine.summarizers.fit import Piece
from ctxengine.summarizers.templates import SummaryTemplate
from ctxengine.tokens.base import Estimator

#: Per-message framing the estimator does not see in a plain prompt string (tokens).
FRAMING_TOKENS = 16

Purpose: TypeAlias = Literal["summary", "chunk", "nudge", "verify", "cache_reuse"]


@dataclass(frozen=True, slots=True)
class SummaryCall:
    """One model call made by a summarizer (for accounting and reports).

    Attributes:
        purpose: ``summary``, ``chunk`` (one part of a chunked history), ``nudge`` (retry
            for missing headings), ``verify`` or ``cache_reuse``.
        mode: transcript mode (``full`` …) or ``append`` in cache-reuse mode.
        input_tokens: our estimate of the request's input, in tokens.
        input_chars: characters of the prompt text we wrote (transcript and instructions).
        usage: what the provider reported (zero when the call failed).
        outcome: the finish reason of the reply, or the error class name.
    """

    purpose: Purpose
    mode: str
    input_tokens: int
    input_chars: int
    usage: Usage
    outcome: str


@runtime_checkable
class ModelSummarizer(Protocol):
    """A summarizer that calls a model: it can be cancelled and accounts its calls."""

    provider: Provider
    calls: list[SummaryCall]

    @property
    def name(self) -> str:
        """Recorded on the compaction entry."""
        ...

    def summarize(
        self,
        request: SummaryRequest,
        estimator: Estimator,
        *,
        cancel: threading.Event | None = None,
    ) -> Summary:
        """Summarize; setting ``cancel`` aborts the call in flight (raises ``Cancelled``)."""
        ...


def replaced_tokens(request: SummaryRequest, estimator: Estimator) -> int:
    """Tokens the summary replaces: the messages leaving the context plus the previous
    continuation state."""
    total = sum(estimator.message(m) for m in request.all_messages)
    if request.previous is not None:
        total += estimator.text(request.previous.summary)
    return total


def last_message_text(message: Message) -> str:
    """Text quoted to mark the last summarized message in cache-reuse mode: its text, else
    its tool results' text, else its tool calls' names."""
    if message.tool_results:
        return "\n".join(r.text for r in message.tool_results)
    if message.tool_calls:
        return ", ".join(c.name for c in message.tool_calls)
    return message.text


class ModelCaller:
    """Base of the model summarizers: sends summary requests and accounts them. Subclasses
    set the attributes below."""

    provider: Provider
    max_output_tokens: int
    window: int
    template: SummaryTemplate
    verify: bool
    margin_tokens: int | None
    temperature: float | None
    calls: list[SummaryCall]

    @property
    def name(self) -> str:
        """Recorded on the compaction entry."""
        raise NotImplementedError

    @property
    def usage(self) -> Usage:
        """Total provider-reported usage of every summary call so far."""
        total = Usage()
        for c in self.calls:
            u = c.usage
            total = Usage(
                total.input_tokens + u.input_tokens,
                total.output_tokens + u.output_tokens,
                total.cache_read_tokens + u.cache_read_tokens,
                total.cache_write_tokens + u.cache_write_tokens,
            )
        return total

    def _ask(
        self,
        prompt: str,
        piece: Piece,
        estimator: Estimator,
        purpose: Purpose,
        cancel: threading.Event | None,
        *,
        final: bool = True,
    ) -> str:
        """One validated summary for ``prompt``: a reply missing headings is retried once with
        a reminder; the verification pass runs when enabled (on the final piece only)."""
        base = estimator.text(prompts.SYSTEM_PROMPT) + estimator.text(prompt) + 2 * FRAMING_TOKENS
        completion = self._send((user(prompt),), base, len(prompt), purpose, piece.mode, cancel)
        headings = self.template.headings
        text = validate.check_reply(completion, headings)
        missing = validate.missing_headings(text, headings)
        if missing:
            nudged = f"{prompt}\n\n{prompts.nudge_prompt(missing)}"
            tokens = base + estimator.text(prompts.nudge_prompt(missing))
            completion = self._send(
                (user(nudged),), tokens, len(nudged), "nudge", piece.mode, cancel
            )
            text = validate.check_reply(completion, headings)
            validate.check_headings(text, headings)
        if self.verify and final:
            text = self._verified(prompt, text, base, estimator, piece, cancel)
        return text

    def _verified(
        self,
        prompt: str,
        draft: str,
        base: int,
        estimator: Estimator,
        piece: Piece,
        cancel: threading.Event | None,
    ) -> str:
        tokens = base + estimator.text(draft) + estimator.text(prompts.VERIFY) + 2 * FRAMING_TOKENS
        if tokens + self.max_output_tokens + (self.margin_tokens or 0) > self.window:
            return draft
        messages: tuple[Message, ...] = (user(prompt), assistant(draft), user(prompts.VERIFY))
        chars = len(prompt) + len(draft) + len(prompts.VERIFY)
        try:
            completion = self._send(messages, tokens, chars, "verify", piece.mode, cancel)
            text = validate.check_reply(completion, self.template.headings)
            validate.check_headings(text, self.template.headings)
        except Cancelled:
            raise
        except (SummaryRejected, ProviderError):
            return draft
        return text

    def _send(
        self,
        messages: tuple[Message, ...],
        tokens: int,
        chars: int,
        purpose: Purpose,
        mode: str,
        cancel: threading.Event | None,
    ) -> Completion:
        if tokens + self.max_output_tokens > self.window:  # never send more than the window
            raise SummaryRejected(
                "too_large", f"a {tokens}-token summary request does not fit {self.window}"
            )
        request = CompletionRequest(
            system=prompts.SYSTEM_PROMPT,
            messages=messages,
            max_output_tokens=self.max_output_tokens,
            temperature=self.temperature,
            cache=False,
        )
        return self._call(request, purpose, mode, tokens, chars, cancel)

    def _call(
        self,
        request: CompletionRequest,
        purpose: Purpose,
        mode: str,
        tokens: int,
        chars: int,
        cancel: threading.Event | None,
    ) -> Completion:
        try:
            completion = self.provider.complete(request, cancel=cancel)
        except ProviderError as exc:
            self.calls.append(
                SummaryCall(purpose, mode, tokens, chars, Usage(), type(exc).__name__)
            )
            raise
        self.calls.append(
            SummaryCall(purpose, mode, tokens, chars, completion.usage, completion.finish_reason)
        )
        return completion


__all__ = [
    "FRAMING_TOKENS",
    "ModelCaller",
    "ModelSummarizer",
    "Purpose",
    "SummaryCall",
    "cumulative_ledgers",
    "last_message_text",
    "replaced_tokens",
]
