"""The format table of the README, as data: per agent, the importer (``--format``), what to
point ``import`` at, what comes in, and what is skipped because it never reaches the model.

The skipped lists are the importers' own ignore tables (``IGNORED_RECORDS`` …) plus the
other kinds their reports count as ignored, as report-kind patterns (``fnmatch``:
``system:*``); files refused on purpose carry the reason the refusal names
(:mod:`ctxengine.importers._refusals`). ``python -m ctxengine.importers.catalog`` prints the
Markdown table that README.md holds between its ``formats`` markers (a test keeps them
equal, and checks that every kind a corpus import ignores matches its row).
"""

from __future__ import annotations

from dataclasses import dataclass

from ctxengine.importers import (
    _claude_blocks,
    _kimi_wire,
    _openhands_events,
    claude_code,
    claude_code_stream,
    codex,
    copilot,
    cursor,
    droid,
    gemini_cli,
    hermes,
    pi,
)
from ctxengine.importers import _opencode_parts as opencode_parts
from ctxengine.importers import _refusals as refused


@dataclass(frozen=True, slots=True)
class Row:
    """One line of the format table.

    Attributes:
        agent: the agent (or API) that writes the files.
        format: the importer's name (what ``--format`` takes); ``None`` for files refused on
            purpose.
        point_at: what to give ``import`` (Markdown).
        reads: what comes in, or for a refused file why it is refused (Markdown).
        skipped: report kinds (``fnmatch`` patterns) counted as ignored: records that never
            reach the model.
    """

    agent: str
    format: str | None
    point_at: str
    reads: str
    skipped: tuple[str, ...] = ()


def _sorted(prefix: str, kinds: frozenset[str], suffix: str = "") -> tuple[str, ...]:
    return tuple(f"{prefix}{k}{suffix}" for k in sorted(kinds))


_PI_METADATA = _sorted("", pi._METADATA)

ROWS: tuple[Row, ...] = (
    Row(
        "ctxengine",
        "ctxengine",
        "the JSONL `export --format jsonl` writes",
        "every entry unchanged (an export re-imports as it was)",
    ),
    Row(
        "Claude Code",
        "claude-code",
        "`~/.claude/projects/<dir>/<session>.jsonl`, or a sub-agent's "
        "`<session>/subagents/agent-<id>.jsonl`",
        "messages in the order sent (a reply logged over several lines is one message); "
        "compact boundaries as compaction entries, a preserved segment kept in the tail; the "
        "attachments Claude Code sent (file re-reads, date, git status, reminders) as the role "
        "they were sent in; a sub-agent linked to its parent session",
        (
            *sorted(claude_code.IGNORED_RECORDS),
            "system:*",
            "attachment:*",
            "sidechain",
            "duplicate",
            *_sorted("block:", _claude_blocks.IGNORED_BLOCKS),
        ),
    ),
    Row(
        "Claude Code",
        "claude-code-stream",
        "the output of `claude -p --output-format stream-json --verbose`",
        "the model's messages from its first reply on (the prompt and attachments are not in "
        "it), compact boundaries and their summaries; sub-agent turns left out",
        (
            *sorted(claude_code_stream.IGNORED_RECORDS),
            "system:*",
            "sidechain",
            "duplicate",
            *_sorted("block:", _claude_blocks.IGNORED_BLOCKS),
        ),
    ),
    Row("Claude Code", None, "a sub-agent's `agent-<id>.meta.json`", refused.CLAUDE_SUBAGENT_META),
    Row(
        "Codex CLI",
        "codex",
        "`~/.codex/sessions/YYYY/MM/DD/rollout-*.jsonl` (resumed rollouts too)",
        "the base prompt as the first `developer` message, messages, calls (parallel ones in "
        "one reply), freeform patches as text, usage; a `compacted` line as a compaction entry "
        "followed by its replacement history",
        (
            *sorted(codex._IGNORED_RECORDS),
            *_sorted("response_item:", codex._IGNORED_ITEMS),
            "event_msg:*",
            "image_generation_call without result",
        ),
    ),
    Row("Codex CLI", None, "`codex exec --json` output", refused.CODEX_EXEC),
    Row(
        "pi",
        "pi",
        "`~/.pi/agent/sessions/<dir>/<session>.jsonl`",
        "the active branch of the entry tree, pi's compactions, bash executions",
        (*_PI_METADATA, "excluded_bash"),
    ),
    Row(
        "OpenClaw",
        "openclaw",
        "an OpenClaw session JSONL",
        "pi's format, read in file order",
        (*_PI_METADATA, "excluded_bash"),
    ),
    Row(
        "SWE-agent",
        "swe-agent",
        "a `.traj` trajectory",
        "its `history` (reused tool-call ids made unique)",
    ),
    Row(
        "mini-swe-agent, OpenAI chat",
        "chat-completions",
        "a JSON list of chat-completions messages, or an object with `messages`",
        "the messages; mini-swe-agent's final submission as the answer to its last call",
        ("exit",),
    ),
    Row(
        "Anthropic Messages API",
        "anthropic-messages",
        "a JSON object with `system` and `messages`",
        "the messages",
    ),
    Row(
        "GitHub Copilot CLI",
        "copilot",
        "`~/.copilot/session-state/<id>/events.jsonl`",
        "messages, calls and results; its compaction and truncation events as compaction "
        "entries; rewinds drop what they undid; sub-agent events linked by tool call",
        (*_sorted("", copilot._IGNORED_FAMILIES, ".*"), "subagent event", "rewound"),
    ),
    Row(
        "Cursor",
        "cursor",
        "an agent transcript JSONL (a `subagents/` file is linked to its parent)",
        "messages; calls pair with results in order (Cursor records no call ids)",
        _sorted("", cursor._IGNORED_TYPES),
    ),
    Row(
        "Kimi CLI / Kimi Code",
        "kimi",
        "kimi-cli `context.jsonl`, or a Kimi Code wire log",
        "messages; `_usage` as usage; a compacted file opens with a compaction entry; wire "
        "logs: steps as replies, compaction, sub-agents via `state.json`",
        ("_checkpoint", "_usage", "metadata", *_sorted("", _kimi_wire.IGNORED_FAMILIES, ".*")),
    ),
    Row("Kimi Code", None, "`state.json`", refused.KIMI_STATE),
    Row(
        "Qwen Code",
        "qwen",
        "a chat JSONL (`~/.qwen/projects/<dir>/chats/<session>.jsonl`)",
        "the branch left by rewinds; chat compression as a compaction entry followed by what "
        "it keeps",
        ("system:*", "sidechain", "rewound"),
    ),
    Row(
        "Factory droid",
        "droid",
        "a session store JSONL (`~/.factory/sessions/<dir>/<id>.jsonl`) or a "
        "`droid exec --output-format stream-json` log",
        "messages, calls and results; usage",
        (*sorted(droid._STORE_IGNORED), "session_start", "system", "completion"),
    ),
    Row(
        "Grok CLI",
        "grok",
        "`chat_history.jsonl` (with `summary.json` beside it)",
        "messages, reasoning, provider-side tool calls as text",
        ("reasoning without a reply",),
    ),
    Row("Grok CLI", None, "`summary.json`", refused.GROK_SUMMARY),
    Row(
        "Hermes",
        "hermes",
        "a session JSON",
        "chat-completions messages with reasoning",
        _sorted("", hermes._IGNORED_ROLES),
    ),
    Row(
        "Cline",
        "cline",
        "a task folder `tasks/<id>/` or its `api_conversation_history.json`",
        "messages with usage per request (from `ui_messages.json`); deleted ranges as "
        "compaction entries",
        ("reasoning item",),
    ),
    Row(
        "Roo Code, Kilo Code",
        "roo-code",
        "a task folder `tasks/<id>/` or its `api_conversation_history.json`",
        "messages; condense summaries and truncation markers as compaction entries",
        ("reasoning item",),
    ),
    Row(
        "Gemini CLI",
        "gemini-cli",
        "a chat recording JSONL (`~/.gemini/tmp/<project>/chats/`), the older session JSON, "
        "or a `/chat share` Markdown or JSON",
        "messages, thoughts as reasoning, calls with their results; `$set`, `$rewindTo`; "
        "`/compress` as a compaction entry, and in a share the `<state_snapshot>` turn it "
        "starts from (its `<overall_goal>` is the goal, its `MODIFIED:` paths modified "
        "files); a subagent names its parent",
        (
            *_sorted("message:", gemini_cli._UI_TYPES),
            "rewound",
            "compression acknowledgement",
        ),
    ),
    Row(
        "OpenHands",
        "openhands",
        "an event stream: a trajectory (JSON list) or evaluation outputs (JSONL)",
        "actions and observations as messages and tool exchanges; condensations as "
        "compaction entries",
        (
            *_sorted("action:", _openhands_events.IGNORED_ACTIONS),
            *_sorted("observation:", _openhands_events.IGNORED_OBSERVATIONS),
            "repeated system prompt",
        ),
    ),
    Row(
        "OpenCode",
        "opencode",
        "`opencode.db`, the older `storage/` folder, a session file in it, or `opencode "
        "export` JSON (a message or part file alone is refused: point at the folder)",
        "the latest main session (others listed); a compaction and its summary as a "
        "compaction entry",
        (
            *_sorted("part:", opencode_parts._IGNORED_PARTS),
            "part:compaction",
            "part:file",
            "part:subtask",
            "other session",
            "assistant with error",
        ),
    ),
    Row(
        "aider",
        "aider",
        "`.aider.chat.history.md`",
        "typed messages and replies, every run one after the other; edited files as modified",
        ("aider output", "command:*", "empty input", "preamble"),
    ),
    Row("Antigravity", None, "trajectory steps JSONL", refused.ANTIGRAVITY_STEPS),
    Row("Antigravity", None, "brain artifacts (Markdown)", refused.ANTIGRAVITY_BRAIN),
)

#: The lines around the table in README.md.
START = "<!-- formats: generated by `python -m ctxengine.importers.catalog` -->"
END = "<!-- /formats -->"


def _cell(text: str) -> str:
    return text.replace("|", "\\|")


def markdown_table() -> str:
    """The README format table (Markdown, one row per :data:`ROWS` entry)."""
    lines = [
        "| agent | `--format` | point at | what comes in | skipped: never reaches the model |",
        "| --- | --- | --- | --- | --- |",
    ]
    for row in ROWS:
        if row.format is None:
            fmt, reads, skipped = "refused", f"refused: {row.reads}", "—"
        else:
            fmt, reads = f"`{row.format}`", row.reads
            skipped = ", ".join(f"`{k}`" for k in row.skipped) or "—"
        cells = (row.agent, fmt, row.point_at, reads, skipped)
        lines.append("| " + " | ".join(_cell(c) for c in cells) + " |")
    return "\n".join(lines)


if __name__ == "__main__":
    print(START)
    print(markdown_table())
    print(END)
