"""Qwen Code chat recordings: the samples (active branch after a rewind, glued objects,
merged streamed replies), chat compression, sub-agent and foreign records, and the drift
cases."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from corpus import require_corpus
from ctxengine.importers import read_transcript
from ctxengine.importers.base import ImportedSession
from ctxengine.model import CompactionRecord, Message, Usage
from import_drift import LONE_SURROGATE_ERROR, LONE_SURROGATE_JSON, LONE_SURROGATE_TEXT, tolerated

SID = "s-1"


def messages(session: ImportedSession) -> list[Message]:
    return [e.body for e in session.entries if isinstance(e.body, Message)]


def rec(kind: str, uuid: str, parent: str | None, **extra: Any) -> dict[str, Any]:
    return {"uuid": uuid, "parentUuid": parent, "sessionId": SID, "timestamp": "t",
            "type": kind, "cwd": "/w", "version": "0.21", **extra}  # fmt: skip


def user(uuid: str, parent: str | None, text: str) -> dict[str, Any]:
    return rec("user", uuid, parent, message={"role": "user", "parts": [{"text": text}]})


def model(uuid: str, parent: str | None, *parts: dict[str, Any], **extra: Any) -> dict[str, Any]:
    return rec("assistant", uuid, parent, message={"role": "model", "parts": list(parts)}, **extra)


def fcall(call_id: str | None, args: Any = None) -> dict[str, Any]:
    body: dict[str, Any] = {"name": "read_file", "args": {"path": "a"} if args is None else args}
    if call_id is not None:
        body["id"] = call_id
    return {"functionCall": body}


def fresult(uuid: str, parent: str, call_id: str | None, output: str = "A") -> dict[str, Any]:
    body: dict[str, Any] = {"name": "read_file", "response": {"output": output}}
    if call_id is not None:
        body["id"] = call_id
    return rec("tool_result", uuid, parent,
               message={"role": "user", "parts": [{"functionResponse": body}]})  # fmt: skip


def write(tmp_path: Path, *lines: dict[str, Any] | str) -> Path:
    path = tmp_path / "chat.jsonl"
    body = "".join((x if isinstance(x, str) else json.dumps(x)) + "\n" for x in lines)
    if isinstance(lines[-1], str) and not lines[-1].endswith("\n"):
        body = body.removesuffix("\n")
    path.write_text(body, encoding="utf-8")
    return path


class TestSamples:
    def test_tool_turn_with_hook_context_and_notification(self) -> None:
        path = require_corpus(
            "format-fixtures", "qwen", "019f0000-0000-7000-8000-000000000001.jsonl"
        )
        session = read_transcript(path)
        found = messages(session)
        assert [m.role for m in found] == ["user", "assistant", "tool", "assistant", "user"]
        assert [p.text for p in found[0].parts] == [  # type: ignore[union-attr]
            "Inspect the synthetic fixture.",
            "<qwen:user-prompt-submit-context>\nSynthetic hook context that is not the "
            "user's prompt.\n</qwen:user-prompt-submit-context>",
        ]
        assert found[1].reasoning[0].text == "I should read the synthetic file."
        assert (found[1].tool_calls[0].id, found[1].tool_calls[0].arguments) == (
            "synthetic-call-1",
            '{"path":"/tmp/as-qwen-fixture/project/README.md"}',
        )
        assert found[2].tool_results[0].text == "Synthetic file contents."
        assert found[4].meta == {"synthetic": "notification"}
        assert session.session_id == "019f0000-0000-7000-8000-000000000001"
        assert session.meta["gitBranch"] == "fixture-branch"

    def test_rewind_keeps_the_active_branch_and_merges_a_streamed_reply(self) -> None:
        path = require_corpus(
            "format-fixtures", "qwen", "019f0000-0000-7000-8000-000000000004.jsonl"
        )
        session = read_transcript(path)
        found = messages(session)
        assert [m.text for m in found] == [
            "Begin the active-chain fixture.",
            "Continue from the rewound branch.",
            "Active branch answer.",
        ]
        reply = found[2]
        assert [p.kind for p in reply.parts] == ["reasoning", "tool_call", "text"]
        assert reply.usage == Usage(input_tokens=12, output_tokens=4)
        assert reply.model == "synthetic-active-model"
        assert session.title == "Active branch title"
        assert session.report.counts("ignored")["rewound"] == 1

    def test_glued_objects_are_split(self) -> None:
        path = require_corpus(
            "format-fixtures", "qwen", "019f0000-0000-7000-8000-000000000005.jsonl"
        )
        session = tolerated(
            path,
            "qwen",
            "repaired 1: glued JSON objects ×1 (line 1)",
            ":1: expected one JSON object per line, got 2 on one line",
        )
        assert [m.text for m in messages(session)] == [
            'Inspect {"glued": "objects"} safely.',
            "Recovered both synthetic objects.",
        ]

    def test_the_session_id_is_the_records_own(self) -> None:
        path = require_corpus(
            "format-fixtures", "qwen", "019f0000-0000-7000-8000-000000000002.jsonl"
        )
        assert read_transcript(path).session_id == "019f0000-0000-7000-8000-000000000099"


class TestMapping:
    def test_chat_compression_is_followed_by_what_it_keeps(self, tmp_path: Path) -> None:
        history = [
            {"role": "user", "parts": [{"text": "<state_snapshot>done A</state_snapshot>"}]},
            {"role": "model", "parts": [{"text": "Got it. Thanks for the additional context!"}]},
            {"role": "user", "parts": [{"text": "now B"}]},
        ]
        compression = rec(
            "system", "u4", "u3", subtype="chat_compression",
            systemPayload={"info": {"originalTokenCount": 900, "newTokenCount": 80},
                           "compressedHistory": history},
        )  # fmt: skip
        path = write(
            tmp_path,
            user("u1", None, "do A"),
            model("u2", "u1", {"text": "A done"}),
            user("u3", "u2", "now B"),
            compression,
            model("u5", "u4", {"text": "B done"}),
        )
        session = read_transcript(path)
        record = session.entries[3].body
        assert isinstance(record, CompactionRecord)
        assert (record.summary, record.tokens_before, record.tokens_after) == (
            "<state_snapshot>done A</state_snapshot>",
            900,
            80,
        )
        assert [(m.role, m.text) for m in messages(session)][3:] == [
            ("assistant", "Got it. Thanks for the additional context!"),
            ("user", "now B"),
            ("assistant", "B done"),
        ]

    def test_sub_agent_and_foreign_records(self, tmp_path: Path) -> None:
        side = user("u2", "u1", "inner") | {"isSidechain": True, "agentId": "explore-1"}
        foreign = user("u3", "u1", "other") | {"sessionId": "s-2"}
        path = write(tmp_path, user("u1", None, "hi"), side, foreign)
        session = read_transcript(path)
        assert [m.text for m in messages(session)] == ["hi"]
        assert session.report.counts("ignored") == {"sidechain": 1}
        assert session.report.summary() == "skipped 1: record of another session ×1 (line 3)"


class TestDrift:
    """Each drift is tolerated with an exact report, and refused at its line when strict."""

    def test_missing_ids(self, tmp_path: Path) -> None:
        path = write(
            tmp_path, user("u1", None, "go"), model("u2", "u1", fcall(None)),
            fresult("u3", "u2", None),
        )  # fmt: skip
        session = tolerated(
            path,
            "qwen",
            "repaired 2: functionCall without id ×1 (line 2), functionResponse without call id "
            "×1 (line 3)",
            ":2: expected a string id on a functionCall",
        )
        found = messages(session)
        assert found[2].tool_results[0].call_id == found[1].tool_calls[0].id == "call_gen_2_0"

    def test_structured_output(self, tmp_path: Path) -> None:
        """A functionResponse whose ``response`` is a bare string instead of an object."""
        bare = fresult("u3", "u2", "c1")
        bare["message"]["parts"][0]["functionResponse"]["response"] = "text"
        path = write(tmp_path, user("u1", None, "go"), model("u2", "u1", fcall("c1")), bare)
        session = tolerated(
            path,
            "qwen",
            "repaired 1: tool output not an object ×1 (line 3)",
            ":3: expected `functionResponse.response` to be an object, got str",
        )
        assert messages(session)[2].tool_results[0].text == "text"

    def test_null_arguments(self, tmp_path: Path) -> None:
        call = {"functionCall": {"id": "c1", "name": "read_file", "args": None}}
        path = write(tmp_path, user("u1", None, "go"), model("u2", "u1", call))
        session = tolerated(
            path,
            "qwen",
            "repaired 1: null arguments ×1 (line 2)",
            ":2: expected `functionCall.args`",
        )
        assert messages(session)[1].tool_calls[0].arguments == "{}"

    def test_unknown_record_kind(self, tmp_path: Path) -> None:
        path = write(tmp_path, user("u1", None, "go"), rec("hologram", "u2", "u1"))
        tolerated(
            path,
            "qwen",
            "skipped 1: record:hologram ×1 (line 2)",
            ":2: expected a record type user, assistant, tool_result or system, got 'hologram'",
        )

    def test_partial_last_line(self, tmp_path: Path) -> None:
        path = write(tmp_path, user("u1", None, "go"), '{"uuid": "u2", "par')
        tolerated(
            path,
            "qwen",
            "skipped 1: partial last line ×1 (line 2)",
            ":2: expected a complete JSON object, got a line cut short "
            "(unexpected end of data: line 1 column 20 (char 19))",
        )

    def test_lone_surrogate(self, tmp_path: Path) -> None:
        line = json.dumps(user("u1", None, "SURROGATE")).replace("SURROGATE", LONE_SURROGATE_JSON)
        path = write(tmp_path, line + "\n")
        session = tolerated(
            path, "qwen", "repaired 1: lone surrogate ×1 (line 1)", f":1: {LONE_SURROGATE_ERROR}"
        )
        assert messages(session)[0].text == LONE_SURROGATE_TEXT
