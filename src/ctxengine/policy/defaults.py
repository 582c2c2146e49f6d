"""Every default of the compaction ladder, with where it comes from. The single source:
nothing else in ctxengine repeats these literals.

Units: tokens unless the name says ``_CHARS``.
"""

from __future__ import annotations

from typing import Literal

#: Smallest model window ctxengine accepts, in tokens: below it a system prompt, a
#: continuation state and one turn cannot fit together.
MIN_WINDOW_TOKENS = 1_000

#: Compact when the context reaches this share of the window (Codex ``(cw*9)/10``; Cline
#: ``COMPACTION_TRIGGER_RATIO=0.9``).
DEFAULT_TRIGGER_RATIO = 0.9

#: Tokens kept free below the window for the next output and the estimate error, when the
#: caller gives no reserve: Claude Code reserves ``min(max_output, 20_000)`` plus a
#: ``13_000`` buffer (about 83 % of a 200k window). pi reserves ``16_384``.
DEFAULT_RESERVE_OUTPUT_TOKENS = 20_000
DEFAULT_SAFETY_BUFFER_TOKENS = 13_000
#: Ceiling of the automatic reserve as a share of the window, so small windows stay usable.
DEFAULT_RESERVE_MAX_RATIO = 0.2

#: Tokens of newest history kept verbatim after a compaction (pi ``keepRecentTokens``,
#: Cline ``DEFAULT_PRESERVE_RECENT_TOKENS``), and its ceiling as a share of the window
#: (OpenCode keeps at most 25 % of the usable window).
DEFAULT_KEEP_RECENT_TOKENS = 20_000
DEFAULT_KEEP_RECENT_MAX_RATIO = 0.25

#: Truncate at source: a tool result longer than this is shown as head + tail. 2,000 chars is
#: what pi, OpenCode and Cline send the summarizer; in the live context we allow more.
DEFAULT_TRUNCATE_MAX_CHARS = 32_000
#: A single tool result never takes more than this share of the window (so a newest result
#: larger than the window is truncated rather than failing).
DEFAULT_TRUNCATE_MAX_WINDOW_RATIO = 0.2
#: Share of the kept characters taken from the head (the rest from the tail).
DEFAULT_TRUNCATE_HEAD_RATIO = 0.6

#: Prune: protect the newest tool output tokens and the last user turns; prune only when it
#: frees at least the minimum (OpenCode ``PRUNE_PROTECT=40_000``, ``PRUNE_MINIMUM=20_000``,
#: last 2 user turns protected).
DEFAULT_PRUNE_PROTECT_TOKENS = 40_000
DEFAULT_PRUNE_MINIMUM_TOKENS = 20_000
DEFAULT_PRUNE_PROTECT_TURNS = 2
#: Ceiling of protect/minimum as a share of the window (so pruning still helps small windows).
DEFAULT_PRUNE_PROTECT_MAX_RATIO = 0.2
DEFAULT_PRUNE_MINIMUM_MAX_RATIO = 0.1
#: Tools whose results are never pruned (skills and plans carry instructions: OpenCode
#: ``PRUNE_PROTECTED_TOOLS=["skill"]``; Gemini CLI exempts skill, ask-user and plan tools).
DEFAULT_PRUNE_EXEMPT_TOOLS: tuple[str, ...] = ("skill", "Skill", "update_plan", "TodoWrite")

#: The session's first user request (the task) is kept verbatim, in the tail and in the
#: continuation state, up to this share of the target (the trigger less the headroom); only a
#: larger task is truncated.
#: Users report agents redoing or losing the first ask after compaction (Roo Code #8293).
DEFAULT_GOAL_MAX_RATIO = 0.6

#: Continuation state budget: the whole summary text, and the verbatim user messages in it.
DEFAULT_SUMMARY_MAX_TOKENS = 8_000
DEFAULT_SUMMARY_MAX_RATIO = 0.15
DEFAULT_USER_MESSAGES_BUDGET_TOKENS = 4_000
#: A model's summary may run this share over its budget (models do not count tokens); more is
#: rejected as ``over_budget_model`` and counted as a failure of the summarizer, never granted
#: a larger budget (a model summary 81 times its budget once passed because it still fit under
#: the trigger). ``summarizers.validate.MODEL_BUDGET_TOLERANCE`` holds the same value (the
#: summarizers cannot import ``policy``).
MODEL_SUMMARY_BUDGET_TOLERANCE = 0.1
#: The continuation state's budget grows past ``summary_max`` into the room actually free
#: under a plan's target (beside the head and the kept tail), so that no fact is left out
#: while that room is free; it stops at this share of the window, and at most at the tokens
#: below. 25 % is the largest share of the window the kept tail may take (OpenCode clamps it
#: there), so the state never outweighs the verbatim history; 20,000 tokens is the largest
#: continuation state the known systems write (Claude Code ``MAX_OUTPUT_TOKENS_FOR_SUMMARY
#: = 20_000``; Codex carries at most ``COMPACT_USER_MESSAGE_MAX_TOKENS = 20_000`` of user
#: messages).
SUMMARY_GROWTH_MAX_RATIO = 0.25
SUMMARY_GROWTH_MAX_TOKENS = 20_000
#: Share of a plan's headroom (trigger − target) the continuation state may grow into
#: beside the room under the target: with the default 55 % headroom a 32,000-token window's
#: state may take about 3,800 more tokens before anything is left out, and the context after
#: the compaction still lands a quarter of the way from the target to the trigger, far from a
#: second compaction.
STATE_HEADROOM_SHARE = 0.5
#: Share of a plan's headroom (trigger − target) that a compaction must leave free under the
#: trigger when what it can never drop (the floor: head, durable state that is never cut,
#: the smallest continuation state, the newest exchange) crowds it: a floor over the trigger
#: less this room is a ContextFloorError, and a continuation state beside such durable state
#: grows only up to there. Without it a floor a few hundred tokens under the trigger
#: compacted at every call (a 29.4k-token rules file in a 39,000-token window: 24
#: compactions in 30 calls of 544 tokens each); with the default 55 % headroom the room is
#: 4.4 % of the window (1,760 tokens at 40,000: three such calls; that session raises the
#: error up to a 39,500-token window and from 40,000 on compacts 7 times in 30 calls). The
#: executor likewise takes the first attempt that lands under the trigger less this room.
FLOOR_FREE_HEADROOM_SHARE = 0.1

#: Extractive continuation state: characters of a user message listed under the user messages
#: that rank as a user message; the rest of a longer one (a pasted log, a changelog) ranks
#: below the open errors and the identifiers (``summarizers.items.VALUES["user_message.more"]``).
#: 400 characters is a few sentences, as the current work's head
#: (``summarizers.extractive_state.CURRENT_WORK_HEAD_CHARS``); ours.
STATE_USER_MESSAGE_HEAD_CHARS = 400
#: Extractive continuation state: characters of the latest request the next step quotes that
#: rank as the next step; the rest of a longer one (a paste) ranks below the open errors
#: (``"next_step.more"``). 600 characters is the most of a plan or of a resolved request the
#: next step quotes (``summarizers.next_step.PLAN_MAX_CHARS``, ``RESOLVED_MAX_CHARS``).
STATE_NEXT_STEP_HEAD_CHARS = 600
#: Extractive continuation state: the newest user messages rank with the rules
#: (``"user_message"``) within ``user_messages_budget_tokens`` and at most this share of the
#: state's budget; older ones rank last. The default 4,000 tokens of messages would otherwise
#: fill a whole 1,200-token state (an 8,000-token window) before any open error; 30 % leaves
#: most of the state to the goal, the work and its errors (ours).
STATE_USER_MESSAGES_MAX_SHARE = 0.3
#: Extractive continuation state: a next step shortened to the budget ends at the last
#: whitespace within this many characters before the cut, so that no word is split
#: ("… ensure we i"); with none that near, at the cut. About two long words (ours).
STATE_WORD_CUT_MAX_CHARS = 40
#: Extractive continuation state: texts (lines, notes, headings) whose estimated tokens an
#: extractive summarizer remembers between compactions, at most (the memory is emptied
#: past it); a 10,000-entry session's ledgers hold about 2,000 lines, so this keeps dozens
#: of compactions' worth. A memory bound only: results never depend on it (ours).
STATE_COST_CACHE_MAX_TEXTS = 50_000
#: Extractive continuation state: estimators whose estimates one extractive summarizer
#: remembers at once (one per session that uses it; emptied past it). A memory bound only
#: (ours).
STATE_COST_CACHE_MAX_ESTIMATORS = 8

#: Consecutive failed compactions before the circuit breaker opens (Claude Code
#: ``MAX_CONSECUTIVE_AUTOCOMPACT_FAILURES=3``).
DEFAULT_MAX_CONSECUTIVE_FAILURES = 3

#: Fixed image cost when the pixel size is unknown (Gemini CLI counts 3,000 per image;
#: pi counts 4,800 chars = 1,200 tokens). We take the conservative one.
DEFAULT_IMAGE_TOKENS = 3_000

#: Per-session correction of the token estimate from provider-reported usage
#: (``tokens.correction.UsageCorrection``). The ratio (reported ÷ estimated tokens) stays in
#: these bounds: on the corpus a provider's tokenizer counts 0.3 (o200k_base on Greek) to
#: 1.1 (cl100k_base on file lists) times the estimate; beyond 0.5–2.0 the report measured
#: something else (a system prompt the log does not hold, dropped thinking blocks).
USAGE_CORRECTION_MIN_RATIO = 0.5
USAGE_CORRECTION_MAX_RATIO = 2.0
#: Estimated tokens of evidence the starting ratio 1.0 is worth: reports of fewer new tokens
#: than this move the ratio less than halfway, so a few short turns cannot swing it.
USAGE_CORRECTION_PRIOR_TOKENS = 4_096
#: Estimated tokens of reports the ratio remembers: beyond it older reports fade in
#: proportion, so a session that changes model follows the new tokenizer.
USAGE_CORRECTION_MEMORY_TOKENS = 200_000

#: Attempts of one compaction; each keeps half the tail of the one before, and from the third
#: on the truncate-at-source cap is halved too.
COMPACTION_ATTEMPTS = 4
#: Lowest truncate-at-source cap the later attempts go down to, in tokens.
MIN_TRUNCATE_TOKENS = 64
#: Share of the window kept free beside the continuation state when sizing its budget (the
#: error of our estimate of the summary's own length).
SUMMARY_ROOM_MARGIN_RATIO = 0.01

#: Share of the window (or reported limit) kept free for the error of our token estimate when
#: sizing a request (the summarizers keep the same 5 % on their own requests).
OVERFLOW_MARGIN_RATIO = 0.05
#: Smallest room for history worth sending a request for, in tokens: a continuation state
#: with the task and one short turn. Less than this beside the fixed part, the output budget
#: and the margin is a configuration problem.
MIN_HISTORY_ROOM_TOKENS = 256
#: With no limit in the provider's error and nothing new since the last compaction, the
#: recovery aims at this share of the context that overflowed.
UNKNOWN_LIMIT_SHRINK = 0.7
#: Estimated tokens of one prune placeholder line (tool name, short arguments, size,
#: reference).
PRUNE_PLACEHOLDER_TOKENS = 40
#: Model window the CLI assumes when ``--window`` is not given: 128k is the window of the
#: GPT-4o and GPT-4.1-mini class that the default ``--provider openai`` targets.
DEFAULT_WINDOW = 128_000

#: Output budget written into an Anthropic request body when ``--max-tokens`` is not given
#: (the Messages API requires ``max_tokens``): 4,096 is the largest output every Claude model
#: accepts (the Claude 3 models cap it there); the session's reserve lowers it further.
DEFAULT_ANTHROPIC_MAX_TOKENS = 4_096

#: SQLite store: seconds a write waits for another connection's write transaction before it
#: fails with "database is locked" (SQLite's busy timeout; Python's ``sqlite3`` default is 5 s).
#: Reads never wait: the store runs in WAL mode. ``stores.sqlite.BUSY_TIMEOUT_S`` holds the
#: same value for callers that pass none (the store layer cannot import ``policy``).
DEFAULT_STORE_BUSY_TIMEOUT_S = 5.0
#: Entries an import commits per write transaction, so that another writer (a live session
#: appending) waits for one batch, not for a whole large import: about 0.1–0.4 s of write
#: lock on a 2-core machine (14,000–40,000 inserts a second measured on 300,000-message
#: imports). ``stores.sqlite.IMPORT_BATCH_ENTRIES`` holds the same value.
IMPORT_BATCH_ENTRIES = 5_000
#: Longest wait for another writer's compaction of the same session (seconds). A compaction may
#: include a model summary call (provider timeout 300 s, :data:`PROVIDER_TIMEOUT_S`),
#: so the wait covers one such call with room for its retries. A holder that dies releases the
#: lock at once (an OS file lock), so this bounds only a live holder that hangs.
DEFAULT_COMPACTION_LOCK_TIMEOUT_S = 600.0

#: A compaction aims at the trigger less this share of it (its target), so that one compaction
#: buys several turns instead of leaving the context just under the trigger. Known systems
#: leave far more room after compacting: pi keeps ``keepRecentTokens`` 20,000 of a window less
#: 16,384; Codex keeps user messages up to 20,000 tokens plus the summary, compacting at 90 %
#: of the window. At small windows the continuation state and the tail would otherwise fill
#: it: measured with ``benchmarks/compaction_rate.py``, the django mini-swe-agent transcript
#: at a 4,000-token window compacts 40 times in 156 model calls at 0.55, 47 at 0.4, and 122
#: before a headroom existed.
DEFAULT_HEADROOM_RATIO = 0.55

#: Tries of one append when other writers of the same stored session keep appending first
#: (each refused try adopts their entries before the next).
APPEND_RETRIES = 8

#: Output budget of a model request that names none, in tokens (the Anthropic Messages API
#: requires one). Cline's SDK gives its summary requests the same
#: (``DEFAULT_SUMMARY_MAX_OUTPUT_TOKENS=4_096``).
DEFAULT_MAX_OUTPUT_TOKENS = 4_096

#: A turn start later than the first valid cut point is preferred while it keeps at least this
#: share of the keep-recent budget; below it the cut splits the turn instead (ours: pi splits
#: the turn whenever the budget ends inside it; keeping half the budget is our compromise).
MIN_TURN_START_KEPT_RATIO = 0.5

#: The summarizers a policy or the CLI may name: the deterministic extractive default, a model
#: writing the continuation state, the model's narrative plus the extractive ledgers, and
#: ``none`` (the prefix dropped with a one-line marker: truncation baselines, failure latch).
SUMMARIZER_NAMES: tuple[str, ...] = ("extractive", "llm", "hybrid", "none")
#: The summarizers that call a model.
MODEL_SUMMARIZER_NAMES: tuple[str, ...] = ("llm", "hybrid")

#: Provider calls: attempts per call, counting the first (so 2 retries). Claude Code and the
#: SDKs retry 2–10 times; a summary call is cheap to give up on because the extractive
#: fallback exists.
#: The error text of an Anthropic model that does not take mid-conversation system messages
#: (models before Claude Opus 4.8: "role 'system' is not supported on this model",
#: agents-2026-12.md §1.1); the request is sent again with the state as user turns.
SYSTEM_ROLE_REFUSED_PATTERN = r"role\W{0,3}system\W{0,3}is not supported"

PROVIDER_MAX_ATTEMPTS = 3
#: Exponential backoff when the provider sends no ``retry-after``: 1 s, 2 s, 4 s … capped at
#: 30 s (seconds).
PROVIDER_INITIAL_WAIT_S = 1.0
PROVIDER_MAX_WAIT_S = 30.0
#: A ``retry-after`` longer than this (seconds) is not waited for: the call fails at once with
#: ``RateLimited`` carrying the wait, and the caller decides.
PROVIDER_MAX_RETRY_AFTER_S = 60.0
#: Whole-request timeout handed to the SDK clients (seconds). Summaries of long histories take
#: a while; streaming calls are also bounded between chunks by the same value.
PROVIDER_TIMEOUT_S = 300.0
#: A reply is "on a full window" when its reported input is at least this share of the window
#: (a length stop there with no output is an overflow).
OVERFLOW_FULL_WINDOW_RATIO = 0.9
#: Profile of a model the table does not know: a 32k window (what most current open-weight
#: servers run at least, and small enough that compaction starts early rather than never) and
#: a 4k output budget (tokens).
UNKNOWN_MODEL_CONTEXT_WINDOW = 32_768
UNKNOWN_MODEL_MAX_OUTPUT_TOKENS = 4_096

#: Each later attempt of a compaction keeps the tail of the one before divided by this (and
#: from the third on divides the truncate-at-source cap by it too).
ATTEMPT_SHRINK_DIVISOR = 2
#: The first attempt's keep-recent budget is lowered to fit the target, never below this
#: share of the policy's (a continuation state alone loses the thread of the newest turn).
MIN_FIRST_KEEP_SHARE = 0.25

#: Command line: seconds a command works before its progress display appears on a terminal
#: (shorter work stays silent; ``$CTXENGINE_PROGRESS_AFTER`` overrides). About a second is
#: where a pause stops feeling immediate (Nielsen's 1 s limit for an uninterrupted flow).
PROGRESS_AFTER_S = 1.0

#: Replay comparison, ledger survival: the first user request counts as present in the final
#: context when its first this-many characters are (whitespace runs compared as one space);
#: ``tests/engine/test_corpus_replay.py`` holds every compaction to the same 500.
REPLAY_SURVIVAL_GOAL_CHARS = 500

# ---------------------------------------------------------------------------------------
# Policy fields added for the presets. Each default keeps ctxengine's own behaviour; the
# values of the known systems follow in the "Presets" section.

#: When the trigger is checked: before every model call (Claude Code: top of every query-loop
#: iteration; OpenCode: every ``step-finish``), or only before a call that starts a turn (pi
#: before 0.84: at ``agent_end`` and before each prompt).
DEFAULT_CHECK_POINTS = "every_call"
#: Smallest verbatim tail a compaction keeps, in tokens (ctxengine: no floor).
DEFAULT_KEEP_RECENT_MIN_TOKENS = 0
#: Newest tool results never pruned, by count (ctxengine: none; the token protection binds).
DEFAULT_PRUNE_PROTECT_RESULTS = 0
#: How long a provider keeps a prompt prefix cached after its last use, in seconds (Anthropic
#: and OpenAI: 5 minutes by default). A prune restricted to a cold cache waits this long after
#: the latest reply when neither the policy nor the model's provider gives a lifetime
#: (:data:`CACHE_TTL_SECONDS_BY_PROVIDER`).
DEFAULT_CACHE_TTL_SECONDS = 300.0
#: Re-injection after a compaction (Claude Code ``POST_COMPACT_MAX_FILES_TO_RESTORE=5``, each
#: file ≤ 5,000 tokens, 50,000 in all; larger files come back as a path only).
DEFAULT_REINJECT_FILES = 5
DEFAULT_REINJECT_FILE_MAX_TOKENS = 5_000
DEFAULT_REINJECT_MAX_TOKENS = 50_000
#: Overflow recoveries of one request before the overflow is final (pi
#: ``_overflowRecoveryAttempted``: one).
DEFAULT_OVERFLOW_RETRIES = 1

# ---------------------------------------------------------------------------------------
# Presets (:mod:`ctxengine.policy.presets`). Sources: ``../shared/reference/coding-agents.md``
# (section named per constant) and the seeds; "ours" marks a figure the notes do not give.

#: pi §1: ``DEFAULT_COMPACTION_SETTINGS = {reserveTokens: 16384, keepRecentTokens: 20000}``;
#: trigger ``contextTokens > contextWindow − reserveTokens``.
PI_RESERVE_TOKENS = 16_384
PI_KEEP_RECENT_TOKENS = 20_000

#: Codex §3: ``auto_compact_token_limit = min(configured, (context_window*9)/10)``.
CODEX_TRIGGER_RATIO = 0.9
#: Codex §3: ``COMPACT_USER_MESSAGE_MAX_TOKENS=20_000`` of the newest user messages kept.
CODEX_USER_MESSAGE_MAX_TOKENS = 20_000
#: Codex §3: tool outputs truncated when recorded, head and tail (``TruncationPolicy``, about
#: 4 bytes per token). The note gives no figure; 10,240 characters (10 KiB) is ours.
CODEX_TRUNCATE_MAX_CHARS = 10_240
#: Codex keeps head and tail alike (ours: half each).
CODEX_TRUNCATE_HEAD_RATIO = 0.5

#: Gemini CLI §4: ``DEFAULT_COMPRESSION_TOKEN_THRESHOLD=0.5``.
GEMINI_TRIGGER_RATIO = 0.5
#: Gemini CLI §4: ``COMPRESSION_PRESERVE_THRESHOLD=0.3`` of the history's characters kept.
GEMINI_KEEP_SHARE = 0.3
#: Gemini CLI §4: ``COMPRESSION_FUNCTION_RESPONSE_TOKEN_BUDGET=50_000``: newest function
#: responses within it stay whole, older ones are cut down to a tail.
GEMINI_FUNCTION_RESPONSE_BUDGET = 50_000
#: Tail an older function response is cut down to, in tokens. The note says "cut down to a
#: tail" without a figure; 1,000 tokens is ours.
GEMINI_FUNCTION_RESPONSE_TAIL_TOKENS = 1_000

#: OpenCode §2: ``reserved = min(COMPACTION_BUFFER=20_000, maxOutputTokens)``.
OPENCODE_RESERVE_OUTPUT_CAP = 20_000
#: OpenCode §2: tail = 25 % of the usable window, clamped to
#: ``MIN_PRESERVE_RECENT_TOKENS=2_000`` … ``15_000``, by whole turns.
OPENCODE_KEEP_RECENT_RATIO = 0.25
OPENCODE_KEEP_RECENT_MIN_TOKENS = 2_000
OPENCODE_KEEP_RECENT_MAX_TOKENS = 15_000
#: OpenCode §2: ``PRUNE_PROTECT=40_000``, ``PRUNE_MINIMUM=20_000``, last 2 user turns,
#: ``PRUNE_PROTECTED_TOOLS=["skill"]``.
OPENCODE_PRUNE_PROTECT_TOKENS = 40_000
OPENCODE_PRUNE_MINIMUM_TOKENS = 20_000
OPENCODE_PRUNE_PROTECT_TURNS = 2
OPENCODE_PRUNE_EXEMPT_TOOLS: tuple[str, ...] = ("skill",)

#: Claude Code §7: ``effective = window − min(maxOutput, MAX_OUTPUT_TOKENS_FOR_SUMMARY=20_000)``,
#: auto-compact at ``effective − AUTOCOMPACT_BUFFER_TOKENS=13_000`` (~83 % of 200k, so the
#: output cap of the models it runs is at least 20,000: the cap below is assumed).
CLAUDE_CODE_OUTPUT_CAP = 20_000
CLAUDE_CODE_BUFFER_TOKENS = 13_000
#: Claude Code §7: ``MAX_CONSECUTIVE_AUTOCOMPACT_FAILURES=3``.
CLAUDE_CODE_MAX_FAILURES = 3

#: Roo Code §5: ``allowedTokens = window·(1 − TOKEN_BUFFER_PERCENTAGE=0.1) − maxTokens``.
ROO_BUFFER_RATIO = 0.1
#: Roo Code §5: ``truncateConversation(messages, 0.5)``: the sliding-window fallback hides
#: half of the visible messages.
ROO_SLIDING_WINDOW_SHARE = 0.5
#: Roo Code §5: ``MAX_CONTEXT_WINDOW_RETRIES=3`` forced condenses at
#: ``FORCED_CONTEXT_REDUCTION_PERCENT=75``.
ROO_OVERFLOW_RETRIES = 3
ROO_FORCED_REDUCTION = 0.75

#: OpenHands SDK ``default_condenser``: ``max_size=80`` events, ``keep_first=4``
#: (``../shared/reference/peers-measured.md``, openhands-sdk 1.58.2). The first event is the
#: system prompt, which ctxengine keeps as the head, so 3 messages after it are kept first.
OPENHANDS_MAX_SIZE = 80
OPENHANDS_KEEP_FIRST = 4
OPENHANDS_KEEP_FIRST_AFTER_HEAD = OPENHANDS_KEEP_FIRST - 1
#: OpenHands keeps ``max_size // 2 − keep_first`` events after the summary (seed 003: "head
#: K + tail (max_size/2 − K)").
OPENHANDS_KEEP_RECENT_MESSAGES = OPENHANDS_MAX_SIZE // 2 - OPENHANDS_KEEP_FIRST

#: Baseline ``keep-last-n``: messages kept verbatim when the trigger is reached, the rest
#: dropped without a summary (ours).
KEEP_LAST_N_MESSAGES = 20
#: Baseline ``observation-masking``: tool results outside the newest N are shown as
#: placeholders on every call (JetBrains "Complexity Trap", seeds/evaluation §1.10; N=10 is
#: ours).
OBSERVATION_MASK_KEEP_RESULTS = 10

#: What the default policy re-injects after every compaction: rules carried as injected
#: user-role blocks, the open todo list and the background tasks still running. Each is small
#: and cannot be rebuilt from a summary: rules are followed to the letter (users report
#: agents ignoring AGENTS.md rules after a compaction: OpenCode #16960, #3099), the todo list
#: is the task state (Codex #25792: progress from 97 % to 42 % after a compaction), and a
#: shell or subagent id is needed to read or stop the task. Files and the plan file are
#: larger and left to presets (Claude Code restores both, §7). Ours, from §8 and §9. The
#: bodies of the skills invoked in the session fill the room left (within
#: :data:`DEFAULT_REINJECT_SKILL_MAX_TOKENS` each and :data:`DEFAULT_REINJECT_SKILLS_MAX_TOKENS`
#: in all): an agent that activated a skill follows it after the compaction too (Claude Code
#: re-attaches them, §7); a session that invoked none re-injects nothing for them.
DEFAULT_REINJECT: tuple[Literal["rules", "todos", "background", "skills"], ...] = (
    "rules",
    "todos",
    "background",
    "skills",
)

#: Re-injection of rules: an injected user-role message that carries the contents of one of
#: these files is a rules file the harness put into the conversation: a line "Contents of
#: <path>/<name>" (Claude Code sends CLAUDE.md and CLAUDE.local.md so, in a
#: ``<system-reminder>`` user message, seed 001 ``api.ts:462``, and re-reads them after a
#: compaction, §7) or a Markdown heading naming it (Codex's ``# AGENTS.md instructions for
#: <dir>``, re-added after a compaction with the initial context, §3). A message that only
#: mentions the name (a directory listing, a hint) is not one.
REINJECT_RULES_FILES: tuple[str, ...] = (
    "AGENTS.md",
    "AGENTS.override.md",
    "CLAUDE.md",
    "CLAUDE.local.md",
    "GEMINI.md",
    "AGENT.md",
)
#: ... or one that holds one of these markers: Claude Code's ``# claudeMd`` context section,
#: Codex's older ``<user_instructions>`` block.
REINJECT_RULES_MARKERS: tuple[str, ...] = ("# claudeMd", "<user_instructions>")
#: Re-injection of the plan file: the ``plan`` argument of the newest call of one of these
#: tools (Claude Code's plan mode ends with ``ExitPlanMode {"plan": ...}``; it restores the
#: plan file after a compaction, §7).
REINJECT_PLAN_TOOLS: tuple[str, ...] = ("ExitPlanMode",)
#: Re-injection of the todo list: the newest call of one of these tools holds the whole list
#: (Claude Code ``TodoWrite {"todos": [{content, status, activeForm}]}`` and Codex
#: ``update_plan {"plan": [{step, status}]}``, both in ``corpus/live-agents``; Gemini CLI
#: ``write_todos {"todos": [{description, status}]}``; OpenCode ``todowrite {"todos":
#: [{content, status, priority, id}]}``).
REINJECT_TODO_TOOLS: tuple[str, ...] = (
    "TodoWrite",
    "update_plan",
    "write_todos",
    "todowrite",
    "todo_write",
)
#: Argument holding the list, and the keys of an item's text, in the order tried (the shapes
#: above).
TODO_LIST_KEYS: tuple[str, ...] = ("todos", "plan", "items", "tasks")
TODO_TEXT_KEYS: tuple[str, ...] = ("content", "step", "description", "title", "text", "task")
#: Statuses of a finished item (Claude Code and Codex ``completed``; Gemini CLI and OpenCode
#: also ``cancelled``); any other status is open.
TODO_CLOSED_STATUSES: tuple[str, ...] = ("completed", "cancelled", "canceled", "done")

#: Background tasks. A shell call whose result says it went to the background, and the
#: pattern giving its id: Claude Code ``Bash`` with ``run_in_background`` (or moved there
#: after its timeout) answers "Command running in background with ID: bae407b" (corpus
#: ``claude-code/spotter-tool-heavy.jsonl``, ``spotter-long-a0y-main.jsonl``); Codex
#: ``exec_command`` answers "Process running with session ID 7" while the process runs
#: (unified exec; the corpus's finished ones say "Process exited with code 0").
BACKGROUND_LAUNCH_PATTERNS: tuple[str, ...] = (
    r"Command running in background with ID: ([\w-]+)",
    r"Process running with session ID (\w+)",
)
#: Subagent tools (Claude Code ``Task``, ``Agent`` since 2.1): a call without a result is
#: running; one started with ``run_in_background`` runs until a finished status is seen for
#: the id its result gives ("agentId: a73f6f8bdab2fbcaf", corpus ``live-agents``; else the
#: call id).
BACKGROUND_SUBAGENT_TOOLS: tuple[str, ...] = ("Task", "Agent")
BACKGROUND_AGENT_ID_PATTERN = r"agentId: ([\w-]+)"
#: Tools that read a background task's status, and tools that stop one (Claude Code
#: ``BashOutput {bash_id}`` and ``KillShell {shell_id}``, later ``TaskOutput {task_id}`` with a
#: ``<status>completed</status>`` result and ``TaskStop``, corpus ``spotter-long-a0y-main``;
#: Codex ``write_stdin {session_id}``, whose result says "Process exited with code N" once the
#: process ended). The argument naming the task is the first of
#: :data:`BACKGROUND_ID_KEYS` present.
BACKGROUND_POLL_TOOLS: tuple[str, ...] = ("BashOutput", "TaskOutput", "write_stdin")
BACKGROUND_STOP_TOOLS: tuple[str, ...] = ("KillShell", "KillBash", "TaskStop")
BACKGROUND_ID_KEYS: tuple[str, ...] = ("bash_id", "shell_id", "task_id", "session_id", "agentId")
#: A status read back that still means running (``<status>running</status>``); any other
#: status in a poll result or a ``<task-notification>`` (Claude Code, corpus
#: ``spotter-long-a0y-main``: ``<task-id>b7b23b2</task-id> … <status>completed</status>``)
#: ends the task, as does "Process exited with code" in a Codex poll.
BACKGROUND_RUNNING_STATUSES: tuple[str, ...] = ("running", "pending")
BACKGROUND_EXITED_MARKER = "Process exited with code"
#: A status read back that means the task failed even when no exit code is stated (Claude
#: Code ``<status>failed</status>``); a non-zero exit code fails it whatever its status.
BACKGROUND_FAILED_STATUSES: tuple[str, ...] = ("failed",)
#: The exit code a finished task's poll or notification states, tried in order: Claude Code
#: ``BashOutput``/``TaskOutput`` ``<exit_code>1</exit_code>`` (corpus
#: ``spotter-long-a0y-main``), Codex ``write_stdin`` "Process exited with code 101", a Claude
#: Code ``<task-notification>`` summary "Background command "Run new tests" completed (exit
#: code 0)" (same corpus file).
BACKGROUND_EXIT_CODE_PATTERNS: tuple[str, ...] = (
    r"<exit_code>\s*(-?\d+)\s*</exit_code>",
    r"Process exited with code (-?\d+)",
    r"\(exit code (-?\d+)\)",
)
#: Where a poll shows the task's output: inside these tags (Claude Code ``BashOutput``
#: ``<stdout>``/``<stderr>``, ``TaskOutput`` ``<output>``), else after this line (Codex
#: unified exec "Output:").
BACKGROUND_OUTPUT_TAGS: tuple[str, ...] = ("stdout", "stderr", "output")
BACKGROUND_OUTPUT_MARKER = "Output:\n"
#: Longest command or subagent description shown for a background task, in characters (the
#: commands ledger's own limit, ours).
BACKGROUND_LABEL_MAX_CHARS = 200

# ---------------------------------------------------------------------------------------
# The stable head and rules files (:mod:`ctxengine.assembly`, :mod:`ctxengine.workspace`).

#: Rules files looked for in each directory from the repository root down to the working
#: directory, in this order (a ``|`` names alternatives: the first that exists and is not
#: empty is loaded; a ``*`` is a glob; a folder loads its ``.md`` files by name). Sources:
#: Codex reads ``AGENTS.override.md`` else ``AGENTS.md``, at most one per directory
#: (developers.openai.com/codex/guides/agents-md); Claude Code reads ``CLAUDE.md``,
#: ``.claude/CLAUDE.md``, ``CLAUDE.local.md`` and ``.claude/rules/**/*.md``
#: (docs.anthropic.com/en/docs/claude-code/memory); Gemini CLI ``GEMINI.md``
#: (geminicli.com/docs/cli/gemini-md); Cursor ``.cursor/rules/*.mdc``; Cline a ``.clinerules``
#: file or folder (docs.cline.bot/features/cline-rules/overview); GitHub Copilot
#: ``.github/copilot-instructions.md``.
RULES_PROJECT_NAMES: tuple[str, ...] = (
    "AGENTS.override.md|AGENTS.md",
    "CLAUDE.md",
    ".claude/CLAUDE.md",
    "CLAUDE.local.md",
    ".claude/rules/**/*.md",
    "GEMINI.md",
    ".cursor/rules/**/*.mdc",
    ".clinerules",
    ".github/copilot-instructions.md",
)
#: Rules files of the user level, relative to the home folder, loaded before the project's:
#: Codex ``~/.codex/AGENTS.override.md`` else ``~/.codex/AGENTS.md`` (one file), Claude Code
#: ``~/.claude/CLAUDE.md`` and ``~/.claude/rules/**/*.md``, Gemini CLI ``~/.gemini/GEMINI.md``
#: (same sources as :data:`RULES_PROJECT_NAMES`).
RULES_USER_NAMES: tuple[str, ...] = (
    ".codex/AGENTS.override.md|.codex/AGENTS.md",
    ".claude/CLAUDE.md",
    ".claude/rules/**/*.md",
    ".gemini/GEMINI.md",
)
#: The marker of a repository root: the walk down to the working directory starts at the
#: nearest folder above it that holds one (Codex: "typically the Git root"; without one only
#: the working directory itself is read, as Codex does).
RULES_ROOT_MARKERS: tuple[str, ...] = (".git",)
#: ``@path`` imports are followed at most this many hops from the file that was found
#: (Claude Code memory docs: "a max-depth of 5 hops"; Gemini CLI's import processor, in its
#: CLAUDE.md compatibility mode, also defaults to depth 5: google-gemini/gemini-cli
#: ``docs/core/memport.md``).
RULES_IMPORT_MAX_DEPTH = 5
#: Kinds of rules file whose ``@path`` imports are expanded: the systems that document the
#: syntax (Claude Code ``CLAUDE.md``, Gemini CLI ``GEMINI.md``); Codex does not expand
#: imports in ``AGENTS.md``.
RULES_IMPORT_KINDS: tuple[str, ...] = ("claude", "gemini")
#: Front-matter fields naming the files a rule is scoped to: ``paths`` (Claude Code
#: ``.claude/rules``, Cline conditional rules), ``globs`` (Cursor ``.mdc``), ``applyTo``
#: (GitHub Copilot ``*.instructions.md``).
RULES_SCOPE_FIELDS: tuple[str, ...] = ("paths", "globs", "applyTo")
#: A git status snapshot longer than this is cut, with a note (Claude Code cuts the status it
#: puts in its system prompt at 2,000 characters; reverse-engineered, unverified).
GIT_STATUS_MAX_CHARS = 2_000
#: Seconds a ``git status`` may take before the snapshot is left out (ours).
GIT_STATUS_TIMEOUT_S = 5.0

# ---------------------------------------------------------------------------------------
# Pins and thrash detection.

#: Tokens the pinned items may take together (shown verbatim after every compaction, as
#: standing instructions), and the ceiling of that budget as a share of the window. 4,000
#: tokens is the budget of the verbatim user messages of a continuation state
#: (:data:`DEFAULT_USER_MESSAGES_BUDGET_TOKENS`); 5 % of the window keeps pins from crowding a
#: small window (a 32,768-token window gets 1,638 tokens). Both ours.
DEFAULT_PINS_MAX_TOKENS = 4_000
DEFAULT_PINS_MAX_RATIO = 0.05
#: What is pinned without a :meth:`~ctxengine.engine.Session.pin` call: nothing by default.
#: ``"first_request"`` pins the session's first user request, ``"rules"`` the active rules the
#: user stated (the extractive rule detector, :func:`ctxengine.summarizers.rules.rule_facts`).
#: Off because the default (extractive) continuation state already carries both: the first
#: request verbatim up to ``goal_max`` tokens and the active rules ranked just below it, so
#: pins would send them twice after every compaction. Measured over the 27 corpus transcripts
#: replayed at 32,000 tokens, turning both on adds 49 tokens a call after a compaction
#: (17,631 → 17,680 on average; the first requests there have a median of 524 tokens) and 2
#: compactions (177 → 179). Turn them on with a model summarizer, whose prose may drop
#: them, or when a rule must never give way to the state's budget.
DEFAULT_AUTO_PINS: tuple[str, ...] = ()
#: Thrash detection: automatic compaction stops with an error when the context refills to
#: the trigger within :data:`DEFAULT_THRASH_REFILL_CALLS` model calls of the previous
#: compaction this many times in a row (Claude Code 2.1.89: "Autocompact is thrashing: the
#: context refilled to the limit within 3 turns of the previous compact, 3 times in a row";
#: a turn there is one API round trip). We count 4 calls, not 3: results just under the
#: truncation cap (5 × 7.9k tokens a call) were measured refilling a window every 3–4 calls,
#: 8 times in a row, and 3 would miss the refills after 4.
DEFAULT_THRASH_LIMIT = 3
DEFAULT_THRASH_REFILL_CALLS = 4
#: When the thrash check runs: ``"model"`` (default) when a model summarizer writes the
#: compactions, each of which then costs a model call; ``"always"``; or ``"off"``. With the
#: extractive summarizer a compaction costs no call, and a small window compacting every few
#: calls is how a session goes on, not a loop that spends money: run with ``"always"``, 12 of
#: the 54 corpus replays (each transcript at 8,000 and 32,000 tokens; 11 of the 12 at 8,000)
#: refill within 4 calls 3 times in a row and would stop.
DEFAULT_THRASH_GUARD = "model"
#: Contributors a thrash error names (ours: enough for the re-injected parts, two tools and
#: the pins).
THRASH_TOP_CONTRIBUTORS = 5
#: Characters of a re-appended block's first line that name it in a thrash error (ours).
THRASH_LABEL_CHARS = 60

# --------------------------------------------------------------------------- history recall
#: Tokens a recall answer's excerpts may take in all (ours: about one large tool result, so
#: an answer never costs more than the reads it replaces; Claude Code caps a re-read file at
#: 5,000 tokens after compaction).
RECALL_BUDGET_TOKENS = 4_000
#: Lines shown either side of a matching line (ours, as ``grep -C 2``).
RECALL_CONTEXT_LINES = 2
#: Characters of one excerpt line kept around its match (ours: a minified line or a long log
#: line stays readable without spending the budget).
RECALL_LINE_MAX_CHARS = 400
#: Matches per document whose lines are shown (ours: the first few occurrences locate it).
RECALL_MAX_MATCH_LINES = 5
#: The name of the recall tool (:mod:`ctxengine.recall.tool`).
RECALL_TOOL_NAME = "recall"

# --------------------------------------------------------------------------- stateless calls
#: Checkpoints a :class:`~ctxengine.engine.stateless.PrefixCache` keeps in memory by default:
#: one per request served, so 256 covers the latest requests of 256 conversations, or one
#: conversation's 256 latest requests (a branch from any of them continues without
#: compacting again). Each holds its context; the checkpoints of a conversation share its
#: messages and its log. Ours.
STATELESS_CACHE_SIZE = 256
#: Conversations whose newest checkpoint a request of new message objects (a caller that
#: rebuilds every message on each call) is compared with, most recently served first, before
#: its messages are hashed: a comparison that fails stops at the first message that differs,
#: and hashing a 300-message request costs about ten comparisons of it. Ours: covers a main
#: agent and the sub-agents it runs side by side.
STATELESS_CONTENT_CANDIDATES = 4

# ------------------------------------------------------------------------- ledger extraction
#: Outputs and commands whose analysis (failure lines, programs run, file effects, command
#: keys) the ledger walk remembers, per function, most recently asked first. A compaction
#: walks the range it summarizes, a split turn's prefix again, and the next compaction its
#: kept tail again: with the analyses remembered, each tool call is analysed once while it
#: stays in the epoch (a 32,000-token window holds a few hundred calls). Ours.
LEDGER_WALK_CACHE = 2048

# --------------------------------------------------------------------------- skills
#: Where skills are looked for, relative to each folder from the working directory up to the
#: repository root, nearest first: ``<dir>/<name>/SKILL.md`` (Claude Code ``.claude/skills``;
#: Codex and the Agent Skills convention ``.agents/skills``).
SKILL_PROJECT_DIRS: tuple[str, ...] = (".claude/skills", ".agents/skills")
#: The same under the home folder, searched after the project's (Claude Code
#: ``~/.claude/skills``; ``~/.agents/skills``).
SKILL_USER_DIRS: tuple[str, ...] = (".claude/skills", ".agents/skills")
#: The file that makes a folder a skill.
SKILL_FILE = "SKILL.md"
#: Sub-folders of a skill whose files are listed by path with its body, never inlined
#: (agentskills.io specification: ``references/`` read on demand, ``scripts/`` run).
SKILL_FILE_DIRS: tuple[str, ...] = ("references", "scripts")
#: A skill's ``name``: 1–64 characters, lowercase letters, digits and single hyphens, neither
#: first nor last (agentskills.io specification, "name field").
SKILL_NAME_PATTERN = r"[a-z0-9](?:[a-z0-9]|-(?=[a-z0-9])){0,63}"
SKILL_NAME_MAX_CHARS = 64
#: A ``description`` longer than this is loaded with a note (agentskills.io: 1–1,024
#: characters; Claude Code lists longer ones, so it is not refused).
SKILL_DESCRIPTION_MAX_CHARS = 1_024
#: The name of the skill tool (:mod:`ctxengine.assembly.skill_tool`; OpenCode's is ``skill``).
SKILL_TOOL_NAME = "skill"
#: Calls that load a skill, and the argument naming it: ctxengine's ``skill {"name"}``,
#: Claude Code's ``Skill {"skill", "args"}`` (its tool definition in ``corpus/live-agents/
#: claude-code-2.1.328``; the body follows the call as an ``isMeta`` user message).
SKILL_CALL_TOOLS: tuple[str, ...] = (SKILL_TOOL_NAME, "Skill")
SKILL_CALL_NAME_KEYS: tuple[str, ...] = ("name", "skill")
#: Re-injection of invoked skill bodies after a compaction: each at most 5,000 tokens (a
#: longer one keeps its top and names the file to read for the rest), 25,000 in all, the
#: oldest dropped first (Claude Code, code.claude.com/docs/en/context-window "What survives
#: compaction"; reference/agents-2026-12.md).
DEFAULT_REINJECT_SKILL_MAX_TOKENS = 5_000
DEFAULT_REINJECT_SKILLS_MAX_TOKENS = 25_000

# --------------------------------------------------------------------------- child sessions
#: Files (modified first, then read) the evidence entry of a child's run names when its
#: pointers are taken from the run (ours: the evidence packet keeps pointers, not the work;
#: seed 004 "main context keeps only conclusions and evidence pointers").
CHILD_POINTER_FILES = 20
#: Shell commands the evidence entry names at most, newest last (ours, as above).
CHILD_POINTER_COMMANDS = 10

# --------------------------------------------------------------------------- branches
#: Tokens of a branch summary written by the session's summarizer (``Session.checkout(…,
#: summary=True)``). Ours: a note on the work left, a tenth of pi's default keep-recent
#: budget (20,000); pi writes its branch summaries with the compaction template.
BRANCH_SUMMARY_TOKENS = 2_000

# ---------------------------------------------------------------------------- the proxy
#: Window (tokens) the proxy fits a model to when ``--window`` is not given and the model
#: has no profile: the unknown-model default of the profiles, so both agree.
PROXY_DEFAULT_WINDOW = UNKNOWN_MODEL_CONTEXT_WINDOW
#: Conversations whose request reader the proxy keeps (least recently used dropped; a
#: dropped one is read whole again on its next request, then continues as before). Ours.
PROXY_CONVERSATIONS = 256
#: Upstream replies whose provider usage the proxy remembers until the client sends the
#: reply back (the usage anchor). One per request; ours.
PROXY_USAGE_RECORDS = 4096
#: Seconds the proxy waits for the upstream to answer (connect, and between bytes of a
#: reply); agents' own clients wait ten minutes (the OpenAI and Anthropic SDK default).
PROXY_UPSTREAM_TIMEOUT_S = 600.0
#: Port ``ctxengine serve`` listens on when ``--port`` is not given (ours).
PROXY_DEFAULT_PORT = 8765
#: Largest request body the proxy reads, in MB (``--max-body-mb``); a larger one is answered
#: 413 without being read. Anthropic's Messages API takes request bodies up to 32 MB (its
#: documented request size limit), so no valid request is turned away at the default.
PROXY_MAX_BODY_MB = 32

# ------------------------------------------------------ background precompute, cache timing
# (:mod:`ctxengine.engine.precompute`, :mod:`ctxengine.ladder.timing`). Off by default: every
# default below keeps ctxengine's behaviour until a policy (or a preset) turns it on.

#: Codex: ``DEFAULT_ASYNC_COMPACTION_THRESHOLD_PERCENT: u8 = 65``: a background compaction
#: candidate starts at 65 % of the model's full context window
#: (``async_compaction_threshold_percent``, ``codex-rs/core/src/config/mod.rs``; seed 000
#: §1.1), is tagged with the history version and adopted when the trigger is reached.
CODEX_PRECOMPUTE_RATIO = 0.65
#: OpenCode: the summary is computed in the background once the context reaches 85 % of
#: the compaction limit, and only for a context of at least 64K tokens (below that an extra
#: request is not worth it); ``packages/core/src/session/compaction.ts``, seed 000 §1.1.
OPENCODE_PRECOMPUTE_RATIO = 0.85
OPENCODE_PRECOMPUTE_MIN_TOKENS = 64_000
#: OpenCode's tail limit of a precomputed summary: ``PRECOMPUTED_TAIL_MIN = 30_000``,
#: ``PRECOMPUTED_TAIL_SHARE = 0.25``, ``tailLimit = min(max(keep * 2, PRECOMPUTED_TAIL_MIN),
#: floor(budget * PRECOMPUTED_TAIL_SHARE))`` (seed 000 §2, ``compaction.ts``): a precomputed
#: summary is adopted only while the entries appended after it fit this many tokens, else it
#: is discarded and the summary computed again ("summary + a very long tail brings the
#: context back near the threshold"). Every precompute uses it, ``keep`` being the
#: keep-recent budget and ``budget`` the trigger; Codex discards a candidate whose history
#: version moved on, and the notes give no figure for how far.
PRECOMPUTE_TAIL_MIN_TOKENS = 30_000
#: GitHub Copilot SDK infinite sessions: compaction runs in the background from 80 % of the
#: context window and blocks the session only at 95 % (github/copilot-cli#3174, #3054;
#: reference ``agents-2026-12.md``): the share of the window under which a trigger with no
#: background compaction ready sends its context as it is (``Policy.precompute_block_ratio``).
COPILOT_PRECOMPUTE_BLOCK_RATIO = 0.95
PRECOMPUTE_TAIL_SHARE = 0.25
PRECOMPUTE_TAIL_KEEP_FACTOR = 2
#: Prompt-cache lifetimes per provider (``ModelProfile.provider``), in seconds: the default
#: lifetime, and the extended one a request may ask for. Anthropic: 5 minutes refreshed on
#: each hit, or 1 hour (``cost/prices.json`` cache rules, platform.claude.com prompt caching).
#: OpenAI: 5 to 10 minutes after the last use (``prices.json``), or 24 hours with
#: ``prompt_cache_retention: "24h"`` (reference ``agents-2026-12.md`` §1.1). Gemini: explicit
#: ``cachedContents`` live 60 minutes by default (§1.1; implicit caching states no
#: lifetime, so the explicit default is used for both). Other providers:
#: :data:`DEFAULT_CACHE_TTL_SECONDS`.
CACHE_TTL_SECONDS_BY_PROVIDER: dict[str, tuple[float, float]] = {
    "anthropic": (300.0, 3_600.0),
    "openai": (300.0, 86_400.0),
    "gemini": (3_600.0, 3_600.0),
}
#: Idle compaction (``Policy.idle_compact_seconds``) compacts an idle session only when its
#: context is at least this share of the trigger: the compaction the next calls would run
#: anyway is moved to the moment the cache must be rebuilt. Ours: 80 %, where Copilot's
#: "infinite sessions" start their background compaction and Goose compacts
#: (``agents-2026-12.md`` §0 item 6, §1.9); a smaller context would be summarized long
#: before it needs to be.
DEFAULT_IDLE_COMPACT_RATIO = 0.8
#: Claude Code's prompt cache lives 1 hour (it asks Anthropic for the extended lifetime); an
#: idle session past it may be compacted before its next request, and the time-based
#: microcompact clears old tool results only once the cache has gone cold (seed 000 §1.3 and
#: §5.4; reference ``coding-agents.md`` §7).
CLAUDE_CODE_CACHE_TTL_SECONDS = 3_600.0
CLAUDE_CODE_IDLE_COMPACT_SECONDS = 3_600.0
#: Claude Code's time-based microcompact keeps the 5 most recent tool results
#: (``coding-agents.md`` §7: "clear all but the 5 most recent tool results") and clears only
#: when that saves at least 20K tokens (seed 000 §5.4, observed in the CLI's strings).
CLAUDE_CODE_MICROCOMPACT_KEEP_RESULTS = 5
CLAUDE_CODE_MICROCOMPACT_MIN_TOKENS = 20_000

# ----------------------------------------------------------------- provider-native compaction
#: Anthropic's server compaction at a token threshold (``compact_20260112`` edit of
#: ``context_management``): the API starts it at this many input tokens when the edit names
#: no trigger, and rejects a trigger below the minimum (platform.claude.com
#: build-with-claude/compaction-threshold; the SDK's ``BetaCompact20260112EditParam``:
#: "Defaults to 150000 input tokens"; shared/reference/python-peers.md §7 "trigger default
#: 150k (minimum 50k)").
ANTHROPIC_COMPACT_TRIGGER_DEFAULT = 150_000
ANTHROPIC_COMPACT_TRIGGER_MIN = 50_000
#: Beta headers (``anthropic-beta``) of the Anthropic features (platform.claude.com: the
#: compaction-threshold page names ``compact-2026-01-12``; the compaction-background page and
#: the SDK's ``compact_before_next_turn`` name ``compact-2026-09-04`` for the top-level
#: ``compaction`` request parameter, on demand or in the background; the context-editing
#: page names ``context-management-2025-06-27`` for ``clear_tool_uses_20250919`` and
#: ``clear_thinking_20251015``).
ANTHROPIC_BETA_COMPACT_THRESHOLD = "compact-2026-01-12"
ANTHROPIC_BETA_COMPACT_ON_DEMAND = "compact-2026-09-04"
ANTHROPIC_BETA_CONTEXT_EDITING = "context-management-2025-06-27"
#: Request fields a compaction request of the Messages API may not carry: it returns only
#: the compaction block, so the fields that shape a reply are rejected (the SDK's
#: ``_without_compaction_incompatible_params``: ``context_management``, ``stop_sequences``,
#: ``output_format``; a forced ``tool_choice`` too).
ANTHROPIC_COMPACTION_DROPPED_FIELDS = ("context_management", "stop_sequences", "output_format")

#: Returned steps (a query's, a fetch's, a subagent's first result line: ```CALL` returned:
#: …``) the ledgers carry from one compaction to the next, the newest.
RETURNED_STEPS_KEPT = 40
