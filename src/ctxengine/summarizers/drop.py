"""The ``none`` summarizer: the old prefix is dropped with a one-line marker and no summary.

It stands for the truncation baselines (keep-last-n, Roo Code's sliding window) and for the
"truncate only" compactions of a failure latch (Gemini CLI ``hasFailedCompressionAttempt``).
The model sees only the marker; the deterministic ledgers are still computed and carried on
the compaction record (invariant 6: they only grow), so a later summarizer can use them and a
report can tell what the model no longer sees.
"""

from __future__ import annotations

from dataclasses import dataclass, replace

from ctxengine.errors import SummaryRejected
from ctxengine.model import Ledgers
from ctxengine.summarizers.anchor import anchor_ledgers, carry, choose_goal, user_texts
from ctxengine.summarizers.base import Summary, SummaryRequest
from ctxengine.summarizers.ledgers import extract_ledgers
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
        anchor = anchor_ledgers(request.previous)
        goal = choose_goal(request, user_texts(request))
        new = extract_ledgers(
            messages,
            goal,
            cwd=request.cwd or anchor.cwd,
            start=request.range_start,
            earlier_done=anchor.done,
        )
        ledgers = replace(carry(anchor, new).merge(Ledgers(pinned=request.pinned)), goal=goal)
        text = DROPPED_MARKER.format(count=len(messages))
        tokens = estimator.text(text)
        if tokens > request.budget_tokens:
            raise SummaryRejected(
                "over_budget",
                f"the marker needs {tokens} tokens, budget {request.budget_tokens}",
                tokens_after=tokens,
            )
        return Summary(text, ledgers, self.name, tokens, ("dropped:no_summary",))
