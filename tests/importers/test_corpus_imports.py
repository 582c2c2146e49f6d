"""Every transcript of an imported agent in the corpus imports, and compacts into valid
requests.

Files: every file of ``claude-code/``, ``codex/``, ``pi/``, ``openai-messages/``,
``swe-agent/``, ``gemini-cli/``, ``openhands/`` and ``aider/``, every ``.jsonl`` of
``format-fixtures/<agent>/`` for each agent with an importer (short samples with newer-version
drift) plus the Hermes JSON samples, and the live-agent transcripts. Checked for each:

- the exact report: the native corpus imports without a skip or repair; the format fixtures
  and live sessions with the repairs listed in :data:`EXPECTED` (and the message, call,
  result and compaction counts given there, counted by hand from the files);
- ``compact`` at 8,000 and 32,000 tokens (the engine's compaction, handed off as the CLI
  does, which leaves a context as it was when there is nothing to compact or the summary
  would not make it smaller) gives request bodies that validate for OpenAI and for
  Anthropic.
"""

from __future__ import annotations

from collections import Counter

import pytest

from corpus import CORPUS, fixture_files, live_agent_files, require_corpus, transcript_files
from ctxengine.cli.handoff import RequestOptions, hand_off
from ctxengine.engine import Session
from ctxengine.errors import NothingToCompact, SummaryRejected
from ctxengine.importers import read_transcript
from ctxengine.importers.base import ImportedSession
from ctxengine.model import CompactionRecord, Message
from ctxengine.projection.validate import validate

#: Folders of native transcripts whose format has an importer.
NATIVE = (
    "claude-code", "codex", "pi", "openai-messages", "swe-agent", "gemini-cli", "openhands",
    "aider",
)  # fmt: skip
WINDOWS = (8_000, 32_000)


def names() -> list[str]:
    """Corpus-relative paths of every file checked (``["(corpus missing)"]`` without it)."""
    if not CORPUS.exists():
        return ["(corpus missing)"]
    native = [p for p in transcript_files() if p.parent.name in NATIVE]
    return [str(p.relative_to(CORPUS)) for p in [*native, *fixture_files(), *live_agent_files()]]


#: Per sample file: messages by role, tool calls, tool results, compaction records, and the
#: report summary.
EXPECTED: dict[str, tuple[dict[str, int], int, int, int, str]] = {
    "format-fixtures/claude/large.jsonl": (
        {"assistant": 5, "tool": 1, "user": 4},
        1,
        1,
        0,
        "repaired 2: tool_use without id ×1 (line 2), tool_result without tool_use_id ×1 (line 3)",
    ),
    "format-fixtures/claude/subagent/0a1b2c3d-4e5f-4061-8071-2a3b4c5d6e7f.jsonl": (
        {"assistant": 1, "user": 1},
        1,
        0,
        0,
        "repaired 1: tool_use without id ×1 (line 3)",
    ),
    "format-fixtures/claude/subagent/0a1b2c3d-4e5f-4061-8071-2a3b4c5d6e7f/subagents/"
    "agent-a0ad4f44468bdf20d.jsonl": (
        {"assistant": 1, "tool": 1, "user": 1},
        1,
        1,
        0,
        "repaired 2: tool_use without id ×1 (line 2), tool_result without tool_use_id ×1 (line 3)",
    ),
    "format-fixtures/codex/large.jsonl": (
        {"assistant": 7, "tool": 1, "user": 7},
        1,
        1,
        0,
        "repaired 2: tool_call without call_id ×1 (line 6), tool_result without call_id ×1 "
        "(line 7)",
    ),
    "format-fixtures/pi/small.jsonl": ({"assistant": 2, "user": 2}, 0, 0, 2, ""),
    # The truncation event of this sample has neither message count (schema drift).
    "format-fixtures/copilot/large.jsonl": (
        {"assistant": 4, "system": 1, "tool": 1, "user": 3},
        1,
        1,
        0,
        "skipped 1: session.truncation without counts ×1 (line 18)",
    ),
    "format-fixtures/copilot/subdir_v1/aaaabbbb-1111-2222-3333-ccccddddeeee/events.jsonl": (
        {"assistant": 2, "tool": 1, "user": 1},
        1,
        1,
        0,
        "",
    ),
    "format-fixtures/cursor/large.jsonl": ({"assistant": 5, "tool": 2, "user": 3}, 2, 2, 0, ""),
    "format-fixtures/cursor/small.jsonl": ({"assistant": 2, "user": 2}, 1, 0, 0, ""),
    "format-fixtures/cursor/subagent/parent.jsonl": ({"assistant": 1, "user": 1}, 1, 0, 0, ""),
    "format-fixtures/cursor/subagent/subagents/child.jsonl": (
        {"assistant": 1, "user": 1},
        0,
        0,
        0,
        "",
    ),
    "format-fixtures/droid/session_store_large.jsonl": (
        {"assistant": 4, "tool": 1, "user": 2},
        1,
        1,
        0,
        "",
    ),
    "format-fixtures/droid/session_store_small.jsonl": (
        {"assistant": 1, "tool": 1, "user": 1},
        1,
        1,
        0,
        "",
    ),
    # stream-json: the completion's final text is the second assistant message.
    "format-fixtures/droid/stream_json_large.jsonl": (
        {"assistant": 2, "tool": 1, "user": 1},
        1,
        1,
        0,
        "",
    ),
    "format-fixtures/droid/stream_json_small.jsonl": (
        {"assistant": 2, "tool": 1, "user": 1},
        1,
        1,
        0,
        "",
    ),
    # user: environment context, the prompt, the screenshot turn.
    "format-fixtures/grok/chat_history.jsonl": (
        {"assistant": 2, "system": 1, "tool": 2, "user": 3},
        2,
        2,
        0,
        "",
    ),
    "format-fixtures/grok/subagent/chat_history.jsonl": (
        {"assistant": 2, "system": 1, "tool": 1, "user": 1},
        1,
        1,
        0,
        "",
    ),
    "format-fixtures/hermes/large.json": (
        {"assistant": 2, "system": 1, "tool": 1, "user": 1},
        1,
        1,
        0,
        "",
    ),
    "format-fixtures/hermes/small.json": ({"assistant": 1, "user": 1}, 0, 0, 0, ""),
    # 22 steps; user: 8 typed, 5 reminders Kimi injected, and the 8 typed ones the
    # compaction keeps.
    "format-fixtures/kimi/assistant_tools.jsonl": (
        {"assistant": 22, "system": 1, "tool": 19, "user": 21},
        19,
        19,
        1,
        "",
    ),
    # Every step of this sample was cancelled before the model answered.
    "format-fixtures/kimi/small.jsonl": ({"system": 1, "user": 3}, 0, 0, 0, ""),
    "format-fixtures/kimi/subagent_agent-0.jsonl": (
        {"assistant": 3, "system": 1, "tool": 2, "user": 1},
        2,
        2,
        0,
        "",
    ),
    # user: the custom message OpenClaw injects, and the prompt.
    "format-fixtures/openclaw/large.jsonl": (
        {"assistant": 3, "tool": 2, "user": 2},
        2,
        2,
        0,
        "",
    ),
    "format-fixtures/openclaw/small.jsonl": ({"assistant": 1, "tool": 1, "user": 1}, 1, 1, 0, ""),
    "format-fixtures/qwen/019f0000-0000-7000-8000-000000000001.jsonl": (
        {"assistant": 2, "tool": 1, "user": 2},
        1,
        1,
        0,
        "",
    ),
    "format-fixtures/qwen/019f0000-0000-7000-8000-000000000002.jsonl": ({"user": 1}, 0, 0, 0, ""),
    # The rewind drops the answer of the abandoned branch; the last call has no result yet.
    "format-fixtures/qwen/019f0000-0000-7000-8000-000000000004.jsonl": (
        {"assistant": 1, "user": 2},
        1,
        0,
        0,
        "",
    ),
    "format-fixtures/qwen/019f0000-0000-7000-8000-000000000005.jsonl": (
        {"assistant": 1, "user": 1},
        0,
        0,
        0,
        "repaired 1: glued JSON objects ×1 (line 1)",
    ),
    "format-fixtures/qwen/019f0000000070008000000000000003.jsonl": ({"user": 1}, 0, 0, 0, ""),
    "format-fixtures/qwen/system_telemetry.jsonl": ({"assistant": 1, "tool": 1}, 1, 1, 0, ""),
    # 21 user: 5 typed or command lines, 15 user-role attachments, 1 "Tool loaded."; 30
    # system-role attachments.
    "live-agents/claude-code-2.1.328/session.jsonl": (
        {"assistant": 25, "system": 30, "tool": 25, "user": 21},
        25,
        25,
        3,
        "",
    ),
    "live-agents/claude-code-2.1.328/subagent.jsonl": (
        {"assistant": 3, "system": 7, "tool": 2, "user": 3},
        2,
        2,
        0,
        "",
    ),
    "live-agents/claude-code-2.1.328/session/subagents/agent-a73f6f8bdab2fbcaf.jsonl": (
        {"assistant": 3, "system": 7, "tool": 2, "user": 3},
        2,
        2,
        0,
        "",
    ),
    # The same run's `claude -p --output-format stream-json` output, up to its second
    # compaction: no user prompt (the stream holds the model's messages from its first
    # reply on); user: the "Tool loaded." note after a ToolSearch result.
    "live-agents/claude-code-2.1.328/headless-stream-json.jsonl": (
        {"assistant": 18, "tool": 19, "user": 1},
        19,
        19,
        2,
        "",
    ),
    # developer: base instructions + Codex's developer message; user: 3 in the rollout and
    # the 2 its replacement history keeps after compacting; assistant: 21 replies and the
    # local compaction's summary reply.
    "live-agents/codex-0.169.0/rollout.jsonl": (
        {"assistant": 22, "developer": 2, "tool": 21, "user": 5},
        21,
        21,
        1,
        "",
    ),
}


def counts(session: ImportedSession) -> tuple[dict[str, int], int, int, int, str]:
    msgs = [e.body for e in session.entries if isinstance(e.body, Message)]
    return (
        dict(sorted(Counter(m.role for m in msgs).items())),
        sum(len(m.tool_calls) for m in msgs),
        sum(len(m.tool_results) for m in msgs),
        sum(isinstance(e.body, CompactionRecord) for e in session.entries),
        session.report.summary(),
    )


@pytest.mark.parametrize("rel", names())
def test_imports_with_the_expected_report_and_compacts_into_valid_requests(rel: str) -> None:
    path = require_corpus(*rel.split("/"))
    session = read_transcript(path)
    if rel in EXPECTED:
        assert counts(session) == EXPECTED[rel]
    else:
        assert session.report.summary() == ""
    for window in WINDOWS:
        engine = Session(window, session_id=session.session_id, entries=session.entries)
        try:
            ctx = engine.compact().context
        except NothingToCompact:
            ctx = engine.project()
        except SummaryRejected as exc:  # as ``compact`` does: the context stays as it was
            assert exc.reason == "inflated"
            ctx = engine.project()
        for provider in ("openai", "anthropic"):
            request = RequestOptions(provider, next_user="continue")
            sent = hand_off(ctx, engine.estimator, engine.budget.reserve, request)
            assert validate(sent.body, provider) == [], (rel, window, provider)


def test_every_sample_file_is_listed() -> None:
    require_corpus("format-fixtures")
    listed = {str(p.relative_to(CORPUS)) for p in [*fixture_files(), *live_agent_files()]}
    assert listed == set(EXPECTED)
