"""GitHub Copilot CLI ``events.jsonl``: the samples, compaction and truncation events, rewinds,
sub-agent events, usage and reasoning, and the drift cases."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from corpus import require_corpus
from ctxengine.importers import read_transcript
from ctxengine.importers.base import ImportedSession
from ctxengine.model import CompactionRecord, Message, ReasoningPart, Usage
from import_drift import LONE_SURROGATE_ERROR, LONE_SURROGATE_JSON, LONE_SURROGATE_TEXT, tolerated


def ev(kind: str, data: dict[str, Any], n: int, **extra: Any) -> dict[str, Any]:
    return {"type": kind, "data": data, "id": f"e{n}", "timestamp": f"t{n}", **extra}


def start(n: int = 1) -> dict[str, Any]:
    return ev("session.start", {"sessionId": "s-1", "copilotVersion": "1.0.80"}, n)


def user(text: str, n: int) -> dict[str, Any]:
    return ev("user.message", {"content": text, "transformedContent": f"<u>{text}</u>"}, n)


def reply(text: str, n: int, *calls: dict[str, Any], **data: Any) -> dict[str, Any]:
    body = {"messageId": f"m{n}", "content": text, "toolRequests": list(calls), **data}
    return ev("assistant.message", body, n)


def request(call_id: str | None, name: str = "bash", arguments: Any = None) -> dict[str, Any]:
    found: dict[str, Any] = {"name": name, "arguments": arguments or {"command": "ls"}}
    if call_id is not None:
        found["toolCallId"] = call_id
    return found


def done(call_id: str | None, n: int, content: Any = "ok", success: bool = True) -> dict[str, Any]:
    data: dict[str, Any] = {"success": success, "result": {"content": content}}
    if call_id is not None:
        data["toolCallId"] = call_id
    return ev("tool.execution_complete", data, n)


def write(tmp_path: Path, *lines: dict[str, Any] | str) -> Path:
    path = tmp_path / "events.jsonl"
    text = "".join((x if isinstance(x, str) else json.dumps(x)) + "\n" for x in lines)
    path.write_text(text.removesuffix("\n") if isinstance(lines[-1], str) else text, "utf-8")
    return path


def messages(session: ImportedSession) -> list[Message]:
    return [e.body for e in session.entries if isinstance(e.body, Message)]


class TestSamples:
    def test_large_sample(self) -> None:
        path = require_corpus("format-fixtures", "copilot", "large.jsonl")
        session = read_transcript(path)
        found = messages(session)
        assert [(m.role, m.text) for m in found] == [
            ("system", "System notice"),
            ("user", "Step 1"),
            ("assistant", "Ok"),
            ("user", "Step 2"),
            ("assistant", ""),
            ("tool", ""),
            ("assistant", "Captured multiline output."),
            ("user", "Step 3"),
            ("assistant", "Ok"),
        ]
        call = found[4].tool_calls[0]
        assert (call.id, call.name, call.arguments) == (
            "call_1",
            "bash",
            '{"command":"printf \'line1\\\\nline2\\\\nline3\\\\n\'"}',
        )
        result = found[5].tool_results[0]
        assert (result.call_id, result.text, result.is_error) == (
            "call_1",
            "line1\nline2\nline3\n",
            False,
        )
        assert [e.id for e in session.entries][:3] == ["e3b", "e4", "e5"]
        assert session.session_id == "copilot_stage0_large"
        assert session.meta["model"] == "gpt-5"
        assert session.report.counts("ignored") == {
            "assistant.turn_end": 1,
            "assistant.turn_start": 1,
            "hook.end": 1,
            "hook.start": 1,
            "session.info": 1,
            "session.model_change": 1,
            "session.start": 1,
            "tool.execution_start": 1,
        }

    def test_v1_sample_keeps_ids_context_and_output_tokens(self) -> None:
        path = require_corpus(
            "format-fixtures",
            "copilot",
            "subdir_v1",
            "aaaabbbb-1111-2222-3333-ccccddddeeee",
            "events.jsonl",
        )
        session = read_transcript(path)
        assert [e.id for e in session.entries] == ["e2", "e4", "e6", "e8"]
        assert session.session_id == "aaaabbbb-1111-2222-3333-ccccddddeeee"
        assert (session.meta["cwd"], session.meta["branch"]) == ("/tmp/project", "main")
        reply_msg = messages(session)[1]
        assert reply_msg.meta["outputTokens"] == 12
        assert reply_msg.usage is None
        assert session.title == "List the files"


class TestMapping:
    def test_transformed_content_is_what_the_model_saw(self, tmp_path: Path) -> None:
        session = read_transcript(write(tmp_path, start(), user("hi", 2)))
        assert messages(session)[0].text == "<u>hi</u>"

    def test_background_compaction_keeps_what_was_logged_while_it_ran(self, tmp_path: Path) -> None:
        path = write(
            tmp_path,
            start(),
            user("one", 2),
            reply("a", 3),
            ev("session.compaction_start", {"conversationTokens": 900}, 4),
            user("two", 5),
            reply("b", 6),
            ev(
                "session.compaction_complete",
                {
                    "success": True,
                    "summaryContent": "did one",
                    "preCompactionTokens": 1000,
                    "postCompactionTokens": 120,
                    "trigger": "threshold",
                },
                7,
            ),
            user("three", 8),
        )
        session = read_transcript(path)
        record = session.entries[4].body
        assert isinstance(record, CompactionRecord)
        assert (record.summary, record.first_kept_id) == ("did one", "e5")
        assert (record.tokens_before, record.tokens_after, record.policy) == (
            1000,
            120,
            "copilot-cli",
        )
        assert session.entries[4].id == "e7"
        assert session.entries[4].meta == {"trigger": "threshold"}

    def test_a_failed_compaction_is_ignored(self, tmp_path: Path) -> None:
        failed = ev("session.compaction_complete", {"success": False, "error": "x"}, 3)
        session = read_transcript(write(tmp_path, start(), user("one", 2), failed))
        assert [e.id for e in session.entries] == ["e2"]
        assert session.report.counts("ignored")["session.compaction_complete (failed)"] == 1

    def test_truncation_keeps_the_last_messages_it_names(self, tmp_path: Path) -> None:
        truncation = ev(
            "session.truncation",
            {
                "tokenLimit": 1000,
                "preTruncationTokensInMessages": 900,
                "postTruncationTokensInMessages": 400,
                "preTruncationMessagesLength": 6,
                "postTruncationMessagesLength": 3,
                "messagesRemovedDuringTruncation": 3,
                "tokensRemovedDuringTruncation": 500,
                "performedBy": "BasicTruncator",
            },
            9,
        )
        path = write(
            tmp_path,
            start(),
            user("one", 2),
            reply("", 3, request("c1")),
            done("c1", 4),
            reply("a", 5),
            user("two", 6),
            reply("b", 7),
            truncation,
        )
        session = read_transcript(path)
        record = session.entries[-1].body
        assert isinstance(record, CompactionRecord)
        assert record.summary == "[3 earlier messages were removed by truncation]"
        assert (record.first_kept_id, record.tokens_before, record.tokens_after) == ("e5", 900, 400)

    def test_truncation_inside_a_tool_exchange_keeps_from_the_next_message(
        self, tmp_path: Path
    ) -> None:
        truncation = ev(
            "session.truncation",
            {"postTruncationMessagesLength": 2, "messagesRemovedDuringTruncation": 2},
            6,
        )
        path = write(
            tmp_path, start(), user("one", 2), reply("", 3, request("c1")), done("c1", 4),
            reply("a", 5), truncation,
        )  # fmt: skip
        record = read_transcript(path).entries[-1].body
        assert isinstance(record, CompactionRecord)
        assert record.first_kept_id == "e5"

    def test_rewind_removes_the_events_from_its_target_on(self, tmp_path: Path) -> None:
        rewind = ev("session.snapshot_rewind", {"upToEventId": "e4", "eventsRemoved": 2}, 6)
        path = write(
            tmp_path,
            start(),
            user("one", 2),
            reply("a", 3),
            user("two", 4),
            reply("b", 5),
            rewind,
            user("three", 7),
        )
        session = read_transcript(path)
        assert [e.id for e in session.entries] == ["e2", "e3", "e7"]
        assert session.report.counts("ignored")["rewound"] == 2

    def test_sub_agent_events_stay_out_and_are_linked(self, tmp_path: Path) -> None:
        started = ev(
            "subagent.started",
            {"toolCallId": "c1", "agentName": "explore", "agentDisplayName": "Explore"},
            4,
        )
        inner = ev("user.message", {"content": "look", "parentToolCallId": "c1"}, 5, agentId="a9")
        path = write(
            tmp_path,
            start(),
            user("go", 2),
            reply("", 3, request("c1", "task")),
            started,
            inner,
            done("c1", 6, "found it"),
        )
        session = read_transcript(path)
        assert [m.role for m in messages(session)] == ["user", "assistant", "tool"]
        assert session.meta["subagents"] == {"c1": "explore"}
        assert session.meta["subagent_ids"] == {"a9": "c1"}
        assert session.report.counts("ignored")["subagent event"] == 1

    def test_reasoning_usage_and_failed_tools(self, tmp_path: Path) -> None:
        path = write(
            tmp_path,
            start(),
            user("go", 2),
            ev("assistant.reasoning", {"reasoningId": "r1", "content": "think first"}, 3),
            reply("", 4, request("c1")),
            ev(
                "assistant.usage",
                {"model": "m", "inputTokens": 500, "cacheReadTokens": 400, "outputTokens": 20},
                5,
            ),
            ev("tool.execution_complete",
               {"toolCallId": "c1", "success": False, "error": {"message": "denied"}}, 6),
            reply("x", 7, reasoningText="seen", reasoningOpaque="sig=="),
        )  # fmt: skip
        found = messages(read_transcript(path))
        first, result, last = found[1], found[2], found[3]
        assert first.reasoning == (ReasoningPart("think first"),)
        assert first.usage == Usage(input_tokens=100, output_tokens=20, cache_read_tokens=400)
        assert (result.tool_results[0].text, result.tool_results[0].is_error) == ("denied", True)
        assert (last.reasoning[0].text, last.reasoning[0].signature) == ("seen", "sig==")


class TestDrift:
    """Each drift is tolerated with an exact report, and refused at its line when strict."""

    def test_missing_ids(self, tmp_path: Path) -> None:
        path = write(tmp_path, start(), user("go", 2), reply("", 3, request(None)), done(None, 4))
        session = tolerated(
            path,
            "copilot",
            "repaired 2: tool request without id ×1 (line 3), tool result without call id ×1 "
            "(line 4)",
            ":3: expected a string id on a tool request",
        )
        found = messages(session)
        assert found[1].tool_calls[0].id == "call_gen_3_0"
        assert found[2].tool_results[0].call_id == "call_gen_3_0"

    def test_structured_output(self, tmp_path: Path) -> None:
        blocks = [{"type": "text", "text": "a"}, {"type": "text", "text": "b"}]
        path = write(
            tmp_path,
            start(),
            user("go", 2),
            reply("", 3, request("c1")),
            ev("tool.execution_complete", {"toolCallId": "c1", "success": True,
                                           "result": blocks}, 4),
        )  # fmt: skip
        session = tolerated(
            path,
            "copilot",
            "repaired 1: structured tool output ×1 (line 4)",
            ":4: expected `result` to be an object with `content` text, got list",
        )
        assert messages(session)[2].tool_results[0].text == "a\nb"

    def test_null_arguments(self, tmp_path: Path) -> None:
        call = {"toolCallId": "c1", "name": "bash", "arguments": None}
        path = write(tmp_path, start(), user("go", 2), reply("", 3, call), done("c1", 4))
        session = tolerated(
            path,
            "copilot",
            "repaired 1: null arguments ×1 (line 3)",
            ":3: expected `arguments` on a tool request",
        )
        assert messages(session)[1].tool_calls[0].arguments == "{}"

    def test_unknown_record_kind(self, tmp_path: Path) -> None:
        path = write(tmp_path, start(), user("go", 2), ev("hologram.beam", {}, 3))
        session = tolerated(
            path,
            "copilot",
            "skipped 1: event:hologram.beam ×1 (line 3)",
            ":3: expected a Copilot CLI event type (user.message, assistant.message, "
            "tool.execution_complete, session.* …), got 'hologram.beam'",
        )
        assert len(messages(session)) == 1

    def test_partial_last_line(self, tmp_path: Path) -> None:
        path = write(tmp_path, start(), user("go", 2), '{"type":"assistant.mess')
        session = tolerated(
            path,
            "copilot",
            "skipped 1: partial last line ×1 (line 3)",
            ":3: expected a complete JSON object, got a line cut short "
            "(unexpected end of data: line 1 column 24 (char 23))",
        )
        assert len(messages(session)) == 1

    def test_lone_surrogate(self, tmp_path: Path) -> None:
        line = json.dumps(done("c1", 4, "SURROGATE")).replace("SURROGATE", LONE_SURROGATE_JSON)
        path = write(tmp_path, start(), user("go", 2), reply("", 3, request("c1")), line + "\n")
        session = tolerated(
            path,
            "copilot",
            "repaired 1: lone surrogate ×1 (line 4)",
            f":4: {LONE_SURROGATE_ERROR}",
        )
        assert messages(session)[2].tool_results[0].text == LONE_SURROGATE_TEXT
