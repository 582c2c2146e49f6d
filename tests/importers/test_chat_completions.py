"""Chat-completions importer: corpus counts, usage, reasoning, images, legacy calls, errors."""

from __future__ import annotations

import base64
import json
import struct
import zlib
from itertools import pairwise
from pathlib import Path
from typing import Any

import pytest

from corpus import require_corpus, transcript_files
from ctxengine.errors import TranscriptError
from ctxengine.importers import detect, read_transcript
from ctxengine.importers.chat_completions import IMPORTER
from ctxengine.model import (
    ImagePart,
    Message,
    ReasoningPart,
    TextPart,
    ToolCallPart,
    ToolResultPart,
    Usage,
)
from import_drift import LONE_SURROGATE_ERROR, LONE_SURROGATE_JSON, LONE_SURROGATE_TEXT, tolerated

DJANGO = "mini-swe-agent-deepseek-chat-django-13265.traj.json"
PVLIB = "mini-swe-agent-deepseek-reasoner-pvlib-1606-aborted.traj.json"


def png_base64(width: int, height: int) -> str:
    """A PNG signature and IHDR chunk (plus 100 filler bytes), base64: 133 bytes."""
    ihdr = struct.pack(">IIBBBBB", width, height, 8, 2, 0, 0, 0)
    chunk = struct.pack(">I", 13) + b"IHDR" + ihdr + struct.pack(">I", zlib.crc32(b"IHDR" + ihdr))
    return base64.b64encode(b"\x89PNG\r\n\x1a\n" + chunk + b"\x00" * 100).decode()


def write(tmp_path: Path, value: Any, name: str = "chat.json") -> Path:
    path = tmp_path / name
    path.write_text(json.dumps(value), encoding="utf-8")
    return path


def messages_of(path: Path) -> list[Message]:
    return [e.body for e in IMPORTER.read(path).entries if isinstance(e.body, Message)]


def raw_counts(path: Path) -> dict[str, int]:
    """Counts straight from the JSON: every record except ``role: exit`` is a message; an
    ``exit`` record with a submission right after an assistant message is also its result."""
    data = json.loads(path.read_text(encoding="utf-8"))
    records = data["messages"] if isinstance(data, dict) else data
    chat = [m for m in records if m["role"] != "exit"]
    submitted = sum(
        1
        for prev, m in pairwise(records)
        if m["role"] == "exit" and prev["role"] == "assistant" and m["extra"].get("submission")
    )
    return {
        "messages": len(chat) + submitted,
        "calls": sum(len(m.get("tool_calls") or []) for m in chat),
        "results": sum(1 for m in chat if m["role"] == "tool") + submitted,
        "parallel": sum(1 for m in chat if len(m.get("tool_calls") or []) > 1),
        "failed": sum(1 for m in chat if m["role"] == "tool" and m["extra"]["returncode"] != 0),
    }


class TestCorpus:
    @pytest.mark.parametrize("name", [DJANGO, PVLIB])
    def test_counts_match_the_raw_json(self, name: str) -> None:
        path = require_corpus("openai-messages", name)
        session = read_transcript(path)
        msgs = [e.body for e in session.entries if isinstance(e.body, Message)]
        raw = raw_counts(path)
        assert session.format == "chat-completions"
        assert len(session.entries) == raw["messages"]
        assert sum(len(m.tool_calls) for m in msgs) == raw["calls"]
        assert sum(len(m.tool_results) for m in msgs) == raw["results"]
        assert sum(1 for m in msgs if len(m.tool_calls) > 1) == raw["parallel"]
        assert sum(r.is_error for m in msgs for r in m.tool_results) == raw["failed"]
        assert session.meta.get("skipped") == (None if name == DJANGO else {"exit": 1})

    def test_django_counts_are_exact(self) -> None:
        path = require_corpus("openai-messages", DJANGO)
        msgs = messages_of(path)
        assert (len(msgs), raw_counts(path)["parallel"]) == (314, 0)
        assert sum(len(m.tool_calls) for m in msgs) == 156
        assert sum(len(m.tool_results) for m in msgs) == 156
        assert sum(r.is_error for m in msgs for r in m.tool_results) == 19

    def test_every_call_is_answered_and_the_submission_answers_the_last(self) -> None:
        path = require_corpus("openai-messages", DJANGO)
        session = IMPORTER.read(path)
        msgs = [e.body for e in session.entries if isinstance(e.body, Message)]
        seen: list[str] = []
        for m in msgs:
            seen.extend(c.id for c in m.tool_calls)
            for r in m.tool_results:
                assert r.call_id == seen[-1]
        answered = {r.call_id for m in msgs for r in m.tool_results}
        assert [c for c in seen if c not in answered] == []
        final = msgs[-1]
        assert (final.role, final.meta) == ("tool", {"source": "exit"})
        result = final.tool_results[0]
        assert (result.call_id, result.is_error) == ("call_00_rTMxF5EBqc40to812L8JSb9t", False)
        submission = json.loads(path.read_text(encoding="utf-8"))["info"]["submission"]
        assert result.text == submission
        assert result.text.startswith("diff --git a/django/db/migrations/autodetector.py ")
        assert session.meta["exit_status"] == "Submitted"

    def test_usage_subtracts_cached_tokens_and_keeps_model_and_stop(self) -> None:
        msgs = messages_of(require_corpus("openai-messages", DJANGO))
        first = msgs[2]
        # prompt_tokens 1835, cached_tokens 320, completion_tokens 141
        assert first.usage == Usage(input_tokens=1515, output_tokens=141, cache_read_tokens=320)
        assert (first.model, first.stop_reason) == ("deepseek-chat", "tool_use")
        assert first.meta["response_id"] == "c69a4eee-29c8-48b8-a99a-8f2070d253bd"
        assert sum(1 for m in msgs if m.usage is not None) == 156

    def test_reasoning_content_is_a_reasoning_part_first(self) -> None:
        session = IMPORTER.read(require_corpus("openai-messages", PVLIB))
        first = session.entries[2].body
        assert isinstance(first, Message)
        assert first.parts[0] == ReasoningPart(
            "I'll start by exploring the current directory to understand the codebase "
            "structure. Let's first see what's in /testbed."
        )
        assert [p.kind for p in first.parts] == ["reasoning", "tool_call"]
        assert session.entries[2].created_at == "2026-04-13T10:20:47.150651+00:00"
        assert session.meta["exit_status"] == "InternalServerError"
        assert session.title == "pvlib__pvlib-python-1606"

    def test_same_file_gives_same_session_and_entry_ids(self) -> None:
        path = require_corpus("openai-messages", PVLIB)
        a, b = IMPORTER.read(path), IMPORTER.read(path)
        assert a.session_id == b.session_id
        assert a.session_id.startswith("f:")
        assert [e.id for e in a.entries] == [e.id for e in b.entries]

    def test_no_other_corpus_file_is_sniffed_as_chat_completions(self) -> None:
        require_corpus()
        sniffed = []
        for path in transcript_files():
            head = path.read_bytes()[: 64 * 1024]
            if IMPORTER.sniff(path, head):
                sniffed.append(path.name)
        assert sniffed == [DJANGO, PVLIB]

    def test_openhands_event_list_is_not_chat_completions(self) -> None:
        path = require_corpus("openhands", "openhands-traj-basic.json")
        assert IMPORTER.sniff(path, path.read_bytes()) is False


class TestMapping:
    def test_list_with_image_parallel_calls_and_results(self, tmp_path: Path) -> None:
        data = png_base64(1920, 1080)
        path = write(
            tmp_path,
            [
                {"role": "developer", "content": "Be brief."},
                {
                    "role": "user",
                    "content": [
                        {"type": "text", "text": "What is in this screenshot?"},
                        {
                            "type": "image_url",
                            "image_url": {"url": f"data:image/png;base64,{data}", "detail": "high"},
                        },
                    ],
                },
                {
                    "role": "assistant",
                    "content": None,
                    "tool_calls": [
                        {
                            "id": "c1",
                            "type": "function",
                            "function": {"name": "read", "arguments": '{"path": "a.py"}'},
                        },
                        {
                            "id": "c2",
                            "type": "function",
                            "function": {"name": "read", "arguments": {"path": "b.py"}},
                        },
                    ],
                    "usage": {
                        "prompt_tokens": 900,
                        "completion_tokens": 40,
                        "prompt_tokens_details": {"cached_tokens": 512},
                    },
                    "finish_reason": "tool_calls",
                },
                {"role": "tool", "tool_call_id": "c1", "content": "print('a')"},
                {
                    "role": "tool",
                    "tool_call_id": "c2",
                    "name": "read",
                    "content": [{"type": "text", "text": "print('b')"}],
                },
                {"role": "assistant", "content": "Both files print one letter."},
            ],
        )
        assert detect(path).name == "chat-completions"
        msgs = messages_of(path)
        assert [m.role for m in msgs] == [
            "developer",
            "user",
            "assistant",
            "tool",
            "tool",
            "assistant",
        ]
        image = msgs[1].parts[1]
        assert image == ImagePart(
            "image/png",
            data=data,
            byte_size=133,
            width=1920,
            height=1080,
            meta={"detail": "high"},
        )
        assert msgs[2].parts == (
            ToolCallPart("c1", "read", '{"path": "a.py"}'),
            ToolCallPart("c2", "read", '{"path":"b.py"}'),
        )
        assert msgs[2].usage == Usage(input_tokens=388, output_tokens=40, cache_read_tokens=512)
        assert msgs[2].stop_reason == "tool_use"
        results = [r for m in msgs for r in m.tool_results]
        assert [(r.call_id, r.text, r.name, r.is_error) for r in results] == [
            ("c1", "print('a')", None, False),
            ("c2", "print('b')", "read", False),
        ]

    def test_reused_call_ids_are_renamed_and_paired(self, tmp_path: Path) -> None:
        call = {"id": "x", "type": "function", "function": {"name": "ls", "arguments": "{}"}}
        turn = [
            {"role": "assistant", "content": "", "tool_calls": [call]},
            {"role": "tool", "tool_call_id": "x", "content": "ok"},
        ]
        msgs = messages_of(
            write(tmp_path, {"messages": [{"role": "user", "content": "go"}, *turn, *turn]})
        )
        assert [c.id for m in msgs for c in m.tool_calls] == ["x", "x#2"]
        assert [r.call_id for m in msgs for r in m.tool_results] == ["x", "x#2"]

    def test_legacy_function_call_and_function_role(self, tmp_path: Path) -> None:
        path = write(
            tmp_path,
            [
                {"role": "user", "content": "Weather in Paris?"},
                {
                    "role": "assistant",
                    "content": None,
                    "function_call": {"name": "get_weather", "arguments": '{"city": "Paris"}'},
                },
                {"role": "function", "name": "get_weather", "content": "18C, cloudy"},
            ],
        )
        msgs = messages_of(path)
        assert msgs[1].tool_calls == (
            ToolCallPart(
                "function-1", "get_weather", '{"city": "Paris"}', meta={"legacy": "function_call"}
            ),
        )
        result = msgs[2].tool_results[0]
        assert (result.call_id, result.name, result.text) == (
            "function-1",
            "get_weather",
            "18C, cloudy",
        )

    def test_thinking_blocks_keep_signatures(self, tmp_path: Path) -> None:
        path = write(
            tmp_path,
            [
                {"role": "user", "content": "hi"},
                {
                    "role": "assistant",
                    "content": "Hello.",
                    "reasoning_content": "greet",
                    "thinking_blocks": [
                        {"type": "thinking", "thinking": "greet", "signature": "EqQBCkYIBx=="},
                        {"type": "redacted_thinking", "data": "EmwKAhgB"},
                    ],
                },
            ],
        )
        parts = messages_of(path)[1].parts
        assert parts == (
            ReasoningPart("greet", signature="EqQBCkYIBx=="),
            ReasoningPart("", signature="EmwKAhgB", redacted=True),
            TextPart("Hello."),
        )


EXIT_CALL = {"id": "c1", "type": "function", "function": {"name": "bash", "arguments": "{}"}}


class TestExitRecord:
    def records(self, exit_extra: dict[str, Any], *, answered: bool) -> dict[str, Any]:
        messages: list[dict[str, Any]] = [
            {"role": "user", "content": "fix it"},
            {"role": "assistant", "content": "submit", "tool_calls": [EXIT_CALL]},
        ]
        if answered:
            messages.append({"role": "tool", "tool_call_id": "c1", "content": "ok"})
        messages.append({"role": "exit", "content": "patch text", "extra": exit_extra})
        return {"info": {}, "messages": messages}

    def test_a_submission_answers_the_pending_final_call(self, tmp_path: Path) -> None:
        extra = {"exit_status": "Submitted", "submission": "diff --git a/x b/x\n"}
        session = IMPORTER.read(write(tmp_path, self.records(extra, answered=False)))
        msgs = [e.body for e in session.entries]
        assert msgs[-1] == Message(
            "tool",
            (ToolResultPart("c1", (TextPart("diff --git a/x b/x\n"),)),),
            meta={"source": "exit"},
        )
        assert (len(msgs), session.meta["exit_status"]) == (3, "Submitted")
        assert "skipped" not in session.meta

    def test_without_a_submission_the_content_is_used(self, tmp_path: Path) -> None:
        extra = {"exit_status": "Submitted"}
        session = IMPORTER.read(write(tmp_path, self.records(extra, answered=False)))
        assert [r.text for e in session.entries for r in e.body.tool_results] == ["patch text"]

    def test_an_exit_without_submission_is_skipped(self, tmp_path: Path) -> None:
        extra = {"exit_status": "LimitsExceeded"}
        session = IMPORTER.read(write(tmp_path, self.records(extra, answered=False)))
        assert len(session.entries) == 2
        assert session.meta["skipped"] == {"exit": 1}

    def test_an_exit_after_a_result_is_skipped(self, tmp_path: Path) -> None:
        extra = {"exit_status": "LimitsExceeded", "submission": ""}
        session = IMPORTER.read(write(tmp_path, self.records(extra, answered=True)))
        assert len(session.entries) == 3
        assert session.meta["skipped"] == {"exit": 1}
        assert session.meta["exit_status"] == "LimitsExceeded"


class TestErrors:
    def error(self, tmp_path: Path, value: Any) -> str:
        path = write(tmp_path, value)
        with pytest.raises(TranscriptError) as info:
            IMPORTER.read(path)
        return str(info.value).removeprefix(f"{path} at ")

    def test_messages_not_a_list(self, tmp_path: Path) -> None:
        assert (
            self.error(tmp_path, {"messages": {"a": 1}})
            == "$.messages: expected a list of messages"
        )

    def test_not_a_list_or_object(self, tmp_path: Path) -> None:
        expected = "$: expected a list of messages or an object with `messages`"
        assert self.error(tmp_path, 3) == expected

    def test_tool_call_without_function(self, tmp_path: Path) -> None:
        bad = {
            "role": "assistant",
            "content": None,
            "tool_calls": [{"id": "c1", "type": "function"}],
        }
        msg = self.error(tmp_path, {"messages": [{"role": "user", "content": "a"}, bad]})
        assert msg == (
            "$.messages[1].tool_calls[0].function: expected a function object {name, arguments}"
        )

    def test_invalid_json_names_the_file(self, tmp_path: Path) -> None:
        path = tmp_path / "broken.json"
        path.write_text('{"messages": [', encoding="utf-8")
        with pytest.raises(TranscriptError) as info:
            IMPORTER.read(path)
        assert info.value.path == str(path)
        assert info.value.expected.startswith("expected a JSON document")


USER = {"role": "user", "content": "fix it"}


def calling(call: dict[str, Any]) -> dict[str, Any]:
    return {"role": "assistant", "content": None, "tool_calls": [call]}


class TestDrift:
    """Each drift is tolerated with an exact report, and refused at its JSON path when
    strict."""

    def test_tool_call_without_id_pairs_with_the_result_without_id(self, tmp_path: Path) -> None:
        call = {"type": "function", "function": {"name": "bash", "arguments": "{}"}}
        path = write(tmp_path, [USER, calling(call), {"role": "tool", "content": "out"}])
        session = tolerated(
            path,
            "chat-completions",
            "repaired 2: tool call without id ×1 ($[1].tool_calls[0].id), tool message without "
            "call id ×1 ($[2].tool_call_id)",
            " at $[1].tool_calls[0].id: expected a string `id` on a tool call",
        )
        msgs = [e.message for e in session.entries if e.message is not None]
        assert msgs[1].tool_calls[0].id == "call_gen_1"
        assert [(r.call_id, r.text) for r in msgs[2].tool_results] == [("call_gen_1", "out")]

    def test_structured_output(self, tmp_path: Path) -> None:
        call = {"id": "c1", "type": "function", "function": {"name": "bash", "arguments": "{}"}}
        out = {"role": "tool", "tool_call_id": "c1", "content": {"type": "text", "text": "x"}}
        path = write(tmp_path, [USER, calling(call), out])
        session = tolerated(
            path,
            "chat-completions",
            "repaired 1: structured content ×1 ($[2].content)",
            " at $[2].content: expected `content` to be a string, null or a list of parts, got "
            "one part object",
        )
        tool = session.entries[2].message
        assert tool is not None and tool.tool_results[0].text == "x"

    def test_null_arguments(self, tmp_path: Path) -> None:
        call = {"id": "c1", "type": "function", "function": {"name": "bash", "arguments": None}}
        path = write(tmp_path, [USER, calling(call)])
        session = tolerated(
            path,
            "chat-completions",
            "repaired 1: null arguments ×1 ($[1].tool_calls[0].function)",
            " at $[1].tool_calls[0].function: expected tool-call arguments, got null",
        )
        msg = session.entries[1].message
        assert msg is not None and msg.tool_calls[0].arguments == "{}"

    def test_arguments_that_are_not_json_are_kept_as_text(self, tmp_path: Path) -> None:
        """Broken JSON from the model stays as written; a custom tool's free-text input and
        empty arguments are not flagged."""
        broken = '{"cmd": "ls'
        calls = [
            {"id": "c1", "type": "function", "function": {"name": "bash", "arguments": ""}},
            {"id": "c2", "type": "function", "function": {"name": "bash", "arguments": broken}},
            {"id": "c3", "type": "custom", "custom": {"name": "patch", "input": "*** Begin"}},
        ]
        assistant = {"role": "assistant", "content": None, "tool_calls": calls}
        path = write(tmp_path, [USER, assistant])
        session = tolerated(
            path,
            "chat-completions",
            "repaired 1: tool call arguments not JSON (kept as text) ×1 "
            "($[1].tool_calls[1].function.arguments)",
            " at $[1].tool_calls[1].function.arguments: expected `arguments` to be JSON text, "
            "got text that is not JSON (kept as text)",
        )
        msg = session.entries[1].message
        assert msg is not None
        assert [c.arguments for c in msg.tool_calls] == ["", broken, "*** Begin"]

    def test_legacy_function_call_arguments_that_are_not_json(self, tmp_path: Path) -> None:
        call = {"name": "get_weather", "arguments": "{city: Paris}"}
        legacy = {"role": "assistant", "content": None, "function_call": call}
        path = write(tmp_path, [USER, legacy])
        session = tolerated(
            path,
            "chat-completions",
            "repaired 1: tool call arguments not JSON (kept as text) ×1 "
            "($[1].function_call.arguments)",
            " at $[1].function_call.arguments: expected `arguments` to be JSON text, got text "
            "that is not JSON (kept as text)",
        )
        msg = session.entries[1].message
        assert msg is not None and msg.tool_calls[0].arguments == "{city: Paris}"

    def test_empty_arguments_are_not_flagged(self, tmp_path: Path) -> None:
        call = {"id": "c1", "type": "function", "function": {"name": "bash", "arguments": ""}}
        session = read_transcript(write(tmp_path, [USER, calling(call)]), strict=True)
        msg = session.entries[1].message
        assert session.report.clean and msg is not None and msg.tool_calls[0].arguments == ""

    def test_unknown_role(self, tmp_path: Path) -> None:
        path = write(tmp_path, [USER, {"role": "robot", "content": "x"}])
        session = tolerated(
            path,
            "chat-completions",
            "skipped 1: message role robot ×1 ($[1].role)",
            " at $[1].role: expected one of system, developer, user, assistant, tool, function",
        )
        assert len(session.entries) == 1

    def test_unknown_content_part(self, tmp_path: Path) -> None:
        value = [
            {"role": "user", "content": [{"type": "input_audio"}, {"type": "text", "text": "a"}]}
        ]
        session = tolerated(
            write(tmp_path, value),
            "chat-completions",
            "skipped 1: content part input_audio ×1 ($[0].content[0].type)",
            " at $[0].content[0].type: expected a text, image_url or file part, got 'input_audio'",
        )
        msg = session.entries[0].message
        assert msg is not None and msg.text == "a"

    def test_lone_surrogate_names_its_line(self, tmp_path: Path) -> None:
        path = tmp_path / "chat.json"
        path.write_text(
            '[\n{"role": "user", "content": "go"},\n'
            f'{{"role": "assistant", "content": "{LONE_SURROGATE_JSON}"}}\n]',
            encoding="utf-8",
        )
        session = tolerated(
            path,
            "chat-completions",
            "repaired 1: lone surrogate ×1 (line 3)",
            f":3: {LONE_SURROGATE_ERROR}",
        )
        msg = session.entries[1].message
        assert msg is not None and msg.text == LONE_SURROGATE_TEXT


GOOD = [
    {"role": "system", "content": "x"},
    {"role": "user", "content": "hi"},
    {"role": "assistant", "content": "hello"},
]


class TestSniffedDespiteMalformedMessages:
    """A file is recognised by most of its messages: a malformed one is skipped and counted
    (the report names its JSON path), and refused at that path when strict."""

    @pytest.mark.parametrize(
        ("bad", "summary", "strict"),
        [
            (
                {"role": "wizard", "content": "?"},
                "skipped 1: message role wizard ×1 ($.messages[3].role)",
                " at $.messages[3].role: expected one of system, developer, user, assistant, "
                "tool, function",
            ),
            (
                {"content": "no role"},
                "skipped 1: message without role ×1 ($.messages[3].role)",
                " at $.messages[3].role: expected one of system, developer, user, assistant, "
                "tool, function",
            ),
            (
                {"role": "user", "content": 123},
                "skipped 1: malformed content ×1 ($.messages[3].content)",
                " at $.messages[3].content: expected `content` to be a string, null or a list "
                "of parts",
            ),
            (
                "not a message",
                "skipped 1: malformed message ×1 ($.messages[3])",
                " at $.messages[3]: expected a message object",
            ),
        ],
    )
    def test_one_bad_message_in_an_object(
        self, tmp_path: Path, bad: Any, summary: str, strict: str
    ) -> None:
        path = write(tmp_path, {"messages": [*GOOD, bad]})
        assert detect(path).name == "chat-completions"
        session = read_transcript(path)
        assert session.report.summary() == summary
        with pytest.raises(TranscriptError) as info:
            read_transcript(path, strict=True)
        assert str(info.value) == f"{path}{strict}"

    def test_one_bad_message_in_a_bare_list(self, tmp_path: Path) -> None:
        path = write(tmp_path, [*GOOD, {"role": "wizard", "content": "?"}])
        session = read_transcript(path)
        assert session.format == "chat-completions"
        assert [m.role for m in messages_of(path)] == ["system", "user", "assistant"]
        assert session.report.summary() == "skipped 1: message role wizard ×1 ($[3].role)"

    def test_two_bad_of_six_and_a_repair_are_one_line(self, tmp_path: Path) -> None:
        call = {"id": "c1", "type": "function", "function": {"name": "bash", "arguments": "{x"}}
        path = write(
            tmp_path,
            {
                "messages": [
                    GOOD[0],
                    GOOD[1],
                    {"role": "wizard", "content": "?"},
                    {"content": "no role"},
                    calling(call),
                    {"role": "tool", "tool_call_id": "c1", "content": "r"},
                ]
            },
        )
        session = read_transcript(path)
        assert session.format == "chat-completions"
        assert session.report.summary() == (
            "skipped 2: message role wizard ×1 ($.messages[2].role), message without role ×1 "
            "($.messages[3].role); repaired 1: tool call arguments not JSON (kept as text) ×1 "
            "($.messages[4].tool_calls[0].function.arguments)"
        )

    def test_messages_that_only_have_chat_roles_are_chat_even_when_content_is_off(
        self, tmp_path: Path
    ) -> None:
        path = write(tmp_path, {"messages": [{"role": "user", "content": 123}]})
        assert IMPORTER.sniff(path, path.read_bytes()) is True

    @pytest.mark.parametrize(
        "items",
        [
            # half the messages are not chat messages: not enough to say it is one
            [GOOD[1], {"role": "wizard", "content": "?"}],
            [GOOD[1], {"type": "message", "text": "hi"}, {"type": "message", "text": "ok"}],
            # Gemini-style contents: a chat role, but parts instead of content
            [{"role": "user", "parts": [{"text": "hi"}]}, {"role": "model", "parts": []}],
        ],
    )
    def test_mostly_other_records_are_not_chat(self, tmp_path: Path, items: list[Any]) -> None:
        for value in (items, {"messages": items}):
            path = write(tmp_path, value)
            assert IMPORTER.sniff(path, path.read_bytes()) is False
