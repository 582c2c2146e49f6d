"""Named presets: :class:`~ctxengine.policy.Policy` values that reproduce the context
management of known coding agents, and baselines to compare them with.

A preset is data. The planner (:mod:`ctxengine.ladder`) and the projection read its fields
like any other policy's; nothing in the engine asks which preset runs. Each preset's
docstring (on its builder below) tables its constants and where they come from: a section of
``../shared/reference/coding-agents.md`` ("§n"), the seeds, or "ours" for a figure the notes
do not give. Every number lives in :mod:`ctxengine.policy.defaults`.

Where a system writes its summary with a model, the preset names a model summarizer
(``"llm"`` or ``"hybrid"``) and the system's template; a session without a summary model
runs the extractive summarizer in its place (:func:`offline`), and a replay says so.

Every preset compacts locally (``compaction_backend="local"``): the systems they reproduce
write their own summaries. A preset combines with the provider's own compaction like any
policy: ``preset("pi").model_copy(update={"compaction_backend": "auto"})`` keeps pi's
trigger and tail, and where the model compacts natively the provider writes the summary at
pi's cut (:mod:`ctxengine.ladder.plan`, ``choose_backend``).

Shared by the presets of the known systems (ctxengine's own choices, not the systems'):

* ``headroom_ratio`` 0: they aim at no target below the trigger; they keep their own tail.
* ctxengine's safety caps stay: a kept tail (or retained user messages) of at most 25 % of
  the window, a single tool result of at most 20 % of it, prune protection of at most 20 %
  and a minimum of at most 10 %, so every preset also runs at small windows (32k).
"""

from __future__ import annotations

from collections.abc import Callable

from ctxengine.errors import ConfigError
from ctxengine.policy import defaults as d
from ctxengine.policy.policy import DEFAULT_POLICY, Policy

#: A fixed reserve takes at most this share of a small window (ours), so that presets whose
#: reserve is a fixed number of tokens still leave half the window to a 32k model.
PRESET_RESERVE_MAX_RATIO = 0.5


def _default() -> Policy:
    """``default``: ctxengine's own ladder (every default of :mod:`~ctxengine.policy.
    defaults`).

    =======================  ==================================================================
    setting                  value
    =======================  ==================================================================
    trigger                  ``min(window − min(33,000, 20 %), 90 %)``
    tail                     20,000 tokens, at most 25 % of the window; split turns
    target                   55 % below the trigger (headroom)
    prune                    protect 40,000 / minimum 20,000 / last 2 turns; skills, plans
    summary                  extractive continuation state, 8,000 tokens (15 % of window)
    injection                one user checkpoint message
    re-injection             after every compaction: rules carried as injected user messages,
                             the open todo list, background tasks still running (never cut);
                             the skill bodies invoked (≤ 5,000 tokens each, 25,000 in all)
    =======================  ==================================================================
    """
    return DEFAULT_POLICY


def _pi() -> Policy:
    """``pi`` (reference §1, seed 002).

    ==========================  ==============================================  ==========
    setting                     value                                           source
    ==========================  ==============================================  ==========
    trigger                     ``contextTokens > window − reserveTokens``       §1
    ``reserve_tokens``          16,384 (``DEFAULT_COMPACTION_SETTINGS``)         §1
    ``keep_recent_tokens``      20,000 (``keepRecentTokens``)                    §1
    cut                         user or assistant boundary, split turn           §1
    check points                before every call (pi ≥ 0.84.4)                  §1
    prune                       none ("There is no pruning of tool outputs")     §1
    summary                     model, rolling (previous summary anchor), with   §1
                                ``<read-files>``/``<modified-files>`` lists
                                appended in code: ``hybrid``, pi's headings
    injection                   user message with the summary                    §1
    re-injection                none (AGENTS.md is part of the system prompt)    §1
    overflow                    compact and retry once                           §1
    ==========================  ==============================================  ==========
    """
    return Policy(
        name="pi",
        trigger_ratio=1.0,
        reserve_tokens=d.PI_RESERVE_TOKENS,
        reserve_max_ratio=PRESET_RESERVE_MAX_RATIO,
        keep_recent_tokens=d.PI_KEEP_RECENT_TOKENS,
        split_turn=True,
        headroom_ratio=0.0,
        prune_enabled=False,
        summarizer="hybrid",
        summary_template="pi",
        injection="checkpoint",
        reinject=(),
        overflow_retries=1,
    )


def _codex() -> Policy:
    """``codex`` (reference §3).

    ==========================  ==============================================  ==========
    setting                     value                                           source
    ==========================  ==============================================  ==========
    trigger                     ``min(configured cap, (window*9)/10)``: 90 %     §3
                                (``max_context_tokens`` is the cap; no reserve
                                besides the 10 %)
    tail                        none: no assistant turn or tool call kept        §3
    retained                    user messages newest first up to 20,000 tokens   §3
                                (``COMPACT_USER_MESSAGE_MAX_TOKENS``)
    injection                   summary last, user role, hand-off prefix         §3
                                (``SUMMARY_PREFIX``)
    re-injection                rules: the AGENTS.md user message, re-added      §3
                                with the initial context
    truncation                  tool outputs head + tail, 10,240 chars, half     §3, ours
                                and half (the note gives no figure)
    prune                       none (truncation at record time plays its role)  §3
    summary                     model, free-form hand-off checkpoint; the        §3
                                summary request drops its oldest items when it
                                overflows ("Trimmed N older item(s)")
    background compaction       a candidate starts at 65 % of the full window    seed 000
                                (``DEFAULT_ASYNC_COMPACTION_THRESHOLD_PERCENT``)
                                and is adopted at the trigger; discarded past
                                the tail limit (OpenCode's; Codex gives none)
    ==========================  ==============================================  ==========
    """
    return Policy(
        name="codex",
        trigger_ratio=d.CODEX_TRIGGER_RATIO,
        reserve_tokens=("fraction", round(1 - d.CODEX_TRIGGER_RATIO, 10)),
        keep_recent_tokens=0,
        retain_user_tokens=d.CODEX_USER_MESSAGE_MAX_TOKENS,
        user_messages_budget_tokens=0,
        injection="handoff",
        reinject=("rules",),
        truncate_max_chars=d.CODEX_TRUNCATE_MAX_CHARS,
        truncate_head_ratio=d.CODEX_TRUNCATE_HEAD_RATIO,
        prune_enabled=False,
        headroom_ratio=0.0,
        summarizer="llm",
        summary_template="codex",
        summary_overflow="drop_oldest",
        precompute_ratio=d.CODEX_PRECOMPUTE_RATIO,
        precompute_base="window",
    )


def _gemini_cli() -> Policy:
    """``gemini-cli`` (reference §4).

    ==========================  ==============================================  ==========
    setting                     value                                           source
    ==========================  ==============================================  ==========
    trigger                     50 % of the window                               §4
                                (``DEFAULT_COMPRESSION_TOKEN_THRESHOLD``)
    tail                        last 30 % of the history by characters           §4
                                (``COMPRESSION_PRESERVE_THRESHOLD``)
    cut                         user messages only (never a function response);  §4, ours
                                a plan's last attempt may split a turn too
                                large to keep whole (ours: Gemini CLI cannot
                                compress then)
    old tool output             newest function responses within 50,000 tokens   §4, ours
                                whole, older ones cut to a 1,000-token tail
                                (``COMPRESSION_FUNCTION_RESPONSE_TOKEN_BUDGET``;
                                the tail length is ours)
    injection                   snapshot as a user message + the model's         §4
                                acknowledgement
    re-injection                none (GEMINI.md is part of the system            §4
                                instruction)
    summary                     model, ``<state_snapshot>`` sections, second     §4
                                verification call
    guard                       failure latch: after a failed summary,           §4
                                automatic compactions truncate only
                                (``hasFailedCompressionAttempt``)
    ==========================  ==============================================  ==========
    """
    return Policy(
        name="gemini-cli",
        trigger_ratio=d.GEMINI_TRIGGER_RATIO,
        keep_recent_share=d.GEMINI_KEEP_SHARE,
        keep_recent_unit="chars",
        split_turn=False,
        split_turn_last_resort=True,
        prune_protect_tokens=d.GEMINI_FUNCTION_RESPONSE_BUDGET,
        prune_minimum_tokens=0,
        prune_protect_turns=0,
        prune_keep_tail_tokens=d.GEMINI_FUNCTION_RESPONSE_TAIL_TOKENS,
        injection="acknowledged",
        reinject=(),
        headroom_ratio=0.0,
        summarizer="llm",
        summary_template="gemini-cli",
        summary_verify=True,
        failure_latch=True,
        fallback_summarizer="none",
    )


def _opencode() -> Policy:
    """``opencode`` (reference §2).

    ==========================  ==============================================  ==========
    setting                     value                                           source
    ==========================  ==============================================  ==========
    trigger                     ``usable = window − min(20,000, max output)``    §2
                                (``COMPACTION_BUFFER``)
    tail                        25 % of usable, clamped 2,000–15,000 tokens,     §2
                                whole turns; a turn that does not fit whole is
                                split (``MIN_PRESERVE_RECENT_TOKENS``,
                                ``splitTurn``)
    prune                       protect 40,000 / minimum 20,000 / last 2 user    §2
                                turns / ``skill`` exempt (``PRUNE_PROTECT``,
                                ``PRUNE_MINIMUM``, ``PRUNE_PROTECTED_TOOLS``)
    injection                   synthetic user question + the summary as the     §2
                                assistant's reply; a "continue" user message
                                after an automatic compaction
    re-injection                none (instructions are collected into the        §2, seed
                                system array on every call)                      001
    summary                     model, Objective / Important Details / Work      §2
                                State / Next Move / Relevant Files, headings
                                validated (``validateSummary``)
    check points                every step                                       §2
    background compaction       the summary is precomputed from 85 % of the      seed 000
                                compaction limit, for a context of at least
                                64K tokens; adopted while the tail since fits
                                ``min(max(keep·2, 30,000), 25 % of budget)``
    ==========================  ==============================================  ==========
    """
    return Policy(
        name="opencode",
        trigger_ratio=1.0,
        reserve_tokens=0,
        reserve_output=True,
        reserve_output_cap=d.OPENCODE_RESERVE_OUTPUT_CAP,
        reserve_max_ratio=PRESET_RESERVE_MAX_RATIO,
        keep_recent_tokens=d.OPENCODE_KEEP_RECENT_MAX_TOKENS,
        keep_recent_max_ratio=d.OPENCODE_KEEP_RECENT_RATIO,
        keep_recent_base="usable",
        keep_recent_min_tokens=d.OPENCODE_KEEP_RECENT_MIN_TOKENS,
        split_turn=True,
        prune_protect_tokens=d.OPENCODE_PRUNE_PROTECT_TOKENS,
        prune_minimum_tokens=d.OPENCODE_PRUNE_MINIMUM_TOKENS,
        prune_protect_turns=d.OPENCODE_PRUNE_PROTECT_TURNS,
        prune_exempt_tools=d.OPENCODE_PRUNE_EXEMPT_TOOLS,
        injection="assistant_reply",
        reinject=(),
        continuation_message=True,
        headroom_ratio=0.0,
        summarizer="llm",
        summary_template="opencode",
        precompute_ratio=d.OPENCODE_PRECOMPUTE_RATIO,
        precompute_min_tokens=d.OPENCODE_PRECOMPUTE_MIN_TOKENS,
    )


def _claude_code() -> Policy:
    """``claude-code`` (reference §7; closed source, figures indicative).

    ==========================  ==============================================  ==========
    setting                     value                                           source
    ==========================  ==============================================  ==========
    trigger                     ``window − min(max output, 20,000) − 13,000``    §7
                                (``MAX_OUTPUT_TOKENS_FOR_SUMMARY``,
                                ``AUTOCOMPACT_BUFFER_TOKENS``; ~83 % of 200k,
                                so the output cap is taken as ≥ 20,000)
    tail                        none: summary plus restored items only           §7
    re-injection                rules files, the plan-mode plan, up to 5         §7
                                recently read or edited files ≤ 5,000 tokens
                                each, 50,000 in all
                                (``POST_COMPACT_MAX_FILES_TO_RESTORE``); also
                                the open todo list and background tasks          ours
                                still running (ctxengine's default); invoked     §7
                                skill bodies ≤ 5,000 tokens each, 25,000 in
                                all, oldest dropped first
    guard                       breaker after 3 failures                         §7
                                (``MAX_CONSECUTIVE_AUTOCOMPACT_FAILURES``)
    summary                     model, 9 sections (``<analysis>`` stripped);     §7
                                its request drops the oldest rounds when too
                                long (``truncateHeadForPTLRetry``)
    prune                       time-based microcompact: once the prompt cache   §7, seed
                                has gone cold, every tool result but the 5       000
                                newest is cleared, when that saves at least
                                20,000 tokens (the reference has it behind a
                                flag; the seeds observe it in the CLI)
    cache                       1-hour prompt-cache lifetime (Anthropic's        seed 000
                                extended TTL)
    idle compaction             a session idle past the hour compacts before     seed 000,
                                its next request, at ≥ 80 % of the trigger       ours
                                (the share is ours)
    check points                top of every query-loop iteration                §7
    ==========================  ==============================================  ==========
    """
    return Policy(
        name="claude-code",
        trigger_ratio=1.0,
        reserve_tokens=d.CLAUDE_CODE_BUFFER_TOKENS,
        reserve_output=True,
        reserve_output_cap=d.CLAUDE_CODE_OUTPUT_CAP,
        max_output_tokens=d.CLAUDE_CODE_OUTPUT_CAP,
        reserve_max_ratio=PRESET_RESERVE_MAX_RATIO,
        keep_recent_tokens=0,
        reinject=("rules", "todos", "background", "plan", "skills", "files"),
        reinject_files=d.DEFAULT_REINJECT_FILES,
        reinject_file_max_tokens=d.DEFAULT_REINJECT_FILE_MAX_TOKENS,
        reinject_max_tokens=d.DEFAULT_REINJECT_MAX_TOKENS,
        max_consecutive_failures=d.CLAUDE_CODE_MAX_FAILURES,
        prune_when="always",
        prune_cache_cold_only=True,
        prune_protect_tokens=0,
        prune_protect_turns=0,
        prune_protect_results=d.CLAUDE_CODE_MICROCOMPACT_KEEP_RESULTS,
        prune_minimum_tokens=d.CLAUDE_CODE_MICROCOMPACT_MIN_TOKENS,
        cache_ttl_seconds=d.CLAUDE_CODE_CACHE_TTL_SECONDS,
        idle_compact_seconds=d.CLAUDE_CODE_IDLE_COMPACT_SECONDS,
        headroom_ratio=0.0,
        summarizer="llm",
        summary_template="claude-code",
        summary_overflow="drop_oldest",
    )


def _roo_code() -> Policy:
    """``roo-code`` (reference §5, seed 003).

    ==========================  ==============================================  ==========
    setting                     value                                           source
    ==========================  ==============================================  ==========
    trigger                     ``window·(1 − 0.1) − maxTokens``                 §5
                                (``TOKEN_BUFFER_PERCENTAGE``); the reserve is
                                at most half a small window (ours)
    tail                        none ("fresh start": summary only)               §5
    fallback                    sliding window: keep the first message and the   §5, seed
                                newer half of the messages, no summary            003
                                (``truncateConversation(messages, 0.5)``)
    overflow                    forced condense to 75 %, up to 3 times           §5
                                (``FORCED_CONTEXT_REDUCTION_PERCENT``,
                                ``MAX_CONTEXT_WINDOW_RETRIES``)
    summary                     model, the 9 sections Roo shares with Claude     §5, §7
                                Code
    prune                       none                                             §0
    re-injection                none (environment details are sent with every    §5
                                message)
    ==========================  ==============================================  ==========
    """
    return Policy(
        name="roo-code",
        trigger_ratio=1.0,
        reserve_tokens=("fraction", d.ROO_BUFFER_RATIO),
        reserve_output=True,
        reserve_max_ratio=PRESET_RESERVE_MAX_RATIO,
        keep_recent_tokens=0,
        fallback_summarizer="none",
        fallback_keep_share=d.ROO_SLIDING_WINDOW_SHARE,
        fallback_retain_first=1,
        reinject=(),
        overflow_retries=d.ROO_OVERFLOW_RETRIES,
        overflow_shrink_ratio=d.ROO_FORCED_REDUCTION,
        prune_enabled=False,
        headroom_ratio=0.0,
        summarizer="llm",
        summary_template="claude-code",
    )


def _openhands() -> Policy:
    """``openhands`` (seed 003; ``../shared/reference/peers-measured.md``).

    ==========================  ==============================================  ==========
    setting                     value                                           source
    ==========================  ==============================================  ==========
    trigger                     80 events (``max_size``), soft                   peers
    token trigger               the window less ctxengine's reserve, soft;       seed 003
                                an overflow is hard
    kept first                  ``keep_first=4`` events: the system prompt and   peers
                                the 3 messages after it, before the summary
                                (the summary offset)
    tail                        ``max_size // 2 − keep_first`` = 36 messages     seed 003
    summary                     model (``LLMSummarizingCondenser``)              seed 003
    prune                       none                                             seed 003
    re-injection                none (the kept first events hold the task)       seed 003
    ==========================  ==============================================  ==========
    """
    return Policy(
        name="openhands",
        trigger_ratio=1.0,
        max_messages=d.OPENHANDS_MAX_SIZE,
        retain_first_messages=d.OPENHANDS_KEEP_FIRST_AFTER_HEAD,
        keep_recent_messages=d.OPENHANDS_KEEP_RECENT_MESSAGES,
        prune_enabled=False,
        reinject=(),
        headroom_ratio=0.0,
        summarizer="llm",
    )


#: ``none``'s truncation cap, in characters: no tool result is ever cut (its window share,
#: the whole window, only cuts a result that could not be sent anyway).
NONE_TRUNCATE_MAX_CHARS = 2**62


def _none() -> Policy:
    """``none`` (baseline): never truncates, prunes nor compacts: every request holds the
    whole history verbatim, and a replay shows where the context outgrows the window."""
    return Policy(
        name="none",
        enabled=False,
        prune_enabled=False,
        truncate_max_chars=NONE_TRUNCATE_MAX_CHARS,
        truncate_max_window_ratio=1.0,
        reinject=(),
    )


def _keep_last_n() -> Policy:
    """``keep-last-n`` (baseline): at ctxengine's trigger, keep the newest 20 messages
    (ours) and drop the rest with a one-line marker, no summary, no prune, nothing
    re-injected."""
    return Policy(
        name="keep-last-n",
        keep_recent_messages=d.KEEP_LAST_N_MESSAGES,
        summarizer="none",
        reinject=(),
        prune_enabled=False,
        headroom_ratio=0.0,
    )


def _observation_masking() -> Policy:
    """``observation-masking`` (baseline; JetBrains "The Complexity Trap", reference
    ``evaluation.md`` §1.10): before every call, every tool result but the newest 10 (ours)
    is shown as a placeholder, whatever the saving; no summary: at the trigger the oldest
    messages are dropped with a marker; nothing re-injected."""
    return Policy(
        name="observation-masking",
        prune_when="always",
        prune_protect_tokens=0,
        prune_minimum_tokens=0,
        prune_protect_turns=0,
        prune_protect_results=d.OBSERVATION_MASK_KEEP_RESULTS,
        prune_exempt_tools=(),
        summarizer="none",
        reinject=(),
        headroom_ratio=0.0,
    )


_BUILDERS: dict[str, Callable[[], Policy]] = {
    "default": _default,
    "pi": _pi,
    "codex": _codex,
    "gemini-cli": _gemini_cli,
    "opencode": _opencode,
    "claude-code": _claude_code,
    "roo-code": _roo_code,
    "openhands": _openhands,
    "none": _none,
    "keep-last-n": _keep_last_n,
    "observation-masking": _observation_masking,
}

#: Every preset name: the known systems, then the baselines.
PRESET_NAMES: tuple[str, ...] = tuple(_BUILDERS)
#: The presets that reproduce a known system (and ctxengine's own).
SYSTEM_PRESETS: tuple[str, ...] = PRESET_NAMES[:8]
#: The baselines.
BASELINE_PRESETS: tuple[str, ...] = PRESET_NAMES[8:]


def preset(name: str) -> Policy:
    """The preset called ``name`` (one of :data:`PRESET_NAMES`).

    Raises:
        ConfigError: an unknown name; the message lists the known ones.
    """
    builder = _BUILDERS.get(name)
    if builder is None:
        raise ConfigError(f"no preset named {name!r}; known: {', '.join(PRESET_NAMES)}")
    return builder()


def offline(policy: Policy) -> Policy:
    """``policy`` as a session without a summary model runs it: a model summarizer
    (``"llm"``, ``"hybrid"``) replaced by the extractive one, everything else unchanged.
    ``policy`` itself when it names no model summarizer."""
    if policy.summarizer not in d.MODEL_SUMMARIZER_NAMES:
        return policy
    return policy.model_copy(update={"summarizer": "extractive"})


__all__ = [
    "BASELINE_PRESETS",
    "PRESET_NAMES",
    "SYSTEM_PRESETS",
    "offline",
    "preset",
]
