"""Valid cut points and the cut for a keep-recent budget (pi ``findCutPoint``).

The caller passes the conversation after the stable head: system and developer messages at
the start of the context are never part of a cut range. A cut at index ``i`` keeps
``messages[i:]`` verbatim and hands ``messages[:i]`` to the summarizer.

Rule of :func:`find_cut`:

1. Walk back from the newest message, adding estimates while the kept tokens stay within
   ``keep_recent_tokens``; ``p`` is the oldest index reached. If everything fits
   (``p == 0``) there is nothing to compact: ``None``.
2. Candidates are the valid cut points in ``[p, len - 1]`` (the tail is never empty).
3. A turn start (real user message) is preferred: the first candidate if it is one; else the
   first candidate turn start ``t`` if it still keeps at least
   :data:`~ctxengine.policy.defaults.MIN_TURN_START_KEPT_RATIO` of the budget; else, when
   splitting is allowed, the first candidate ``c0`` (inside a turn larger than what is left
   of the budget, at an assistant boundary: ``splits_turn=True``); else ``t``.
4. With no suitable candidate (a pending call near the end, or one newest message over the
   budget) the cut slides back to the latest valid point before ``p``, which keeps more than
   the budget; with none of those either: ``None``.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass
from itertools import accumulate

from ctxengine.boundaries.invariants import (
    exchange_atomicity,
    pending_calls,
    reasoning_adjacency,
    tool_pairing,
)
from ctxengine.boundaries.turns import segment_turns, turn_starts
from ctxengine.model import Message
from ctxengine.policy.defaults import MIN_TURN_START_KEPT_RATIO
from ctxengine.tokens.base import Estimator

#: The ``safe_indices`` function of every protocol invariant.
SAFE_INDEX_RULES: tuple[Callable[[Sequence[Message]], frozenset[int]], ...] = (
    tool_pairing.safe_indices,
    exchange_atomicity.safe_indices,
    reasoning_adjacency.safe_indices,
    pending_calls.safe_indices,
)


@dataclass(frozen=True, slots=True)
class CutPoint:
    """Where the verbatim tail starts.

    Attributes:
        index: first kept message (``1 <= index < len(messages)``).
        turn_start: index of the first message of the turn that contains ``index``
            (``index`` itself when the cut is at a turn start).
        splits_turn: the cut falls inside a turn, at an assistant boundary; the turn's
            prefix ``messages[turn_start:index]`` is summarized separately (pi split turn).
        kept_tokens: estimated tokens of ``messages[index:]``.
    """

    index: int
    turn_start: int
    splits_turn: bool
    kept_tokens: int


def valid_cut_points(messages: Sequence[Message]) -> frozenset[int]:
    """Indices in ``0..len(messages)`` allowed by every invariant (their intersection)."""
    valid = frozenset(range(len(messages) + 1))
    for rule in SAFE_INDEX_RULES:
        valid &= rule(messages)
    return valid


def find_cut(
    messages: Sequence[Message],
    keep_recent_tokens: int,
    estimator: Estimator,
    *,
    per_message: Sequence[int] | None = None,
    allow_split_turn: bool = True,
) -> CutPoint | None:
    """The cut that keeps about ``keep_recent_tokens`` of newest messages (rule in the
    module doc).

    Args:
        messages: the conversation after the stable head.
        keep_recent_tokens: keep-recent budget in tokens.
        estimator: prices messages when ``per_message`` is not given.
        per_message: cached token estimates, one per message.
        allow_split_turn: a cut may fall inside a turn.

    Returns:
        The :class:`CutPoint`, or ``None`` when everything fits the budget or no valid cut
        leaves both a non-empty prefix and a non-empty tail.

    Raises:
        ValueError: ``per_message`` has the wrong length.
    """
    n = len(messages)
    sizes = (
        list(per_message) if per_message is not None else [estimator.message(m) for m in messages]
    )
    if len(sizes) != n:
        raise ValueError(f"per_message has {len(sizes)} estimates for {n} messages")
    suffix = [*accumulate(reversed(sizes), initial=0)][::-1]  # suffix[i] = sum(sizes[i:])
    p = n
    while p > 0 and suffix[p - 1] <= keep_recent_tokens:
        p -= 1
    if p == 0:
        return None
    valid = valid_cut_points(messages)
    starts = turn_starts(messages)
    index = _choose(valid, starts, suffix, p, n, keep_recent_tokens, allow_split_turn)
    if index is None:
        return None
    turn_start = next(t.start for t in segment_turns(messages) if t.start <= index < t.end)
    return CutPoint(index, turn_start, index not in starts, suffix[index])


def _choose(
    valid: frozenset[int],
    starts: frozenset[int],
    suffix: Sequence[int],
    p: int,
    n: int,
    budget: int,
    allow_split: bool,
) -> int | None:
    candidates = [c for c in range(max(p, 1), n) if c in valid]
    if candidates:
        c0 = candidates[0]
        t = next((c for c in candidates if c in starts), None)
        if c0 in starts:
            return c0
        if t is not None and suffix[t] >= budget * MIN_TURN_START_KEPT_RATIO:
            return t
        if allow_split:
            return c0
        if t is not None:
            return t
    earlier = (c for c in range(min(p, n) - 1, 0, -1) if c in valid)
    return next((c for c in earlier if allow_split or c in starts), None)
