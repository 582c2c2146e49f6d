"""``Policy``: the ladder's configuration as data. Named presets are values of this model
(:mod:`ctxengine.policy.presets`)."""

from __future__ import annotations

from fnmatch import fnmatchcase
from typing import Annotated, Any, Literal, TypeAlias

from pydantic import BaseModel, ConfigDict, Field, ValidationError, model_validator

from ctxengine.errors import ConfigError
from ctxengine.policy import defaults as d

#: Every model's configuration: unknown fields refused, frozen; ``defer_build``: a model's
#: validator is built by its first validation, not when this module is imported.
CONFIG = ConfigDict(extra="forbid", frozen=True, defer_build=True)

#: The summarizers a policy may name (``"none"``: the prefix is dropped with a one-line
#: marker, no summary: truncation baselines and Gemini CLI's failure latch).
SummarizerName: TypeAlias = Literal["extractive", "llm", "hybrid", "none"]

#: A size relative to the model's window, as LangChain's ``ContextSize`` writes it:
#: ``("tokens", 150_000)`` or ``("fraction", 0.8)`` (of the window).
Size: TypeAlias = (
    tuple[Literal["tokens"], Annotated[int, Field(ge=0)]]
    | tuple[Literal["fraction"], Annotated[float, Field(ge=0, le=1)]]
)

#: When the trigger is checked: before every model call, or only before a call that starts
#: a turn (the newest message is a real user message). A context that does not fit the
#: window is compacted at any call.
CheckPoints: TypeAlias = Literal["every_call", "turn_start"]

#: What a keep-recent budget counts.
KeepUnit: TypeAlias = Literal["tokens", "chars"]

#: When a prune may run: with the compaction, when the trigger is reached (``"threshold"``),
#: or before every model call at a check point (``"always"``: observation masking).
PruneWhen: TypeAlias = Literal["threshold", "always"]

#: How the continuation state enters the context:
#:
#: * ``"checkpoint"``: one user message holding the state (pi, Claude Code, Roo Code, ours);
#: * ``"acknowledged"``: that user message, then a short assistant acknowledgement (Gemini
#:   CLI's snapshot + model reply) unless the kept tail starts with an assistant message;
#: * ``"handoff"``: the retained user messages, then the state last, opening with a hand-off
#:   prefix (Codex ``SUMMARY_PREFIX``);
#: * ``"assistant_reply"``: a synthetic user question and the state as the assistant's answer
#:   (OpenCode's ``summary:true`` assistant message).
Injection: TypeAlias = Literal["checkpoint", "acknowledged", "handoff", "assistant_reply"]

#: Durable state re-injected after a compaction (:mod:`ctxengine.ladder.reinject`): rules
#: carried as injected user-role messages, what the harness put into the conversation's
#: opening (reminders, system messages), the open todo list, the background tasks still
#: running, the plan-mode plan, the bodies of the skills invoked, the most recently read or
#: edited files.
Reinjected: TypeAlias = Literal[
    "rules", "opening", "todos", "background", "plan", "skills", "files"
]

#: What is pinned automatically (:data:`~ctxengine.policy.defaults.DEFAULT_AUTO_PINS`): the
#: session's first user request, and the active rules the user stated.
AutoPin: TypeAlias = Literal["first_request", "rules"]

#: When the thrash check runs (:data:`~ctxengine.policy.defaults.DEFAULT_THRASH_GUARD`): when
#: a model summarizer writes the compactions (each then costs a model call), always, or never.
ThrashGuard: TypeAlias = Literal["model", "always", "off"]

#: Templates a model summarizer may write to (the headings of each system's summary).
TemplateName: TypeAlias = Literal["default", "pi", "codex", "gemini-cli", "opencode", "claude-code"]

#: Who executes a compaction (:mod:`ctxengine.ladder.plan`): ``"local"`` (the ladder's own
#: summarizer), ``"native"`` (the provider compacts: Anthropic's ``compaction`` block, OpenAI's
#: encrypted ``compaction`` item; an error for a model whose profile lacks
#: ``native_compaction``), ``"auto"`` (native where the model's profile says
#: ``native_compaction``, local otherwise). Chat Completions has no native compaction: a
#: session calling it compacts locally under every backend.
Backend: TypeAlias = Literal["local", "native", "auto"]

#: What a model summarizer does when its own request overflows the summary model: shrink the
#: transcript step by step (85/70/50/35 %), or drop the oldest messages first (Codex; Claude
#: Code ``truncateHeadForPTLRetry``).
SummaryOverflow: TypeAlias = Literal["shrink", "drop_oldest"]


def size_tokens(size: int | Size, window: int) -> int:
    """``size`` in tokens for a ``window``-token model: an int is tokens already,
    ``("tokens", n)`` is ``n``, ``("fraction", x)`` is ``int(window * x)``."""
    if isinstance(size, int):
        return size
    kind, value = size
    return int(value) if kind == "tokens" else int(window * value)


class ModelOverride(BaseModel):
    """Trigger settings for the models whose name matches ``model`` (a shell-style pattern,
    case-sensitive: ``"gpt-5*"``, ``"claude-*-4-*"``); a field left ``None`` keeps the
    policy's (pi ``compaction.modelOverrides``).

    Raises:
        ConfigError: an invalid or unknown field.
    """

    model_config = CONFIG

    def __init__(self, **data: Any) -> None:
        try:
            super().__init__(**data)
        except ValidationError as exc:
            raise ConfigError(f"invalid model override: {exc}") from None

    model: str = Field(min_length=1)
    trigger_ratio: float | None = Field(None, gt=0, le=1)
    trigger: Size | None = None
    reserve_tokens: int | Size | None = None
    max_context_tokens: int | None = Field(None, gt=0)
    max_output_tokens: int | None = Field(None, gt=0)
    keep_recent_tokens: int | None = Field(None, ge=0)


class ClearToolUses(BaseModel):
    """Anthropic context editing ``clear_tool_uses_20250919``, passed through as configured
    (platform.claude.com build-with-claude/context-editing); a field left ``None`` is not
    sent and the API's default applies (trigger 100,000 input tokens, keep 3 tool uses).

    Attributes:
        trigger_tokens / trigger_tool_uses: start clearing at this many input tokens, or
            tool uses (at most one of the two).
        keep_tool_uses: the newest tool uses kept.
        clear_at_least_tokens: clear only when at least this many tokens go (so that the
            prompt cache it breaks pays off).
        exclude_tools: tools whose uses are never cleared.
        clear_tool_inputs: also clear the inputs of the calls: all (``True``) or these
            tools'.

    Raises:
        ConfigError: an invalid field, or both triggers.
    """

    model_config = CONFIG

    def __init__(self, **data: Any) -> None:
        try:
            super().__init__(**data)
        except ValidationError as exc:
            raise ConfigError(f"invalid clear_tool_uses: {exc}") from None

    @model_validator(mode="after")
    def _one_trigger(self) -> ClearToolUses:
        if self.trigger_tokens is not None and self.trigger_tool_uses is not None:
            raise ValueError("give trigger_tokens or trigger_tool_uses, not both")
        return self

    trigger_tokens: int | None = Field(None, gt=0)
    trigger_tool_uses: int | None = Field(None, gt=0)
    keep_tool_uses: int | None = Field(None, ge=0)
    clear_at_least_tokens: int | None = Field(None, gt=0)
    exclude_tools: tuple[str, ...] | None = None
    clear_tool_inputs: bool | tuple[str, ...] | None = None

    def edit(self) -> dict[str, Any]:
        """The edit as the Messages API takes it in ``context_management.edits``."""
        out: dict[str, Any] = {"type": "clear_tool_uses_20250919"}
        if self.trigger_tokens is not None:
            out["trigger"] = {"type": "input_tokens", "value": self.trigger_tokens}
        if self.trigger_tool_uses is not None:
            out["trigger"] = {"type": "tool_uses", "value": self.trigger_tool_uses}
        if self.keep_tool_uses is not None:
            out["keep"] = {"type": "tool_uses", "value": self.keep_tool_uses}
        if self.clear_at_least_tokens is not None:
            out["clear_at_least"] = {"type": "input_tokens", "value": self.clear_at_least_tokens}
        if self.exclude_tools is not None:
            out["exclude_tools"] = list(self.exclude_tools)
        if self.clear_tool_inputs is not None:
            inputs = self.clear_tool_inputs
            out["clear_tool_inputs"] = inputs if isinstance(inputs, bool) else list(inputs)
        return out


class ClearThinking(BaseModel):
    """Anthropic context editing ``clear_thinking_20251015``, passed through as configured:
    the thinking of all but the newest ``keep_turns`` assistant turns is cleared
    (``"all"``: none; ``None``: the API's default, the last turn).

    Raises:
        ConfigError: an invalid field.
    """

    model_config = CONFIG

    def __init__(self, **data: Any) -> None:
        try:
            super().__init__(**data)
        except ValidationError as exc:
            raise ConfigError(f"invalid clear_thinking: {exc}") from None

    keep_turns: int | Literal["all"] | None = None

    def edit(self) -> dict[str, Any]:
        """The edit as the Messages API takes it in ``context_management.edits``."""
        out: dict[str, Any] = {"type": "clear_thinking_20251015"}
        if self.keep_turns == "all":
            out["keep"] = "all"
        elif self.keep_turns is not None:
            out["keep"] = {"type": "thinking_turns", "value": self.keep_turns}
        return out


class Policy(BaseModel):
    """How and when to compact. Immutable; unknown fields are rejected.

    ==============================  ========================================================
    field                           meaning
    ==============================  ========================================================
    ``name``                        recorded on every compaction/prune entry
    ``enabled``                     ``False``: never compact nor prune (baseline ``none``)
    *trigger*
    ``trigger_ratio``               compact at this share of the window (0 < r ≤ 1)
    ``trigger``                     the same as a :data:`Size`; replaces ``trigger_ratio``
    ``reserve_tokens``              tokens (or a :data:`Size`) kept free below the window;
                                    ``None`` = automatic: ``min(20_000 + 13_000, 20 %)``
    ``reserve_max_ratio``           a given reserve (with its output part) is at most this
                                    share of the window, so small windows stay usable
    ``reserve_output``              the reserve also holds ``min(max output,
                                    reserve_output_cap)`` (Claude Code, OpenCode, Roo Code)
    ``max_output_tokens``           the model's output cap assumed when :meth:`resolve` is
                                    given none
    ``max_context_tokens``          optional absolute trigger cap (tokens)
    ``max_messages``                also compact when the context holds this many messages
                                    (OpenHands ``max_size``); soft unless over the window
    ``check_points``                :data:`CheckPoints`
    ``model_overrides``             per-model trigger settings (:meth:`for_model`)
    *tail and cut*
    ``keep_recent_tokens``          verbatim tail after a compaction, at most
                                    ``keep_recent_max_ratio`` of the window (or of the usable
                                    window, ``keep_recent_base="usable"``), at least
                                    ``keep_recent_min_tokens``
    ``keep_recent_share``           instead, this share of the conversation being compacted,
                                    counted in ``keep_recent_unit`` (Gemini CLI: 30 % of chars)
    ``keep_recent_messages``        instead, this many newest messages (keep-last-n, OpenHands)
    ``split_turn``                  a cut may fall at an assistant boundary inside a turn
                                    (pi's split turn); ``False``: at user messages only
    ``split_turn_last_resort``      with ``split_turn`` off, a plan's last attempt may still
                                    split a turn (a single turn too large to keep whole)
    ``retain_first_messages``       messages after the head kept verbatim before the
                                    continuation state (OpenHands ``keep_first``)
    ``retain_user_tokens``          the newest real user messages of the compacted range kept
                                    verbatim before the state, up to these tokens (Codex)
    *truncate and prune*
    ``truncate_max_chars``          per tool result, in the live context
    ``prune_*``                     prune tier (see :mod:`ctxengine.policy.defaults`):
                                    protected tokens, turns and results, minimum saving,
                                    exempt tools, ``prune_when`` (:data:`PruneWhen`),
                                    ``prune_cache_cold_only`` (only once the prompt cache
                                    has gone cold: see *cache timing*),
                                    ``prune_keep_tail_tokens`` (a pruned result keeps its
                                    tail instead of a placeholder)
    *cache timing and precompute*
    ``cache_ttl_seconds``           the provider's prompt-cache lifetime: the cache is cold
                                    when the newest message came this long after the latest
                                    reply; ``None``: the model profile's provider
                                    (Anthropic 5 min, 1 h extended; OpenAI 5 min, 24 h;
                                    Gemini 1 h), else 5 minutes
    ``cache_ttl_extended``          requests ask for the provider's extended lifetime
    ``idle_compact_seconds``        an idle session (its newest message came this long after
                                    the latest reply) compacts before its next request when
                                    its context is at least ``idle_compact_ratio`` of the
                                    trigger, instead of after it (``None``: never)
    ``precompute_ratio``            compute the coming compaction in the background once the
                                    context reaches this share of the trigger (or of the
                                    window, ``precompute_base="window"``) and at least
                                    ``precompute_min_tokens``; adopted at the trigger while
                                    the entries since fit the tail limit (``None``: never)
    ``precompute_block_ratio``      with ``precompute_ratio`` set, a trigger that holds no
                                    candidate does not compact in the foreground while the
                                    context is under this share of the window and the
                                    request fits it: the context goes out as it is, a
                                    candidate starts, and the next trigger waits for it and
                                    adopts it (Copilot SDK: background at 80 %, blocking at
                                    95 %); a stale candidate is adopted still when the
                                    context after it is under the precompute size. A
                                    candidate being computed is waited for, as without it;
                                    ``None``: no trigger sends its context uncompacted
    *summary*
    ``summarizer``                  :data:`SummarizerName`
    ``summary_template``            the headings a model summarizer writes
    ``summary_verify``              a model summarizer checks its summary in a second call
    ``summary_overflow``            :data:`SummaryOverflow`
    ``summary_max_tokens``          continuation-state budget (capped at 15 % of window)
    ``goal_max_ratio``              the first user request stays verbatim up to this share
                                    of the target
    ``headroom_ratio``              a compaction aims this share of the trigger below it, so
                                    that it buys several turns (target = trigger − headroom)
    *injection*
    ``injection``                   :data:`Injection`
    ``continuation_message``        a synthetic user message asking to go on follows the
                                    messages an automatic compaction saw (OpenCode)
    ``reinject``                    :data:`Reinjected` items shown after the continuation
                                    state of every compaction. Default ``rules``, ``todos``,
                                    ``background`` (cheap, and lost otherwise: users report
                                    rules and task state forgotten after compactions); they
                                    are never cut, count in the plan's expected size and in
                                    its floor; so is ``opening`` (the harness's opening
                                    reminders and system messages; the proxy adds it). ``plan``
                                    and ``files`` (Claude Code) fill the
                                    room left within ``reinject_files``,
                                    ``reinject_file_max_tokens`` and ``reinject_max_tokens``;
                                    so do ``skills`` (default and Claude Code): the bodies
                                    of the skills invoked, newest first, each within
                                    ``reinject_skill_max_tokens`` (a longer one keeps its
                                    top and names its file), all within
                                    ``reinject_skills_max_tokens`` (the oldest dropped)
    *pins*
    ``pins_max_tokens``             the pinned items' own budget (at most 5 % of the window);
                                    pins over it are refused
                                    (:class:`~ctxengine.errors.PinBudgetExceeded`)
    ``auto_pins``                   :data:`AutoPin` items pinned without a ``pin()`` call
                                    (none by default: the extractive state carries them)
    *recovery and guards*
    ``overflow_retries``            provider overflows of one request recovered by a
                                    compaction before the overflow is final
    ``overflow_shrink_ratio``       a recovery also aims at this share of the size that
                                    overflowed (Roo Code 75 %)
    ``max_consecutive_failures``    compactions in a row that leave the context over the
                                    trigger before :class:`~ctxengine.errors.CompactionLoopError`
    ``breaker_failures``            model-summary failures in a row that open the breaker
                                    (``None``: ``max_consecutive_failures``)
    ``failure_latch``               the first model-summary failure opens the breaker: until
                                    a manual compaction, the fallback writes every compaction
                                    (Gemini CLI ``hasFailedCompressionAttempt``)
    ``fallback_summarizer``         what writes a compaction when a model summary fails or
                                    the breaker is open: ``"extractive"``, or ``"none"``
                                    (drop without a summary: Gemini CLI "truncate only",
                                    Roo Code's sliding window)
    ``thrash_guard``                :data:`ThrashGuard`: automatic compaction stops
                                    (:class:`~ctxengine.errors.ThrashError`) when the
                                    context refills to the trigger within
                                    ``thrash_refill_calls`` model calls of the previous
                                    compaction ``thrash_limit`` times in a row
    ``fallback_keep_share``         the fallback cuts its own way: it keeps this share of the
                                    conversation's messages (Roo Code 50 %), and the first
                                    ``fallback_retain_first`` messages
    *provider-native compaction*
    ``compaction_backend``          :data:`Backend`: who executes a compaction. ``"native"``
                                    and ``"auto"`` take effect where a session calls its
                                    model (:meth:`~ctxengine.engine.Session.complete`, or
                                    ``prepare(api=…)``) on the Anthropic Messages or OpenAI
                                    Responses API
    ``native_trigger_tokens``       where the provider starts a compaction on its own (the
                                    ``compact_20260112`` trigger, OpenAI
                                    ``compact_threshold``); ``None``: the budget's trigger,
                                    for Anthropic at least 50,000 (its minimum; 150,000 is
                                    its default)
    ``native_instructions``         replace Anthropic's summarization prompt
    ``native_pause_after_compaction`` Anthropic returns the compaction block alone
                                    (``stop_reason: "compaction"``); the session stores it
                                    and asks again
    ``native_clear_tool_uses``      :class:`ClearToolUses`, sent to Anthropic as configured
    ``native_clear_thinking``       :class:`ClearThinking`, sent to Anthropic as configured
    ==============================  ========================================================

    Raises:
        ConfigError: an invalid field (out of range, unknown field, a ``summarizer`` other than
            ``"extractive"``, ``"llm"``, ``"hybrid"`` or ``"none"``), naming the field; from
            :meth:`resolve` when the reserve leaves no room in the window.
    """

    model_config = CONFIG

    def __init__(self, **data: Any) -> None:
        try:
            super().__init__(**data)
        except ValidationError as exc:
            raise ConfigError(f"invalid policy: {exc}") from None

    name: str = "default"
    enabled: bool = True
    trigger_ratio: float = Field(d.DEFAULT_TRIGGER_RATIO, gt=0, le=1)
    trigger: Size | None = None
    reserve_tokens: int | Size | None = None
    reserve_max_ratio: float | None = Field(None, gt=0, lt=1)
    reserve_output: bool = False
    reserve_output_cap: int | None = Field(None, ge=0)
    max_output_tokens: int = Field(d.DEFAULT_MAX_OUTPUT_TOKENS, gt=0)
    max_context_tokens: int | None = Field(None, gt=0)
    max_messages: int | None = Field(None, ge=2)
    check_points: CheckPoints = "every_call"
    model_overrides: tuple[ModelOverride, ...] = ()
    keep_recent_tokens: int = Field(d.DEFAULT_KEEP_RECENT_TOKENS, ge=0)
    keep_recent_max_ratio: float = Field(d.DEFAULT_KEEP_RECENT_MAX_RATIO, gt=0, le=1)
    keep_recent_min_tokens: int = Field(d.DEFAULT_KEEP_RECENT_MIN_TOKENS, ge=0)
    keep_recent_base: Literal["window", "usable"] = "window"
    keep_recent_share: float | None = Field(None, ge=0, lt=1)
    keep_recent_unit: KeepUnit = "tokens"
    keep_recent_messages: int | None = Field(None, ge=0)
    split_turn: bool = True
    split_turn_last_resort: bool = False
    retain_first_messages: int = Field(0, ge=0)
    retain_user_tokens: int = Field(0, ge=0)
    truncate_max_chars: int = Field(d.DEFAULT_TRUNCATE_MAX_CHARS, gt=0)
    truncate_max_window_ratio: float = Field(d.DEFAULT_TRUNCATE_MAX_WINDOW_RATIO, gt=0, le=1)
    truncate_head_ratio: float = Field(d.DEFAULT_TRUNCATE_HEAD_RATIO, gt=0, lt=1)
    prune_enabled: bool = True
    prune_protect_tokens: int = Field(d.DEFAULT_PRUNE_PROTECT_TOKENS, ge=0)
    prune_minimum_tokens: int = Field(d.DEFAULT_PRUNE_MINIMUM_TOKENS, ge=0)
    prune_protect_turns: int = Field(d.DEFAULT_PRUNE_PROTECT_TURNS, ge=0)
    prune_protect_results: int = Field(d.DEFAULT_PRUNE_PROTECT_RESULTS, ge=0)
    prune_exempt_tools: tuple[str, ...] = d.DEFAULT_PRUNE_EXEMPT_TOOLS
    prune_when: PruneWhen = "threshold"
    prune_cache_cold_only: bool = False
    # background precompute and cache-aware timing (engine/precompute.py, ladder/timing.py)
    cache_ttl_seconds: float | None = Field(None, gt=0)
    cache_ttl_extended: bool = False
    idle_compact_seconds: float | None = Field(None, gt=0)
    idle_compact_ratio: float = Field(d.DEFAULT_IDLE_COMPACT_RATIO, gt=0, le=1)
    precompute_ratio: float | None = Field(None, gt=0, lt=1)
    precompute_base: Literal["trigger", "window"] = "trigger"
    precompute_min_tokens: int = Field(0, ge=0)
    precompute_block_ratio: float | None = Field(None, gt=0, le=1)
    prune_keep_tail_tokens: int | None = Field(None, gt=0)
    goal_max_ratio: float = Field(d.DEFAULT_GOAL_MAX_RATIO, ge=0, le=1)
    headroom_ratio: float = Field(d.DEFAULT_HEADROOM_RATIO, ge=0, lt=1)
    summarizer: SummarizerName = "extractive"
    summary_template: TemplateName = "default"
    summary_verify: bool = False
    summary_overflow: SummaryOverflow = "shrink"
    summary_max_tokens: int = Field(d.DEFAULT_SUMMARY_MAX_TOKENS, gt=0)
    user_messages_budget_tokens: int = Field(d.DEFAULT_USER_MESSAGES_BUDGET_TOKENS, ge=0)
    injection: Injection = "checkpoint"
    continuation_message: bool = False
    reinject: tuple[Reinjected, ...] = d.DEFAULT_REINJECT
    reinject_files: int = Field(d.DEFAULT_REINJECT_FILES, ge=0)
    reinject_file_max_tokens: int = Field(d.DEFAULT_REINJECT_FILE_MAX_TOKENS, gt=0)
    reinject_max_tokens: int = Field(d.DEFAULT_REINJECT_MAX_TOKENS, ge=0)
    reinject_skill_max_tokens: int = Field(d.DEFAULT_REINJECT_SKILL_MAX_TOKENS, gt=0)
    reinject_skills_max_tokens: int = Field(d.DEFAULT_REINJECT_SKILLS_MAX_TOKENS, ge=0)
    pins_max_tokens: int = Field(d.DEFAULT_PINS_MAX_TOKENS, ge=0)
    auto_pins: tuple[AutoPin, ...] = d.DEFAULT_AUTO_PINS  # type: ignore[assignment]
    thrash_guard: ThrashGuard = d.DEFAULT_THRASH_GUARD  # type: ignore[assignment]
    thrash_limit: int = Field(d.DEFAULT_THRASH_LIMIT, ge=1)
    thrash_refill_calls: int = Field(d.DEFAULT_THRASH_REFILL_CALLS, ge=1)
    overflow_retries: int = Field(d.DEFAULT_OVERFLOW_RETRIES, ge=0)
    overflow_shrink_ratio: float | None = Field(None, gt=0, lt=1)
    max_consecutive_failures: int = Field(d.DEFAULT_MAX_CONSECUTIVE_FAILURES, ge=1)
    breaker_failures: int | None = Field(None, ge=1)
    failure_latch: bool = False
    fallback_summarizer: Literal["extractive", "none"] = "extractive"
    fallback_keep_share: float | None = Field(None, gt=0, lt=1)
    fallback_retain_first: int = Field(0, ge=0)
    # provider-native compaction
    compaction_backend: Backend = "local"
    native_trigger_tokens: int | None = Field(None, gt=0)
    native_instructions: str | None = None
    native_pause_after_compaction: bool = False
    native_clear_tool_uses: ClearToolUses | None = None
    native_clear_thinking: ClearThinking | None = None

    @property
    def breaker_threshold(self) -> int:
        """Model-summary failures in a row that open the summarizer's breaker: 1 with a
        failure latch, else ``breaker_failures`` or ``max_consecutive_failures``."""
        if self.failure_latch:
            return 1
        return self.breaker_failures or self.max_consecutive_failures

    def for_model(self, model: str | None) -> Policy:
        """This policy with the first :class:`ModelOverride` whose pattern matches ``model``
        applied (its fields that are not ``None``); ``self`` when none matches or ``model``
        is ``None``."""
        if model is None:
            return self
        for override in self.model_overrides:
            if fnmatchcase(model, override.model):
                update = override.model_dump(exclude={"model"}, exclude_none=True)
                return self.model_copy(update=update) if update else self
        return self

    def precompute_tokens(self, budget: Budget) -> int | None:
        """The context size (tokens) at which a background compaction starts under
        ``budget``: ``precompute_ratio`` of the trigger (or of the window), at least
        ``precompute_min_tokens``; ``None`` when the policy precomputes nothing."""
        if self.precompute_ratio is None:
            return None
        base = budget.trigger if self.precompute_base == "trigger" else budget.window
        return max(int(base * self.precompute_ratio), self.precompute_min_tokens)

    @model_validator(mode="after")
    def _block_needs_precompute(self) -> Policy:
        if self.precompute_block_ratio is not None and self.precompute_ratio is None:
            raise ValueError("precompute_block_ratio needs precompute_ratio")
        return self

    def precompute_block_tokens(self, budget: Budget) -> int | None:
        """The context size (tokens) from which a trigger waits for its background compaction
        or compacts in the foreground under ``budget``: ``precompute_block_ratio`` of the
        window; ``None`` when every trigger does (no block ratio, or nothing precomputed)."""
        if self.precompute_ratio is None or self.precompute_block_ratio is None:
            return None
        return int(budget.window * self.precompute_block_ratio)

    def resolve(self, window: int, max_output: int | None = None) -> Budget:
        """Turn ratios into token counts for a model window of ``window`` tokens whose output
        cap is ``max_output`` tokens (default ``max_output_tokens``; it counts only with
        ``reserve_output``).

        The trigger is ``min(window − reserve, trigger share, max_context_tokens)``; the kept
        tail ``keep_recent_tokens`` capped at ``keep_recent_max_ratio`` of the window (of
        ``window − reserve`` with ``keep_recent_base="usable"``), raised to
        ``keep_recent_min_tokens`` (at most half the trigger).

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
            reserve = size_tokens(self.reserve_tokens, window)
        if self.reserve_output:
            output = self.max_output_tokens if max_output is None else max_output
            if self.reserve_output_cap is not None:
                output = min(output, self.reserve_output_cap)
            reserve += output
        if self.reserve_max_ratio is not None:
            reserve = min(reserve, int(window * self.reserve_max_ratio))
        if reserve >= window:
            raise ConfigError(
                f"reserve of {reserve} tokens leaves no room in a {window}-token window"
            )
        share = (
            int(window * self.trigger_ratio)
            if self.trigger is None
            else size_tokens(self.trigger, window)
        )
        trigger = min(window - reserve, share)
        if self.max_context_tokens is not None:
            trigger = min(trigger, self.max_context_tokens)
        base = window if self.keep_recent_base == "window" else window - reserve
        keep_recent = min(self.keep_recent_tokens, int(base * self.keep_recent_max_ratio))
        # The floor takes at most half the trigger, so that a small window still compacts.
        keep_recent = max(keep_recent, min(self.keep_recent_min_tokens, trigger // 2))
        headroom = int(trigger * self.headroom_ratio)
        if keep_recent >= trigger:
            raise ConfigError(
                f"a keep-recent budget of {keep_recent} tokens leaves nothing to compact under "
                f"the trigger of {trigger} tokens (window {window}, reserve {reserve})"
            )
        # computed values, not input: built without validation (which would build Budget's
        # validator on the first resolve)
        return Budget.model_construct(
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
            pins_max=min(self.pins_max_tokens, int(window * d.DEFAULT_PINS_MAX_RATIO)),
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
        pins_max: the pinned items' budget.
    """

    model_config = CONFIG

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
    pins_max: int = 0

    @property
    def target(self) -> int:
        """The context size a compaction aims at, in tokens: the trigger less the headroom."""
        return self.trigger - self.headroom


def output_reserve(output_tokens: int, window: int) -> int:
    """The reserve that keeps a call's ``output_tokens`` free below a ``window``-token
    window, plus the margin for estimate error
    (:data:`~ctxengine.policy.defaults.OVERFLOW_MARGIN_RATIO` of the window). Tokens."""
    return output_tokens + int(window * d.OVERFLOW_MARGIN_RATIO)


#: The fields' defaults, built without validation so that importing the policy builds no
#: validator (``tests/test_startup.py`` checks that it equals a validated ``Policy()``).
DEFAULT_POLICY = Policy.model_construct()
