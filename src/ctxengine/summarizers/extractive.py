"""The extractive summarizer: deterministic continuation state, no LLM.

What the state holds and how its items compete for the budget is
:mod:`ctxengine.summarizers.extractive_state`'s, imported on the first summary: a session
builds this summarizer (its default and its fallback) without loading the state's machinery
(ledgers, rules, selection, wording).
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import TYPE_CHECKING

from ctxengine.policy.defaults import STATE_COST_CACHE_MAX_ESTIMATORS, STATE_COST_CACHE_MAX_TEXTS

if TYPE_CHECKING:
    from ctxengine.summarizers.base import Summary, SummaryRequest
    from ctxengine.tokens.base import Estimator


@dataclass(frozen=True, slots=True)
class ExtractiveSummarizer:
    """Deterministic continuation state from the ledgers and verbatim user text.

    Args:
        user_messages_budget: tokens of the newest user messages that rank with the rules
            (the caller passes ``Policy.user_messages_budget_tokens``; at most
            :data:`~ctxengine.policy.defaults.STATE_USER_MESSAGES_MAX_SHARE` of the state's
            budget); older ones rank last.
    """

    user_messages_budget: int
    #: per estimator (by id, the estimator kept with it): estimated tokens by text of the
    #: lines, notes and headings selections priced (:class:`~.select.Costs`), so that a
    #: compaction does not estimate again what the previous one did.
    _costs: dict[int, tuple[Estimator, dict[str, int]]] = field(
        default_factory=dict, compare=False, repr=False
    )

    @property
    def name(self) -> str:
        """``"extractive"``."""
        return "extractive"

    def summarize(self, request: SummaryRequest, estimator: Estimator) -> Summary:
        """Write continuation state for ``request`` within ``request.budget_tokens``
        (:func:`~ctxengine.summarizers.extractive_state.write_state`).

        Raises:
            SummaryRejected: ``"empty"`` when ``messages`` and ``turn_prefix`` hold nothing;
                ``"over_budget"`` (with the tokens needed) when the required items do not fit.
        """
        from ctxengine.summarizers.extractive_state import write_state

        return write_state(self, request, estimator)

    def estimates(self, estimator: Estimator) -> dict[str, int]:
        """The remembered estimates by text of ``estimator`` that the state's selections price
        (:class:`~.select.Costs`; emptied past
        :data:`~ctxengine.policy.defaults.STATE_COST_CACHE_MAX_TEXTS` texts)."""
        hit = self._costs.get(id(estimator))
        if hit is None or hit[0] is not estimator:
            if len(self._costs) >= STATE_COST_CACHE_MAX_ESTIMATORS:
                self._costs.clear()
            hit = self._costs[id(estimator)] = (estimator, {})
        texts = hit[1]
        if len(texts) > STATE_COST_CACHE_MAX_TEXTS:
            texts.clear()
        return texts
