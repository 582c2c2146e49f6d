"""The notes a model summarizer puts on :attr:`~ctxengine.summarizers.base.Summary.notes`:
what was done to the summary input and how the summary was obtained, as short
machine-readable ``key:value`` strings (for reports and engine events).

=====================================  ===================================================
note                                   meaning
=====================================  ===================================================
``cache_reuse:appended``               the summary was written by appending the
                                       instruction to the live request (prefix cache kept)
``cache_reuse:fallback(REASON)``       cache reuse was tried and a transcript was sent
                                       instead; ``REASON`` is ``no_live_request``,
                                       ``other_provider``, ``too_large``,
                                       ``not_reusable``, a rejection reason
                                       (``tool_calls``, ``template_only``, ``inflated`` …)
                                       or a provider error (``context_overflow``,
                                       ``transient_provider_error`` …)
``shrink:0.85``                        a summary request overflowed the model; the next
                                       one was planned at this share of the rejected
                                       transcript size (one note per retry, in order)
``dropped_oldest:N``                   (``overflow="drop_oldest"``) after an overflow, the
                                       ``N`` oldest messages were left out of the next
                                       request instead of degrading the transcript
``input:MODE``                         the transcript sent was degraded to ``MODE``
                                       (``tool_head_tail``, ``no_tool_output``,
                                       ``user_only``); chunks in several modes join them
                                       with ``+``, least degraded first. No note for
                                       ``full``
``chunks:N``                           the history was summarized in ``N`` requests,
                                       oldest first
``cut_chars:N``                        ``N`` characters of exchanges too large for one
                                       request were left out of the transcript
``calls:N``                            model calls made for this summary (failed, nudge
                                       and verification calls included)
``nudges:N`` / ``verify:N``            how many of them were heading nudges /
                                       verification passes (only when ``N`` > 0)
``call_input_tokens:N``                provider-reported input tokens of those calls
                                       (cache reads and writes included)
``call_output_tokens:N``               provider-reported output tokens of those calls
``ledgers:NOTE``                       (hybrid) how the ledger block was shortened, with
                                       the extractive summarizer's note
=====================================  ===================================================

Pure functions; no I/O.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from typing import TYPE_CHECKING

from ctxengine.errors import SummaryRejected
from ctxengine.summarizers.cache_reuse import NotReusable

if TYPE_CHECKING:
    from ctxengine.summarizers.calls import SummaryCall
    from ctxengine.summarizers.fit import InputPlan
    from ctxengine.summarizers.transcript import TranscriptMode

#: Note of a summary written in cache-reuse mode.
CACHE_REUSE_APPENDED = "cache_reuse:appended"
_CAMEL = re.compile(r"(?<!^)(?=[A-Z])")


def snake_name(error: BaseException) -> str:
    """An exception's class name in snake case: ``ContextOverflow`` → ``context_overflow``."""
    return _CAMEL.sub("_", type(error).__name__).lower()


def cache_reuse_fallback(reason: str | BaseException) -> str:
    """``cache_reuse:fallback(REASON)``; an exception gives its rejection reason
    (:class:`~ctxengine.errors.SummaryRejected`), else ``not_reusable`` for a body that cannot
    carry the instruction, else its class name in snake case."""
    if isinstance(reason, SummaryRejected):
        reason = reason.reason
    elif isinstance(reason, NotReusable):
        reason = "not_reusable"
    elif isinstance(reason, BaseException):
        reason = snake_name(reason)
    return f"cache_reuse:fallback({reason})"


def shrink_note(ratio: float) -> str:
    """``shrink:0.70`` for a retry planned at ``ratio`` of the rejected size."""
    return f"shrink:{ratio:.2f}"


def plan_notes(plan: InputPlan, order: Sequence[TranscriptMode]) -> list[str]:
    """``input:MODE``, ``chunks:N`` and ``cut_chars:N`` for the plan that was sent;
    ``order`` ranks the modes from least to most degraded."""
    notes: list[str] = []
    modes = sorted({p.mode for p in plan.pieces}, key=order.index)
    if modes != ["full"]:
        notes.append(f"input:{'+'.join(modes)}")
    if plan.chunked:
        notes.append(f"chunks:{len(plan.pieces)}")
    cut = sum(p.cut_chars for p in plan.pieces)
    if cut:
        notes.append(f"cut_chars:{cut}")
    return notes


def call_notes(calls: Sequence[SummaryCall]) -> list[str]:
    """``calls:N`` (and ``nudges:N`` / ``verify:N`` when any) and the provider-reported
    ``call_input_tokens:N`` / ``call_output_tokens:N`` of ``calls``."""
    notes = [f"calls:{len(calls)}"]
    for purpose, key in (("nudge", "nudges"), ("verify", "verify")):
        count = sum(1 for c in calls if c.purpose == purpose)
        if count:
            notes.append(f"{key}:{count}")
    notes.append(f"call_input_tokens:{sum(c.usage.prompt_tokens for c in calls)}")
    notes.append(f"call_output_tokens:{sum(c.usage.output_tokens for c in calls)}")
    return notes


__all__ = [
    "CACHE_REUSE_APPENDED",
    "cache_reuse_fallback",
    "call_notes",
    "plan_notes",
    "shrink_note",
    "snake_name",
]
