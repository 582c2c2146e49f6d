"""``Session``: the one orchestrator. Append history, ``prepare()`` the context before each
model call (checking the trigger and running the ladder), ``record()`` replies, ``compact()``;
or let ``complete()`` make the whole model call, with one overflow recovery.

The class is built in layers, one responsibility each: :class:`~.log.SessionLog` (history,
store, projection), :class:`~.ladder.LadderLog` (the ladder: prune, compaction, summarizer
breaker) and :class:`Session` here (the model-call path; its pieces are in :mod:`.calls`).
"""

from __future__ import annotations

import threading
from collections.abc import Iterable, Mapping, Sequence
from typing import Any

from ctxengine.errors import (
    Cancelled,
    ContextOverflow,
    NothingToCompact,
    ProviderError,
    SummaryRejected,
)
from ctxengine.ladder.recover import OverflowLatch
from ctxengine.model import Entry, Message, Usage
from ctxengine.policy import DEFAULT_POLICY, Policy
from ctxengine.providers.base import Completion, Provider
from ctxengine.stores.base import Store
from ctxengine.summarizers.base import Summarizer
from ctxengine.tokens.base import Estimator

from . import calls
from .events import CompactionOutcome
from .ladder import LadderLog
from .recovery import check_output_room, recovery_budget, recovery_target
from .view import epoch_key, fixed_tokens


class Session(LadderLog):
    """A live session log with a compaction ladder.

    Args:
        window: the model's context window in tokens.
        policy: ladder configuration (:class:`~ctxengine.policy.Policy`).
        estimator: token estimator (default :class:`HeuristicEstimator`).
        summarizer: continuation-state writer (default extractive). A model summarizer
            (:class:`~ctxengine.summarizers.llm.ModelSummarizer`: ``llm``, ``hybrid``) runs
            behind a circuit breaker: after ``policy.max_consecutive_failures`` failures in a
            row the extractive summarizer is used until a manual :meth:`compact` or a
            successful model summary.
        store: persist every entry here (``None`` keeps the log in memory only).
        session_id: the session to open or create in ``store``.
        entries: an existing log to start from (e.g. an imported transcript).
        tools: tool schemas sent with every request (counted in the context size).

    Raises:
        ConfigError: the policy's reserve leaves no room in ``window``.
    """

    def __init__(
        self,
        window: int,
        *,
        policy: Policy = DEFAULT_POLICY,
        estimator: Estimator | None = None,
        summarizer: Summarizer | None = None,
        store: Store | None = None,
        session_id: str = "session",
        entries: Iterable[Entry] = (),
        tools: Sequence[Mapping[str, Any]] = (),
    ) -> None:
        super().__init__(
            window,
            policy=policy,
            estimator=estimator,
            summarizer=summarizer,
            store=store,
            session_id=session_id,
            tools=tools,
        )
        self._overflow = OverflowLatch()
        self._open(entries)

    def record(self, reply: Message) -> Entry:
        """Record an assistant reply (with its provider usage, when known).

        Raises:
            ValueError: ``reply`` is not an assistant message.
        """
        if reply.role != "assistant":
            raise ValueError(f"record() takes an assistant message, got role {reply.role!r}")
        self._overflow.clear()
        return self.append(reply)

    # ------------------------------------------------------------------ model calls

    def complete(
        self,
        provider: Provider,
        *,
        max_output_tokens: int | None = None,
        temperature: float | None = None,
        cancel: threading.Event | None = None,
    ) -> Completion:
        """One model call of the agent: :meth:`prepare` the context, send it through
        ``provider`` (rendered for its API), :meth:`record` the reply and return it.

        An overflow (an error matching the provider pattern table, 413, more input reported
        than the window holds, or a length stop with no output on a full window) compacts the
        session once (reason ``"overflow"``, see :meth:`on_overflow`) and retries; the
        overflowing reply is not recorded. A context that our own estimate puts over the
        window beside ``max_output_tokens`` is treated the same way and never sent.

        Args:
            provider: the agent's model.
            max_output_tokens: output budget of the call, in tokens; default
                ``min(4096, the policy's reserve)``.
            temperature: sampling temperature, or ``None`` for the provider default.
            cancel: setting it aborts the call, and a summary call of a compaction run by
                this call (``Cancelled``; history unchanged).

        Raises:
            ContextOverflow: a second overflow after the recovery, with the provider's
                numbers when it gave them (else our estimate and the window).
            ConfigError: the system prompt and tools plus ``max_output_tokens`` (and a 5 %
                margin) leave no room for history; checked before anything is compacted or
                sent, and again against the limit an overflow reports.
            ProviderError: any other provider failure, after its retries.
            CompactionLoopError: the ladder failed repeatedly.
        """
        self._overflow.clear()
        out = max_output_tokens or self.default_output_tokens
        check_output_room(self.budget.window, fixed_tokens(self.project(), self.estimator), out)
        self._summaries.outer_cancel = cancel
        try:
            reply, ctx, live = calls.call_until_fit(
                provider,
                prepare=lambda: self.prepare(max_output_tokens=out),
                measure=self.context_tokens,
                recover=lambda overflow: self.on_overflow(overflow, max_output_tokens=out),
                window=self.budget.window,
                max_output=out,
                temperature=temperature,
                cancel=cancel,
            )
            if live is not None:
                self._live = (epoch_key(ctx, self._history), len(ctx.messages), live)
            self.record(reply.to_message())
            return reply
        finally:
            self._summaries.outer_cancel = None

    def overflow_of(self, outcome: Completion | Usage | BaseException) -> ContextOverflow | None:
        """The overflow a model call signals, else ``None``: a failed call classified as
        overflow, a reply (or its usage) reporting more input than the window (silent
        overflow), or a reply stopped by the output limit with no output on a full window."""
        return calls.overflow_of(outcome, self.budget.window)

    def on_overflow(
        self,
        signal: Completion | Usage | BaseException,
        *,
        max_output_tokens: int | None = None,
    ) -> CompactionOutcome:
        """React to an overflow of a model call made by the caller: compact now, with reason
        ``"overflow"``, so the caller can retry once. A second overflow before the next
        :meth:`record` is final.

        The recovery is forced: it runs even right after a compaction (no new entries), skips
        the "not beneficial" check, and a failing model summarizer gives way to the extractive
        one. It aims at ``min(trigger, limit − output budget − 5 % margin)`` with the limit
        the provider reported (else the window): the kept tail, summary and truncate caps
        shrink to match (:func:`~.recovery.recovery_budget`).

        Args:
            signal: the provider error, the reply, or its usage (see :meth:`overflow_of`).
            max_output_tokens: the call's output budget (default: the policy's reserve).

        Raises:
            ValueError: ``signal`` is not an overflow.
            ContextOverflow: a second overflow, or a compaction that could not run; carries
                the provider's numbers when it gave them, else our estimate and the window.
            ConfigError: the system prompt and tools plus the output budget (default: the
                policy's reserve) and the margin leave no room for history in the window or
                the reported limit: compaction cannot fix that.
        """
        overflow = self.overflow_of(signal)
        if overflow is None:
            raise ValueError(f"not a context overflow: {signal!r}"[:300])
        ctx = self.project()
        tokens = self.context_tokens(ctx)
        window = self.budget.window
        h = self._history
        target = recovery_target(
            overflow,
            trigger=self.budget.trigger,
            window=window,
            tokens=tokens,
            fixed=fixed_tokens(ctx, self.estimator),
            output=max_output_tokens if max_output_tokens is not None else self.budget.reserve,
            just_compacted=h.compaction == len(h) - 1,
        )
        if not self._overflow.try_recover():
            why = "still too large after one compaction"
            raise calls.final_overflow(overflow, tokens, window, why)
        budget = recovery_budget(self.budget, self.policy, target)
        try:
            outcome = self._compact(ctx, tokens, reason="overflow", focus=None, budget=budget)
        except Cancelled:
            raise
        except (NothingToCompact, SummaryRejected, ProviderError) as exc:
            why = f"compaction failed: {exc}"
            raise calls.final_overflow(overflow, tokens, window, why) from exc
        # The recovery's own entry is not new history: prepare() does not compact again.
        self._last_ladder_at = len(h)
        return outcome
