"""Gemini CLI: the chat recording (JSONL), the session JSON and chat shares (Markdown, JSON)."""

from __future__ import annotations

import json
import re
from pathlib import Path
from typing import Any

import pytest

from compact_check import counts, problems_after_compact
from corpus import require_corpus
from ctxengine.engine import Session
from ctxengine.importers import detect, read_transcript
from ctxengine.model import CompactionRecord, Message, ReasoningPart, Usage
from ctxengine.replay import replay
from import_drift import LONE_SURROGATE_ERROR, LONE_SURROGATE_JSON, LONE_SURROGATE_TEXT, tolerated

GEMINI = "gemini-cli"


def messages(session: Any) -> list[Message]:
    return [e.body for e in session.entries if isinstance(e.body, Message)]


def write(tmp_path: Path, *lines: Any, name: str = "session-1.jsonl") -> Path:
    path = tmp_path / name
    path.parent.mkdir(parents=True, exist_ok=True)
    text = "".join(line if isinstance(line, str) else json.dumps(line) + "\n" for line in lines)
    path.write_text(text, encoding="utf-8")
    return path


def meta(kind: str = "main") -> dict[str, Any]:
    return {"sessionId": "s-1", "projectHash": "ph", "startTime": "t0", "kind": kind}


def user(msg_id: str, text: str) -> dict[str, Any]:
    return {"id": msg_id, "timestamp": "t", "type": "user", "content": [{"text": text}]}


def call(
    call_id: str | None = "c1", args: Any = None, output: Any = "ok", **extra: Any
) -> dict[str, Any]:
    tc: dict[str, Any] = {"name": "run_shell_command", "args": args if args is not None else {}}
    if call_id is not None:
        tc["id"] = call_id
    if output is not None:
        response = {"id": call_id, "name": "run_shell_command", "response": {"output": output}}
        tc["result"] = [{"functionResponse": response}]
    tc["status"] = "success"
    tc.update(extra)
    return tc


def gemini(msg_id: str, text: str = "", *calls: dict[str, Any], **extra: Any) -> dict[str, Any]:
    rec: dict[str, Any] = {"id": msg_id, "timestamp": "t", "type": "gemini", "content": text}
    if calls:
        rec["toolCalls"] = list(calls)
    rec.update(extra)
    return rec


SHARES = {
    # (messages by role, calls, results, compactions)
    "gemini-cli-chat-share-2025-11-05.md": (
        {"assistant": 150, "tool": 148, "user": 36},
        148,
        148,
        0,
    ),
    # written after a compression: its second USER section is the summary, its first MODEL
    # section the acknowledgement (one compaction record, no message for either)
    "gemini-cli-chat-share-2025-11-17.md": ({"assistant": 39, "tool": 39, "user": 4}, 39, 39, 1),
    "go-ai-agent-chat-share-long-2025-11-09.md": (
        {"assistant": 785, "tool": 784, "user": 5},
        784,
        784,
        0,
    ),
}


def raw_share_counts(path: Path) -> tuple[int, int, int, int]:
    """USER sections, MODEL sections, Tool Command and Tool Response blocks, counted from the
    raw text."""
    text = path.read_text(encoding="utf-8")
    return (
        len(re.findall(r"^🧑\u200d💻 ## USER$", text, re.M)),
        len(re.findall(r"^✨ ## MODEL$", text, re.M)),
        text.count("**Tool Command**:\n```json\n"),
        text.count("**Tool Response**:\n```json\n"),
    )


class TestCorpus:
    @pytest.mark.parametrize("name", sorted(SHARES))
    def test_share_counts_match_the_raw_sections(self, name: str) -> None:
        path = require_corpus("gemini-cli", name)
        session = read_transcript(path)
        assert session.format == GEMINI
        assert counts(session) == SHARES[name]
        assert session.report.summary() == ""
        users, models, commands, responses = raw_share_counts(path)
        roles, calls, results, compactions = SHARES[name]
        # every MODEL section is one assistant message (but an acknowledgement of a
        # compression), every response one result, and the USER sections that hold no
        # response are the user messages (but a compression's summary)
        assert (models, commands, responses) == (roles["assistant"] + compactions, calls, results)
        assert users - responses == roles["user"] + compactions
        ignored = {"compression acknowledgement": 1} if compactions else {}
        assert session.report.counts("ignored") == ignored

    def test_a_share_written_after_a_compression_starts_from_its_summary(self) -> None:
        path = require_corpus("gemini-cli", "gemini-cli-chat-share-2025-11-17.md")
        session = read_transcript(path)
        setup, record, first = (e.body for e in session.entries[:3])
        assert isinstance(setup, Message) and setup.meta == {"synthetic": "setup_context"}
        assert isinstance(record, CompactionRecord)
        assert (record.summarizer, record.first_kept_id, record.retained_ids) == (
            "imported",
            None,
            (session.entries[0].id,),
        )
        assert record.summary.startswith("scratchpad\nI have identified the continuous error")
        assert "<overall_goal>\n        Fix all compilation errors" in record.summary
        assert isinstance(first, Message) and (first.role, first.text) == ("user", "continue")
        state = Session(32_000, entries=session.entries).prepare().messages[0].text
        goal = state.split("## Goal\n", 1)[1].split("\n\n", 1)[0]
        assert goal == "Fix all compilation errors and test failures in the Go project."
        modified = state.split("## Files modified\n", 1)[1].split("\n\n", 1)[0].splitlines()
        assert len(modified) == 30
        assert modified[-1] == "- /home/user/Workspace/go-ai-agent-v2/pkg/extension/manager_test.go"
        assert "## Files read" not in state

    def test_setup_context_is_synthetic_and_the_title_is_the_first_request(self) -> None:
        path = require_corpus("gemini-cli", "gemini-cli-chat-share-2025-11-05.md")
        session = read_transcript(path)
        found = messages(session)
        assert found[0].meta == {"synthetic": "setup_context"}
        assert found[0].text.startswith("This is the Gemini CLI. We are setting up the context")
        assert found[1].meta == {}
        assert session.title == "read the promp from my file @PROMPT.md and continue executing"

    def test_responses_answer_the_calls_and_errors_are_flagged(self) -> None:
        path = require_corpus("gemini-cli", "gemini-cli-chat-share-2025-11-05.md")
        found = messages(read_transcript(path))
        first_call = found[2].tool_calls[0]
        assert (first_call.name, first_call.arguments) == (
            "read_file",
            '{"absolute_path":"/home/user/Workspace/go-ai-agent-v2/go-cli/PLAN.md"}',
        )
        result = found[3].tool_results[0]
        assert result.call_id == first_call.id
        assert result.is_error is True
        assert result.text == "File not found: /home/user/Workspace/go-ai-agent-v2/go-cli/PLAN.md"
        assert result.meta == {"response_id": "read_file-1762392761120-1ac8b325751a5"}
        listing = found[6].tool_results[0]
        assert listing.is_error is False
        assert listing.text.startswith("Directory listing for /home/user/Workspace/")

    def test_recording_fixture(self) -> None:
        path = require_corpus("format-fixtures", "gemini", "jsonl_v040.jsonl")
        session = read_transcript(path)
        assert detect(path).name == GEMINI
        assert counts(session) == ({"assistant": 2, "tool": 1, "user": 1}, 1, 1, 0)
        assert session.report.summary() == ""
        assert session.session_id == "gemini_stage0_jsonl"
        found = messages(session)
        assert found[1].tool_calls[0].id == "run_shell_command_stage0"
        assert found[2].tool_results[0].text == (
            "Output: AgentSessions/\nREADME.md\nProcess Group PGID: 12345"
        )
        # input 12,069 includes 11,502 cached
        assert found[3].usage == Usage(567, 147, 11_502, 0)
        assert found[3].model == "gemini-3-flash-preview"
        assert session.meta["last_updated"] == "2026-04-29T21:39:33.156Z"
        assert session.meta["variant"] == "recording"
        assert problems_after_compact(session) == []

    def test_session_json_fixture(self) -> None:
        path = require_corpus("format-fixtures", "gemini", "large.json")
        session = read_transcript(path)
        assert counts(session) == ({"assistant": 4, "tool": 2, "user": 2}, 2, 2, 0)
        assert session.report.summary() == ""
        assert session.report.counts("ignored") == {"message:info": 1}
        found = messages(session)
        assert isinstance(found[1].parts[0], ReasoningPart)
        assert found[1].parts[0].text == "Placeholder thoughts for schema coverage."
        assert found[1].usage == Usage(100, 10, 0, 0)
        assert [m.text for m in found if m.role == "assistant"][-2:] == [
            "Captured multiline output.",
            "Ok",
        ]
        assert session.meta["variant"] == "session-json"
        assert problems_after_compact(session) == []


class TestRecording:
    def test_a_record_written_again_replaces_the_first_in_place(self, tmp_path: Path) -> None:
        first = gemini("g1", "", call("c1", output=None, status="executing"))
        again = gemini("g1", "", call("c1"), tokens={"input": 50, "output": 5, "cached": 10})
        path = write(tmp_path, meta(), user("u1", "go"), first, {"$set": {"x": 1}}, again)
        session = read_transcript(path)
        found = messages(session)
        assert [m.role for m in found] == ["user", "assistant", "tool"]
        assert found[1].usage == Usage(40, 5, 10, 0)
        assert found[2].tool_results[0].text == "ok"

    def test_rewind_drops_the_message_and_every_later_one(self, tmp_path: Path) -> None:
        path = write(
            tmp_path,
            meta(),
            user("u1", "first"),
            gemini("g1", "one"),
            user("u2", "second"),
            gemini("g2", "two"),
            {"$rewindTo": "u2"},
            user("u3", "again"),
            gemini("g3", "three"),
        )
        session = read_transcript(path)
        assert [m.text for m in messages(session)] == ["first", "one", "again", "three"]
        assert session.report.counts("ignored") == {"rewound": 2}

    def test_compression_becomes_a_compaction_record(self, tmp_path: Path) -> None:
        snapshot = user("s1", "<state_snapshot>done: a</state_snapshot>")
        ack = gemini("a1", "Got it. Thanks for the additional context!")
        kept = [user("u2", "second"), gemini("g2", "two")]
        path = write(
            tmp_path,
            meta(),
            user("u1", "first"),
            gemini("g1", "one"),
            *kept,
            {"$set": {"messages": [snapshot, ack, *kept]}},
            user("u3", "third"),
        )
        session = read_transcript(path)
        bodies = [e.body for e in session.entries]
        assert [b.text if isinstance(b, Message) else "compaction" for b in bodies] == [
            "first",
            "one",
            "second",
            "two",
            "compaction",
            "third",
        ]
        record = bodies[4]
        assert isinstance(record, CompactionRecord)
        assert record.summary == "<state_snapshot>done: a</state_snapshot>"
        assert record.first_kept_id == session.entries[2].id == "u2"
        assert session.report.counts("ignored") == {"compression acknowledgement": 1}
        context = [m.text for m in Session(100_000, entries=session.entries).project().messages]
        assert context[1:] == ["second", "two", "third"]

    def test_subagent_names_its_parent_folder(self, tmp_path: Path) -> None:
        path = write(
            tmp_path,
            meta("subagent"),
            user("u1", "look"),
            gemini("g1", "seen"),
            name="chats/parent-session/child.jsonl",
        )
        session = read_transcript(path)
        assert session.meta["kind"] == "subagent"
        assert session.meta["parent_session_id"] == "parent-session"

    def test_calls_without_results(self, tmp_path: Path) -> None:
        cancelled = call("c1", output=None, status="cancelled", resultDisplay="Cancelled")
        running = call("c2", output=None, status="executing")
        path = write(
            tmp_path,
            meta(),
            user("u1", "go"),
            gemini("g1", "", cancelled),
            gemini("g2", "", running),
        )
        session = read_transcript(path)
        found = messages(session)
        assert [m.role for m in found] == ["user", "assistant", "tool", "assistant"]
        result = found[2].tool_results[0]
        assert (result.text, result.is_error) == ("Cancelled", True)
        assert found[3].tool_calls[0].id == "c2"  # the last record's running call: pending
        assert session.report.summary() == ""

    def test_info_and_error_records_are_ignored(self, tmp_path: Path) -> None:
        info = {"id": "i1", "timestamp": "t", "type": "info", "content": "Request cancelled."}
        path = write(tmp_path, meta(), user("u1", "go"), info, gemini("g1", "ok"))
        session = read_transcript(path)
        assert [m.text for m in messages(session)] == ["go", "ok"]
        assert session.report.counts("ignored") == {"message:info": 1}


class TestShare:
    def test_json_share_with_call_ids_and_thoughts(self, tmp_path: Path) -> None:
        history = [
            {"role": "user", "parts": [{"text": "list"}]},
            {
                "role": "model",
                "parts": [
                    {"text": "thinking", "thought": True},
                    {
                        "functionCall": {
                            "id": "f1",
                            "name": "list_directory",
                            "args": {"dir_path": "."},
                        }
                    },
                ],
            },
            {
                "role": "user",
                "parts": [
                    {
                        "functionResponse": {
                            "id": "f1",
                            "name": "list_directory",
                            "response": {"output": "a.py"},
                        }
                    },
                    {"text": "--- a.py ---"},
                ],
            },
            {"role": "model", "parts": [{"text": "One file."}]},
        ]
        path = tmp_path / "share.json"
        path.write_text(json.dumps(history), encoding="utf-8")
        session = read_transcript(path)
        found = messages(session)
        assert [m.role for m in found] == ["user", "assistant", "tool", "user", "assistant"]
        assert isinstance(found[1].parts[0], ReasoningPart)
        assert found[1].tool_calls[0].id == "f1"
        assert found[2].tool_results[0].call_id == "f1"
        assert found[3].meta == {"synthetic": "function_response_parts"}
        assert session.meta == {"variant": "share-json"}

    def test_json_share_with_one_unknown_role_is_sniffed_and_skips_it(self, tmp_path: Path) -> None:
        history = [
            {"role": "user", "parts": [{"text": "hi"}]},
            {"role": "model", "parts": [{"text": "hello"}]},
            {"role": "wizard", "parts": [{"text": "?"}]},
            {"role": "user", "parts": [{"text": "bye"}]},
        ]
        path = tmp_path / "share.json"
        path.write_text(json.dumps(history), encoding="utf-8")
        assert detect(path).name == "gemini-cli"
        session = tolerated(
            path,
            "gemini-cli",
            "skipped 1: section:WIZARD ×1 ($[2])",
            " at $[2]: expected a USER or MODEL content, got WIZARD",
        )
        assert [m.text for m in messages(session)] == ["hi", "hello", "bye"]

    def test_newer_markdown_headers_and_calls_with_ids(self, tmp_path: Path) -> None:
        text = (
            "## USER 🧑‍💻\n\nfix it\n\n---\n\n## MODEL ✨\n\nLooking.**Tool Command**:\n```json\n"
            '{\n  "name": "read_file",\n  "args": {\n    "file_path": "a.py"\n  },\n  "id": "r1"\n}'
            "\n```\n\n---\n\n## USER 🧑‍💻\n\n**Tool Response**:\n```json\n"
            '{\n  "id": "r1",\n  "name": "read_file",\n  "response": {\n    "output": '
            '"x = 1"\n  }\n}'
            "\n```\n\n---\n\n## MODEL ✨\n\nDone."
        )
        path = tmp_path / "chat.md"
        path.write_text(text, encoding="utf-8")
        session = read_transcript(path)
        found = messages(session)
        assert [(m.role, m.text) for m in found] == [
            ("user", "fix it"),
            ("assistant", "Looking."),
            ("tool", ""),
            ("assistant", "Done."),
        ]
        assert found[1].tool_calls[0].id == "r1"
        assert found[2].tool_results[0].text == "x = 1"


def share(*sections: str) -> str:
    return "\n\n---\n\n".join(sections)


SNAPSHOT = "<state_snapshot>\n<overall_goal>Port the CLI.</overall_goal>\n</state_snapshot>"
SETUP = "This is the Gemini CLI. We are setting up the context for our chat."


def _compressed_share(tmp_path: Path) -> Path:
    """A share written after a compression: the environment context, the summary and its
    acknowledgement, then one more exchange."""
    path = tmp_path / "chat.md"
    path.write_text(
        share(
            f"## USER 🧑‍💻\n\n{SETUP}",
            f"## USER 🧑‍💻\n\n{SNAPSHOT}",
            "## MODEL ✨\n\nGot it. Thanks for the additional context!",
            "## USER 🧑‍💻\n\nnow add the tests",
            "## MODEL ✨\n\nAdding them.",
        ),
        encoding="utf-8",
    )
    return path


class TestCompressedShare:
    def test_the_summary_and_its_acknowledgement_become_one_compaction(
        self, tmp_path: Path
    ) -> None:
        session = read_transcript(_compressed_share(tmp_path))
        bodies = [e.body for e in session.entries]
        assert [b.text if isinstance(b, Message) else b.summary for b in bodies] == [
            SETUP,
            SNAPSHOT,
            "now add the tests",
            "Adding them.",
        ]
        record = bodies[1]
        assert isinstance(record, CompactionRecord)
        assert (record.retained_ids, record.first_kept_id) == (("turn-0",), None)
        assert [e.id for e in session.entries[2:]] == ["turn-3", "turn-4"]
        assert session.report.counts("ignored") == {"compression acknowledgement": 1}
        # as Gemini CLI sent it: the environment context, the summary, what followed
        context = Session(100_000, entries=session.entries).project().messages
        assert [m.text for m in context[:1] + context[2:]] == [
            SETUP,
            "now add the tests",
            "Adding them.",
        ]
        assert context[1].text.startswith("The earlier part of this session was compacted.")
        assert "‹overall_goal›Port the CLI.‹/overall_goal›" in context[1].text  # tags escaped

    def test_a_replay_starts_from_the_summary(self, tmp_path: Path) -> None:
        result = replay(read_transcript(_compressed_share(tmp_path)).entries, window=100_000)
        assert result.compactions == 0
        assert result.final is not None
        sent = [m.text for m in result.final.messages]
        assert len(sent) == 3
        assert (sent[0], sent[2]) == (SETUP, "now add the tests")
        assert "‹overall_goal›Port the CLI.‹/overall_goal›" in sent[1]

    @pytest.mark.parametrize(
        ("snapshot", "answer"),
        [
            (SNAPSHOT, "Thanks, I will keep that in mind."),  # not the acknowledgement
            (
                "<state_snapshot> (the tag only, no element)",
                "Got it. Thanks for the additional context!",
            ),
        ],
    )
    def test_without_the_pair_a_snapshot_is_the_users_message(
        self, tmp_path: Path, snapshot: str, answer: str
    ) -> None:
        path = tmp_path / "chat.md"
        path.write_text(
            share(f"## USER 🧑‍💻\n\n{snapshot}", f"## MODEL ✨\n\n{answer}"), encoding="utf-8"
        )
        session = read_transcript(path)
        assert [(m.role, m.text) for m in messages(session)] == [
            ("user", snapshot),
            ("assistant", answer),
        ]
        assert session.report.counts("ignored") == {}


COMMAND = '**Tool Command**:\n```json\n{\n  "name": "read_file",\n  "args": %s\n}\n```'
RESPONSE = '**Tool Response**:\n```json\n{\n  %s"name": "read_file",\n  "response": %s\n}\n```'


class TestDrift:
    """Each drift is tolerated with an exact report, and refused at its line (or JSON path)
    when strict."""

    def test_message_record_without_id(self, tmp_path: Path) -> None:
        rec = {"timestamp": "t", "type": "user", "content": "hello"}
        path = write(tmp_path, meta(), rec, gemini("g1", "hi"))
        session = tolerated(
            path,
            GEMINI,
            "repaired 1: message without id ×1 (line 2)",
            ":2: expected a string `id` on a message record",
        )
        assert session.entries[0].id == "record-2"

    def test_tool_call_without_id(self, tmp_path: Path) -> None:
        path = write(tmp_path, meta(), user("u1", "go"), gemini("g1", "", call(None)))
        session = tolerated(
            path,
            GEMINI,
            "repaired 1: tool call without id ×1 (line 3)",
            ":3: expected a string `id` on a tool call",
        )
        found = messages(session)
        assert found[1].tool_calls[0].id == found[2].tool_results[0].call_id == "call_gen_1"

    def test_structured_output(self, tmp_path: Path) -> None:
        path = write(
            tmp_path, meta(), user("u1", "go"), gemini("g1", "", call("c1", output={"lines": 2}))
        )
        session = tolerated(
            path,
            GEMINI,
            "repaired 1: structured tool output ×1 (line 3)",
            ":3: expected a string `output` in a function response, got dict",
        )
        assert messages(session)[2].tool_results[0].text == '{"lines":2}'

    def test_null_arguments(self, tmp_path: Path) -> None:
        tc = call("c1")
        tc["args"] = None
        path = write(tmp_path, meta(), user("u1", "go"), gemini("g1", "", tc))
        session = tolerated(
            path,
            GEMINI,
            "repaired 1: null arguments ×1 (line 3)",
            ":3: expected tool-call `args` (an object), got null",
        )
        assert messages(session)[1].tool_calls[0].arguments == "{}"

    def test_unknown_record_kind(self, tmp_path: Path) -> None:
        path = write(tmp_path, meta(), user("u1", "go"), {"$hologram": 1}, gemini("g1", "ok"))
        session = tolerated(
            path,
            GEMINI,
            "skipped 1: record:$hologram ×1 (line 3)",
            ":3: expected a message record, a metadata line, `$set` or `$rewindTo`, got a record "
            "with '$hologram'",
        )
        assert [m.text for m in messages(session)] == ["go", "ok"]

    def test_unknown_message_type(self, tmp_path: Path) -> None:
        odd = {"id": "x1", "timestamp": "t", "type": "hologram", "content": "?"}
        path = write(tmp_path, meta(), user("u1", "go"), odd)
        tolerated(
            path,
            GEMINI,
            "skipped 1: message:hologram ×1 (line 3)",
            ":3: expected a message `type` user, gemini, info, error or warning, got 'hologram'",
        )

    def test_partial_last_line(self, tmp_path: Path) -> None:
        path = write(tmp_path, meta(), user("u1", "go"), '{"id":"g1","type":"gem')
        session = tolerated(
            path,
            GEMINI,
            "skipped 1: partial last line ×1 (line 3)",
            ":3: expected a complete JSON object, got a line cut short "
            "(unexpected end of data: line 1 column 23 (char 22))",
        )
        assert [m.text for m in messages(session)] == ["go"]

    def test_lone_surrogate(self, tmp_path: Path) -> None:
        line = json.dumps(gemini("g1", "", call("c1", output="SURROGATE")))
        line = line.replace("SURROGATE", LONE_SURROGATE_JSON)
        path = write(tmp_path, meta(), user("u1", "go"), line + "\n")
        session = tolerated(
            path, GEMINI, "repaired 1: lone surrogate ×1 (line 3)", f":3: {LONE_SURROGATE_ERROR}"
        )
        assert messages(session)[2].tool_results[0].text == LONE_SURROGATE_TEXT

    def test_finished_call_without_result(self, tmp_path: Path) -> None:
        path = write(
            tmp_path,
            meta(),
            user("u1", "go"),
            gemini("g1", "", call("c1", output=None)),
            gemini("g2", "done"),
        )
        session = tolerated(
            path,
            GEMINI,
            "repaired 1: tool call without result ×1 (line 3)",
            ":3: expected a `result` on a finished tool call",
        )
        assert messages(session)[2].tool_results[0].text == "[tool call success]"


class TestShareDrift:
    def test_response_without_id_answers_the_call_of_its_name(self, tmp_path: Path) -> None:
        path = tmp_path / "a.md"
        path.write_text(
            share(
                "## USER 🧑‍💻\n\ngo",
                "## MODEL ✨\n\n" + COMMAND % '{"file_path": "a"}',
                "## USER 🧑‍💻\n\n" + RESPONSE % ("", '{"output": "x"}'),
            ),
            encoding="utf-8",
        )
        session = tolerated(
            path,
            GEMINI,
            "repaired 1: function response without id ×1 (line 21)",
            ":21: expected a string `id` on a function response",
        )
        found = messages(session)
        assert found[2].tool_results[0].call_id == found[1].tool_calls[0].id == "gemini_call_1"

    def test_null_arguments_and_structured_output(self, tmp_path: Path) -> None:
        path = tmp_path / "a.md"
        path.write_text(
            share(
                "## USER 🧑‍💻\n\ngo",
                "## MODEL ✨\n\n" + COMMAND % "null",
                "## USER 🧑‍💻\n\n" + RESPONSE % ('"id": "r1",\n  ', '{"output": [1, 2]}'),
            ),
            encoding="utf-8",
        )
        session = tolerated(
            path,
            GEMINI,
            "repaired 2: null arguments ×1 (line 9), structured tool output ×1 (line 21)",
            ":9: expected tool-call `args` (an object), got null",
        )
        found = messages(session)
        assert found[1].tool_calls[0].arguments == "{}"
        assert found[2].tool_results[0].text == "[1,2]"

    def test_unknown_section(self, tmp_path: Path) -> None:
        path = tmp_path / "a.md"
        path.write_text(share("## USER 🧑‍💻\n\ngo", "## TOOL\n\nx", "## MODEL ✨\n\nok"), "utf-8")
        session = tolerated(
            path,
            GEMINI,
            "skipped 1: section:TOOL ×1 (line 7)",
            ":7: expected a USER or MODEL content, got TOOL",
        )
        assert [m.text for m in messages(session)] == ["go", "ok"]

    def test_partial_last_block(self, tmp_path: Path) -> None:
        path = tmp_path / "a.md"
        cut = "## MODEL ✨\n\n" + (COMMAND % "{}")[:40]
        path.write_text(share("## USER 🧑‍💻\n\ngo", cut), encoding="utf-8")
        session = tolerated(
            path,
            GEMINI,
            "skipped 1: partial last block ×1 (line 9)",
            ":9: expected a complete fenced JSON block, got one cut short",
        )
        assert [m.text for m in messages(session)] == ["go"]

    def test_lone_surrogate_in_a_block(self, tmp_path: Path) -> None:
        path = tmp_path / "a.md"
        response = RESPONSE % ('"id": "r1",\n  ', '{"output": "' + LONE_SURROGATE_JSON + '"}')
        path.write_text(
            share(
                "## USER 🧑‍💻\n\ngo",
                "## MODEL ✨\n\n" + COMMAND % "{}",
                "## USER 🧑‍💻\n\n" + response,
            ),
            encoding="utf-8",
        )
        session = tolerated(
            path, GEMINI, "repaired 1: lone surrogate ×1 (line 21)", f":21: {LONE_SURROGATE_ERROR}"
        )
        assert messages(session)[2].tool_results[0].text == LONE_SURROGATE_TEXT

    def test_a_body_after_a_header_alone_is_counted_from_the_next_line(
        self, tmp_path: Path
    ) -> None:
        """A header followed at once by the separator has its body in the pieces after it;
        their lines are counted from the line after the header, as if a newline ended it."""
        path = tmp_path / "a.md"
        text = share("## USER\n\nhello", "## MODEL", "bad \xff byte", "## USER\n\nbye\n")
        path.write_bytes(text.encode("latin-1"))
        assert path.read_bytes().split(b"\n").index(b"bad \xff byte") + 1 == 11
        session = tolerated(
            path,
            GEMINI,
            "repaired 1: invalid UTF-8 ×1 (line 12)",
            ":12: expected UTF-8 text (bytes that are not UTF-8 found)",
        )
        assert [m.text for m in messages(session)] == [
            "hello",
            "\n\n---\n\nbad \ufffd byte",
            "bye\n",
        ]
