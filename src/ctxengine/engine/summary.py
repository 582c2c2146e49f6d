"""Running the session's summarizer: a model summarizer goes through the circuit breaker
(Claude Code's three failures in a row; Gemini CLI's failed-compression latch) and gives way
to the extractive summarizer while it is open; its call can be aborted from another thread.
"""

from __future__ import annotations

import threading
from collections.abc import Callable
from dataclasses import replace

from ctxengine.errors import Cancelled, ProviderError, SummaryRejected
from ctxengine.ladder.recover import SummarizerBreaker
from ctxengine.summarizers.base import Summarizer, Summary, SummaryRequest
from ctxengine.summarizers.extractive import ExtractiveSummarizer
from ctxengine.summarizers.llm import ModelSummarizer
from ctxengine.tokens.base import Estimator

#: Told the detail of a fallback (the model summarizer failed and the breaker opened).
OnFallback = Callable[[str], None]


class SummaryRunner:
    """Runs summaries for one session and holds the state that spans them.

    Args:
        breaker: consecutive model-summarizer failures (shared with the session).
        fallback: the summarizer used while the breaker is open.

    Attributes:
        outer_cancel: the caller's cancel event of the model call in progress, if any; a
            summary call run meanwhile uses it, so setting it aborts the summary too.
    """

    def __init__(self, breaker: SummarizerBreaker, fallback: ExtractiveSummarizer) -> None:
        self.breaker = breaker
        self.fallback = fallback
        self.outer_cancel: threading.Event | None = None
        self._cancel: threading.Event | None = None

    def summarize_within(
        self,
        summarizer: Summarizer,
        request: SummaryRequest,
        estimator: Estimator,
        room: int,
        *,
        manual: bool,
        must_fit: bool = False,
        on_fallback: OnFallback,
    ) -> Summary:
        """:meth:`summarize`; when the required content alone exceeds the summary budget
        (``over_budget``) but fits ``room`` (the tokens left under the trigger beside the
        head and the kept tail), summarize again with the budget it asked for.

        Args:
            must_fit: the context does not fit the window as it is (or the provider said
                so): when the model summarizer fails, even with the breaker still closed,
                this summary is written by the fallback (``on_fallback`` is told) rather
                than leaving the context too large to send.

        Raises:
            SummaryRejected: the summarizer refused and the retry cannot help.
            ProviderError: the model summarizer failed while the breaker stays closed (and
                ``must_fit`` is false).
            Cancelled: :meth:`abort` was called.
        """
        try:
            return self._within(
                summarizer, request, estimator, room, manual=manual, on_fallback=on_fallback
            )
        except Cancelled:
            raise
        except (SummaryRejected, ProviderError) as exc:
            if not must_fit or not isinstance(summarizer, ModelSummarizer):
                raise
            on_fallback(
                f"{summarizer.name} summarizer failed ({exc}); the context does not fit the "
                "window, so the extractive summarizer writes this compaction"
            )
            return self._within(
                self.fallback, request, estimator, room, manual=manual, on_fallback=on_fallback
            )

    def _within(
        self,
        summarizer: Summarizer,
        request: SummaryRequest,
        estimator: Estimator,
        room: int,
        *,
        manual: bool,
        on_fallback: OnFallback,
    ) -> Summary:
        """:meth:`summarize_within` without the fallback for a context that must fit."""
        try:
            return self.summarize(
                summarizer, request, estimator, manual=manual, on_fallback=on_fallback
            )
        except SummaryRejected as exc:
            needed = exc.tokens_after
            if exc.reason != "over_budget" or needed is None or needed > room:
                raise
            retry = replace(request, budget_tokens=needed)
            return self.summarize(
                summarizer, retry, estimator, manual=manual, on_fallback=on_fallback
            )

    def summarize(
        self,
        summarizer: Summarizer,
        request: SummaryRequest,
        estimator: Estimator,
        *,
        manual: bool,
        on_fallback: OnFallback,
    ) -> Summary:
        """Run ``summarizer``. A model summarizer goes through the breaker: a ``manual``
        compaction closes it, and once it is open the fallback is used. The failure that
        opens it calls ``on_fallback`` with a detail line and returns the fallback's summary.

        Raises:
            SummaryRejected / ProviderError: the model summarizer failed and the breaker
                stays closed (the failure is counted).
            Cancelled: :meth:`abort` was called (no failure is counted).
        """
        if not isinstance(summarizer, ModelSummarizer):
            return summarizer.summarize(request, estimator)
        if manual:
            self.breaker.reset()
        if self.breaker.open:
            return self.fallback.summarize(request, estimator)
        self._cancel = cancel = self.outer_cancel or threading.Event()
        try:
            summary = summarizer.summarize(request, estimator, cancel=cancel)
        except Cancelled:
            raise
        except (SummaryRejected, ProviderError) as exc:
            if not self.breaker.failure(str(exc)):
                raise
            on_fallback(
                f"{summarizer.name} summarizer failed {self.breaker.failures} times in a row "
                f"(last: {exc}); using the extractive summarizer until a manual compact or a "
                "successful model summary"
            )
            return self.fallback.summarize(request, estimator)
        finally:
            self._cancel = None
        self.breaker.success()
        return summary

    def abort(self) -> None:
        """Cancel the summary call in flight, from any thread. Does nothing when none runs."""
        cancel = self._cancel
        if cancel is not None:
            cancel.set()
