"""pi session importer: corpus counts, compactions, branches, bash runs, images, errors."""

from __future__ import annotations

import base64
import json
import struct
from pathlib import Path
from typing import Any

import pytest

from corpus import require_corpus
from ctxengine.errors import TranscriptError
from ctxengine.importers import detect, read_transcript
from ctxengine.importers.pi import IMPORTER
from ctxengine.model import CompactionRecord, ImagePart, Message, ReasoningPart, Usage
from import_drift import LONE_SURROGATE_ERROR, LONE_SURROGATE_JSON, LONE_SURROGATE_TEXT, tolerated

FILES = ("pi-mono-before-compaction.jsonl", "pi-mono-large-session.jsonl")
ROLE = {"user": "user", "assistant": "assistant", "toolResult": "tool", "bashExecution": "user"}


def raw_lines(path: Path) -> list[dict[str, Any]]:
    return [json.loads(x) for x in path.read_text(encoding="utf-8").splitlines() if x.strip()]


def raw_counts(path: Path) -> dict[str, int]:
    """Counts straight from the (linear, version 1) file."""
    n = {"user": 0, "assistant": 0, "tool": 0, "compaction": 0, "calls": 0, "parallel": 0}
    for obj in raw_lines(path):
        if obj["type"] == "compaction":
            n["compaction"] += 1
        if obj["type"] != "message" or obj["message"].get("excludeFromContext"):
            continue
        msg = obj["message"]
        n[ROLE[msg["role"]]] += 1
        if msg["role"] == "assistant":
            calls = sum(1 for b in msg["content"] if b["type"] == "toolCall")
            n["calls"] += calls
            n["parallel"] += calls > 1
    return n


def imported_counts(entries: Any) -> dict[str, int]:
    n = {"user": 0, "assistant": 0, "tool": 0, "compaction": 0, "calls": 0, "parallel": 0}
    for entry in entries:
        body = entry.body
        if isinstance(body, CompactionRecord):
            n["compaction"] += 1
            continue
        assert isinstance(body, Message)
        n[body.role] += 1
        n["calls"] += len(body.tool_calls)
        n["parallel"] += len(body.tool_calls) > 1
    return n


def write(tmp_path: Path, *records: dict[str, Any] | str) -> Path:
    path = tmp_path / "session.jsonl"
    lines = [r if isinstance(r, str) else json.dumps(r) for r in records]
    end = "" if isinstance(records[-1], str) else "\n"
    path.write_text("\n".join(lines) + end, encoding="utf-8")
    return path


def header(version: int = 3) -> dict[str, Any]:
    return {"type": "session", "version": version, "id": "pi-1", "timestamp": "t", "cwd": "/w"}


def entry(entry_id: str, parent: str | None, message: dict[str, Any]) -> dict[str, Any]:
    return {
        "type": "message",
        "id": entry_id,
        "parentId": parent,
        "timestamp": "t",
        "message": message,
    }


def user(text: str) -> dict[str, Any]:
    return {"role": "user", "content": [{"type": "text", "text": text}], "timestamp": 1}


def reply(text: str) -> dict[str, Any]:
    usage = {"input": 10, "output": 5, "cacheRead": 100, "cacheWrite": 7, "totalTokens": 122}
    return {
        "role": "assistant",
        "content": [{"type": "text", "text": text}],
        "api": "x",
        "provider": "anthropic",
        "model": "m",
        "usage": usage,
        "stopReason": "stop",
    }


class TestCorpus:
    @pytest.mark.parametrize("name", FILES)
    def test_counts_match_an_independent_count_of_the_raw_lines(self, name: str) -> None:
        path = require_corpus("pi", name)
        session = read_transcript(path)
        assert session.format == "pi"
        assert imported_counts(session.entries) == raw_counts(path)

    def test_before_compaction_has_exact_counts(self) -> None:
        session = IMPORTER.read(require_corpus("pi", "pi-mono-before-compaction.jsonl"))
        assert imported_counts(session.entries) == {
            "user": 58,
            "assistant": 484,
            "tool": 448,
            "compaction": 2,
            "calls": 454,
            "parallel": 9,
        }
        assert session.session_id == "ffae836b-9420-4060-ac13-7745215f90ff"
        assert session.meta["skipped"] == {"model_change": 5, "thinking_level_change": 5}

    def test_both_compactions_keep_their_first_kept_entry(self) -> None:
        path = require_corpus("pi", "pi-mono-before-compaction.jsonl")
        raw = raw_lines(path)
        session = IMPORTER.read(path)
        records = [e.body for e in session.entries if isinstance(e.body, CompactionRecord)]
        by_id = {e.id: e for e in session.entries}
        found = []
        for record, source in zip(
            records, [o for o in raw if o["type"] == "compaction"], strict=True
        ):
            kept = raw[source["firstKeptEntryIndex"]]["message"]["content"][0]["text"]
            kept_entry = by_id[str(record.first_kept_id)]
            first = kept_entry.message
            assert first is not None and first.role == "user" and first.text == kept
            assert record.summary == source["summary"]
            found.append((record.tokens_before, kept_entry.seq, first.text))
        assert found == [
            (175004, 288, "i reviwed what we have, it's good. continue"),
            (185014, 546, "can leave it"),
        ]
        assert {(r.summarizer, r.reason, r.policy) for r in records} == {
            ("imported", "imported", "pi")
        }

    def test_thinking_signature_is_byte_exact_and_usage_is_mapped(self) -> None:
        path = require_corpus("pi", "pi-mono-before-compaction.jsonl")
        raw = next(
            o["message"]
            for o in raw_lines(path)
            if o["type"] == "message"
            and any(
                b["type"] == "thinking"
                for b in o["message"]["content"]
                if o["message"]["role"] == "assistant"
            )
        )
        block = next(b for b in raw["content"] if b["type"] == "thinking")
        session = IMPORTER.read(path)
        msg = next(m for e in session.entries if (m := e.message) and m.reasoning)
        assert msg.reasoning[0] == ReasoningPart(
            block["thinking"], signature=block["thinkingSignature"]
        )
        usage = raw["usage"]
        assert msg.usage == Usage(
            usage["input"], usage["output"], usage["cacheRead"], usage["cacheWrite"]
        )

    def test_bash_execution_becomes_the_user_text_pi_sends(self) -> None:
        session = IMPORTER.read(require_corpus("pi", "pi-mono-before-compaction.jsonl"))
        runs = [m for e in session.entries if (m := e.message) and m.meta.get("synthetic")]
        assert [m.meta["command"] for m in runs] == ["ls", "ls", "find ."]
        assert runs[0].text == (
            "Ran `ls`\n```\nAGENTS.md\nbiome.json\nLICENSE\nnode_modules\npackage-lock.json\n"
            "package.json\npackages\npi-mono.code-workspace\nREADME.md\nscripts\n"
            "tsconfig.base.json\ntsconfig.json\n\n```"
        )

    def test_aborted_replies_keep_their_stop_reason_and_error(self) -> None:
        session = IMPORTER.read(require_corpus("pi", "pi-mono-large-session.jsonl"))
        first = session.entries[1].message
        assert first is not None
        assert (first.parts, first.stop_reason, first.model) == ((), "aborted", "gpt-5.1-codex")
        assert first.meta["errorMessage"] == "Request was aborted"
        assert (
            sum(1 for e in session.entries if e.message and e.message.stop_reason == "aborted")
            == 21
        )

    def test_import_is_deterministic(self) -> None:
        path = require_corpus("pi", "pi-mono-large-session.jsonl")
        first, second = IMPORTER.read(path), IMPORTER.read(path)
        assert [e.id for e in first.entries] == [e.id for e in second.entries]
        assert first.entries == second.entries

    def test_detection_picks_pi_for_every_file(self) -> None:
        for name in FILES:
            assert detect(require_corpus("pi", name)).name == "pi"


class TestTree:
    def test_active_branch_ends_at_the_last_entry(self, tmp_path: Path) -> None:
        path = write(
            tmp_path,
            header(),
            entry("a", None, user("first")),
            entry("b", "a", reply("abandoned answer")),
            {"type": "model_change", "id": "c", "parentId": "a", "provider": "p", "modelId": "m2"},
            entry("d", "c", reply("kept answer")),
        )
        session = IMPORTER.read(path)
        assert [e.id for e in session.entries] == ["a", "d"]
        assert session.entries[1].parent_id == "a"
        assert session.meta["off_branch"] == 1
        assert session.meta["skipped"] == {"model_change": 1}
        msg = session.entries[1].message
        assert msg is not None and msg.usage == Usage(10, 5, 100, 7)

    def test_compaction_first_kept_entry_id_resolves_to_the_next_message(
        self, tmp_path: Path
    ) -> None:
        path = write(
            tmp_path,
            header(),
            entry("a", None, user("one")),
            entry("b", "a", reply("two")),
            {"type": "thinking_level_change", "id": "c", "parentId": "b", "thinkingLevel": "high"},
            entry("d", "c", user("three")),
            {
                "type": "compaction",
                "id": "e",
                "parentId": "d",
                "summary": "S",
                "firstKeptEntryId": "c",
                "tokensBefore": 1234,
            },
            entry("f", "e", user("four")),
        )
        entries = IMPORTER.read(path).entries
        assert [e.id for e in entries] == ["a", "b", "d", "e", "f"]
        record = entries[3].body
        assert record == CompactionRecord("S", "d", 1234, 0, "pi", "imported", "imported")

    def test_image_gets_pixel_and_byte_size(self, tmp_path: Path) -> None:
        png = (
            b"\x89PNG\r\n\x1a\n"
            + b"\x00\x00\x00\rIHDR"
            + struct.pack(">II", 1920, 1080)
            + b"\x08\x06\x00\x00\x00"
        )
        data = base64.b64encode(png).decode()
        message = {
            "role": "user",
            "content": [
                {"type": "text", "text": "see"},
                {"type": "image", "data": data, "mimeType": "image/png"},
            ],
        }
        path = write(tmp_path, header(), entry("a", None, message))
        msg = IMPORTER.read(path).entries[0].message
        assert msg is not None
        assert msg.parts[1] == ImagePart(
            "image/png", data=data, byte_size=len(png), width=1920, height=1080
        )

    def test_excluded_bash_run_is_skipped(self, tmp_path: Path) -> None:
        run = {
            "role": "bashExecution",
            "command": "ls",
            "output": "",
            "exitCode": 1,
            "cancelled": False,
            "truncated": False,
            "timestamp": 1,
        }
        path = write(
            tmp_path,
            header(),
            entry("a", None, run),
            entry("b", "a", {**run, "excludeFromContext": True}),
        )
        session = IMPORTER.read(path)
        assert [e.id for e in session.entries] == ["a"]
        run = session.entries[0].message
        assert run is not None
        assert run.text == "Ran `ls`\n(no output)\n\nCommand exited with code 1"
        assert session.meta["skipped"] == {"excluded_bash": 1}


def calling(call: dict[str, Any]) -> dict[str, Any]:
    """An assistant message making one call."""
    return {**reply(""), "content": [call], "stopReason": "toolUse"}


def tool_result(content: Any, **extra: Any) -> dict[str, Any]:
    return {"role": "toolResult", "toolName": "bash", "content": content, **extra}


class TestDrift:
    """Each drift is tolerated with an exact report, and refused at its line when strict."""

    def test_tool_call_without_id_pairs_with_the_result_without_id(self, tmp_path: Path) -> None:
        call = {"type": "toolCall", "name": "bash", "arguments": {"command": "ls"}}
        path = write(
            tmp_path,
            header(),
            entry("a", None, user("go")),
            entry("b", "a", calling(call)),
            entry("c", "b", tool_result([{"type": "text", "text": "files"}])),
        )
        session = tolerated(
            path,
            "pi",
            "repaired 2: toolCall without id ×1 (line 3), toolResult without toolCallId ×1 "
            "(line 4)",
            ":3: expected a string `id` on a toolCall block",
        )
        msgs = [e.body for e in session.entries if isinstance(e.body, Message)]
        assert msgs[1].tool_calls[0].id == "call_gen_3_0"
        assert [(r.call_id, r.text) for r in msgs[2].tool_results] == [("call_gen_3_0", "files")]

    def test_structured_output(self, tmp_path: Path) -> None:
        call = {"type": "toolCall", "id": "t1", "name": "bash", "arguments": {}}
        path = write(
            tmp_path,
            header(),
            entry("a", None, user("go")),
            entry("b", "a", calling(call)),
            entry("c", "b", tool_result({"type": "text", "text": "one block"}, toolCallId="t1")),
        )
        session = tolerated(
            path,
            "pi",
            "repaired 1: structured content ×1 (line 4)",
            ":4: expected `content` to be a string or a list of blocks, got one block object",
        )
        tool = session.entries[2].body
        assert isinstance(tool, Message) and tool.tool_results[0].text == "one block"

    def test_null_arguments(self, tmp_path: Path) -> None:
        call = {"type": "toolCall", "id": "t1", "name": "bash", "arguments": None}
        path = write(
            tmp_path, header(), entry("a", None, user("go")), entry("b", "a", calling(call))
        )
        session = tolerated(
            path,
            "pi",
            "repaired 1: null arguments ×1 (line 3)",
            ":3: expected an `arguments` object on a toolCall block",
        )
        msg = session.entries[1].body
        assert isinstance(msg, Message) and msg.tool_calls[0].arguments == "{}"

    def test_unknown_entry_kind(self, tmp_path: Path) -> None:
        odd = {"type": "hologram", "id": "h", "parentId": "a", "timestamp": "t"}
        path = write(
            tmp_path, header(), entry("a", None, user("go")), odd, entry("b", "h", reply("ok"))
        )
        session = tolerated(
            path,
            "pi",
            "skipped 1: entry:hologram ×1 (line 3)",
            ":3: expected a pi entry type (message, compaction, model_change …), got 'hologram'",
        )
        assert [e.id for e in session.entries] == ["a", "b"]

    def test_partial_last_line_of_a_live_session(self, tmp_path: Path) -> None:
        path = write(tmp_path, header(), entry("a", None, user("x")), '{"type":"message","id":"a1')
        session = tolerated(
            path,
            "pi",
            "skipped 1: partial last line ×1 (line 3)",
            ":3: expected a complete JSON object, got a line cut short "
            "(unexpected end of data: line 1 column 27 (char 26))",
        )
        assert [e.id for e in session.entries] == ["a"]

    def test_lone_surrogate(self, tmp_path: Path) -> None:
        line = json.dumps(entry("a", None, user("SURROGATE"))).replace(
            "SURROGATE", LONE_SURROGATE_JSON
        )
        path = write(tmp_path, header(), line + "\n")
        session = tolerated(
            path, "pi", "repaired 1: lone surrogate ×1 (line 2)", f":2: {LONE_SURROGATE_ERROR}"
        )
        msg = session.entries[0].body
        assert isinstance(msg, Message) and msg.text == LONE_SURROGATE_TEXT

    def test_message_without_role(self, tmp_path: Path) -> None:
        path = write(
            tmp_path, header(), entry("a", None, user("x")), entry("b", "a", {"content": "hi"})
        )
        tolerated(
            path,
            "pi",
            "skipped 1: message without role ×1 (line 3)",
            ":3: expected a string `message.role`",
        )

    def test_unknown_role(self, tmp_path: Path) -> None:
        robot = {"role": "robot", "content": "hi"}
        path = write(tmp_path, header(), entry("a", None, user("x")), entry("b", "a", robot))
        tolerated(
            path,
            "pi",
            "skipped 1: message role robot ×1 (line 3)",
            ":3: expected `message.role` to be one of user, assistant, toolResult, "
            "bashExecution, custom, got 'robot'",
        )

    def test_parent_cycle_ends_the_branch(self, tmp_path: Path) -> None:
        path = write(tmp_path, header(), entry("a", "b", user("x")), entry("b", "a", user("y")))
        session = tolerated(
            path,
            "pi",
            "skipped 1: parentId cycle ×1 (line 2)",
            ":2: expected `parentId` links without a cycle (at b)",
        )
        assert [e.id for e in session.entries] == ["a", "b"]

    def test_missing_header_is_refused(self, tmp_path: Path) -> None:
        path = write(tmp_path, entry("a", None, user("x")))
        with pytest.raises(TranscriptError) as info:
            IMPORTER.read(path)
        assert str(info.value) == (
            f"{path}:1: expected a pi session header line with `type` session and an `id`"
        )
