"""The ``none`` summarizer: the old prefix is dropped with a one-line marker and no summary.

It stands for the truncation baselines (keep-last-n, Roo Code's sliding window) and for the
"truncate only" compactions of a failure latch (Gemini CLI ``hasFailedCompressionAttempt``).
The model sees only the marker; the deterministic ledgers are still computed and carried on
the compaction record (invariant 6: they only grow), so a later summarizer can use them and a
report can tell what the model no longer sees.
"""

from __future__ import annotations

from dataclasses import dataclass

from ctxengine.errors import SummaryRejected
from ctxengine.summarizers.anchor import cumulative_ledgers
from ctxengine.summarizers.base import Summary, SummaryRequest
from ctxengine.tokens.base import Estimator

#: The marker that stands for the dropped messages.
DROPPED_MARKER = (
    "{count} earlier messages of this conversation were removed to fit the context window; "
    "no summary of them was kept."
)


@dataclass(frozen=True, slots=True)
class DropSummarizer:
    """Writes :data:`DROPPED_MARKER` instead of a summary (see the module docstring)."""

    @property
    def name(self) -> str:
        """``"none"``."""
        return "none"

    def summarize(self, request: SummaryRequest, estimator: Estimator) -> Summary:
        """The marker for ``request.all_messages`` and the cumulative ledgers.

        Raises:
            SummaryRejected: ``"empty"`` when there is nothing to drop; ``"over_budget"``
                when the marker alone exceeds ``request.budget_tokens``.
        """
        messages = request.all_messages
        if not any(m.parts for m in messages):
            raise SummaryRejected("empty", "nothing to summarize")
        ledgers = cumulative_ledgers(request)
        text = DROPPED_MARKER.format(count=len(messages))
        tokens = estimator.text(text)
        if tokens > request.budget_tokens:
            raise SummaryRejected(
                "over_budget",
                f"the marker needs {tokens} tokens, budget {request.budget_tokens}",
                tokens_after=tokens,
            )
        return Summary(text, ledgers, self.name, tokens, ("dropped:no_summary",))
