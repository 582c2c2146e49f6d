"""Kimi: Kimi Code wire logs (the samples, the session layout, sub-agents) and Kimi CLI
``context.jsonl`` (``_checkpoint``, ``_usage``, a compacted file), and the drift cases."""

from __future__ import annotations

import json
import shutil
from pathlib import Path
from typing import Any

from corpus import require_corpus
from ctxengine.importers import detect, read_transcript
from ctxengine.importers.base import ImportedSession
from ctxengine.model import CompactionRecord, Message, Usage
from import_drift import LONE_SURROGATE_ERROR, LONE_SURROGATE_JSON, LONE_SURROGATE_TEXT, tolerated


def messages(session: ImportedSession) -> list[Message]:
    return [e.body for e in session.entries if isinstance(e.body, Message)]


def write(path: Path, *lines: dict[str, Any] | str) -> Path:
    body = "".join((x if isinstance(x, str) else json.dumps(x)) + "\n" for x in lines)
    if isinstance(lines[-1], str) and not lines[-1].endswith("\n"):
        body = body.removesuffix("\n")
    path.write_text(body, encoding="utf-8")
    return path


class TestWireSamples:
    def test_assistant_tools(self) -> None:
        session = read_transcript(
            require_corpus("format-fixtures", "kimi", "assistant_tools.jsonl")
        )
        found = messages(session)
        assert found[0].role == "system"
        assert (
            found[0].text
            == "You are Kimi Code CLI, an interactive general AI agent. [trimmed for fixture]"
        )
        first_reply = found[4]
        assert first_reply.text == "Hi there! How can I help you today?"
        assert first_reply.reasoning[0].text.startswith("The user has sent three")
        assert first_reply.usage == Usage(
            input_tokens=9431, output_tokens=42, cache_read_tokens=14848, cache_write_tokens=0
        )
        assert (first_reply.stop_reason, first_reply.model) == (
            "stop",
            "moonshot-ai/kimi-k2.7-code",
        )
        failed = next(r for m in found for r in m.tool_results if r.call_id == "Bash_2")
        assert failed.is_error is True
        assert failed.text == (
            "cat: /nonexistent-file-xyz: No such file or directory\n"
            "Command failed with exit code: 1."
        )
        read = next(r for m in found for r in m.tool_results if r.call_id == "Read_16")
        assert read.text.endswith(
            "<system>220 lines read from file starting from line 1. Total lines in file: 220. "
            "End of file reached.</system>"
        )
        parallel = [m for m in found if [c.id for c in m.tool_calls] == ["Glob_4", "Glob_5"]]
        assert len(parallel) == 1
        assert session.meta["subagents"] == {"Agent_3": "agent-0"}
        records = [e for e in session.entries if isinstance(e.body, CompactionRecord)]
        assert len(records) == 1
        record = records[0].body
        assert isinstance(record, CompactionRecord)
        assert record.summary.startswith("The conversation so far has been compacted")
        assert (record.tokens_before, record.tokens_after, record.policy) == (
            15912,
            654,
            "kimi-code",
        )
        tail = session.entries[session.entries.index(records[0]) + 1 :]
        assert [e.body.text for e in tail if isinstance(e.body, Message)] == [
            "hi",
            "hi",
            "hi",
            "run ls command",
            "cat /nonexistent-file-xyz",
            "run subagent to count swift files in this repo",
            "plan counting all html files in this repo",
            'read README.md then grep for "Kimi"',
        ]
        reminders = [m.meta.get("synthetic") for m in found if m.meta.get("synthetic")]
        assert reminders == [
            "todo_list_reminder",
            "plan_mode",
            "plan_mode",
            "plan_mode",
            "todo_list_reminder",
        ]

    def test_cancelled_steps_leave_only_the_prompts(self) -> None:
        session = read_transcript(require_corpus("format-fixtures", "kimi", "small.jsonl"))
        assert [(m.role, m.text) for m in messages(session)[1:]] == [
            ("user", "hi"),
            ("user", "hi"),
            ("user", "stop"),
        ]
        assert session.report.counts("ignored")["turn.cancel"] == 2

    def test_sub_agent_in_the_session_layout_is_linked_to_its_parent(self, tmp_path: Path) -> None:
        sample = require_corpus("format-fixtures", "kimi", "subagent_agent-0.jsonl")
        state = require_corpus("format-fixtures", "kimi", "assistant_tools.state.json")
        session_dir = tmp_path / "sessions" / "wd_project" / "session_1bcbe023"
        agent_dir = session_dir / "agents" / "agent-0"
        agent_dir.mkdir(parents=True)
        shutil.copy(state, session_dir / "state.json")
        path = agent_dir / "wire.jsonl"
        shutil.copy(sample, path)
        session = read_transcript(path)
        assert session.session_id == "1bcbe023:agent-0"
        assert {
            k: session.meta[k] for k in ("agent_id", "parent_agent_id", "parent_session_id")
        } == {
            "agent_id": "agent-0",
            "parent_agent_id": "main",
            "parent_session_id": "1bcbe023",
        }
        assert session.title == "hi"
        assert messages(session)[1].meta["synthetic"] == "subagent"


def ctx(role: str, content: Any, **extra: Any) -> dict[str, Any]:
    return {"role": role, "content": content, **extra}


def call(
    call_id: str | None, name: str = "Shell", arguments: Any = '{"command": "ls"}'
) -> dict[str, Any]:
    found: dict[str, Any] = {"type": "function", "function": {"name": name, "arguments": arguments}}
    if call_id is not None:
        found["id"] = call_id
    return found


class TestContextFile:
    def test_checkpoints_usage_and_tools(self, tmp_path: Path) -> None:
        path = write(
            tmp_path / "context.jsonl",
            {"role": "_system_prompt", "content": "You are Kimi CLI."},
            {"role": "_checkpoint", "id": 0},
            ctx("user", [{"type": "text", "text": "<system>CHECKPOINT 0</system>"}]),
            ctx("user", "list files"),
            {"role": "_usage", "token_count": 100},
            ctx("assistant", [{"type": "think", "think": "use ls", "encrypted": "e1"}],
                tool_calls=[call("c1")]),
            {"role": "_usage", "token_count": 130},
            ctx("tool", "a.txt", tool_call_id="c1"),
            {"role": "_usage", "token_count": 150},
            ctx("assistant", "one file"),
            ctx("tool", "<system>ERROR: oops</system>", tool_call_id="c1"),
        )  # fmt: skip
        assert detect(path).name == "kimi"
        session = read_transcript(path)
        found = messages(session)
        assert [m.role for m in found] == [
            "system",
            "user",
            "user",
            "assistant",
            "tool",
            "assistant",
            "tool",
        ]
        assert found[1].meta == {"synthetic": "checkpoint"}
        assert found[3].usage == Usage(input_tokens=100, output_tokens=30)
        assert (found[3].reasoning[0].text, found[3].reasoning[0].signature) == ("use ls", "e1")
        assert found[3].tool_calls[0].arguments == '{"command": "ls"}'
        assert found[5].usage == Usage(input_tokens=150)
        assert found[6].tool_results[0].is_error is True
        assert session.session_id == tmp_path.name
        assert session.report.counts("ignored") == {"_checkpoint": 1, "_usage": 3}

    def test_a_compacted_file_opens_with_a_compaction_record(self, tmp_path: Path) -> None:
        path = write(
            tmp_path / "context.jsonl",
            {"role": "_checkpoint", "id": 0},
            ctx("user", [
                {"type": "text", "text": "<system>Previous context has been compacted. Here is "
                 "the compaction output:</system>"},
                {"type": "text", "text": "<current_focus>fix tests</current_focus>"},
            ]),
            ctx("user", "and now?"),
            ctx("assistant", "continuing"),
        )  # fmt: skip
        session = read_transcript(path)
        record = session.entries[0].body
        assert isinstance(record, CompactionRecord)
        assert (record.summary, record.first_kept_id, record.policy) == (
            "<current_focus>fix tests</current_focus>",
            None,
            "kimi-cli",
        )
        assert [m.text for m in messages(session)] == ["and now?", "continuing"]


class TestDrift:
    """Each drift is tolerated with an exact report, and refused at its line when strict."""

    def test_missing_ids(self, tmp_path: Path) -> None:
        path = write(
            tmp_path / "context.jsonl",
            ctx("user", "go"),
            ctx("assistant", "", tool_calls=[call(None)]),
            ctx("tool", "done"),
        )
        session = tolerated(
            path,
            "kimi",
            "repaired 2: tool call without id ×1 (line 2), tool message without call id ×1 "
            "(line 3)",
            ":2: expected a string id on a tool call",
        )
        found = messages(session)
        assert found[2].tool_results[0].call_id == found[1].tool_calls[0].id == "call_gen_2_0"

    def test_structured_output(self, tmp_path: Path) -> None:
        wire = [
            {"type": "context.append_message", "message": {"role": "user", "content": "go"}},
            {"type": "context.append_loop_event", "event": {"type": "step.begin"}},
            {"type": "context.append_loop_event",
             "event": {"type": "tool.call", "toolCallId": "c1", "name": "Bash", "args": {}}},
            {"type": "context.append_loop_event",
             "event": {"type": "tool.result", "toolCallId": "c1", "result": "plain"}},
        ]  # fmt: skip
        path = write(tmp_path / "wire.jsonl", *wire)
        session = tolerated(
            path,
            "kimi",
            "repaired 1: structured tool output ×1 (line 4)",
            ":4: expected `result` to be an object with `output`, got a string",
        )
        assert messages(session)[2].tool_results[0].text == "plain"

    def test_null_arguments(self, tmp_path: Path) -> None:
        path = write(
            tmp_path / "context.jsonl",
            ctx("user", "go"),
            ctx("assistant", "", tool_calls=[call("c1", arguments=None)]),
            ctx("tool", "done", tool_call_id="c1"),
        )
        session = tolerated(
            path,
            "kimi",
            "repaired 1: null arguments ×1 (line 2)",
            ":2: expected `function.arguments` on a tool call",
        )
        assert messages(session)[1].tool_calls[0].arguments == "{}"

    def test_unknown_record_kind(self, tmp_path: Path) -> None:
        path = write(tmp_path / "context.jsonl", ctx("user", "go"), {"role": "_hologram"})
        session = tolerated(
            path,
            "kimi",
            "skipped 1: role _hologram ×1 (line 2)",
            ":2: expected a `role` of user, assistant, tool, system, _system_prompt, "
            "_checkpoint or _usage",
        )
        assert len(messages(session)) == 1

    def test_partial_last_line(self, tmp_path: Path) -> None:
        path = write(tmp_path / "context.jsonl", ctx("user", "go"), '{"role": "assis')
        session = tolerated(
            path,
            "kimi",
            "skipped 1: partial last line ×1 (line 2)",
            ":2: expected a complete JSON object, got a line cut short "
            "(unexpected end of data: line 1 column 16 (char 15))",
        )
        assert len(messages(session)) == 1

    def test_lone_surrogate(self, tmp_path: Path) -> None:
        line = json.dumps(ctx("user", "SURROGATE")).replace("SURROGATE", LONE_SURROGATE_JSON)
        path = write(tmp_path / "context.jsonl", line + "\n")
        session = tolerated(
            path, "kimi", "repaired 1: lone surrogate ×1 (line 1)", f":1: {LONE_SURROGATE_ERROR}"
        )
        assert messages(session)[0].text == LONE_SURROGATE_TEXT
