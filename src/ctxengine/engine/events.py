"""Values the session reports: :class:`LadderEvent` (one step of the ladder) and
:class:`CompactionOutcome` (the result of one compaction)."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Literal

from ctxengine.model import Entry
from ctxengine.projection.context import Context

#: Why a compaction runs: the trigger was reached, the model overflowed, or the user asked.
Reason = Literal["threshold", "overflow", "manual"]


@dataclass(frozen=True, slots=True)
class LadderEvent:
    """One step the ladder took (or tried), for reports and replay timelines.

    Attributes:
        step: ``"prune"``, ``"compaction"``, ``"failure"`` or ``"fallback"`` (a model
            summarizer gave way to the extractive one).
        entry_id: the entry recorded (``None`` for a failure or a fallback).
        tokens_before / tokens_after: context size in tokens around the step.
        detail: human-readable detail (the failure reason, the cut, …).
        at_entry: number of history entries when the step ran.
        notes: for a compaction, the summarizer's notes on how the summary was written
            (``input:user_only``, ``chunks:3``, ``shrink:0.85`` …; see
            :mod:`ctxengine.summarizers.notes`).
    """

    step: str
    entry_id: str | None
    tokens_before: int
    tokens_after: int
    detail: str
    at_entry: int
    notes: tuple[str, ...] = ()


@dataclass(frozen=True, slots=True)
class CompactionOutcome:
    """Result of a compaction.

    Attributes:
        entry: the ``compaction`` entry appended.
        context: the context after it.
        tokens_before / tokens_after: context size in tokens.
    """

    entry: Entry
    context: Context
    tokens_before: int
    tokens_after: int
