"""``UsageCorrection``: a per-session ratio between the provider's token counts and ours,
learned from usage reports, for the part of a context the usage anchor does not cover.

The estimator is fitted to OpenAI's encodings (``tokens/constants.py``); a provider whose
tokenizer splits this session's text differently (Claude's, Gemini's, an older GPT's on
Greek) reports more or fewer tokens than we estimate. Between two usable usage anchors of
one epoch (replies reporting prompt tokens, nothing compacted, pruned or unpinned between
them) the provider's prompt grew by ``prompt_k − prompt_(k−1)`` tokens; our estimate of the
same growth is the sum of the message estimates from the earlier reply up to the later
reply's request (:func:`anchor_growth`). The provider counted what we estimated, on this
session's own text; what a request carries that the log does not hold (a system prompt, a
tool list) is in both prompts and cancels out.

The ratio pools the reports: ``(prior + Σ reported) ÷ (prior + Σ estimated)``, the prior
being :data:`~ctxengine.policy.defaults.USAGE_CORRECTION_PRIOR_TOKENS` tokens at ratio 1,
each report's share clamped to the bounds, older reports fading once the estimated tokens
pooled exceed :data:`~ctxengine.policy.defaults.USAGE_CORRECTION_MEMORY_TOKENS`, the ratio
itself clamped to ``[min_ratio, max_ratio]``. A provider that reports 1.2 times our estimate
moves the ratio to 1.2 as its reports add up; one that reports 3 times stops it at 2.0.
"""

from __future__ import annotations

import math
from collections.abc import Hashable, Sequence

from ctxengine.model import Message
from ctxengine.policy.defaults import (
    USAGE_CORRECTION_MAX_RATIO,
    USAGE_CORRECTION_MEMORY_TOKENS,
    USAGE_CORRECTION_MIN_RATIO,
    USAGE_CORRECTION_PRIOR_TOKENS,
)
from ctxengine.tokens.base import Estimator
from ctxengine.tokens.size import is_usable_anchor


class UsageCorrection:
    """The running ratio of one session (see the module doc).

    Args:
        min_ratio / max_ratio: bounds of the ratio (``0 < min_ratio ≤ 1 ≤ max_ratio``).
        prior_tokens: estimated tokens of evidence the starting ratio 1.0 is worth (> 0).
        memory_tokens: estimated tokens pooled before older reports fade
            (≥ ``prior_tokens``).

    Raises:
        ValueError: bounds or sizes out of range (the message names the argument).

    Attributes:
        observations: reports pooled so far.
    """

    __slots__ = (
        "_estimated",
        "_reported",
        "_seen",
        "max_ratio",
        "memory_tokens",
        "min_ratio",
        "observations",
        "prior_tokens",
    )

    def __init__(
        self,
        *,
        min_ratio: float = USAGE_CORRECTION_MIN_RATIO,
        max_ratio: float = USAGE_CORRECTION_MAX_RATIO,
        prior_tokens: int = USAGE_CORRECTION_PRIOR_TOKENS,
        memory_tokens: int = USAGE_CORRECTION_MEMORY_TOKENS,
    ) -> None:
        if not 0 < min_ratio <= 1 <= max_ratio:
            raise ValueError(
                f"min_ratio {min_ratio} and max_ratio {max_ratio} must satisfy "
                "0 < min_ratio <= 1 <= max_ratio"
            )
        if prior_tokens <= 0:
            raise ValueError(f"prior_tokens must be positive, got {prior_tokens}")
        if memory_tokens < prior_tokens:
            raise ValueError(
                f"memory_tokens ({memory_tokens}) must be at least prior_tokens ({prior_tokens})"
            )
        self.min_ratio = min_ratio
        self.max_ratio = max_ratio
        self.prior_tokens = prior_tokens
        self.memory_tokens = memory_tokens
        self._reported = float(prior_tokens)
        self._estimated = float(prior_tokens)
        self._seen: set[Hashable] = set()
        self.observations = 0

    @property
    def ratio(self) -> float:
        """Provider tokens per estimated token, within the bounds (1.0 before any report)."""
        return min(self.max_ratio, max(self.min_ratio, self._reported / self._estimated))

    def observe(self, reported: int, estimated: int) -> float:
        """Pool one report: the provider counted ``reported`` tokens where we estimated
        ``estimated``. A report with either count ≤ 0 is ignored (a prompt that shrank:
        thinking blocks the provider dropped). Returns the ratio after it."""
        if reported <= 0 or estimated <= 0:
            return self.ratio
        self._reported += min(self.max_ratio * estimated, max(self.min_ratio * estimated, reported))
        self._estimated += estimated
        if self._estimated > self.memory_tokens:
            fade = self.memory_tokens / self._estimated
            self._reported *= fade
            self._estimated *= fade
        self.observations += 1
        return self.ratio

    def observe_anchor(
        self,
        key: Hashable,
        messages: Sequence[Message],
        anchor: int,
        estimator: Estimator,
        *,
        fresh_from: int = 0,
    ) -> bool:
        """Pool the growth up to the usage anchor ``messages[anchor]`` (:func:`anchor_growth`),
        once per ``key`` (the anchor's entry id: a context is measured many times).

        Returns:
            True when a report was pooled now.
        """
        if key in self._seen:
            return False
        self._seen.add(key)
        growth = anchor_growth(messages, anchor, estimator, fresh_from=fresh_from)
        if growth is None:
            return False
        before = self.observations
        self.observe(*growth)
        return self.observations > before

    def fresh(self) -> UsageCorrection:
        """A new correction with this one's bounds and sizes and no report pooled (ratio
        1.0, no anchor seen): what a session starts again from when its estimator changes."""
        return UsageCorrection(
            min_ratio=self.min_ratio,
            max_ratio=self.max_ratio,
            prior_tokens=self.prior_tokens,
            memory_tokens=self.memory_tokens,
        )

    def scale(self, tokens: int) -> int:
        """``tokens`` (an estimate) in the provider's tokens: ``ceil(tokens × ratio)``."""
        ratio = self.ratio
        return tokens if ratio == 1.0 else math.ceil(tokens * ratio)

    def __repr__(self) -> str:
        return f"UsageCorrection(ratio={self.ratio:.4f}, observations={self.observations})"


def anchor_growth(
    messages: Sequence[Message], anchor: int, estimator: Estimator, *, fresh_from: int = 0
) -> tuple[int, int] | None:
    """How much the prompt grew between the previous usable anchor and ``messages[anchor]``.

    Args:
        messages: a context's messages.
        anchor: index of a usable anchor (:func:`~ctxengine.tokens.size.is_usable_anchor`).
        estimator: prices the messages.
        fresh_from: index of the first message after the latest compaction, prune or unpin:
            an earlier anchor measured another context.

    Returns:
        ``(reported, estimated)``: the growth of the provider's prompt tokens, and the
        estimate of ``messages[previous:anchor]`` (the earlier reply, which the later
        prompt holds as input, and everything after it); ``None`` without an earlier
        usable anchor at index ≥ ``fresh_from``.
    """
    current = messages[anchor].usage
    if current is None:
        return None
    for prev in range(anchor - 1, max(fresh_from, 0) - 1, -1):
        earlier = messages[prev]
        if is_usable_anchor(earlier) and earlier.usage is not None:
            reported = current.prompt_tokens - earlier.usage.prompt_tokens
            estimated = sum(estimator.message(m) for m in messages[prev:anchor])
            return reported, estimated
    return None
