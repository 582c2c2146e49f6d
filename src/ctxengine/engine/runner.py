"""The executor: runs a :class:`~ctxengine.ladder.plan.CompactionPlan` against a session log.

For each attempt of the plan's schedule it builds the summary request from the history,
runs the summarizer (a model summarizer behind the circuit breaker, with the one fallback
rule of :func:`~ctxengine.ladder.recover.fallback_reason`), measures the context the
compaction would leave, and stops at the first attempt under the trigger that shrinks the
context (any fit, for an overflow). Nothing is appended here: the session appends the
record this returns, so the same plan over the same history gives the same entry.
"""

from __future__ import annotations

import threading
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass, replace
from typing import TYPE_CHECKING

from ctxengine.errors import (
    Cancelled,
    NothingToCompact,
    ProviderAuthError,
    ProviderError,
    ProviderRequestError,
    SummaryRejected,
)
from ctxengine.ladder.compaction import Conversation, accept, summary_room
from ctxengine.ladder.plan import Attempt, CompactionPlan
from ctxengine.ladder.recover import FallbackMode, SummarizerBreaker, fallback_reason
from ctxengine.model import CompactionRecord, Entry
from ctxengine.model.roles import is_real_user_message, user_text
from ctxengine.projection.context import Context
from ctxengine.tokens.base import Estimator

from .history import History

if TYPE_CHECKING:
    from ctxengine.summarizers.base import LiveRequest, Summarizer, Summary, SummaryRequest
    from ctxengine.summarizers.extractive import ExtractiveSummarizer

#: ``(record, truncate cap or None)`` → the tentative entry and the context it would give.
MeasureFn = Callable[[CompactionRecord, int | None], tuple[Entry, Context]]
#: Told the detail of a fallback to the extractive summarizer.
OnFallback = Callable[[str], None]


class _FallbackCut(Exception):
    """The fallback writes this compaction at the plan's own fallback cut."""


@dataclass(frozen=True, slots=True)
class Executed:
    """What running a plan produced (not appended yet).

    Attributes:
        record: the compaction record to append, with its measured ``tokens_after``.
        entry_id: the id the record was measured under (its content hash).
        context: the context it gives.
        attempt: index in the plan's schedule of the attempt kept; -1 for the plan's
            fallback attempt.
        summarizer: name of the summarizer that wrote it.
        notes: the summarizer's notes on how it was written.
        fallback: why the extractive summarizer wrote it instead of the session's, if so.
    """

    record: CompactionRecord
    entry_id: str
    context: Context
    attempt: int
    summarizer: str
    notes: tuple[str, ...]
    fallback: str | None


class Runner:
    """Runs plans for one session and holds the state that spans them.

    Args:
        summarizer: the continuation-state writer.
        fallback: the summarizer used when the fallback rule says so.
        breaker: consecutive model-summarizer failures.
        fallback_mode: see :data:`~ctxengine.ladder.recover.FallbackMode`.
        latched: writes the compactions the fallback writes (breaker open, the fallback rule)
            instead of ``fallback`` (Gemini CLI's "truncate only", Roo Code's sliding
            window: the ``none`` summarizer); ``None``: ``fallback``. ``fallback`` still
            gives a hook-supplied summary its ledgers.

    Attributes:
        outer_cancel: the caller's cancel event of the model call in progress, if any; a
            summary call run meanwhile uses it, so setting it aborts the summary too.
        instructions: project compact instructions every summary request carries (from the
            rules files of the session's head), or ``None``.
        cwd: the session's working directory every summary request carries (``""``:
            unknown; :attr:`~ctxengine.summarizers.base.SummaryRequest.cwd`).
    """

    def __init__(
        self,
        summarizer: Summarizer,
        fallback: ExtractiveSummarizer,
        breaker: SummarizerBreaker,
        fallback_mode: FallbackMode = "breaker",
        latched: Summarizer | None = None,
    ) -> None:
        self.summarizer = summarizer
        self.fallback = fallback
        self.latched = latched
        self.breaker = breaker
        self.fallback_mode: FallbackMode = fallback_mode
        self.outer_cancel: threading.Event | None = None
        self.instructions: str | None = None
        self.cwd = ""
        self._cancel: threading.Event | None = None

    def copy(self) -> Runner:
        """A runner with the same summarizers, fallback rule, working directory and
        instructions, and a copy of the breaker (a background compaction runs on it without
        touching this one's state)."""
        breaker = SummarizerBreaker(self.breaker.threshold)
        breaker.failures, breaker.open = self.breaker.failures, self.breaker.open
        twin = Runner(self.summarizer, self.fallback, breaker, self.fallback_mode, self.latched)
        twin.instructions = self.instructions
        twin.cwd = self.cwd
        return twin

    def execute(
        self,
        plan: CompactionPlan,
        conversation: Conversation,
        history: History,
        estimator: Estimator,
        *,
        measure: MeasureFn,
        live: tuple[int, LiveRequest] | None,
        continuation_overhead: int,
        summary: str | None = None,
        on_fallback: OnFallback,
    ) -> Executed:
        """Run ``plan`` (made from ``conversation``) and return the best compaction found.

        Args:
            history: the log the summary request is read from (goal, previous compaction,
                prior user messages, the untruncated messages).
            estimator: token estimator.
            measure: projects a tentative record.
            live: the latest request sent for this epoch and how many of the context's
                messages it holds (a model summarizer may extend it), or ``None``.
            continuation_overhead: tokens of the continuation-state message around its
                summary.
            summary: a summary supplied by a ``before_compact`` hook: used as is at the
                plan's cut, no summarizer runs.
            on_fallback: told when the extractive summarizer takes over.

        Each attempt's record re-injects the durable state the plan gave it
        (:attr:`~ctxengine.ladder.plan.Attempt.durable`); the summary's room leaves it out.

        Raises:
            NothingToCompact: no attempt has a cut.
            SummaryRejected: the summarizer refused (and the fallback rule did not apply),
                ``over_budget`` at every cut, or ``inflated`` (the best result does not
                shrink the context).
            ProviderError: the model summarizer failed and the fallback rule did not apply.
            Cancelled: :meth:`abort` was called.
        """
        best: Executed | None = None
        rejected: SummaryRejected | None = None
        fell_back: str | None = None
        written: dict[tuple[str | None, bool], Summary] = {}
        from ctxengine.summarizers.calls import ModelSummarizer

        reuse = isinstance(self.summarizer, ModelSummarizer)

        def note_fallback(why: str, detail: str) -> None:
            nonlocal fell_back
            fell_back = why
            on_fallback(detail)

        for n in plan.order:
            attempt = plan.attempts[n]
            cut = attempt.cut
            assert cut is not None  # plan.order lists attempts with a cut only
            key = (cut.first_kept_id, cut.splits_turn)
            request = _request(
                plan, attempt, conversation, history, live, self.instructions, self.cwd
            )
            room = summary_room(
                plan.budget,
                plan.budget.trigger,
                plan.fixed_tokens,
                cut.kept_tokens + attempt.reinjected_tokens,
                continuation_overhead,
            )
            try:
                if summary is not None:
                    written_summary = self._supplied(summary, request, estimator)
                else:
                    written_summary = written.get(key) or self._summarize(
                        request,
                        estimator,
                        plan,
                        room=room,
                        force_fallback=fell_back is not None,
                        on_fallback=note_fallback,
                    )
            except _FallbackCut:
                best = self._at_fallback_cut(
                    plan, conversation, history, estimator, measure, fell_back
                )
                break
            except SummaryRejected as exc:
                if exc.reason != "over_budget":
                    raise
                rejected = exc
                continue
            if reuse:
                written[key] = written_summary
            record = _record(plan, attempt, written_summary)
            entry, after_ctx = measure(record, attempt.truncate_tokens)
            after = after_ctx.tokens
            if best is None or after < best.context.tokens:
                best = Executed(
                    replace(record, tokens_after=after),
                    entry.id,
                    after_ctx,
                    n,
                    written_summary.summarizer,
                    written_summary.notes,
                    fell_back,
                )
            # Under the trigger with the room a compaction leaves free (else the next attempt,
            # which keeps less, may buy more calls; the smallest result is taken at the end).
            fits = after < plan.floor_limit
            if fits and (after < plan.tokens_before or plan.reason == "overflow"):
                break
            if summary is not None:
                break  # a supplied summary is for the plan's cut only
        if best is None:
            if rejected is not None:
                raise rejected
            raise NothingToCompact("no valid cut point leaves anything to summarize")
        accept(best.context.tokens, plan.tokens_before, plan.reason, plan.budget.window)
        return best

    def stand_in(
        self,
        plan: CompactionPlan,
        attempt: Attempt,
        conversation: Conversation,
        history: History,
        estimator: Estimator,
    ) -> Summary:
        """The continuation state that stands in for a native compaction at ``attempt``'s
        cut (shown to every provider but the one that compacted): written by the extractive
        summarizer (no model call), from the history the log holds, with the previous
        compaction as its anchor and the ledgers carried forward. A state whose required
        content exceeds the attempt's budget gets the budget it asks for.

        Raises:
            SummaryRejected: the extractive summarizer refused the range.
        """
        request = _request(plan, attempt, conversation, history, None, self.instructions, self.cwd)
        try:
            return self.fallback.summarize(request, estimator)
        except SummaryRejected as exc:
            needed = exc.tokens_after
            if exc.reason != "over_budget" or needed is None:
                raise
            return self.fallback.summarize(replace(request, budget_tokens=needed), estimator)

    @property
    def writer(self) -> Summarizer:
        """What writes a compaction the fallback writes."""
        return self.latched or self.fallback

    def _fall_back(
        self, plan: CompactionPlan, request: SummaryRequest, estimator: Estimator, room: int
    ) -> Summary:
        """The fallback's summary of ``request``, or :class:`_FallbackCut` when the plan
        gives the fallback its own cut."""
        if plan.fallback is not None and plan.fallback.cut is not None:
            raise _FallbackCut
        return self._within(self.writer, request, estimator, room)

    def _at_fallback_cut(
        self,
        plan: CompactionPlan,
        conversation: Conversation,
        history: History,
        estimator: Estimator,
        measure: MeasureFn,
        fell_back: str | None,
    ) -> Executed:
        """The compaction the fallback writes at ``plan.fallback``'s cut."""
        attempt = plan.fallback
        assert attempt is not None and attempt.cut is not None
        request = _request(plan, attempt, conversation, history, None, self.instructions, self.cwd)
        summary = self._call(self.writer, request, estimator)
        record = _record(plan, attempt, summary)
        entry, after_ctx = measure(record, attempt.truncate_tokens)
        return Executed(
            replace(record, tokens_after=after_ctx.tokens),
            entry.id,
            after_ctx,
            -1,
            summary.summarizer,
            summary.notes,
            fell_back or "breaker",
        )

    def _supplied(self, text: str, request: SummaryRequest, estimator: Estimator) -> Summary:
        """A summary a hook supplied, with the deterministic ledgers of ``request`` (so that
        ledgers keep growing across compactions, invariant 6)."""
        from ctxengine.summarizers.base import Summary

        ledgers = self.fallback.summarize(request, estimator).ledgers
        return Summary(text, ledgers, "hook", estimator.text(text), ("supplied:before_compact",))

    def _summarize(
        self,
        request: SummaryRequest,
        estimator: Estimator,
        plan: CompactionPlan,
        *,
        room: int,
        force_fallback: bool,
        on_fallback: Callable[[str, str], None],
    ) -> Summary:
        """Run the session's summarizer on ``request``; a model summarizer goes through the
        breaker (a manual compaction closes it first; while it is open the fallback writes)
        and a failure goes through the fallback rule."""
        summarizer = self.summarizer
        if force_fallback:
            return self._fall_back(plan, request, estimator, room)
        from ctxengine.summarizers.calls import ModelSummarizer

        if not isinstance(summarizer, ModelSummarizer):
            return self._within(summarizer, request, estimator, room)
        if plan.reason == "manual":
            self.breaker.reset()
        if self.breaker.open:
            return self._fall_back(plan, request, estimator, room)
        self._cancel = self.outer_cancel or threading.Event()
        try:
            summary = self._within(summarizer, request, estimator, room)
        except Cancelled:
            raise
        except (SummaryRejected, ProviderError) as exc:
            opened = self.breaker.failure()
            why = fallback_reason(
                opened_breaker=opened,
                hard=plan.requirement.hard,
                mode=self.fallback_mode,
                retryable=not isinstance(exc, ProviderAuthError | ProviderRequestError),
            )
            if why is None:
                raise
            on_fallback(why, _fallback_detail(why, summarizer.name, exc, self.breaker))
            return self._fall_back(plan, request, estimator, room)
        finally:
            self._cancel = None
        self.breaker.success()
        return summary

    def _within(
        self,
        summarizer: Summarizer,
        request: SummaryRequest,
        estimator: Estimator,
        room: int,
    ) -> Summary:
        """Run ``summarizer``; when the required content alone exceeds the summary budget
        (``over_budget``) but fits ``room`` (the tokens left under the trigger beside the head
        and the kept tail), run it again with the budget it asked for."""
        try:
            return self._call(summarizer, request, estimator)
        except SummaryRejected as exc:
            needed = exc.tokens_after
            if exc.reason != "over_budget" or needed is None or needed > room:
                raise
            return self._call(summarizer, replace(request, budget_tokens=needed), estimator)

    def _call(
        self, summarizer: Summarizer, request: SummaryRequest, estimator: Estimator
    ) -> Summary:
        from ctxengine.summarizers.calls import ModelSummarizer

        if isinstance(summarizer, ModelSummarizer):
            cancel = self._cancel or threading.Event()
            return summarizer.summarize(request, estimator, cancel=cancel)
        return summarizer.summarize(request, estimator)

    @contextmanager
    def cancellable(self) -> Iterator[threading.Event]:
        """The cancel event of a provider call made for a compaction (a native one): the
        caller's :attr:`outer_cancel`, else a new one; :meth:`abort` sets it while the
        block runs."""
        self._cancel = self.outer_cancel or threading.Event()
        try:
            yield self._cancel
        finally:
            self._cancel = None

    def abort(self) -> None:
        """Cancel the summary call in flight, from any thread. Does nothing when none runs."""
        cancel = self._cancel
        if cancel is not None:
            cancel.set()


def _fallback_detail(why: str, name: str, exc: BaseException, breaker: SummarizerBreaker) -> str:
    if why == "breaker":
        return (
            f"{name} summarizer failed {breaker.failures} times in a row (last: {exc}); using "
            "the extractive summarizer until a manual compact or a successful model summary"
        )
    if why == "must_fit":
        return (
            f"{name} summarizer failed ({exc}); the context does not fit the window, so the "
            "extractive summarizer writes this compaction"
        )
    return f"{name} summarizer failed ({exc}); the extractive summarizer writes this compaction"


def _request(
    plan: CompactionPlan,
    attempt: Attempt,
    conversation: Conversation,
    history: History,
    live: tuple[int, LiveRequest] | None,
    instructions: str | None = None,
    cwd: str = "",
) -> SummaryRequest:
    from ctxengine.summarizers.base import SummaryRequest

    cut = attempt.cut
    assert cut is not None
    sources = conversation.sources
    n_sum, n_prefix, n_from = cut.summarize, cut.turn_prefix, cut.summarize_from
    messages = conversation.messages
    covered = conversation.start + n_sum + n_prefix
    live_request = live[1] if live is not None and live[0] >= covered else None
    at = [history.index.get(src) for src in sources[n_from : n_sum + n_prefix] if src is not None]
    known = [history.entries[i].seq for i in at if i is not None]
    head = history.entries[history.head_end].seq if history.head_end < len(history) else 0
    summarized = history.originals(messages[n_from:n_sum], sources[n_from:n_sum])
    prefix = history.originals(
        messages[n_sum : n_sum + n_prefix], sources[n_sum : n_sum + n_prefix]
    )
    said = [
        (m.text, src)
        for m, src in zip(summarized + prefix, sources[n_from : n_sum + n_prefix], strict=True)
        if src is not None and m.role == "assistant" and m.text
    ]
    return SummaryRequest(
        messages=summarized,
        previous=history.previous_compaction(),
        goal=history.goal or "",
        budget_tokens=attempt.summary_tokens,
        focus=plan.focus,
        turn_prefix=prefix,
        prior_user_messages=history.prior_user_messages(),
        # Pinned items have a message of their own after the continuation state
        # (:mod:`ctxengine.projection.pins`): the summary does not repeat them.
        pinned=(),
        live_request=live_request,
        range_start=known[0] if known else 0,
        covered=(min(head, known[0]), known[-1]) if known else None,
        later_user_messages=tuple(
            user_text(m) for m in messages[n_sum + n_prefix :] if is_real_user_message(m)
        ),
        kept=history.originals(messages[n_sum + n_prefix :], sources[n_sum + n_prefix :]),
        instructions=instructions,
        cwd=cwd,
        text_entries=history.request_entries() + tuple(said),
    )


def _record(plan: CompactionPlan, attempt: Attempt, summary: Summary) -> CompactionRecord:
    cut = attempt.cut
    assert cut is not None
    return CompactionRecord(
        summary=summary.text,
        first_kept_id=cut.first_kept_id,
        tokens_before=plan.tokens_before,
        tokens_after=0,
        policy=plan.policy,
        summarizer=summary.summarizer,
        reason=plan.reason,
        ledgers=summary.ledgers,
        splits_turn=cut.splits_turn,
        truncate_tokens=attempt.truncate_tokens,
        retained_ids=cut.retained or None,
        injection=None if plan.injection == "checkpoint" else plan.injection,
        continuation=True if plan.continuation else None,
        reinjected=attempt.durable.texts or None,
    )
