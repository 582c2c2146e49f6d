"""Fitting the input of a summary request into the summary model's window (pure planners).

The input budget comes first: ``window − max output − prompt − margin`` tokens for the
transcript (:func:`input_budget`). :func:`plan_input` then degrades the transcript step by step
(``full`` → ``tool_head_tail`` → ``no_tool_output`` → ``user_only``, see
:mod:`ctxengine.summarizers.transcript`) and takes the first mode that fits; when none does it
splits the history into chunks, oldest first, each small enough to be summarized on its own
(the summarizer then folds them one after the other, each summary the anchor of the next).

When the provider still rejects a request as too large (our estimate was low), the next try is
planned at 85 %, 70 %, 50 % and then 35 % of the rejected size (:func:`shrink_budget`); after
that the summary fails. A plan never holds an empty transcript, so a request whose input was
trimmed to nothing is never sent.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

from ctxengine.model import Message
from ctxengine.summarizers.transcript import (
    TOOL_RESULT_MAX_CHARS,
    TRANSCRIPT_MODES,
    TranscriptMode,
    cut_lines,
    serialize_transcript,
)
from ctxengine.tokens.base import Estimator

#: Share of the rejected size each retry after an overflow aims at, in order.
SHRINK_RATIOS: tuple[float, ...] = (0.85, 0.70, 0.50, 0.35)
#: Smallest transcript budget worth a request, in tokens.
MIN_INPUT_TOKENS = 256
#: Most chunks one compaction may be split into before degrading the chunks further.
DEFAULT_MAX_CHUNKS = 8
#: Modes tried for chunks, least degraded first.
CHUNK_MODES: tuple[TranscriptMode, ...] = ("tool_head_tail", "no_tool_output", "user_only")
_SEPARATOR = "\n\n"


@dataclass(frozen=True, slots=True)
class Piece:
    """The transcript of one summary request.

    Attributes:
        text: the transcript (never empty).
        tokens: its estimated size in tokens.
        mode: the transcript mode used.
        start / end: the messages it covers, ``messages[start:end]``.
        cut_chars: characters removed by a final head-and-tail cut (a single exchange larger
            than the budget), else 0.
    """

    text: str
    tokens: int
    mode: TranscriptMode
    start: int
    end: int
    cut_chars: int = 0


@dataclass(frozen=True, slots=True)
class InputPlan:
    """The transcript(s) to send: one piece, or several chunks oldest first.

    Attributes:
        pieces: the requests' transcripts, in order.
        budget: the transcript budget in tokens the plan was made for.
    """

    pieces: tuple[Piece, ...]
    budget: int

    @property
    def chunked(self) -> bool:
        """True when the history is summarized in several requests."""
        return len(self.pieces) > 1

    @property
    def tokens(self) -> int:
        """Estimated tokens of the largest piece."""
        return max(p.tokens for p in self.pieces)


def input_budget(window: int, max_output: int, prompt_tokens: int, margin: int) -> int:
    """Tokens left for the transcript: ``window − max_output − prompt_tokens − margin``
    (may be ≤ 0 when nothing fits)."""
    return window - max_output - prompt_tokens - margin


def shrink_ratio(
    step: int,
    *,
    reported_tokens: int | None = None,
    reported_limit: int | None = None,
) -> float | None:
    """Share of the rejected size that retry ``step`` (0-based) aims at: the step's entry of
    :data:`SHRINK_RATIOS`, or ``0.9 × limit / count`` when the provider reported its count and
    limit and that asks for a deeper cut; ``None`` once the steps are used up."""
    if step >= len(SHRINK_RATIOS):
        return None
    ratio = SHRINK_RATIOS[step]
    if reported_tokens and reported_limit and reported_tokens > reported_limit:
        ratio = min(ratio, 0.9 * reported_limit / reported_tokens)
    return ratio


def shrink_budget(
    rejected_tokens: int,
    step: int,
    *,
    reported_tokens: int | None = None,
    reported_limit: int | None = None,
) -> int | None:
    """Transcript budget for retry ``step`` (0-based) after a request whose transcript was
    estimated at ``rejected_tokens`` overflowed: ``rejected_tokens ×`` :func:`shrink_ratio`
    (at least 1); ``None`` once :data:`SHRINK_RATIOS` are used up."""
    ratio = shrink_ratio(step, reported_tokens=reported_tokens, reported_limit=reported_limit)
    if ratio is None or rejected_tokens <= 0:
        return None
    return max(1, int(rejected_tokens * ratio))


def _units(messages: Sequence[Message]) -> list[tuple[int, int]]:
    """Index ranges that stay together: a message plus the tool messages answering it."""
    units: list[tuple[int, int]] = []
    for i, m in enumerate(messages):
        if m.role == "tool" and units:
            units[-1] = (units[-1][0], i + 1)
        else:
            units.append((i, i + 1))
    return units


def _cut_to(text: str, budget: int, estimator: Estimator) -> tuple[str, int]:
    """``text`` cut (head and tail kept, framing intact: :func:`cut_lines`) until its
    estimate is within ``budget``, and the characters left out; ``("", 0)`` when even a few
    characters do not fit."""
    tokens = estimator.text(text)
    chars = len(text)
    for _ in range(12):
        chars = int(chars * min(0.95, budget / max(tokens, 1)))
        if chars < 40:
            return "", 0
        cut, removed = cut_lines(text, chars)
        tokens = estimator.text(cut)
        if tokens <= budget:
            return cut, removed
    return "", 0


def _split(
    messages: Sequence[Message], estimator: Estimator, budget: int, mode: TranscriptMode, cap: int
) -> list[Piece]:
    pieces: list[Piece] = []
    texts: list[str] = []
    start = end = 0

    def close() -> None:
        if texts:
            text = _SEPARATOR.join(texts)
            pieces.append(Piece(text, estimator.text(text), mode, start, end))

    for a, b in _units(messages):
        text = serialize_transcript(messages[a:b], tool_result_max_chars=cap, mode=mode)
        if not text.strip():
            end = b
            continue
        cost = estimator.text(text)
        joined = _SEPARATOR.join([*texts, text])
        if texts and estimator.text(joined) <= budget:
            texts.append(text)
            end = b
            continue
        close()
        texts, start, end = [], a, b
        if cost <= budget:
            texts = [text]
            continue
        cut, removed = _cut_to(text, budget, estimator)
        if cut:
            pieces.append(Piece(cut, estimator.text(cut), mode, a, b, removed))
        start = b
    close()
    return pieces


def plan_input(
    messages: Sequence[Message],
    estimator: Estimator,
    budget: int,
    *,
    cap: int = TOOL_RESULT_MAX_CHARS,
    max_chunks: int = DEFAULT_MAX_CHUNKS,
) -> InputPlan | None:
    """The least degraded transcript of ``messages`` that fits ``budget`` tokens, else
    oldest-first chunks that each fit (in the least degraded of :data:`CHUNK_MODES` needing at
    most ``max_chunks`` chunks, else the most degraded one).

    Args:
        messages: the history to summarize, oldest first.
        estimator: token estimator.
        budget: transcript budget in tokens.
        cap: per tool result cap in characters for the ``full`` mode.
        max_chunks: preferred largest number of chunks.

    Returns:
        The plan, or ``None`` when the budget is below :data:`MIN_INPUT_TOKENS` or every mode
        leaves nothing to send.
    """
    if budget < MIN_INPUT_TOKENS:
        return None
    for mode in TRANSCRIPT_MODES:
        text = serialize_transcript(messages, tool_result_max_chars=cap, mode=mode)
        if not text.strip():
            continue
        tokens = estimator.text(text)
        if tokens <= budget:
            return InputPlan((Piece(text, tokens, mode, 0, len(messages)),), budget)
    last: list[Piece] = []
    for mode in CHUNK_MODES:
        pieces = _split(messages, estimator, budget, mode, cap)
        if pieces and len(pieces) <= max_chunks:
            return InputPlan(tuple(pieces), budget)
        last = pieces or last
    return InputPlan(tuple(last), budget) if last else None


__all__ = [
    "CHUNK_MODES",
    "DEFAULT_MAX_CHUNKS",
    "MIN_INPUT_TOKENS",
    "SHRINK_RATIOS",
    "InputPlan",
    "Piece",
    "input_budget",
    "plan_input",
    "shrink_budget",
    "shrink_ratio",
]
