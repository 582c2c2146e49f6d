"""Codex CLI rollout importer: corpus counts, response grouping, usage, resume, errors."""

from __future__ import annotations

import hashlib
import json
from pathlib import Path
from typing import Any

import pytest

from corpus import require_corpus
from ctxengine.importers import detect, read_transcript
from ctxengine.importers.codex import IMPORTER, tool_output_is_error
from ctxengine.model import (
    CompactionRecord,
    ImagePart,
    Message,
    NativeCompactionPart,
    ReasoningPart,
    TextPart,
    Usage,
)
from import_drift import LONE_SURROGATE_ERROR, LONE_SURROGATE_JSON, LONE_SURROGATE_TEXT, tolerated

FILES = (
    "codex-cpolar-connect-2025-09-16-a.jsonl",
    "codex-cpolar-connect-2025-09-16-b.jsonl",
    "codex-openprintkit-2025-10-31-long.jsonl",
)
ASSISTANT_SIDE = {"reasoning", "function_call", "custom_tool_call", "local_shell_call"}


def raw_counts(path: Path) -> dict[str, int]:
    """Counts straight from the rollout lines: a run of assistant-side response items with no
    other response item between them is one assistant message."""
    n = {"user": 0, "developer": 0, "assistant": 0, "tool": 0, "calls": 0, "parallel": 0}
    run_calls: int | None = None
    for text in path.read_text(encoding="utf-8").splitlines():
        line = json.loads(text)
        if line["type"] != "response_item":
            continue
        item = line["payload"]
        kind = item["type"]
        if kind in ASSISTANT_SIDE or (kind == "message" and item["role"] == "assistant"):
            if run_calls is None:
                n["assistant"] += 1
                run_calls = 0
            if kind in ASSISTANT_SIDE - {"reasoning"}:
                n["calls"] += 1
                run_calls += 1
                n["parallel"] += run_calls == 2
            continue
        run_calls = None
        if kind == "message":
            n[item["role"]] += 1
        elif kind in ("function_call_output", "custom_tool_call_output"):
            n["tool"] += 1
    return n


def imported_counts(entries: Any) -> dict[str, int]:
    n = {"user": 0, "developer": 0, "assistant": 0, "tool": 0, "calls": 0, "parallel": 0}
    for entry in entries:
        msg = entry.body
        assert isinstance(msg, Message)
        n[msg.role] += 1
        n["calls"] += len(msg.tool_calls)
        n["parallel"] += len(msg.tool_calls) > 1
    return n


def messages(entries: Any) -> list[Message]:
    """The message bodies of ``entries`` (every entry of these files is a message)."""
    found = [e.body for e in entries if isinstance(e.body, Message)]
    assert len(found) == len(entries)
    return found


def write(tmp_path: Path, *records: dict[str, Any] | str) -> Path:
    path = tmp_path / "rollout.jsonl"
    lines = [r if isinstance(r, str) else json.dumps(r) for r in records]
    end = "" if isinstance(records[-1], str) else "\n"
    path.write_text("\n".join(lines) + end, encoding="utf-8")
    return path


def meta(sid: str = "sess-1") -> dict[str, Any]:
    return {"type": "session_meta", "payload": {"id": sid, "cwd": "/w", "cli_version": "0.50.0"}}


def item(payload: dict[str, Any]) -> dict[str, Any]:
    return {"timestamp": "2025-10-01T00:00:00Z", "type": "response_item", "payload": payload}


def msg(role: str, text: str) -> dict[str, Any]:
    kind = "output_text" if role == "assistant" else "input_text"
    return item({"type": "message", "role": role, "content": [{"type": kind, "text": text}]})


def fcall(call_id: str, name: str = "shell") -> dict[str, Any]:
    args = '{"command":["bash","-lc","ls"]}'
    return item({"type": "function_call", "name": name, "arguments": args, "call_id": call_id})


def fout(call_id: str, output: str = "ok") -> dict[str, Any]:
    return item({"type": "function_call_output", "call_id": call_id, "output": output})


def tokens(inp: int, cached: int, out: int) -> dict[str, Any]:
    last = {"input_tokens": inp, "cached_input_tokens": cached, "output_tokens": out}
    info = {"last_token_usage": last, "model_context_window": 272000}
    return {"type": "event_msg", "payload": {"type": "token_count", "info": info}}


class TestCorpus:
    @pytest.mark.parametrize("name", FILES)
    def test_counts_match_an_independent_count_of_the_raw_lines(self, name: str) -> None:
        path = require_corpus("codex", name)
        session = read_transcript(path)
        assert session.format == "codex"
        assert imported_counts(session.entries) == raw_counts(path)

    def test_long_session_has_exact_counts_and_usage_on_every_reply(self) -> None:
        session = IMPORTER.read(require_corpus("codex", "codex-openprintkit-2025-10-31-long.jsonl"))
        assert imported_counts(session.entries) == {
            "user": 64,
            "developer": 0,
            "assistant": 456,
            "tool": 400,
            "calls": 400,
            "parallel": 0,
        }
        replies = [m for m in messages(session.entries) if m.role == "assistant"]
        assert all(m.usage is not None for m in replies)
        assert replies[0].usage == Usage(6247, 268, 0, 0)
        errors = sum(r.is_error for m in messages(session.entries) for r in m.tool_results)
        assert errors == 38

    def test_usage_subtracts_cached_input(self) -> None:
        session = IMPORTER.read(require_corpus("codex", "codex-cpolar-connect-2025-09-16-a.jsonl"))
        first = next(m for m in messages(session.entries) if m.role == "assistant")
        assert first.usage == Usage(9831 - 4736, 587, 4736, 0)
        assert first.model == "gpt-5-codex"

    def test_encrypted_reasoning_is_kept_byte_exact(self) -> None:
        path = require_corpus("codex", "codex-openprintkit-2025-10-31-long.jsonl")
        raw = next(
            json.loads(x)["payload"]
            for x in path.read_text(encoding="utf-8").splitlines()
            if '"type":"reasoning"' in x.replace(" ", "")
        )
        session = IMPORTER.read(path)
        first = next(m for m in messages(session.entries) if m.role == "assistant")
        assert first.reasoning[0].signature == raw["encrypted_content"]
        assert first.reasoning[0].text == ""

    def test_resumed_rollout_lists_both_session_ids_and_keeps_the_first(self) -> None:
        session = IMPORTER.read(require_corpus("codex", "codex-cpolar-connect-2025-09-16-b.jsonl"))
        assert session.session_id == "613a9a68-8816-40b2-a2d4-041ade599da6"
        assert session.meta["session_ids"] == [
            "613a9a68-8816-40b2-a2d4-041ade599da6",
            "9cd28a74-da7e-4458-a91a-fffec2be9d7a",
        ]

    def test_environment_context_is_marked_synthetic(self) -> None:
        session = IMPORTER.read(require_corpus("codex", "codex-cpolar-connect-2025-09-16-a.jsonl"))
        marks = [m.meta.get("synthetic") for m in messages(session.entries) if m.role == "user"]
        assert marks == [
            "environment_context",
            None,
            None,
            None,
            None,
            "environment_context",
            None,
            None,
        ]
        assert session.title == "检查目前项目的设计"

    def test_import_is_deterministic_and_ids_are_content_hashes(self) -> None:
        path = require_corpus("codex", "codex-cpolar-connect-2025-09-16-a.jsonl")
        first, second = IMPORTER.read(path), IMPORTER.read(path)
        assert [e.id for e in first.entries] == [e.id for e in second.entries]
        assert all(e.id.startswith("b2:") for e in first.entries)
        assert len({e.id for e in first.entries}) == len(first.entries)

    def test_detection_picks_codex_for_every_file(self) -> None:
        for name in FILES:
            assert detect(require_corpus("codex", name)).name == "codex"


class TestMapping:
    def test_parallel_calls_form_one_message_and_usage_after_items_attaches(
        self, tmp_path: Path
    ) -> None:
        reasoning = {
            "type": "reasoning",
            "summary": [{"type": "summary_text", "text": "plan"}],
            "encrypted_content": "gAAA==",
        }
        path = write(
            tmp_path,
            meta(),
            msg("user", "list files"),
            item(reasoning),
            fcall("c1"),
            fcall("c2"),
            tokens(1000, 400, 50),
            fout("c1"),
            fout("c2", "Exit code: 2\nboom"),
            msg("assistant", "done"),
        )
        found = messages(IMPORTER.read(path).entries)
        assert [m.role for m in found] == ["user", "assistant", "tool", "tool", "assistant"]
        reply = found[1]
        assert reply.parts[0] == ReasoningPart(
            "plan", signature="gAAA==", meta={"provider": "openai"}
        )
        assert [c.id for c in reply.tool_calls] == ["c1", "c2"]
        assert (reply.usage, reply.stop_reason) == (Usage(600, 50, 400, 0), "tool_use")
        assert [r.is_error for m in found[2:4] for r in m.tool_results] == [False, True]
        assert found[4].stop_reason == "stop"

    def test_reused_call_id_is_disambiguated_and_results_pair(self, tmp_path: Path) -> None:
        path = write(tmp_path, meta(), fcall("c1"), fout("c1"), fcall("c1"), fout("c1"))
        found = messages(IMPORTER.read(path).entries)
        calls = [c.id for m in found for c in m.tool_calls]
        results = [r.call_id for m in found for r in m.tool_results]
        assert (calls, results) == (["c1", "c1#2"], ["c1", "c1#2"])

    def test_custom_and_local_shell_calls(self, tmp_path: Path) -> None:
        patch = "*** Begin Patch\n*** End Patch"
        path = write(
            tmp_path,
            meta(),
            item(
                {"type": "custom_tool_call", "call_id": "p1", "name": "apply_patch", "input": patch}
            ),
            item({"type": "custom_tool_call_output", "call_id": "p1", "output": "Done!"}),
            item(
                {
                    "type": "local_shell_call",
                    "call_id": "s1",
                    "status": "completed",
                    "action": {"type": "exec", "command": ["ls"]},
                }
            ),
            fout("s1"),
        )
        found = messages(IMPORTER.read(path).entries)
        first, second = found[0].tool_calls[0], found[2].tool_calls[0]
        assert (first.name, json.loads(first.arguments), first.meta) == (
            "apply_patch",
            {"input": patch},
            {"freeform": True},
        )
        assert (second.name, second.arguments) == (
            "local_shell",
            '{"type":"exec","command":["ls"]}',
        )
        assert found[3].tool_results[0].name == "local_shell"

    def test_turn_aborted_marks_the_open_reply(self, tmp_path: Path) -> None:
        aborted = {
            "type": "event_msg",
            "payload": {"type": "turn_aborted", "reason": "interrupted"},
        }
        path = write(tmp_path, meta(), msg("user", "go"), fcall("c1"), aborted)
        assert messages(IMPORTER.read(path).entries)[1].stop_reason == "aborted"

    def test_compacted_line_becomes_a_compaction_record(self, tmp_path: Path) -> None:
        compacted = {"type": "compacted", "payload": {"message": "state so far"}}
        path = write(tmp_path, meta(), msg("user", "go"), compacted, msg("user", "more"))
        entries = IMPORTER.read(path).entries
        assert [e.kind for e in entries] == ["message", "compaction", "message"]
        record = entries[1].body
        assert isinstance(record, CompactionRecord)
        assert (record.summary, record.first_kept_id) == ("state so far", None)


def b2(data: bytes) -> bytes:
    """The 16-byte blake2b digest of ``data``."""
    return hashlib.blake2b(data, digest_size=16).digest()


def keyed(parent: str | None, digest: bytes) -> str:
    """The id of an entry read from sources whose digest is ``digest``, after ``parent``."""
    key = (parent.encode() if parent else b"") + b"\0" + digest
    return "b2:" + hashlib.blake2b(key, digest_size=16).hexdigest()


class TestIds:
    def test_an_entry_id_hashes_the_lines_it_was_read_from(self, tmp_path: Path) -> None:
        aborted = {"type": "event_msg", "payload": {"type": "turn_aborted", "reason": "x"}}
        path = write(
            tmp_path,
            meta(),
            msg("user", "list files"),
            tokens(1000, 400, 50),
            fcall("c1"),
            fcall("c2"),
            fout("c1"),
            fout("c2"),
            msg("assistant", "done"),
            msg("user", "again"),
            fcall("c3"),
            aborted,
        )
        lines = path.read_bytes().splitlines(keepends=True)
        user = keyed(None, b2(lines[1]))
        # the reply: its two call lines, then the token_count line of its usage
        reply = keyed(user, b2(b2(lines[3]) + b2(lines[4]) + b2(lines[2])))
        out1 = keyed(reply, b2(lines[5]))
        out2 = keyed(out1, b2(lines[6]))
        done = keyed(out2, b2(lines[7]))  # one line, no usage: that line's digest
        again = keyed(done, b2(lines[8]))
        cut = keyed(again, b2(b2(lines[9]) + b2(lines[10])))  # its call, its turn_aborted
        entries = IMPORTER.read(path).entries
        assert [e.id for e in entries] == [user, reply, out1, out2, done, again, cut]
        assert [e.parent_id for e in entries] == [None, user, reply, out1, out2, done, again]

    def test_a_reply_that_grew_gets_another_id(self, tmp_path: Path) -> None:
        whole = write(tmp_path, meta(), msg("user", "go"), fcall("c1"), fcall("c2"))
        first = IMPORTER.read(whole).entries
        cut = tmp_path / "cut.jsonl"
        cut.write_bytes(b"".join(whole.read_bytes().splitlines(keepends=True)[:3]))
        before = IMPORTER.read(cut).entries
        assert before[0].id == first[0].id
        assert before[1].id != first[1].id
        replies = [before[1].message, first[1].message]
        assert [len(m.tool_calls) for m in replies if m is not None] == [1, 2]

    def test_entries_of_one_compacted_line_have_distinct_ids(self, tmp_path: Path) -> None:
        history = [
            {"type": "message", "role": "user", "content": [{"type": "input_text", "text": "a"}]},
            {"type": "message", "role": "user", "content": [{"type": "input_text", "text": "a"}]},
        ]
        compacted = {
            "type": "compacted",
            "payload": {"message": "state", "replacement_history": history},
        }
        path = write(tmp_path, meta(), msg("user", "go"), compacted)
        line = b2(path.read_bytes().splitlines(keepends=True)[2])
        entries = IMPORTER.read(path).entries
        assert [e.kind for e in entries] == ["message", "compaction", "message", "message"]
        record = keyed(entries[0].id, line)
        first = keyed(record, line)
        assert [e.id for e in entries[1:]] == [record, first, keyed(first, line)]


class TestToolOutputErrors:
    @pytest.mark.parametrize(
        ("text", "expected"),
        [
            ('{"output":"x","metadata":{"exit_code":1,"duration_seconds":0.1}}', True),
            ('{"output":"x","metadata":{"exit_code":0,"duration_seconds":0.1}}', False),
            # the last of duplicate keys counts, whether the output is parsed or not
            ('{"metadata":{"exit_code":2},"metadata":{"exit_code":0,"duration_seconds":1}}', False),
            ('{"metadata":{"exit_code":0,"duration_seconds":1},"metadata":{"exit_code":2}}', True),
            ('{"output":"x","metadata":{"exit_code":3,"duration_seconds":1.5e-3}}', True),
            ('{"output":"x","metadata":{"exit_code":-0,"duration_seconds":0.1}}', False),
            ('{"output":"x}","metadata":{"exit_code":0,"duration_seconds":0.1}}}', False),
            ("Exit code: 0\nWall time: 1s\nOutput:\nok", False),
            ("Exit code: 127\nWall time: 0s\nOutput:\nnot found", True),
            ("failed in sandbox LinuxSeccomp with execution error: denied", True),
            ("error: Failed to find expected lines in a.py", True),
            ("Plan updated", False),
        ],
    )
    def test_classification(self, text: str, expected: bool) -> None:
        assert tool_output_is_error(text) is expected


class TestDrift:
    """Each drift is tolerated with an exact report, and refused at its line when strict."""

    def test_calls_and_outputs_without_ids_pair_in_order(self, tmp_path: Path) -> None:
        bare = item({"type": "function_call", "name": "shell", "arguments": "{}"})
        out = item({"type": "function_call_output", "output": "first"})
        path = write(tmp_path, meta(), msg("user", "go"), bare, out)
        session = tolerated(
            path,
            "codex",
            "repaired 2: function_call without call_id ×1 (line 3), function_call_output "
            "without call_id ×1 (line 4)",
            ":3: expected a string `call_id` on a function_call item",
        )
        found = messages(session.entries)
        assert [c.id for c in found[1].tool_calls] == ["call_gen_3"]
        assert [(r.call_id, r.text) for r in found[2].tool_results] == [("call_gen_3", "first")]

    def test_call_without_call_id_answered_under_its_lost_id_pairs_in_order(
        self, tmp_path: Path
    ) -> None:
        """A function_call lost its ``call_id`` (its ``id`` is the Responses item id ``fc_…``,
        which no output names); the outputs still carry the lost ids, which name no call, so
        they answer the id-less calls in order."""
        first = item({"type": "function_call", "id": "fc_1", "name": "shell", "arguments": "{}"})
        second = item({"type": "function_call", "id": "fc_2", "name": "read", "arguments": "{}"})
        path = write(
            tmp_path,
            meta(),
            msg("user", "go"),
            first,
            second,
            fcall("c3"),
            fout("call_lost_1", "one"),
            fout("c3", "three"),
            fout("call_lost_2", "two"),
        )
        session = tolerated(
            path,
            "codex",
            "repaired 4: function_call without call_id ×2 (line 3), function_call_output "
            "paired by order ×2 (line 6)",
            ":3: expected a string `call_id` on a function_call item",
        )
        found = messages(session.entries)
        assert [c.id for c in found[1].tool_calls] == ["call_gen_3", "call_gen_4", "c3"]
        assert [(r.call_id, r.name, r.text) for m in found[2:] for r in m.tool_results] == [
            ("call_gen_3", "shell", "one"),
            ("c3", "shell", "three"),
            ("call_gen_4", "read", "two"),
        ]

    def test_output_as_a_list_of_content_items(self, tmp_path: Path) -> None:
        out = item(
            {
                "type": "function_call_output",
                "call_id": "c1",
                "output": [
                    {"type": "input_text", "text": "hello"},
                    {"type": "input_image", "image_url": f"data:image/png;base64,{PNG_1X1}"},
                ],
            }
        )
        path = write(tmp_path, meta(), msg("user", "go"), fcall("c1"), out)
        session = tolerated(
            path,
            "codex",
            "repaired 1: structured tool output ×1 (line 4)",
            ":4: expected `output` text on a tool output item, got a list of 2 content items",
        )
        [part_text, part_image] = messages(session.entries)[2].tool_results[0].content
        assert isinstance(part_text, TextPart) and part_text.text == "hello"
        assert isinstance(part_image, ImagePart) and part_image.media_type == "image/png"

    def test_structured_output(self, tmp_path: Path) -> None:
        """Codex 0.146 wrote a function_call_output whose ``output`` is one content object."""
        out = item(
            {
                "type": "function_call_output",
                "call_id": "c1",
                "output": {"type": "input_text", "text": "structured"},
            }
        )
        path = write(tmp_path, meta(), msg("user", "go"), fcall("c1"), out)
        session = tolerated(
            path,
            "codex",
            "repaired 1: structured tool output ×1 (line 4)",
            ":4: expected `output` text or a list of content items on a tool output item, "
            "got one content object of type 'input_text'",
        )
        assert messages(session.entries)[2].tool_results[0].text == "structured"

    def test_null_arguments(self, tmp_path: Path) -> None:
        call = item({"type": "function_call", "name": "shell", "arguments": None, "call_id": "c1"})
        path = write(tmp_path, meta(), msg("user", "go"), call, fout("c1"))
        session = tolerated(
            path,
            "codex",
            "repaired 1: null arguments ×1 (line 3)",
            ":3: expected `arguments` (a JSON string) on a function_call item",
        )
        assert messages(session.entries)[1].tool_calls[0].arguments == "{}"

    def test_arguments_that_are_not_json_are_kept_as_text(self, tmp_path: Path) -> None:
        """A model emitted broken JSON: the arguments stay as written (history), counted."""
        broken = '{"command":["bash","-lc","ls"'
        calls = [
            item({"type": "function_call", "name": "shell", "arguments": a, "call_id": f"c{n}"})
            for n, a in enumerate([broken, "", " ", "[1]", "{'command': 'ls'}"])
        ]
        records = [r for n, call in enumerate(calls) for r in (call, fout(f"c{n}"))]
        path = write(tmp_path, meta(), msg("user", "go"), *records)
        session = tolerated(
            path,
            "codex",
            "repaired 2: tool call arguments not JSON (kept as text) ×2 (line 3)",
            ":3: expected `arguments` to be JSON text, got text that is not JSON (kept as text)",
        )
        found = messages(session.entries)
        assert [c.arguments for m in found for c in m.tool_calls] == [
            broken, "", " ", "[1]", "{'command': 'ls'}"
        ]  # fmt: skip

    def test_empty_arguments_are_not_flagged(self, tmp_path: Path) -> None:
        call = item({"type": "function_call", "name": "shell", "arguments": "", "call_id": "c1"})
        path = write(tmp_path, meta(), msg("user", "go"), call, fout("c1"))
        session = read_transcript(path, "codex", strict=True)
        assert session.report.clean
        assert messages(session.entries)[1].tool_calls[0].arguments == ""

    def test_unknown_record_kind(self, tmp_path: Path) -> None:
        path = write(tmp_path, meta(), msg("user", "go"), {"type": "hologram", "payload": {}})
        session = tolerated(
            path,
            "codex",
            "skipped 1: record:hologram ×1 (line 3)",
            ":3: expected a rollout line of type session_meta, response_item, event_msg, "
            "turn_context or compacted, got 'hologram'",
        )
        assert len(messages(session.entries)) == 1

    def test_unknown_item_kind(self, tmp_path: Path) -> None:
        path = write(tmp_path, meta(), msg("user", "go"), item({"type": "hologram_call"}))
        tolerated(
            path,
            "codex",
            "skipped 1: response_item:hologram_call ×1 (line 3)",
            ":3: expected a known response item type, got 'hologram_call'",
        )

    def test_partial_last_line_of_a_live_session(self, tmp_path: Path) -> None:
        path = write(tmp_path, meta(), msg("user", "go"), '{"timestamp":"x","type":"respo')
        session = tolerated(
            path,
            "codex",
            "skipped 1: partial last line ×1 (line 3)",
            ":3: expected a complete JSON object, got a line cut short "
            "(unexpected end of data: line 1 column 31 (char 30))",
        )
        assert len(messages(session.entries)) == 1

    def test_lone_surrogate(self, tmp_path: Path) -> None:
        line = json.dumps(fout("c1", "SURROGATE")).replace("SURROGATE", LONE_SURROGATE_JSON)
        path = write(tmp_path, meta(), msg("user", "go"), fcall("c1"), line + "\n")
        session = tolerated(
            path, "codex", "repaired 1: lone surrogate ×1 (line 4)", f":4: {LONE_SURROGATE_ERROR}"
        )
        assert messages(session.entries)[2].tool_results[0].text == LONE_SURROGATE_TEXT

    def test_line_without_payload_is_skipped(self, tmp_path: Path) -> None:
        path = write(tmp_path, meta(), msg("user", "go"), {"type": "response_item"})
        tolerated(
            path,
            "codex",
            "skipped 1: malformed line ×1 (line 3)",
            ":3: expected a rollout line with a string `type` and a `payload` object",
        )


#: A 1×1 PNG, base64.
PNG_1X1 = (
    "iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mP8z8BQDwAEhQGAhKmMIQAAAABJRU5E"
    "rkJggg=="
)


def event(kind: str, **fields: Any) -> dict[str, Any]:
    return {"type": "event_msg", "payload": {"type": kind, **fields}}


class TestRecordKinds:
    """Every record kind of current rollouts is read or deliberately ignored."""

    def rollout(self, tmp_path: Path) -> Path:
        base = {"text": "You are Codex."}
        skills = "<skills_instructions>use skills</skills_instructions>"
        return write(
            tmp_path,
            {"type": "session_meta", "payload": {"id": "s1", "base_instructions": base}},
            {"type": "turn_context", "payload": {"model": "gpt-5.5", "effort": "high"}},
            {"type": "world_state", "payload": {"full": True, "state": {}}},
            item({"type": "message", "role": "developer", "content": [
                {"type": "input_text", "text": skills}
            ]}),
            msg("user", "find the bug"),
            event("entered_review_mode"),
            event("mcp_tool_call_begin", invocation={"server": "fs", "tool": "read"}),
            event("collab_agent_spawn_begin"),
            event("thread_goal_updated", goal="fix"),
            item({"type": "ghost_snapshot", "ghost_commit": {"id": "abc"}}),
            item({"type": "web_search_call", "status": "completed",
                  "action": {"type": "search", "query": "pytest mean"}}),
            item({"type": "tool_search_call", "call_id": "ts1", "execution": "client",
                  "arguments": {"query": "files"}}),
            item({"type": "tool_search_output", "call_id": "ts1", "tools": [{"name": "read"}]}),
            fcall("m1", "mcp__fs__read"),
            fout("m1", "file text"),
            item({"type": "image_generation_call", "id": "ig1", "status": "completed",
                  "revised_prompt": "a chart", "result": PNG_1X1}),
            item({"type": "compaction", "encrypted_content": "opaque=="}),
            {"type": "token_usage_record", "payload": {"usage": {"input_tokens": 5}}},
            event("exited_review_mode"),
            {"type": "compacted", "payload": {
                "message": "SUMMARY",
                "replacement_history": [
                    {"type": "message", "role": "developer", "content": [
                        {"type": "input_text", "text": skills}
                    ]},
                    {"type": "message", "role": "user", "content": [
                        {"type": "input_text", "text": "find the bug"}
                    ]},
                    {"type": "message", "role": "user", "content": [
                        {"type": "input_text", "text": "SUMMARY"}
                    ]},
                ],
            }},
        )  # fmt: skip

    def test_what_each_kind_becomes(self, tmp_path: Path) -> None:
        session = read_transcript(self.rollout(tmp_path))
        bodies = [e.body for e in session.entries]
        shape = [
            (b.role, [p.kind for p in b.parts]) if isinstance(b, Message) else b.kind
            for b in bodies
        ]
        assert shape == [
            ("developer", ["text"]),
            ("developer", ["text"]),
            ("user", ["text"]),
            ("assistant", ["text", "tool_call"]),
            ("tool", ["tool_result"]),
            ("assistant", ["tool_call"]),
            ("tool", ["tool_result"]),
            ("assistant", ["image", "native_compaction"]),
            "compaction",
            ("user", ["text"]),
        ]
        msgs = [b for b in bodies if isinstance(b, Message)]
        assert msgs[0].text == "You are Codex." and msgs[0].meta == {"source": "base_instructions"}
        search = msgs[3].parts[0]
        assert isinstance(search, TextPart)
        assert search.text == (
            '[provider-side tool call] web_search({"query": "pytest mean", "type": "search"})'
        )
        assert [(c.id, c.name, c.arguments) for c in msgs[3].tool_calls] == [
            ("ts1", "tool_search", '{"query":"files"}')
        ]
        assert msgs[4].tool_results[0].text == '[{"name":"read"}]'
        assert [(c.id, c.name) for c in msgs[5].tool_calls] == [("m1", "mcp__fs__read")]
        image = msgs[7].parts[0]
        assert isinstance(image, ImagePart)
        assert (image.media_type, image.width, image.height) == ("image/png", 1, 1)
        assert image.meta["revised_prompt"] == "a chart"
        assert msgs[7].parts[1] == NativeCompactionPart(
            "openai", '{"encrypted_content":"opaque==","type":"compaction"}'
        )
        record = bodies[8]
        assert isinstance(record, CompactionRecord) and record.summary == "SUMMARY"
        assert msgs[-1].text == "find the bug"
        assert (session.meta["model"], session.meta["reasoning_effort"]) == ("gpt-5.5", "high")

    def test_the_report_counts_what_never_reaches_the_model(self, tmp_path: Path) -> None:
        session = read_transcript(self.rollout(tmp_path))
        assert session.report.summary() == ""
        assert session.report.counts("ignored") == {
            "event_msg:collab_agent_spawn_begin": 1,
            "event_msg:entered_review_mode": 1,
            "event_msg:exited_review_mode": 1,
            "event_msg:mcp_tool_call_begin": 1,
            "event_msg:thread_goal_updated": 1,
            "response_item:ghost_snapshot": 1,
            "token_usage_record": 1,
            "world_state": 1,
        }
        assert read_transcript(self.rollout(tmp_path), strict=True).entries == session.entries
