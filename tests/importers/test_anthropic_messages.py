"""Anthropic Messages JSON importer: a realistic conversation, sniffing, errors."""

from __future__ import annotations

import base64
import json
import struct
import zlib
from pathlib import Path
from typing import Any

import pytest

from corpus import require_corpus, transcript_files
from ctxengine.errors import TranscriptError
from ctxengine.importers import detect, read_transcript
from ctxengine.importers.anthropic_messages import IMPORTER
from ctxengine.model import (
    DocumentPart,
    ImagePart,
    Message,
    ReasoningPart,
    TextPart,
    ToolCallPart,
    ToolResultPart,
    Usage,
)
from import_drift import tolerated
from server_tool_history import (
    ENCRYPTED,
    server_tool_conversation,
    write_server_tool_conversation,
)

SIG = "EqMDCkYIBxgCKkD7dGhpbmtpbmcgc2lnbmF0dXJlIGJ5dGVzAAEC/+8=\n"


def png_base64(width: int, height: int) -> str:
    """A PNG signature and IHDR chunk (plus 100 filler bytes), base64: 133 bytes."""
    ihdr = struct.pack(">IIBBBBB", width, height, 8, 6, 0, 0, 0)
    chunk = struct.pack(">I", 13) + b"IHDR" + ihdr + struct.pack(">I", zlib.crc32(b"IHDR" + ihdr))
    return base64.b64encode(b"\x89PNG\r\n\x1a\n" + chunk + b"\x00" * 100).decode()


SHOT = png_base64(1280, 800)


def conversation() -> dict[str, Any]:
    """A saved Messages API conversation: system blocks, image, signed thinking, two
    parallel tool calls, an error result, user text next to tool results, a reused id,
    redacted thinking, a text document and per-reply usage."""
    return {
        "model": "claude-sonnet-4-5",
        "max_tokens": 8192,
        "system": [
            {
                "type": "text",
                "text": "You are a coding agent.",
                "cache_control": {"type": "ephemeral"},
            }
        ],
        "tools": [{"name": "read_file", "input_schema": {"type": "object"}}],
        "messages": [
            {
                "role": "user",
                "content": [
                    {
                        "type": "text",
                        "text": "The login page looks broken, see screenshot. Fix it.",
                    },
                    {
                        "type": "image",
                        "source": {"type": "base64", "media_type": "image/png", "data": SHOT},
                    },
                ],
            },
            {
                "role": "assistant",
                "content": [
                    {
                        "type": "thinking",
                        "thinking": "Check the template and the CSS.",
                        "signature": SIG,
                    },
                    {"type": "text", "text": "I'll read both files."},
                    {
                        "type": "tool_use",
                        "id": "toolu_01",
                        "name": "read_file",
                        "input": {"path": "templates/login.html"},
                    },
                    {
                        "type": "tool_use",
                        "id": "toolu_02",
                        "name": "read_file",
                        "input": {"path": "static/login.css"},
                    },
                ],
                "usage": {
                    "input_tokens": 12,
                    "output_tokens": 140,
                    "cache_read_input_tokens": 2048,
                    "cache_creation_input_tokens": 512,
                },
                "stop_reason": "tool_use",
            },
            {
                "role": "user",
                "content": [
                    {"type": "tool_result", "tool_use_id": "toolu_01", "content": "<form>…</form>"},
                    {
                        "type": "tool_result",
                        "tool_use_id": "toolu_02",
                        "is_error": True,
                        "content": [{"type": "text", "text": "ENOENT: static/login.css"}],
                    },
                    {"type": "text", "text": "The CSS lives in assets/, and don't push."},
                ],
            },
            {
                "role": "assistant",
                "content": [
                    {"type": "redacted_thinking", "data": "EmwKAhgBEgy3"},
                    {
                        "type": "tool_use",
                        "id": "toolu_01",
                        "name": "read_file",
                        "input": {"path": "assets/login.css"},
                    },
                ],
                "stop_reason": "tool_use",
            },
            {
                "role": "user",
                "content": [
                    {
                        "type": "tool_result",
                        "tool_use_id": "toolu_01",
                        "content": [{"type": "text", "text": ".login { display: none }"}],
                    },
                ],
            },
            {
                "role": "user",
                "content": [
                    {
                        "type": "document",
                        "title": "notes.txt",
                        "source": {
                            "type": "text",
                            "media_type": "text/plain",
                            "data": "Keep IDs stable.",
                        },
                    },
                    {"type": "text", "text": "Also read my notes."},
                ],
            },
            {
                "role": "assistant",
                "model": "claude-sonnet-4-5",
                "content": "The form is hidden by CSS; fixed.",
                "usage": {"input_tokens": 30, "output_tokens": 20},
                "stop_reason": "end_turn",
            },
        ],
    }


def write(tmp_path: Path, value: Any) -> Path:
    path = tmp_path / "conversation.json"
    path.write_text(json.dumps(value), encoding="utf-8")
    return path


def messages_of(path: Path) -> list[Message]:
    return [e.body for e in IMPORTER.read(path).entries if isinstance(e.body, Message)]


class TestConversation:
    def test_roles_and_split_of_tool_results_from_user_text(self, tmp_path: Path) -> None:
        path = write(tmp_path, conversation())
        assert detect(path).name == "anthropic-messages"
        msgs = messages_of(path)
        assert [m.role for m in msgs] == [
            "system",
            "user",
            "assistant",
            "tool",
            "user",
            "assistant",
            "tool",
            "user",
            "assistant",
        ]
        assert msgs[4].parts == (TextPart("The CSS lives in assets/, and don't push."),)

    def test_system_blocks_keep_cache_control_in_meta(self, tmp_path: Path) -> None:
        system = messages_of(write(tmp_path, conversation()))[0]
        assert system.parts == (
            TextPart("You are a coding agent.", meta={"cache_control": {"type": "ephemeral"}}),
        )

    def test_image_gets_byte_and_pixel_size(self, tmp_path: Path) -> None:
        image = messages_of(write(tmp_path, conversation()))[1].parts[1]
        assert image == ImagePart("image/png", data=SHOT, byte_size=133, width=1280, height=800)

    def test_thinking_signature_is_byte_exact_and_calls_are_parallel(self, tmp_path: Path) -> None:
        reply = messages_of(write(tmp_path, conversation()))[2]
        assert reply.parts == (
            ReasoningPart("Check the template and the CSS.", signature=SIG),
            TextPart("I'll read both files."),
            ToolCallPart("toolu_01", "read_file", '{"path":"templates/login.html"}'),
            ToolCallPart("toolu_02", "read_file", '{"path":"static/login.css"}'),
        )
        assert reply.usage == Usage(12, 140, 2048, 512)
        assert reply.stop_reason == "tool_use"

    def test_results_pair_with_calls_and_keep_is_error(self, tmp_path: Path) -> None:
        msgs = messages_of(write(tmp_path, conversation()))
        assert msgs[3].parts == (
            ToolResultPart("toolu_01", (TextPart("<form>…</form>"),)),
            ToolResultPart("toolu_02", (TextPart("ENOENT: static/login.css"),), is_error=True),
        )

    def test_reused_id_is_renamed_and_its_result_follows(self, tmp_path: Path) -> None:
        msgs = messages_of(write(tmp_path, conversation()))
        assert msgs[5].parts == (
            ReasoningPart("", signature="EmwKAhgBEgy3", redacted=True),
            ToolCallPart("toolu_01#2", "read_file", '{"path":"assets/login.css"}'),
        )
        assert msgs[6].tool_results[0].call_id == "toolu_01#2"
        assert msgs[6].tool_results[0].text == ".login { display: none }"

    def test_document_string_content_usage_and_session_meta(self, tmp_path: Path) -> None:
        path = write(tmp_path, conversation())
        session = IMPORTER.read(path)
        msgs = [e.body for e in session.entries if isinstance(e.body, Message)]
        assert msgs[7].parts[0] == DocumentPart(
            "text/plain", title="notes.txt", text="Keep IDs stable.", byte_size=16
        )
        last = msgs[8]
        assert (last.text, last.model, last.stop_reason) == (
            "The form is hidden by CSS; fixed.",
            "claude-sonnet-4-5",
            "stop",
        )
        assert last.usage == Usage(30, 20)
        assert session.meta["model"] == "claude-sonnet-4-5"
        assert session.meta["tools"] == [{"name": "read_file", "input_schema": {"type": "object"}}]
        assert session.title == "The login page looks broken, see screenshot. Fix it."
        assert session.session_id.startswith("f:")
        assert len(session.entries) == 9


class TestProviderSideBlocks:
    def test_each_block_becomes_a_text_part_keeping_the_block_and_no_call_is_left_open(
        self, tmp_path: Path
    ) -> None:
        path = write_server_tool_conversation(tmp_path)
        assert detect(path).name == "anthropic-messages"
        msgs = messages_of(path)
        assert [m.role for m in msgs] == [
            "system",
            "user",
            "assistant",
            "tool",
            "assistant",
            "user",
            "assistant",
        ]
        search, code = msgs[2], msgs[4]
        assert [p.text for p in search.parts if isinstance(p, TextPart)] == [
            "I'll look up the v2 migration guide first.",
            '[provider-side tool call] web_search({"query": "storage API v2 migration guide"})',
            "[provider-side tool result: web_search]\n"
            "- Migrating to Storage API v2 <https://docs.example.com/storage/v2/migrate>\n"
            "- Storage API v2 changelog <https://docs.example.com/storage/v2/changelog>",
            "The guide says load() becomes open_store().",
        ]
        assert [p.text for p in code.parts if isinstance(p, TextPart)] == [
            '[provider-side tool call] code_execution({"code": "import ast; '
            'print(len(ast.parse(src).body))"})',
            "[provider-side tool result: code_execution]\nreturn code 0\nstdout:\n1",
            '[provider-side tool call] tracker/get_ticket({"key": "MIG-42"})',
            "[provider-side tool result: tracker/get_ticket]\nMIG-42: migrate module X (open)",
            "[provider-side container upload: file_011CNha8iCJcU1wXNR6q4V8w]",
            "Running the tests before editing.",
        ]
        assert [(c.id, c.name) for m in msgs for c in m.tool_calls] == [
            ("toolu_01", "read_file"),
            ("toolu_02", "run_tests"),
        ]
        original = server_tool_conversation()["messages"]
        assert search.parts[1].meta == {"provider_block": original[1]["content"][1]}
        assert search.parts[2].meta == {"provider_block": original[1]["content"][2]}
        assert search.parts[3].meta["citations"][0]["cited_text"] == (
            "load() is replaced by open_store()"
        )
        assert ENCRYPTED not in search.parts[2].text
        assert code.parts[4].meta == {"provider_block": original[3]["content"][4]}
        assert (search.stop_reason, search.usage) == ("tool_use", Usage(2_100, 310))

    def test_an_error_result_and_a_long_result(self, tmp_path: Path) -> None:
        error = {
            "type": "web_search_tool_result",
            "tool_use_id": "srvtoolu_9",
            "content": {"type": "web_search_tool_result_error", "error_code": "max_uses_exceeded"},
        }
        fetched = {
            "type": "web_fetch_tool_result",
            "tool_use_id": "srvtoolu_8",
            "content": {
                "type": "web_fetch_result",
                "url": "https://example.com/a",
                "content": {
                    "type": "document",
                    "source": {"type": "text", "media_type": "text/plain", "data": "z" * 5_000},
                    "title": "A",
                },
            },
        }
        mcp = {
            "type": "mcp_tool_result",
            "tool_use_id": "mcptoolu_7",
            "is_error": True,
            "content": "ticket not found",
        }
        body = {
            "system": "s",
            "messages": [{"role": "assistant", "content": [error, fetched, mcp]}],
        }
        [_, reply] = messages_of(write(tmp_path, body))
        assert [p.text for p in reply.parts if isinstance(p, TextPart)] == [
            "[provider-side tool result: web_search]\nerror: max_uses_exceeded",
            "[provider-side tool result: web_fetch]\nhttps://example.com/a\nA\n"
            + "z" * (4_000 - len("https://example.com/a\nA\n"))
            + "\n[… 1,024 more characters in the provider block]",
            "[provider-side tool result: mcp (error)]\nticket not found",
        ]


class TestSniff:
    def test_chat_completions_body_is_not_anthropic(self, tmp_path: Path) -> None:
        path = write(tmp_path, {"model": "gpt-4o", "messages": [{"role": "user", "content": "hi"}]})
        assert IMPORTER.sniff(path, path.read_bytes()) is False
        assert detect(path).name == "chat-completions"

    def test_system_and_plain_messages_are_anthropic(self, tmp_path: Path) -> None:
        path = write(
            tmp_path, {"system": "Be brief.", "messages": [{"role": "user", "content": "hi"}]}
        )
        assert IMPORTER.sniff(path, path.read_bytes()) is True

    @pytest.mark.parametrize(
        ("bad", "summary"),
        [
            ({"role": "wizard", "content": "?"}, "message role wizard ×1 ($.messages[3].role)"),
            ({"content": "no role"}, "message without role ×1 ($.messages[3].role)"),
        ],
    )
    def test_one_bad_message_is_skipped_not_read_as_chat_completions(
        self, tmp_path: Path, bad: dict[str, Any], summary: str
    ) -> None:
        use = {"type": "tool_use", "id": "t1", "name": "bash", "input": {"cmd": "ls"}}
        result = {"type": "tool_result", "tool_use_id": "t1", "content": "a.py"}
        messages = [
            {"role": "user", "content": "hi"},
            {"role": "assistant", "content": [use]},
            {"role": "user", "content": [result]},
            bad,
            {"role": "assistant", "content": "done"},
        ]
        path = write(tmp_path, {"messages": messages})
        assert detect(path).name == "anthropic-messages"
        session = read_transcript(path)
        assert session.report.summary() == f"skipped 1: {summary}"
        assert [e.body.role for e in session.entries if isinstance(e.body, Message)] == [
            "user",
            "assistant",
            "tool",
            "assistant",
        ]

    def test_a_chat_completions_role_is_not_anthropic(self, tmp_path: Path) -> None:
        use = {"type": "tool_use", "id": "t1", "name": "bash", "input": {}}
        messages = [
            {"role": "system", "content": "Be brief."},
            {"role": "user", "content": "hi"},
            {"role": "assistant", "content": [use]},
        ]
        path = write(tmp_path, {"messages": messages})
        assert IMPORTER.sniff(path, path.read_bytes()) is False

    def test_mostly_unknown_roles_are_not_anthropic(self, tmp_path: Path) -> None:
        path = write(
            tmp_path,
            {"system": "x", "messages": [{"role": "user", "content": "hi"}, {"role": "bot"}]},
        )
        assert IMPORTER.sniff(path, path.read_bytes()) is False

    def test_no_corpus_file_is_sniffed_as_anthropic(self) -> None:
        require_corpus()
        paths = transcript_files()
        assert [p.name for p in paths if IMPORTER.sniff(p, p.read_bytes()[:65536])] == []


class TestErrors:
    def error(self, tmp_path: Path, messages: list[Any]) -> str:
        path = write(tmp_path, {"system": "s", "messages": messages})
        with pytest.raises(TranscriptError) as info:
            IMPORTER.read(path)
        return str(info.value).removeprefix(f"{path} at ")

    def test_tool_result_in_assistant_message(self, tmp_path: Path) -> None:
        block = {"type": "tool_result", "tool_use_id": "t", "content": "x"}
        msg = self.error(tmp_path, [{"role": "assistant", "content": [block]}])
        assert msg == "$.messages[0].content[0].type: expected tool_result only in user messages"

    @pytest.mark.parametrize("kind", ["server_tool_use", "web_search_tool_result"])
    def test_a_provider_side_block_in_a_user_message(self, tmp_path: Path, kind: str) -> None:
        block = {"type": kind, "id": "srvtoolu_1", "tool_use_id": "srvtoolu_1", "content": []}
        msg = self.error(tmp_path, [{"role": "user", "content": [block]}])
        assert msg == f"$.messages[0].content[0].type: expected {kind} only in assistant messages"

    def test_image_with_unknown_source(self, tmp_path: Path) -> None:
        block = {"type": "image", "source": {"type": "file", "file_id": "f1"}}
        msg = self.error(tmp_path, [{"role": "user", "content": [block]}])
        expected = "expected an image source of type base64 or url"
        assert msg == f"$.messages[0].content[0].source.type: {expected}"


def anthropic(tmp_path: Path, messages: list[Any]) -> Path:
    return write(tmp_path, {"system": "s", "messages": messages})


class TestDrift:
    """Each drift is tolerated with an exact report, and refused at its JSON path when
    strict."""

    def test_system_role_inside_messages(self, tmp_path: Path) -> None:
        path = anthropic(
            tmp_path, [{"role": "system", "content": "x"}, {"role": "user", "content": "u"}]
        )
        session = tolerated(
            path,
            "anthropic-messages",
            "skipped 1: message role system ×1 ($.messages[0].role)",
            ' at $.messages[0].role: expected "user" or "assistant"',
        )
        assert [e.message.role for e in session.entries if e.message] == ["system", "user"]

    def test_unknown_block_type(self, tmp_path: Path) -> None:
        content = [{"type": "audio", "data": ""}, {"type": "text", "text": "hi"}]
        session = tolerated(
            anthropic(tmp_path, [{"role": "user", "content": content}]),
            "anthropic-messages",
            "skipped 1: block:audio ×1 ($.messages[0].content[0].type)",
            " at $.messages[0].content[0].type: expected one of text, image, document, thinking, "
            "redacted_thinking, tool_use, tool_result, compaction or a provider-side tool block "
            "(server_tool_use, mcp_tool_use, *_tool_result, container_upload); got 'audio'",
        )
        assert session.entries[1].message is not None
        assert session.entries[1].message.text == "hi"

    def test_tool_use_without_id_pairs_with_the_result_without_id(self, tmp_path: Path) -> None:
        messages = [
            {"role": "user", "content": "go"},
            {"role": "assistant", "content": [{"type": "tool_use", "name": "ls", "input": {}}]},
            {"role": "user", "content": [{"type": "tool_result", "content": "a b"}]},
        ]
        session = tolerated(
            anthropic(tmp_path, messages),
            "anthropic-messages",
            "repaired 2: tool_use block without id ×1 ($.messages[1].content[0].id), "
            "tool_result block without call id ×1 ($.messages[2].content[0].tool_use_id)",
            " at $.messages[1].content[0].id: expected a string `id` on a tool_use block",
        )
        tool = session.entries[3].message
        assert tool is not None and [(r.call_id, r.text) for r in tool.tool_results] == [
            ("call_gen_1", "a b")
        ]

    def test_null_input(self, tmp_path: Path) -> None:
        block = {"type": "tool_use", "id": "t1", "name": "ls", "input": None}
        session = tolerated(
            anthropic(
                tmp_path,
                [{"role": "user", "content": "go"}, {"role": "assistant", "content": [block]}],
            ),
            "anthropic-messages",
            "repaired 1: null arguments ×1 ($.messages[1].content[0].input)",
            " at $.messages[1].content[0].input: expected tool-call arguments, got null",
        )
        msg = session.entries[2].message
        assert msg is not None and msg.tool_calls[0].arguments == "{}"

    def test_structured_output(self, tmp_path: Path) -> None:
        messages = [
            {"role": "user", "content": "go"},
            {
                "role": "assistant",
                "content": [{"type": "tool_use", "id": "t1", "name": "ls", "input": {}}],
            },
            {
                "role": "user",
                "content": [
                    {
                        "type": "tool_result",
                        "tool_use_id": "t1",
                        "content": {"type": "text", "text": "x"},
                    }
                ],
            },
        ]
        session = tolerated(
            anthropic(tmp_path, messages),
            "anthropic-messages",
            "repaired 1: structured content ×1 ($.messages[2].content[0].content)",
            " at $.messages[2].content[0].content: expected `content` to be a string or a list "
            "of blocks, got one block object",
        )
        tool = session.entries[3].message
        assert tool is not None and tool.tool_results[0].text == "x"
