"""Claude Code session JSONL importer: corpus counts, merging, compaction, malformed input."""

from __future__ import annotations

import json
from collections import defaultdict
from pathlib import Path
from typing import Any

import pytest

from corpus import require_corpus
from ctxengine.errors import TranscriptError
from ctxengine.importers import detect, read_transcript
from ctxengine.importers.claude_code import IMPORTER
from ctxengine.model import CompactionRecord, Message, ReasoningPart, Usage
from import_drift import LONE_SURROGATE_ERROR, LONE_SURROGATE_JSON, LONE_SURROGATE_TEXT, tolerated

FILES = (
    "spotter-long-a0y-main.jsonl",
    "spotter-long-a0y-agent-acompact.jsonl",
    "spotter-long-dov-agent-acompact.jsonl",
    "spotter-long-dov-subagent-a2898e3.jsonl",
    "spotter-short.jsonl",
    "spotter-tool-heavy.jsonl",
)


def raw_counts(path: Path) -> dict[str, int]:
    """Counts made straight from the JSON lines, by the rules the importer documents."""
    lines = [json.loads(x) for x in path.read_text(encoding="utf-8").splitlines() if x.strip()]
    records = [o for o in lines if o["type"] in ("user", "assistant")]
    side = bool(records[0].get("isSidechain"))
    calls: dict[str, set[str]] = defaultdict(set)
    n = {"user": 0, "tool": 0, "results": 0, "compaction": 0}
    for o in lines:
        if o["type"] == "system" and o.get("subtype") == "compact_boundary":
            n["compaction"] += 1
        if o["type"] not in ("user", "assistant") or bool(o.get("isSidechain")) != side:
            continue
        content = o["message"]["content"]
        if o["type"] == "assistant":
            calls[o["message"]["id"]].update(b["id"] for b in content if b["type"] == "tool_use")
        elif o.get("isCompactSummary"):
            continue
        elif isinstance(content, str):
            n["user"] += 1
        else:
            results = sum(1 for b in content if b["type"] == "tool_result")
            n["results"] += results
            n["tool"] += 1 if results else 0
            n["user"] += any(b["type"] in ("text", "image", "document") for b in content)
    n["assistant"] = len(calls)
    n["calls"] = sum(len(c) for c in calls.values())
    n["parallel"] = sum(1 for c in calls.values() if len(c) > 1)
    return n


def imported_counts(entries: Any) -> dict[str, int]:
    n = dict.fromkeys(
        ("user", "tool", "results", "compaction", "assistant", "calls", "parallel"), 0
    )
    for entry in entries:
        body = entry.body
        if isinstance(body, CompactionRecord):
            n["compaction"] += 1
            continue
        assert isinstance(body, Message)
        n[body.role] += 1
        n["calls"] += len(body.tool_calls)
        n["results"] += len(body.tool_results)
        n["parallel"] += len(body.tool_calls) > 1
    return n


def write(tmp_path: Path, *records: dict[str, Any] | str) -> Path:
    """A JSONL file of ``records``; a string record is written as is, and when it is the last
    one the file gets no final newline (a line cut off mid-write)."""
    path = tmp_path / "session.jsonl"
    lines = [r if isinstance(r, str) else json.dumps(r) for r in records]
    end = "" if isinstance(records[-1], str) else "\n"
    path.write_text("\n".join(lines) + end, encoding="utf-8")
    return path


def user(uuid: str, content: Any, **extra: Any) -> dict[str, Any]:
    return {
        "type": "user",
        "sessionId": "s1",
        "uuid": uuid,
        "message": {"role": "user", "content": content},
        **extra,
    }


def assistant(uuid: str, msg_id: str, *blocks: dict[str, Any], **extra: Any) -> dict[str, Any]:
    message = {
        "id": msg_id,
        "role": "assistant",
        "model": "claude-x",
        "content": list(blocks),
        "stop_reason": None,
        "usage": {
            "input_tokens": 3,
            "output_tokens": 7,
            "cache_read_input_tokens": 100,
            "cache_creation_input_tokens": 20,
        },
    }
    return {"type": "assistant", "sessionId": "s1", "uuid": uuid, "message": message, **extra}


def call(call_id: str) -> dict[str, Any]:
    return {"type": "tool_use", "id": call_id, "name": "Read", "input": {"file_path": "a.ex"}}


def result(call_id: str, text: str = "ok") -> dict[str, Any]:
    return {"type": "tool_result", "tool_use_id": call_id, "content": text}


class TestCorpus:
    @pytest.mark.parametrize("name", FILES)
    def test_counts_match_an_independent_count_of_the_raw_lines(self, name: str) -> None:
        path = require_corpus("claude-code", name)
        session = read_transcript(path)
        assert session.format == "claude-code"
        assert imported_counts(session.entries) == raw_counts(path)

    def test_long_session_has_exact_counts(self) -> None:
        path = require_corpus("claude-code", "spotter-long-a0y-main.jsonl")
        session = IMPORTER.read(path)
        assert imported_counts(session.entries) == {
            "user": 3,
            "tool": 197,
            "results": 197,
            "compaction": 1,
            "assistant": 157,
            "calls": 197,
            "parallel": 31,
        }
        assert session.session_id == "fa812bfe-b295-4cca-9c2f-fdf01028cb46"
        assert session.meta["skipped"] == {
            "file-history-snapshot": 27,
            "progress": 1332,
            "queue-operation": 1,
            "system:stop_hook_summary": 3,
            "system:turn_duration": 2,
        }

    def test_every_result_follows_its_call(self) -> None:
        session = IMPORTER.read(require_corpus("claude-code", "spotter-long-a0y-main.jsonl"))
        seen: set[str] = set()
        for entry in session.entries:
            msg = entry.message
            if msg is not None:
                seen.update(c.id for c in msg.tool_calls)
                assert all(r.call_id in seen for r in msg.tool_results)

    def test_compact_boundary_becomes_a_compaction_record_with_the_summary(self) -> None:
        path = require_corpus("claude-code", "spotter-long-a0y-main.jsonl")
        raw = [json.loads(x) for x in path.read_text(encoding="utf-8").splitlines()]
        summary = next(o for o in raw if o.get("isCompactSummary"))["message"]["content"]
        session = IMPORTER.read(path)
        [entry] = [e for e in session.entries if e.kind == "compaction"]
        record = entry.body
        assert isinstance(record, CompactionRecord)
        assert entry.id == "7b6887e9-15c3-485b-98c7-eb986f5abc7f"
        assert record.summary == summary
        assert record.summary.startswith("This session is being continued from a previous")
        assert (record.tokens_before, record.first_kept_id) == (167117, None)
        assert (record.summarizer, record.reason, record.policy) == (
            "imported",
            "imported",
            "claude-code",
        )
        assert entry.meta == {
            "trigger": "auto",
            "summary_uuid": "7bf19bfa-9a71-402e-9a81-2dad042e663f",
        }
        after = session.entries[entry.seq + 1].message
        assert after is not None and after.meta["message_id"] == "msg_01FeiYiJqMGMrRenE9aYYYJW"

    def test_thinking_signature_is_byte_exact(self) -> None:
        path = require_corpus("claude-code", "spotter-short.jsonl")
        raw = [json.loads(x) for x in path.read_text(encoding="utf-8").splitlines()]
        block = next(
            b
            for o in raw
            if o["type"] == "assistant"
            for b in o["message"]["content"]
            if b["type"] == "thinking"
        )
        msg = IMPORTER.read(path).entries[1].message
        assert msg is not None
        [part] = msg.reasoning
        assert part == ReasoningPart(block["thinking"], signature=block["signature"])

    def test_merged_assistant_message_keeps_block_order_usage_and_line_ids(self) -> None:
        session = IMPORTER.read(require_corpus("claude-code", "spotter-short.jsonl"))
        msg = session.entries[1].message
        assert msg is not None
        assert [p.kind for p in msg.parts] == ["reasoning", "text", "tool_call", "tool_call"]
        assert [c.id for c in msg.tool_calls] == [
            "toolu_0116Hyi5v8ut7Ffb7d8qV1Sc",
            "toolu_01FdQ8qTyVyZjE3Kw4dguQGx",
        ]
        assert (
            msg.tool_calls[0].arguments
            == '{"command":"mix phx.server 2>&1 | head -80","timeout":30000}'
        )
        assert msg.usage == Usage(3, 13, 11515, 13835)
        assert (msg.stop_reason, msg.model) == ("tool_use", "claude-opus-4-6")
        # the first and last of its four lines
        assert session.entries[1].id == (
            "1b7d717f-d6a2-46a6-8575-fa4f937450ea..ed2ec700-d1ee-4a18-9100-da63317716fc"
        )
        assert len(msg.meta["merged_uuids"]) == 4

    def test_sidechain_file_gets_its_own_session_id(self) -> None:
        path = require_corpus("claude-code", "spotter-long-dov-subagent-a2898e3.jsonl")
        session = IMPORTER.read(path)
        assert session.session_id == "4d5611e5-241a-462a-8d15-5122611a9569:agent-a2898e3"
        assert session.meta["sidechain"] is True

    def test_a_subagent_file_naming_itself_is_linked_to_the_parent_of_its_folder(self) -> None:
        """The fixture's sub-agent lines carry ``sessionId: "agent-<id>"``; Claude Code keeps
        it as ``<parent session>/subagents/agent-<id>.jsonl`` beside ``.meta.json``."""
        parent_id = "0a1b2c3d-4e5f-4061-8071-2a3b4c5d6e7f"
        folder = require_corpus("format-fixtures", "claude", "subagent")
        child = read_transcript(folder / parent_id / "subagents" / "agent-a0ad4f44468bdf20d.jsonl")
        assert child.session_id == f"{parent_id}:agent-a0ad4f44468bdf20d"
        assert (child.meta["parent_session_id"], child.meta["agent_type"]) == (
            parent_id,
            "general-purpose",
        )
        parent = read_transcript(folder / f"{parent_id}.jsonl")
        assert parent.session_id == parent_id
        assert parent.meta["subagents"] == ["agent-a0ad4f44468bdf20d"]
        assert "parent_session_id" not in parent.meta

    def test_a_live_subagent_names_the_call_that_started_it(self) -> None:
        root = require_corpus("live-agents", "claude-code-2.1.328")
        child = read_transcript(root / "session" / "subagents" / "agent-a73f6f8bdab2fbcaf.jsonl")
        parent_id = "b24a12be-80f5-468d-9deb-8bc36259ce0d"
        assert child.session_id == f"{parent_id}:agent-a73f6f8bdab2fbcaf"
        links = ("parent_session_id", "agent_type", "description", "parent_tool_use_id")
        assert [child.meta[k] for k in links] == [
            parent_id,
            "general-purpose",
            "Survey the readings data",
            "toolu_s006_0_b03eb13016",
        ]
        parent = read_transcript(root / "session.jsonl")
        calls = [c.id for e in parent.entries if e.message for c in e.message.tool_calls]
        assert "toolu_s006_0_b03eb13016" in calls
        assert parent.meta["subagents"] == ["agent-a73f6f8bdab2fbcaf"]
        # the same lines outside Claude Code's layout: no .meta.json beside them
        loose = read_transcript(root / "subagent.jsonl")
        assert loose.session_id == child.session_id
        assert "agent_type" not in loose.meta

    def test_compaction_subagent_keeps_hook_reminders_as_marked_user_messages(self) -> None:
        path = require_corpus("claude-code", "spotter-long-dov-agent-acompact.jsonl")
        session = IMPORTER.read(path)
        marks = [
            e.body.meta.get("synthetic") for e in session.entries if isinstance(e.body, Message)
        ]
        assert marks == ["isMeta", "isMeta", "isMeta", None, None]
        assert session.title == (
            "Your task is to create a detailed summary of the conversation so far, paying cl…"
        )

    def test_import_is_deterministic(self) -> None:
        path = require_corpus("claude-code", "spotter-tool-heavy.jsonl")
        first, second = IMPORTER.read(path), IMPORTER.read(path)
        assert [e.id for e in first.entries] == [e.id for e in second.entries]
        assert first.entries == second.entries

    def test_detection_picks_claude_code_for_every_file(self) -> None:
        for name in FILES:
            assert detect(require_corpus("claude-code", name)).name == "claude-code"


class TestMapping:
    def test_streaming_lines_merge_and_a_repeated_block_is_kept_once(self, tmp_path: Path) -> None:
        path = write(
            tmp_path,
            user("u1", "read both"),
            assistant("a1", "m1", call("t1")),
            user("r1", [result("t1", "one")]),
            assistant("a2", "m1", call("t2")),
            assistant("a3", "m1", call("t2")),
            user("r2", [result("t2", "two")]),
        )
        entries = IMPORTER.read(path).entries
        assert [(e.id, e.message.role if e.message else None) for e in entries] == [
            ("u1", "user"),
            ("a1..a3", "assistant"),
            ("r1", "tool"),
            ("r2", "tool"),
        ]
        msg = entries[1].message
        assert msg is not None and [c.id for c in msg.tool_calls] == ["t1", "t2"]
        assert msg.meta["merged_uuids"] == ["a2", "a3"]

    def test_user_text_next_to_results_becomes_a_following_user_message(
        self, tmp_path: Path
    ) -> None:
        path = write(
            tmp_path,
            user("u1", "go"),
            assistant("a1", "m1", call("t1")),
            user("r1", [result("t1"), {"type": "text", "text": "also check b.ex"}]),
        )
        entries = IMPORTER.read(path).entries
        assert [e.id for e in entries] == ["u1", "a1", "r1", "r1#text"]
        assert entries[3].message is not None and entries[3].message.text == "also check b.ex"

    def test_usage_stop_reason_and_redacted_thinking(self, tmp_path: Path) -> None:
        path = write(
            tmp_path,
            user("u1", "hi"),
            assistant(
                "a1",
                "m1",
                {"type": "redacted_thinking", "data": "EnC0ded=="},
                {"type": "text", "text": "\n\n"},
                {"type": "text", "text": "hello"},
            ),
            assistant("a2", "m1", stop_reason="x"),
        )
        msg = IMPORTER.read(path).entries[1].message
        assert msg is not None
        assert msg.parts[0] == ReasoningPart("", signature="EnC0ded==", redacted=True)
        assert msg.text == "hello"
        assert msg.usage is not None and msg.usage.prompt_tokens == 123
        assert msg.stop_reason is None

    def test_sidechain_lines_in_a_main_file_are_skipped(self, tmp_path: Path) -> None:
        path = write(
            tmp_path,
            user("u1", "main"),
            user("u2", "sub task", isSidechain=True),
            {"type": "progress", "sessionId": "s1", "uuid": "p1", "data": {}},
        )
        session = IMPORTER.read(path)
        assert [e.id for e in session.entries] == ["u1"]
        assert session.meta["skipped"] == {"progress": 1, "sidechain": 1}


class TestDrift:
    """Each drift is tolerated with an exact report, and refused at its line when strict."""

    def test_tool_use_without_id_is_paired_by_the_record_linkage(self, tmp_path: Path) -> None:
        """Claude Code 2.1.80 wrote a tool_use without ``id`` and its tool_result without
        ``tool_use_id``; the result line names the call's line in
        ``sourceToolAssistantUUID`` (else ``parentUuid``)."""
        no_id = {"type": "tool_use", "name": "Bash", "input": {"command": "ls"}}
        path = write(
            tmp_path,
            user("u1", "go"),
            assistant("a1", "m1", no_id, call("t9")),
            user("r1", [{"type": "tool_result", "content": "t9 out"}], parentUuid="a1"),
            user("r0", [result("t9", "by id")]),
        )
        session = tolerated(
            path,
            "claude-code",
            "repaired 2: tool_use without id ×1 (line 2), tool_result without tool_use_id ×1 "
            "(line 3)",
            ":2: expected a string `id` on a tool_use block",
        )
        msgs = [e.message for e in session.entries if e.message is not None]
        assert [c.id for c in msgs[1].tool_calls] == ["toolu_gen_a1_0", "t9"]
        assert [(r.call_id, r.text) for m in msgs[2:] for r in m.tool_results] == [
            ("toolu_gen_a1_0", "t9 out"),
            ("t9", "by id"),
        ]

    def test_tool_use_without_id_gets_its_result_that_names_the_lost_id(
        self, tmp_path: Path
    ) -> None:
        """The call lost its ``id`` but its result still names it: the result's
        ``tool_use_id`` names no call, so it answers the id-less call of the line its record
        names in ``sourceToolAssistantUUID`` (not the older id-less call of ``a1``)."""
        bare = {"type": "tool_use", "name": "Bash", "input": {"command": "ls"}}
        path = write(
            tmp_path,
            user("u1", "go"),
            assistant("a1", "m1", bare),
            assistant("a2", "m2", bare, call("t2")),
            user("r1", [result("toolu_lost", "for a2")], sourceToolAssistantUUID="a2"),
            user("r2", [result("t2", "by id")]),
            user("r3", [result("toolu_lost_too", "for a1")]),
        )
        session = tolerated(
            path,
            "claude-code",
            "repaired 4: tool_use without id ×2 (line 2), tool_result paired to a tool_use "
            "without id ×2 (line 4)",
            ":2: expected a string `id` on a tool_use block",
        )
        results = [
            (r.call_id, r.text)
            for e in session.entries
            if e.message
            for r in e.message.tool_results
        ]
        assert results == [
            ("toolu_gen_a2_0", "for a2"),
            ("t2", "by id"),
            ("toolu_gen_a1_0", "for a1"),
        ]
        with pytest.raises(TranscriptError) as info:
            read_transcript(path, strict=True)
        assert str(info.value) == f"{path}:2: expected a string `id` on a tool_use block"

    def test_a_result_naming_an_unknown_call_is_not_paired_without_an_id_less_call(
        self, tmp_path: Path
    ) -> None:
        path = write(
            tmp_path,
            user("u1", "go"),
            assistant("a1", "m1", call("t1")),
            user("r1", [result("t1")]),
            user("r2", [result("t_other", "stray")]),
        )
        session = read_transcript(path)
        results = [
            (r.call_id, r.text)
            for e in session.entries
            if e.message
            for r in e.message.tool_results
        ]
        assert results == [("t1", "ok"), ("t_other", "stray")]
        assert session.report.summary() == ""

    def test_result_without_id_prefers_source_tool_assistant_uuid(self, tmp_path: Path) -> None:
        bare = {"type": "tool_use", "name": "Bash", "input": {}}
        path = write(
            tmp_path,
            user("u1", "go"),
            assistant("a1", "m1", bare),
            assistant("a2", "m2", bare),
            user(
                "r1", [{"type": "tool_result", "content": "for a2"}], sourceToolAssistantUUID="a2"
            ),
            user("r2", [{"type": "tool_result", "content": "for a1"}]),
        )
        session = read_transcript(path)
        results = [
            (r.call_id, r.text)
            for e in session.entries
            if e.message
            for r in e.message.tool_results
        ]
        assert results == [("toolu_gen_a2_0", "for a2"), ("toolu_gen_a1_0", "for a1")]
        assert session.report.counts("repaired") == {
            "tool_result without tool_use_id": 2,
            "tool_use without id": 2,
        }

    def test_structured_output(self, tmp_path: Path) -> None:
        block = {
            "type": "tool_result",
            "tool_use_id": "t1",
            "content": {"type": "text", "text": "x"},
        }
        path = write(
            tmp_path, user("u1", "go"), assistant("a1", "m1", call("t1")), user("r1", [block])
        )
        session = tolerated(
            path,
            "claude-code",
            "repaired 1: structured tool output ×1 (line 3)",
            ":3: expected tool_result `content` to be a string or a list of blocks, got an object",
        )
        [tool] = [e.message for e in session.entries if e.message and e.message.role == "tool"]
        assert tool.tool_results[0].text == "x"

    def test_null_input(self, tmp_path: Path) -> None:
        block = {"type": "tool_use", "id": "t1", "name": "Read", "input": None}
        path = write(tmp_path, user("u1", "go"), assistant("a1", "m1", block))
        session = tolerated(
            path,
            "claude-code",
            "repaired 1: null tool input ×1 (line 2)",
            ":2: expected an `input` object on a tool_use block",
        )
        msg = session.entries[1].message
        assert msg is not None and msg.tool_calls[0].arguments == "{}"

    def test_unknown_record_kind(self, tmp_path: Path) -> None:
        path = write(
            tmp_path,
            user("u1", "go"),
            {"type": "hologram", "sessionId": "s1", "uuid": "h1"},
            assistant("a1", "m1", {"type": "text", "text": "done"}),
        )
        session = tolerated(
            path,
            "claude-code",
            "skipped 1: record:hologram ×1 (line 2)",
            ":2: expected a Claude Code record type (user, assistant, attachment, system …), "
            "got 'hologram'",
        )
        assert [e.id for e in session.entries] == ["u1", "a1"]

    def test_partial_last_line_of_a_live_session(self, tmp_path: Path) -> None:
        path = write(tmp_path, user("u1", "hi"), '{"type": "user", "mess')
        session = tolerated(
            path,
            "claude-code",
            "skipped 1: partial last line ×1 (line 2)",
            ":2: expected a complete JSON object, got a line cut short "
            "(unexpected end of data: line 1 column 23 (char 22))",
        )
        assert [e.id for e in session.entries] == ["u1"]

    def test_invalid_line_in_the_middle(self, tmp_path: Path) -> None:
        path = write(tmp_path, user("u1", "hi"), '{"type": "user", "mess', user("u2", "again"))
        session = tolerated(
            path,
            "claude-code",
            "skipped 1: invalid JSON line ×1 (line 2)",
            ":2: expected a JSON object, got invalid JSON "
            "(unexpected control character in string: line 1 column 23 (char 22))",
        )
        assert [e.id for e in session.entries] == ["u1", "u2"]

    def test_lone_surrogate(self, tmp_path: Path) -> None:
        line = json.dumps(user("r1", [result("t1", "SURROGATE")])).replace(
            "SURROGATE", LONE_SURROGATE_JSON
        )
        path = write(tmp_path, user("u1", "go"), assistant("a1", "m1", call("t1")), line + "\n")
        session = tolerated(
            path,
            "claude-code",
            "repaired 1: lone surrogate ×1 (line 3)",
            f":3: {LONE_SURROGATE_ERROR}",
        )
        tool = session.entries[2].message
        assert tool is not None and tool.tool_results[0].text == LONE_SURROGATE_TEXT

    def test_message_without_role_is_skipped(self, tmp_path: Path) -> None:
        path = write(
            tmp_path,
            user("u1", "hi"),
            {"type": "assistant", "uuid": "a1", "message": {"content": []}},
        )
        session = tolerated(
            path,
            "claude-code",
            "skipped 1: assistant without message ×1 (line 2)",
            ":2: expected a `message` object with `role` and `content` (a string or a list)",
        )
        assert [e.id for e in session.entries] == ["u1"]

    def test_a_message_role_other_than_the_record_type_is_read_as_the_type(
        self, tmp_path: Path
    ) -> None:
        odd = user("u2", "and now?")
        odd["message"]["role"] = "wizard"
        path = write(tmp_path, user("u1", "hi"), odd)
        session = tolerated(
            path,
            "claude-code",
            "repaired 1: message role ×1 (line 2)",
            ":2: expected `message.role` 'user' on a user record, got 'wizard'",
        )
        bodies = [e.body for e in session.entries]
        assert [(b.role, b.text) for b in bodies if isinstance(b, Message)] == [
            ("user", "hi"),
            ("user", "and now?"),
        ]

    def test_unknown_block_is_skipped_and_kept_in_meta(self, tmp_path: Path) -> None:
        block = {"type": "hologram_block", "data": 1}
        path = write(
            tmp_path, user("u1", "go"), assistant("a1", "m1", block, {"type": "text", "text": "ok"})
        )
        session = tolerated(
            path,
            "claude-code",
            "skipped 1: block:hologram_block ×1 (line 2)",
            ":2: expected a text, image or document block, got 'hologram_block'",
        )
        msg = session.entries[1].message
        assert msg is not None and msg.meta["other_blocks"] == [block] and msg.text == "ok"


def attachment(uuid: str, kind: str, role: str | None, *texts: str, **extra: Any) -> dict[str, Any]:
    """An ``attachment`` line; ``role`` ``None`` writes no ``rendered`` texts."""
    line: dict[str, Any] = {
        "type": "attachment",
        "sessionId": "s1",
        "uuid": uuid,
        "attachment": {"type": kind},
        **extra,
    }
    if role is not None:
        line["rendered"] = [{"content": t} for t in texts]
        line["renderedRole"] = role
    return line


def reminder(text: str) -> str:
    return f"<system-reminder>\n{text}\n</system-reminder>"


class TestRecordKinds:
    """What the model was sent: rendered attachments in the role and order Claude Code sends
    them, the segment a compaction keeps, and the newer fields of assistant lines."""

    def session(self, tmp_path: Path) -> Path:
        search = {
            "type": "server_tool_use",
            "id": "srv1",
            "name": "web_search",
            "input": {"query": "pytest"},
        }
        hit = {"type": "web_search_result", "title": "Docs", "url": "https://d"}
        found = {"type": "web_search_tool_result", "tool_use_id": "srv1", "content": [hit]}
        loader = {"type": "tool_use", "id": "t1", "name": "ToolSearch", "input": {"q": "todo"}}
        reference = {
            "type": "tool_result",
            "tool_use_id": "t1",
            "content": [{"type": "tool_reference", "tool_name": "TodoWrite"}],
        }
        reply = assistant("a1", "m1", search, found, loader, effort="high")
        reply["message"]["diagnostics"] = {"cache_miss_reason": {"type": "messages_changed"}}
        kept = {"headUuid": "a2", "tailUuid": "a2"}
        boundary = {
            "type": "system",
            "subtype": "compact_boundary",
            "sessionId": "s1",
            "uuid": "b1",
            "compactMetadata": {"trigger": "auto", "preTokens": 900, "preservedSegment": kept},
        }
        return write(
            tmp_path,
            user("u1", "go"),
            attachment("d1", "date", "system", reminder("Today is X.")),
            attachment("c1", "session_context", "user", reminder("git: clean")),
            attachment("p1", "prompt_snapshot", None),
            {"type": "api-request", "sessionId": "s1", "id": "req1", "keep": 0, "tail": []},
            reply,
            user("r1", [reference], sourceToolAssistantUUID="a1"),
            attachment("s2", "silent_turn_reminder", "system", "Keep the user posted."),
            attachment("f1", "file", "user", "Called Read", "Result of Read"),
            assistant("a2", "m2", {"type": "text", "text": "done"}),
            boundary,
            attachment("d2", "date", "system", reminder("Today is Y.")),
            user("sum", "Summary: fixed it", isCompactSummary=True),
            user("u3", "next"),
            {"type": "cost-state", "sessionId": "s1", "totalCostUSD": 1.0},
            {"type": "mode", "sessionId": "s1", "mode": "normal"},
        )

    def test_the_log_is_what_was_sent_in_the_order_it_was_sent(self, tmp_path: Path) -> None:
        session = read_transcript(self.session(tmp_path))
        shape = [
            (e.id, e.body.role, e.body.meta.get("synthetic"), e.body.text)
            if isinstance(e.body, Message)
            else (e.id, e.kind, None, "")
            for e in session.entries
        ]
        assert shape == [
            ("c1", "user", "attachment:session_context", reminder("git: clean")),
            ("u1", "user", None, "go"),
            ("d1", "system", "attachment:date", "Today is X."),
            ("a1", "assistant", None, shape[3][3]),
            ("r1", "tool", None, ""),
            ("r1#loaded", "user", "tool_loaded", "Tool loaded."),
            ("f1", "user", "attachment:file", "Called Read\nResult of Read"),
            ("s2", "system", "attachment:silent_turn_reminder", "Keep the user posted."),
            ("a2", "assistant", None, "done"),
            ("b1", "compaction", None, ""),
            ("u3", "user", None, "next"),
            ("d2", "system", "attachment:date", "Today is Y."),
        ]  # fmt: skip
        record = session.entries[9].body
        assert isinstance(record, CompactionRecord)
        assert (record.first_kept_id, record.summary, record.tokens_before) == (
            "a2",
            "Summary: fixed it",
            900,
        )

    def test_assistant_fields_and_provider_side_blocks(self, tmp_path: Path) -> None:
        session = read_transcript(self.session(tmp_path))
        reply = session.entries[3].body
        assert isinstance(reply, Message)
        assert [p.kind for p in reply.parts] == ["text", "text", "tool_call"]
        assert reply.text == (
            '[provider-side tool call] web_search({"query": "pytest"})\n'
            "[provider-side tool result: web_search]\n- Docs <https://d>"
        )
        assert reply.meta["effort"] == "high"
        assert reply.meta["cache_diagnostics"] == {
            "cache_miss_reason": {"type": "messages_changed"}
        }
        result = session.entries[4].body
        assert isinstance(result, Message) and result.tool_results[0].content == ()

    def test_the_report_counts_what_never_reaches_the_model(self, tmp_path: Path) -> None:
        session = read_transcript(self.session(tmp_path), strict=True)
        assert session.report.counts("ignored") == {
            "api-request": 1,
            "attachment:prompt_snapshot": 1,
            "block:tool_reference": 1,
            "cost-state": 1,
            "mode": 1,
        }
        assert session.meta["skipped"] == {
            "api-request": 1,
            "attachment:prompt_snapshot": 1,
            "cost-state": 1,
            "mode": 1,
        }
