"""Values the session reports: :class:`LadderEvent` (one step of the ladder),
:class:`CompactionOutcome` (the result of one compaction) and :class:`PlanDecision` (what a
``before_compact`` hook answers)."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from ctxengine.ladder.plan import CompactionPlan, Reason
from ctxengine.model import CompactionRecord, Entry
from ctxengine.projection.context import Context

__all__ = [
    "AfterCompact",
    "BeforeCompact",
    "CompactionOutcome",
    "LadderEvent",
    "PlanDecision",
    "Reason",
]


@dataclass(frozen=True, slots=True)
class LadderEvent:
    """One step the ladder took (or tried), for reports and replay timelines.

    Attributes:
        step: ``"prune"``, ``"compaction"``, ``"failure"``, ``"fallback"`` (a model
            summarizer gave way to the extractive one), ``"veto"`` (a ``before_compact``
            hook vetoed the plan), ``"cache_break"`` (a stable section of the assembled
            head changed within an epoch: ``detail`` is the cause, the tokens are the
            head's), ``"thrash"`` (automatic compaction stopped:
            :class:`~ctxengine.errors.ThrashError`), ``"refill"`` (the same finding
            under a summarizer that calls no model: reported, compaction goes on),
            ``"idle"`` (an idle session compacts before its request:
            ``Policy.idle_compact_seconds``), or a background compaction's
            (:mod:`~ctxengine.engine.precompute`): ``"precompute_started"``,
            ``"precompute_adopted"`` (then its ``"compaction"``),
            ``"precompute_discarded"`` (stale or superseded; the detail names the entries
            and tokens since its snapshot), ``"precompute_failed"``,
            ``"precompute_cancelled"``, ``"precompute_skipped"`` (another writer of the
            stored session computes one), ``"precompute_deferred"`` (a trigger with no
            candidate held sent its context as it is and started one, which the next
            trigger waits for: ``Policy.precompute_block_ratio``).
        entry_id: the entry recorded (``None`` for a failure, a fallback or a veto).
        tokens_before / tokens_after: context size in tokens around the step.
        detail: human-readable detail (the failure reason, the cut, …).
        at_entry: number of history entries when the step ran.
        notes: for a compaction, the summarizer's notes on how the summary was written
            (``input:user_only``, ``chunks:3``, ``shrink:0.85`` …; see
            :mod:`ctxengine.summarizers.notes`).
        plan: the plan the step belongs to (compaction, fallback, failure, veto), if any.
    """

    step: str
    entry_id: str | None
    tokens_before: int
    tokens_after: int
    detail: str
    at_entry: int
    notes: tuple[str, ...] = ()
    plan: CompactionPlan | None = None

    def to_dict(self, *, with_plan: bool = True) -> dict[str, Any]:
        """A JSON-ready view (the plan as :meth:`CompactionPlan.to_dict`, or left out)."""
        view: dict[str, Any] = {
            "step": self.step,
            "entry_id": self.entry_id,
            "tokens_before": self.tokens_before,
            "tokens_after": self.tokens_after,
            "detail": self.detail,
            "at_entry": self.at_entry,
            "notes": list(self.notes),
        }
        if with_plan:
            view["plan"] = None if self.plan is None else self.plan.to_dict()
        return view


@dataclass(frozen=True, slots=True)
class CompactionOutcome:
    """Result of a compaction: what was stored and how it was written.

    Attributes:
        entry: the ``compaction`` entry appended.
        context: the context after it.
        tokens_before / tokens_after: context size in tokens.
        plan: the plan that was run.
        attempt: index in ``plan.attempts`` of the attempt kept (0: the planned cut).
        summarizer: name of the summarizer that wrote the continuation state.
        notes: the summarizer's notes.
        fallback: why the extractive summarizer wrote it instead of the session's
            (``"breaker"``, ``"must_fit"``, ``"on_failure"``), or ``None``.
    """

    entry: Entry
    context: Context
    tokens_before: int
    tokens_after: int
    plan: CompactionPlan | None = None
    attempt: int = 0
    summarizer: str = ""
    notes: tuple[str, ...] = ()
    fallback: str | None = None

    @property
    def record(self) -> CompactionRecord:
        """The compaction record stored."""
        body = self.entry.body
        if not isinstance(body, CompactionRecord):
            raise TypeError(f"entry {self.entry.id} is not a compaction")
        return body

    def report(self) -> dict[str, Any]:
        """A JSON-ready report (what ``ctxengine compact --report-json`` prints under
        ``"compaction"``): the cut, sizes, summarizer, fallback and the plan."""
        rec = self.record
        return {
            "entry_id": self.entry.id,
            "first_kept_id": rec.first_kept_id,
            "splits_turn": rec.splits_turn,
            "reason": rec.reason,
            "tokens_before": self.tokens_before,
            "tokens_after": self.tokens_after,
            "truncate_tokens": rec.truncate_tokens,
            "summarizer": self.summarizer,
            "notes": list(self.notes),
            "fallback": self.fallback,
            "attempt": self.attempt,
            "plan": None if self.plan is None else self.plan.to_dict(),
        }


@dataclass(frozen=True, slots=True)
class PlanDecision:
    """What a ``before_compact`` hook answers (pi ``session_before_compact``).

    Attributes:
        veto: a reason to not compact (the compaction does not run; history unchanged).
        focus: replaces the plan's focus text.
        summary: the continuation-state text to store at the plan's cut; no summarizer runs
            (the deterministic ledgers are still carried forward).
    """

    veto: str | None = None
    focus: str | None = None
    summary: str | None = None


#: Sees the plan before anything runs; may return a :class:`PlanDecision` (``None``: go on).
BeforeCompact = Callable[[CompactionPlan], "PlanDecision | None"]
#: Sees the outcome after it was stored.
AfterCompact = Callable[[CompactionOutcome], None]
