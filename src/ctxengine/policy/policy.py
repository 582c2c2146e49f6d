"""``Policy``: the ladder's configuration as data. Named presets are values of this model."""

from __future__ import annotations

from typing import Any, Literal, TypeAlias

from pydantic import BaseModel, ConfigDict, Field, ValidationError

from ctxengine.errors import ConfigError
from ctxengine.policy import defaults as d

#: The summarizers a policy may name.
SummarizerName: TypeAlias = Literal["extractive", "llm", "hybrid"]


class Policy(BaseModel):
    """How and when to compact. Immutable; unknown fields are rejected.

    ============================  ==========================================================
    field                         meaning
    ============================  ==========================================================
    ``name``                      recorded on every compaction/prune entry
    ``trigger_ratio``             compact at this share of the window (0 < r ≤ 1)
    ``reserve_tokens``            tokens kept free below the window; ``None`` = automatic:
                                  ``min(20_000 + 13_000, 20 % of window)``
    ``max_context_tokens``        optional absolute trigger cap (tokens); ``None`` = none
    ``keep_recent_tokens``        verbatim tail after a compaction (capped at 25 % of window)
    ``split_turn``                a cut may fall inside one oversized turn
    ``truncate_max_chars``        per tool result, in the live context
    ``prune_*``                   prune tier (see :mod:`ctxengine.policy.defaults`)
    ``summarizer``                ``"extractive"`` (default), ``"llm"``, ``"hybrid"``
    ``summary_max_tokens``        continuation-state budget (capped at 15 % of window)
    ``goal_max_ratio``            the first user request stays verbatim up to this share of
                                  the target
    ``headroom_ratio``            a compaction aims this share of the trigger below it, so
                                  that it buys several turns (target = trigger − headroom)
    ============================  ==========================================================

    Raises:
        ConfigError: an invalid field (out of range, unknown field, a ``summarizer`` other than
            ``"extractive"``, ``"llm"`` or ``"hybrid"``), naming the field; from
            :meth:`resolve` when the reserve leaves no room in the window.
    """

    model_config = ConfigDict(extra="forbid", frozen=True)

    def __init__(self, **data: Any) -> None:
        try:
            super().__init__(**data)
        except ValidationError as exc:
            raise ConfigError(f"invalid policy: {exc}") from None

    name: str = "default"
    trigger_ratio: float = Field(d.DEFAULT_TRIGGER_RATIO, gt=0, le=1)
    reserve_tokens: int | None = Field(None, ge=0)
    max_context_tokens: int | None = Field(None, gt=0)
    keep_recent_tokens: int = Field(d.DEFAULT_KEEP_RECENT_TOKENS, ge=0)
    keep_recent_max_ratio: float = Field(d.DEFAULT_KEEP_RECENT_MAX_RATIO, gt=0, le=1)
    split_turn: bool = True
    truncate_max_chars: int = Field(d.DEFAULT_TRUNCATE_MAX_CHARS, gt=0)
    truncate_max_window_ratio: float = Field(d.DEFAULT_TRUNCATE_MAX_WINDOW_RATIO, gt=0, le=1)
    truncate_head_ratio: float = Field(d.DEFAULT_TRUNCATE_HEAD_RATIO, gt=0, lt=1)
    prune_enabled: bool = True
    prune_protect_tokens: int = Field(d.DEFAULT_PRUNE_PROTECT_TOKENS, ge=0)
    prune_minimum_tokens: int = Field(d.DEFAULT_PRUNE_MINIMUM_TOKENS, ge=0)
    prune_protect_turns: int = Field(d.DEFAULT_PRUNE_PROTECT_TURNS, ge=0)
    prune_exempt_tools: tuple[str, ...] = d.DEFAULT_PRUNE_EXEMPT_TOOLS
    goal_max_ratio: float = Field(d.DEFAULT_GOAL_MAX_RATIO, ge=0, le=1)
    headroom_ratio: float = Field(d.DEFAULT_HEADROOM_RATIO, ge=0, lt=1)
    summarizer: SummarizerName = "extractive"
    summary_max_tokens: int = Field(d.DEFAULT_SUMMARY_MAX_TOKENS, gt=0)
    user_messages_budget_tokens: int = Field(d.DEFAULT_USER_MESSAGES_BUDGET_TOKENS, ge=0)
    max_consecutive_failures: int = Field(d.DEFAULT_MAX_CONSECUTIVE_FAILURES, ge=1)

    def resolve(self, window: int) -> Budget:
        """Turn ratios into token counts for a model window of ``window`` tokens.

        Raises:
            ConfigError: ``window`` below :data:`~ctxengine.policy.defaults.MIN_WINDOW_TOKENS`,
                a reserve ≥ the window, or a keep-recent budget ≥ the trigger.
        """
        if window < d.MIN_WINDOW_TOKENS:
            raise ConfigError(
                f"a context window of {window} tokens is too small: "
                f"ctxengine needs at least {d.MIN_WINDOW_TOKENS}"
            )
        if self.reserve_tokens is None:
            reserve = min(
                d.DEFAULT_RESERVE_OUTPUT_TOKENS + d.DEFAULT_SAFETY_BUFFER_TOKENS,
                int(window * d.DEFAULT_RESERVE_MAX_RATIO),
            )
        else:
            reserve = self.reserve_tokens
        if reserve >= window:
            raise ConfigError(
                f"reserve of {reserve} tokens leaves no room in a {window}-token window"
            )
        trigger = min(window - reserve, int(window * self.trigger_ratio))
        if self.max_context_tokens is not None:
            trigger = min(trigger, self.max_context_tokens)
        keep_recent = min(self.keep_recent_tokens, int(window * self.keep_recent_max_ratio))
        headroom = int(trigger * self.headroom_ratio)
        if keep_recent >= trigger:
            raise ConfigError(
                f"a keep-recent budget of {keep_recent} tokens leaves nothing to compact under "
                f"the trigger of {trigger} tokens (window {window}, reserve {reserve})"
            )
        return Budget(
            window=window,
            reserve=reserve,
            trigger=trigger,
            keep_recent=keep_recent,
            truncate_tokens=max(1, int(window * self.truncate_max_window_ratio)),
            prune_protect=min(
                self.prune_protect_tokens, int(window * d.DEFAULT_PRUNE_PROTECT_MAX_RATIO)
            ),
            prune_minimum=min(
                self.prune_minimum_tokens, int(window * d.DEFAULT_PRUNE_MINIMUM_MAX_RATIO)
            ),
            summary_max=min(self.summary_max_tokens, int(window * d.DEFAULT_SUMMARY_MAX_RATIO)),
            goal_max=int((trigger - headroom) * self.goal_max_ratio),
            headroom=headroom,
        )


class Budget(BaseModel):
    """A policy resolved against one window. All values in tokens.

    Attributes:
        window: the model's context window.
        reserve: kept free below the window.
        trigger: compact when the context reaches this.
        keep_recent: verbatim tail after a compaction.
        truncate_tokens: largest single tool result in the live context.
        prune_protect / prune_minimum: newest tool output protected; smallest saving worth a prune.
        summary_max: continuation-state budget.
        goal_max: the first user request stays verbatim up to this size.
        headroom: a compaction aims this far below the trigger (:attr:`target`).
    """

    model_config = ConfigDict(extra="forbid", frozen=True)

    window: int
    reserve: int
    trigger: int
    keep_recent: int
    truncate_tokens: int
    prune_protect: int
    prune_minimum: int
    summary_max: int
    goal_max: int = 0
    headroom: int = 0

    @property
    def target(self) -> int:
        """The context size a compaction aims at, in tokens: the trigger less the headroom."""
        return self.trigger - self.headroom


def output_reserve(output_tokens: int, window: int) -> int:
    """The reserve that keeps a call's ``output_tokens`` free below a ``window``-token
    window, plus the margin for estimate error
    (:data:`~ctxengine.policy.defaults.OVERFLOW_MARGIN_RATIO` of the window). Tokens."""
    return output_tokens + int(window * d.OVERFLOW_MARGIN_RATIO)


DEFAULT_POLICY = Policy()
