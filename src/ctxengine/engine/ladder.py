"""``LadderLog``: the session log with its compaction ladder. ``prepare()`` runs the ladder
when the context has reached the trigger (prune, then summarize); ``compact()`` runs a
compaction on demand. Every step is recorded as an entry and reported as a
:class:`~ctxengine.engine.events.LadderEvent`.

The compaction search itself is :func:`~ctxengine.engine.compaction.find_compaction`; the
summarizer runs through :class:`~ctxengine.engine.summary.SummaryRunner`.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

from ctxengine.errors import (
    Cancelled,
    CompactionError,
    CompactionLoopError,
    NothingToCompact,
    ProviderError,
)
from ctxengine.ladder.prune import plan_prune
from ctxengine.ladder.recover import SummarizerBreaker
from ctxengine.model import CompactionRecord, PruneRecord
from ctxengine.policy import Budget, Policy
from ctxengine.projection import continuation_message
from ctxengine.projection.context import Context
from ctxengine.providers.base import DEFAULT_MAX_OUTPUT_TOKENS
from ctxengine.stores.base import Store
from ctxengine.summarizers.base import LiveRequest, Summarizer, Summary, SummaryRequest
from ctxengine.summarizers.extractive import ExtractiveSummarizer
from ctxengine.summarizers.llm import ModelSummarizer
from ctxengine.tokens.base import Estimator

from .compaction import (
    CompactionJob,
    SummarizeFn,
    accept,
    conversation_of,
    find_compaction,
)
from .events import CompactionOutcome, LadderEvent, Reason
from .log import SessionLog
from .summary import SummaryRunner
from .view import EpochKey, TailGuard, epoch_key


class LadderLog(SessionLog):
    """A session log that compacts itself. See :class:`~ctxengine.engine.Session` for the
    arguments (all but ``entries``, which the caller adopts after construction).

    Attributes:
        summarizer: the continuation-state writer (may be replaced between calls).
        breaker: consecutive failures of a model summarizer.
        events: every ladder step taken or tried, in order.
        failures: compactions in a row that left the context over the trigger.
    """

    def __init__(
        self,
        window: int,
        *,
        policy: Policy,
        estimator: Estimator | None,
        summarizer: Summarizer | None,
        store: Store | None,
        session_id: str,
        tools: Sequence[Mapping[str, Any]],
    ) -> None:
        super().__init__(
            window,
            policy=policy,
            estimator=estimator,
            store=store,
            session_id=session_id,
            tools=tools,
        )
        #: tokens of the continuation-state message around its summary (prefix, tags)
        self._continuation_overhead = self.estimator.message(continuation_message(""))
        self.summarizer: Summarizer = summarizer or ExtractiveSummarizer(
            user_messages_budget=policy.user_messages_budget_tokens
        )
        self.events: list[LadderEvent] = []
        self.failures = 0
        self.breaker = SummarizerBreaker(policy.max_consecutive_failures)
        fallback = ExtractiveSummarizer(user_messages_budget=policy.user_messages_budget_tokens)
        self._summaries = SummaryRunner(self.breaker, fallback)
        #: the latest request sent (epoch, messages it holds, request), set by the caller
        self._live: tuple[EpochKey, int, LiveRequest] | None = None
        self._tail = TailGuard()
        self._last_ladder_at = -1

    def prepare(
        self,
        *,
        tools: Sequence[Mapping[str, Any]] | None = None,
        max_output_tokens: int | None = None,
    ) -> Context:
        """The context for the next model call, after running the ladder when the context
        has reached the trigger (prune, then summarize).

        Within an epoch successive results only grow at the tail (asserted).

        Args:
            tools: replace the session's tool schemas first.
            max_output_tokens: output budget of the coming call in tokens (default
                ``min(4096, the policy's reserve)``). When the context plus it exceeds the
                window and the model summarizer fails, the extractive summarizer writes the
                compaction at once (a ``"fallback"`` event) instead of leaving the context
                too large to send.

        Raises:
            CompactionLoopError: ``policy.max_consecutive_failures`` compactions in a row
                failed to bring the context under the trigger.
        """
        if tools is not None:
            self.tools = tuple(tools)
        ctx = self.project()
        tokens = self.context_tokens(ctx)
        if tokens >= self.budget.trigger and self._last_ladder_at < len(self._history):
            out = max_output_tokens or self.default_output_tokens
            try:
                ctx = self._run_ladder(ctx, tokens, "threshold", out)
            finally:
                # The ladder's own prune/compaction entries are not new history: the next
                # run waits for an entry appended after them.
                self._last_ladder_at = len(self._history)
        # A context prepared while calls still await their results is provisional.
        provisional = bool(self._history.pending_call_ids())
        self._tail.check(ctx, epoch_key(ctx, self._history), provisional=provisional)
        return ctx

    @property
    def default_output_tokens(self) -> int:
        """Output budget of a model call that names none: ``min(4096, reserve)`` tokens."""
        return min(DEFAULT_MAX_OUTPUT_TOKENS, self.budget.reserve)

    def _run_ladder(self, ctx: Context, tokens: int, reason: Reason, output: int) -> Context:
        """Prune, then compact unless pruning brought ``ctx`` (``tokens``) under the
        trigger. A failed compaction is counted and the context returned as it is.
        ``output``: the coming call's output budget (the context must fit beside it)."""
        if self.policy.prune_enabled:
            pruned = self._prune(ctx, tokens)
            if pruned is not None:
                ctx, tokens = pruned
                if tokens < self.budget.trigger:
                    self.failures = 0
                    return ctx
        must_fit = tokens > self.budget.window - output
        try:
            return self._compact(ctx, tokens, reason=reason, focus=None, must_fit=must_fit).context
        except (CompactionLoopError, Cancelled):
            raise
        except (CompactionError, ProviderError) as exc:
            self._fail(tokens, str(exc))
            return ctx
        except Exception as exc:
            # An unexpected summarizer error propagates, but still counts towards the
            # breaker: a caller that retries must not loop past it.
            try:
                self._fail(tokens, f"{type(exc).__name__}: {exc}")
            except CompactionLoopError as loop:
                raise loop from exc
            raise

    def _prune(self, ctx: Context, before: int) -> tuple[Context, int] | None:
        """Prune old tool results when that saves enough; the new context and its size."""
        plan = plan_prune(
            ctx.messages,
            self.estimator,
            protect_tokens=self.budget.prune_protect,
            minimum_tokens=self.budget.prune_minimum,
            protect_turns=self.policy.prune_protect_turns,
            exempt_tools=self.policy.prune_exempt_tools,
            already_pruned=self._history.pruned_ids,
        )
        if plan is None:
            return None
        entry = self.append(PruneRecord(plan.call_ids, plan.tokens_saved, self.policy.name))
        ctx = self.project()
        tokens = self.context_tokens(ctx)
        detail = f"{len(plan.call_ids)} tool results"
        self._event("prune", entry.id, before, tokens, detail)
        return ctx, tokens

    def _event(
        self,
        step: str,
        entry_id: str | None,
        before: int,
        after: int,
        detail: str,
        notes: tuple[str, ...] = (),
    ) -> None:
        """Report a step, stamped with the current number of entries."""
        self.events.append(
            LadderEvent(step, entry_id, before, after, detail, len(self._history), notes)
        )

    def _fail(self, tokens: int, detail: str) -> None:
        """Count a failed compaction (context ``tokens``) and report it.

        Raises:
            CompactionLoopError: ``policy.max_consecutive_failures`` failures in a row.
        """
        self.failures += 1
        self._event("failure", None, tokens, tokens, detail)
        if self.failures >= self.policy.max_consecutive_failures:
            raise CompactionLoopError(self.failures, tokens, self.budget.trigger)

    def compact(self, focus: str | None = None, *, reason: Reason = "manual") -> CompactionOutcome:
        """Compact now (``/compact``), whatever the context size.

        Raises:
            NothingToCompact: no new entries since the last compaction, or no valid cut.
            SummaryRejected: the summarizer failed; history is unchanged.
        """
        ctx = self.project()
        return self._compact(ctx, self.context_tokens(ctx), reason=reason, focus=focus)

    def _compact(
        self,
        ctx: Context,
        tokens: int,
        *,
        reason: Reason,
        focus: str | None,
        must_fit: bool = False,
        budget: Budget | None = None,
    ) -> CompactionOutcome:
        """Find the best compaction of ``ctx`` (of size ``tokens``) and append it.

        Args:
            must_fit: the context cannot be sent as it is: a failing model summarizer gives
                way to the extractive one for this compaction (an overflow recovery always).
            budget: the budget to compact to (an overflow recovery's tighter target);
                default the session's. An overflow recovery runs even with no new entries
                since the last compaction.

        Raises:
            NothingToCompact / SummaryRejected: history is unchanged.
            CompactionLoopError: the context is still over the trigger, too many times in a
                row.
        """
        h = self._history
        forced = reason == "overflow"
        if not forced and h.compaction == len(h) - 1 and ctx.tokens < self.budget.trigger:
            # A second compaction without new entries is allowed only when the context no
            # longer fits (the window shrank since the last one, or the provider said so).
            raise NothingToCompact("already compacted: no new entries since the last compaction")
        job = self._job(ctx, reason, focus, budget or self.budget)
        summarize = self._summarize_step(reason, tokens, must_fit=must_fit or forced)
        best = find_compaction(job, h, self.estimator, summarize=summarize, measure=self._measure)
        entry = self.append(accept(best, job), entry_id=best.entry.id)
        final = self.project()
        body = best.entry.body
        assert isinstance(body, CompactionRecord)
        detail = f"first kept {body.first_kept_id}"
        self._event("compaction", entry.id, job.tokens_before, final.tokens, detail, best.notes)
        if final.tokens >= self.budget.trigger:
            self._fail(final.tokens, f"context still {final.tokens} tokens after compaction")
        else:
            self.failures = 0
        return CompactionOutcome(entry, final, job.tokens_before, final.tokens)

    def _summarize_step(self, reason: Reason, tokens: int, *, must_fit: bool) -> SummarizeFn:
        """The summarizer of one compaction, through the breaker (a manual compaction closes
        it); a fallback is reported as an event at ``tokens``. With ``must_fit``, a failing
        model summarizer gives way to the fallback for the rest of this compaction."""
        fell_back = False

        def on_fallback(detail: str) -> None:
            nonlocal fell_back
            fell_back = True
            self._event("fallback", None, tokens, tokens, detail)

        def summarize(request: SummaryRequest, room: int) -> Summary:
            summarizer = self._summaries.fallback if fell_back else self.summarizer
            return self._summaries.summarize_within(
                summarizer,
                request,
                self.estimator,
                room,
                manual=reason == "manual",
                must_fit=must_fit,
                on_fallback=on_fallback,
            )

        return summarize

    def _job(
        self, ctx: Context, reason: Reason, focus: str | None, budget: Budget
    ) -> CompactionJob:
        """The inputs of a compaction search of ``ctx`` to ``budget``; the latest live
        request only when it was sent from this epoch (same compaction, same prunes). The
        search starts from the previous compaction's truncate cap, or a tighter one of
        ``budget``."""
        h = self._history
        pending = h.pending_call_ids()
        live = self._live
        previous = h.previous_compaction()
        cap = previous.truncate_tokens if previous is not None else None
        if budget.truncate_tokens < (cap or self.budget.truncate_tokens):
            cap = budget.truncate_tokens
        return CompactionJob(
            conversation=conversation_of(ctx, self.estimator, self.tools, pending),
            tokens_before=ctx.tokens,
            reason=reason,
            focus=focus,
            budget=budget,
            policy=self.policy,
            live=live[1:] if live is not None and live[0] == epoch_key(ctx, h) else None,
            continuation_overhead=self._continuation_overhead,
            reuse_summaries=isinstance(self.summarizer, ModelSummarizer),
            cap=cap,
        )

    def abort(self) -> None:
        """Cancel the summary call in flight, from any thread: its stream is closed, the
        compaction raises :class:`~ctxengine.errors.Cancelled` and history is unchanged (no
        failure is counted). Does nothing when no summary call runs."""
        self._summaries.abort()
