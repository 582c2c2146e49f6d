"""The compaction decision as a value: :class:`CompactionPlan`, made by a pure planner before
any summarizer call (pi ``prepareCompaction`` → ``compact``; OpenHands' SOFT/HARD
condensation requirement), then run by the engine's executor.

A plan says *why* (its :class:`Requirement`), *what* (the prune, the cut: first kept entry,
the messages to summarize, a split-turn prefix), *how much* (the budgets: summary,
keep-recent, truncate cap, the target size) and *what if the first try does not fit* (the
attempt schedule), with the tokens before and the tokens expected after. The same plan run
against the same history gives the same entries.

A plan is executed by one of two backends (:attr:`CompactionPlan.backend`, chosen by
:func:`choose_backend` from ``Policy.compaction_backend``, the API called and the model's
profile): ``"local"``, the session's summarizer writes the continuation state at the plan's
cut; ``"native"``, the provider summarizes the messages before that cut and returns an
opaque item that later requests to it send first (a continuation state written locally from
the same range stands in for it elsewhere).
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any, Literal

from ctxengine.errors import ConfigError
from ctxengine.ladder.prune import PrunePlan
from ctxengine.ladder.reinject import DurableState
from ctxengine.policy import Budget

#: Why a compaction runs: the trigger was reached, the provider said the context overflowed,
#: or the user asked (``/compact``).
Reason = Literal["threshold", "overflow", "manual"]

#: Who executes a plan: the session's summarizer, or the provider.
Backend = Literal["local", "native"]
#: The APIs that compact natively, and the provider each one's items are stored under
#: (:attr:`~ctxengine.model.NativeCompactionPart.provider`).
NATIVE_PROVIDERS: dict[str, str] = {"anthropic": "anthropic", "openai-responses": "openai"}

#: ``soft``: the context may be sent as it is, a failed compaction is counted and the
#: context kept. ``hard``: it cannot be sent as it is (over the window beside the output
#: budget, or the provider said so): a failing model summarizer gives way to the
#: extractive one.
Level = Literal["soft", "hard"]


@dataclass(frozen=True, slots=True)
class Requirement:
    """Whether a compaction must run, and why.

    Attributes:
        level: ``"soft"`` or ``"hard"`` (see :data:`Level`).
        reason: the :data:`Reason`.
        detail: one line a person can read (``"context 3,310 ≥ trigger 3,200"``).
        tokens: the context size that was measured, in tokens.
        limit: the limit the provider reported in an overflow error, in tokens (0: none).
    """

    level: Level
    reason: Reason
    detail: str
    tokens: int
    limit: int = 0

    @property
    def hard(self) -> bool:
        """The context cannot be sent as it is."""
        return self.level == "hard"


@dataclass(frozen=True, slots=True)
class Cut:
    """Where one attempt cuts the conversation (the messages after the head and the
    previous continuation state).

    Attributes:
        index: position in the conversation of the first kept message (its length when
            nothing is kept verbatim).
        first_kept_id: entry id of that message; ``None`` when nothing is kept verbatim.
        summarize: end of the conversation messages summarized (before the turn start when
            the cut splits a turn).
        turn_prefix: when the cut splits a turn, the number of messages of that turn before
            the cut (summarized separately, pi's split turn); else 0.
        splits_turn: the cut falls inside a turn, at an assistant boundary.
        kept_tokens: estimated tokens of the verbatim tail.
        summarize_from: the conversation messages before this index are retained, not
            summarized (OpenHands ``keep_first``); the summarized range is
            ``[summarize_from, summarize)``.
        retained: entry ids shown verbatim before the continuation state, in log order.
    """

    index: int
    first_kept_id: str | None
    summarize: int
    turn_prefix: int
    splits_turn: bool
    kept_tokens: int
    summarize_from: int = 0
    retained: tuple[str, ...] = ()


@dataclass(frozen=True, slots=True)
class Attempt:
    """One try of the schedule.

    Attributes:
        keep_recent: keep-recent budget of this try, in tokens.
        truncate_tokens: truncate-at-source cap of the context after it, in tokens
            (``None``: the projection's own, the budget's ``truncate_tokens``).
        cut: the cut it makes, or ``None`` when no valid cut leaves anything to summarize.
        summary_tokens: budget of the continuation state, in tokens.
        expected_tokens: context size expected after it when the summary uses its whole
            budget (head + tools + continuation message + summary + re-injected durable
            state + kept tail), in tokens.
        durable: the durable state it re-injects (:mod:`ctxengine.ladder.reinject`),
            counted in ``expected_tokens`` and taken from the summary's room first.
    """

    keep_recent: int
    truncate_tokens: int | None
    cut: Cut | None
    summary_tokens: int
    expected_tokens: int
    durable: DurableState = field(default_factory=DurableState)

    @property
    def reinjected_tokens(self) -> int:
        """Tokens of the re-injected durable state."""
        return self.durable.tokens


@dataclass(frozen=True, slots=True)
class CompactionPlan:
    """Everything a compaction will do, decided before any summarizer call.

    Attributes:
        requirement: why it runs (soft or hard, and the reason).
        focus: what the user asked the summary to focus on, if anything.
        prune: old tool results to prune first, or ``None``.
        attempts: the schedule; the executor runs them in order and stops at the first whose
            measured context is under :attr:`target` (any fit, for an overflow). The first
            attempt with a cut is the plan's cut.
        budget: the budget compacted to (the session's, or an overflow recovery's tighter
            one).
        target: the context size aimed at, in tokens: the trigger less the headroom, so that
            one compaction buys several turns.
        tokens_before: context size when planned, in tokens.
        fixed_tokens: head messages and tool schemas, in tokens.
        conversation: number of messages that could be summarized.
        policy: name of the policy that made the plan (recorded on the compaction).
        fallback: the attempt a failed model summary falls back to when the policy cuts its
            fallback its own way (``Policy.fallback_keep_share``: Roo Code's sliding
            window), else ``None`` (the fallback writes at the failed attempt's cut).
        injection: how the continuation state will be shown (``Policy.injection``).
        continuation: a continuation message will follow the messages the compaction saw
            (``Policy.continuation_message``, automatic compactions only).
        floor: the parts of the smallest context any compaction of this conversation can
            leave, largest first, as ``(name, tokens)``: the system prompt, the tool
            schemas, the continuation message around its summary, the re-injected durable
            state that is never cut (rules, todo list, background tasks; a rules block named
            by the file it carries), the smallest continuation state that can be written,
            the smallest tail the schedule keeps and the margin the summary's room keeps
            under the trigger. A floor at or over :attr:`floor_limit` cannot be compacted
            under the trigger with room to spare
            (:class:`~ctxengine.errors.ContextFloorError`).
        floor_free: tokens a compaction leaves free under the trigger when the floor crowds
            it (:func:`~ctxengine.ladder.compaction.floor_free`).
        backend: ``"local"`` or ``"native"`` (see the module docstring); a native plan
            runs its first attempt only: the provider's summary is not measured against a
            budget.
        native: with the native backend, the provider that compacts (``"anthropic"``,
            ``"openai"``); else ``None``.
    """

    requirement: Requirement
    focus: str | None
    prune: PrunePlan | None
    attempts: tuple[Attempt, ...]
    budget: Budget
    target: int
    tokens_before: int
    fixed_tokens: int
    conversation: int
    policy: str = "default"
    fallback: Attempt | None = None
    injection: str = "checkpoint"
    continuation: bool = False
    floor: tuple[tuple[str, int], ...] = ()
    floor_free: int = 0
    backend: Backend = "local"
    native: str | None = None

    @property
    def floor_tokens(self) -> int:
        """Tokens of the :attr:`floor`."""
        return sum(n for _, n in self.floor)

    @property
    def floor_limit(self) -> int:
        """The most the :attr:`floor` may take, in tokens: the trigger less
        :attr:`floor_free`."""
        return self.budget.trigger - self.floor_free

    @property
    def reason(self) -> Reason:
        """The requirement's reason."""
        return self.requirement.reason

    @property
    def order(self) -> tuple[int, ...]:
        """Indices of the attempts with a cut, in the order the executor tries them. (The
        expected sizes are upper bounds that cannot see what a compaction drops besides the
        summarized range, such as finished turns' reasoning, so every attempt is measured.)"""
        return tuple(n for n, a in enumerate(self.attempts) if a.cut is not None)

    @property
    def first(self) -> Attempt | None:
        """The attempt the executor tries first (:attr:`order`), or ``None`` (nothing to
        summarize)."""
        order = self.order
        return self.attempts[order[0]] if order else None

    @property
    def cut(self) -> Cut | None:
        """The plan's cut: that of :attr:`first`."""
        first = self.first
        return first.cut if first is not None else None

    @property
    def expected_tokens(self) -> int:
        """Context size expected after the first attempt, in tokens (``tokens_before`` when
        there is nothing to summarize)."""
        first = self.first
        return first.expected_tokens if first is not None else self.tokens_before

    def to_dict(self) -> dict[str, Any]:
        """A JSON-ready view (``ctxengine compact --plan --json``); ``injection`` and
        ``continuation`` appear when not the default."""
        req = self.requirement
        extra: dict[str, Any] = {}
        if self.injection != "checkpoint":
            extra["injection"] = self.injection
        if self.continuation:
            extra["continuation"] = True
        if self.fallback is not None and self.fallback.cut is not None:
            extra["fallback_cut"] = _cut_dict(self.fallback.cut)
        if self.backend != "local":
            extra["backend"] = self.backend
            extra["native"] = self.native
        return extra | {
            "requirement": {
                "level": req.level,
                "reason": req.reason,
                "detail": req.detail,
                "tokens": req.tokens,
                "limit": req.limit,
            },
            "policy": self.policy,
            "focus": self.focus,
            "prune": None
            if self.prune is None
            else {"call_ids": list(self.prune.call_ids), "tokens_saved": self.prune.tokens_saved},
            "cut": None if self.cut is None else _cut_dict(self.cut),
            "budget": self.budget.model_dump(),
            "target": self.target,
            "tokens_before": self.tokens_before,
            "expected_tokens": self.expected_tokens,
            "fixed_tokens": self.fixed_tokens,
            "floor": {
                "tokens": self.floor_tokens,
                "limit": self.floor_limit,
                "parts": dict(self.floor),
            },
            "conversation_messages": self.conversation,
            "attempts": [
                {
                    "keep_recent": a.keep_recent,
                    "truncate_tokens": a.truncate_tokens,
                    "summary_tokens": a.summary_tokens,
                    "expected_tokens": a.expected_tokens,
                    "reinjected": a.durable.by_kind(),
                    "cut": None if a.cut is None else _cut_dict(a.cut),
                }
                for a in self.attempts
            ],
        }


def _cut_dict(cut: Cut) -> dict[str, Any]:
    out: dict[str, Any] = {
        "index": cut.index,
        "first_kept_id": cut.first_kept_id,
        "summarize_messages": cut.summarize,
        "turn_prefix_messages": cut.turn_prefix,
        "splits_turn": cut.splits_turn,
        "kept_tokens": cut.kept_tokens,
    }
    if cut.summarize_from:
        out["summarize_from"] = cut.summarize_from
    if cut.retained:
        out["retained"] = list(cut.retained)
    return out


def choose_backend(backend: str, api: str | None, supported: bool) -> Backend:
    """Who executes the compactions of a session calling ``api`` (``"anthropic"``,
    ``"openai-responses"``, ``"openai"`` for Chat Completions; ``None``: not known) under
    ``Policy.compaction_backend`` ``backend``, for a model whose profile says ``supported``
    (``native_compaction``).

    ``"local"`` → local. ``"auto"`` → native where ``api`` compacts natively and the model
    supports it, else local. ``"native"`` → native on an API that compacts natively (an
    error for a model whose profile does not support it); an API without native compaction
    (Chat Completions) compacts locally, so a session that moves there keeps working.

    Raises:
        ConfigError: ``"native"`` on the Anthropic Messages or OpenAI Responses API for a
            model whose profile does not support native compaction.
    """
    if backend == "local" or api is None or api not in NATIVE_PROVIDERS:
        return "local"
    if backend == "auto":
        return "native" if supported else "local"
    if not supported:
        raise ConfigError(
            "compaction_backend 'native': the model's profile has no native compaction "
            "(set native_compaction in a CTXENGINE_MODEL_PROFILES file, or use 'auto')"
        )
    return "native"
