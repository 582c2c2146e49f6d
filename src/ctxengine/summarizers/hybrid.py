"""The hybrid summarizer: the model's narrative followed by the deterministic ledgers of the
extractive summarizer, appended verbatim (pi appends its read/modified file lists in code the
same way). The default when a summary model is configured.

Budget: the ledger block is written first, its facts selected by value (as the extractive
state's are) within ``ledger_share`` of the continuation-state budget; the narrative gets the
rest. The ledgers are exact and cumulative, so a path, constraint or error line survives even
when the narrative leaves it out. The ledger block's headings follow the conversation's
language (:mod:`ctxengine.projection.wording`); the narrative's are the template's.
"""

from __future__ import annotations

import threading
from dataclasses import dataclass

from ctxengine.errors import SummaryRejected
from ctxengine.model import Ledgers, Usage
from ctxengine.projection.language import detect_language
from ctxengine.projection.wording import Wording, wording
from ctxengine.providers.base import Provider
from ctxengine.summarizers import validate
from ctxengine.summarizers.anchor import settled_ledgers, user_texts
from ctxengine.summarizers.base import Summary, SummaryRequest
from ctxengine.summarizers.extractive_state import ledger_block
from ctxengine.summarizers.llm import LLMSummarizer, SummaryCall, replaced_tokens
from ctxengine.summarizers.notes import call_notes
from ctxengine.summarizers.step_wording import not_shown_heading
from ctxengine.tokens.base import Estimator

#: Largest share of the continuation-state budget the ledger block may take.
DEFAULT_LEDGER_SHARE = 0.4
#: Smallest narrative budget worth a model call, in tokens.
MIN_NARRATIVE_TOKENS = 300


@dataclass(slots=True)
class HybridSummarizer:
    """LLM narrative + verbatim ledgers.

    Args:
        llm: the model summarizer that writes the narrative.
        ledger_share: largest share of the budget for the ledger block (0 < share < 1).
    """

    llm: LLMSummarizer
    ledger_share: float = DEFAULT_LEDGER_SHARE

    @property
    def name(self) -> str:
        """``"hybrid"``."""
        return "hybrid"

    @property
    def provider(self) -> Provider:
        """The summary model's provider."""
        return self.llm.provider

    @property
    def calls(self) -> list[SummaryCall]:
        """The model calls made so far (shared with :attr:`llm`)."""
        return self.llm.calls

    @property
    def usage(self) -> Usage:
        """Total provider-reported usage of the summary calls."""
        return self.llm.usage

    def summarize(
        self,
        request: SummaryRequest,
        estimator: Estimator,
        *,
        cancel: threading.Event | None = None,
    ) -> Summary:
        """Narrative from the model, then the ledger block; both within
        ``request.budget_tokens``.

        Raises:
            SummaryRejected: as :meth:`LLMSummarizer.summarize`; ``over_budget`` when the
                ledgers leave less than :data:`MIN_NARRATIVE_TOKENS` for the narrative.
            ProviderError, ConfigError: as :meth:`LLMSummarizer.summarize`.
        """
        if not any(m.parts for m in request.all_messages):
            raise SummaryRejected("empty", "nothing to summarize")
        ledgers, fixed = settled_ledgers(request)
        budget = request.budget_tokens
        words = wording(detect_language(user_texts(request)))
        block, notes = self._ledger_block(request, ledgers, budget, estimator, words)
        target = budget - estimator.text(block) - 2 if block else budget
        if target < MIN_NARRATIVE_TOKENS:
            raise SummaryRejected(
                "over_budget", f"the ledgers leave {target} tokens for the narrative"
            )
        first = len(self.llm.calls)
        narrative, more = self.llm.narrative(
            request,
            estimator,
            target_tokens=target,
            cancel=cancel,
            fixed_later=tuple(e.text for e in fixed),
        )
        if block:
            validate.check_headings_once(narrative, block)
        text = f"{narrative}\n\n{block}" if block else narrative
        tokens = estimator.text(text)
        validate.check_size(
            tokens,
            replaced_tokens=replaced_tokens(request, estimator),
            target_tokens=budget,
            tolerance=self.llm.budget_tolerance,
        )
        notes = [*more, *notes, *call_notes(self.llm.calls[first:])]
        return Summary(text, ledgers, self.name, tokens, tuple(notes))

    async def asummarize(self, request: SummaryRequest, estimator: Estimator) -> Summary:
        """:meth:`summarize` for asyncio; cancelling the awaiting task cancels the call."""
        import asyncio  # loaded by the caller's event loop already; not at import time

        cancel = threading.Event()
        try:
            return await asyncio.to_thread(self.summarize, request, estimator, cancel=cancel)
        except asyncio.CancelledError:
            cancel.set()
            raise

    def _ledger_block(
        self,
        request: SummaryRequest,
        ledgers: Ledgers,
        budget: int,
        estimator: Estimator,
        words: Wording,
    ) -> tuple[str, list[str]]:
        """The ledger block in the conversation's language (``words``): its opening line,
        the first request and the ledger facts chosen by value within ``ledger_share`` of
        ``budget`` (:func:`~ctxengine.summarizers.extractive_state.ledger_block`), and its notes."""
        limit = int(budget * self.ledger_share)
        block, notes = ledger_block(
            ledgers,
            limit,
            estimator,
            intro=words.ledger_intro,
            headings=words.headings,
            facts=words.facts,
            not_shown=not_shown_heading(words),
            covered=request.covered,
            focus=request.focus,
            goal_entry=request.entries_by_text().get(ledgers.goal, ""),
        )
        return block, [f"ledgers:{n}" for n in notes]


__all__ = ["DEFAULT_LEDGER_SHARE", "HybridSummarizer"]
