"""The registry: formats a user can choose, files without messages, byte order marks, and
JSON too deep or integers too long for Python."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from corpus import require_corpus
from ctxengine.errors import ConfigError, TranscriptError, UnknownFormat, UnsupportedFormatError
from ctxengine.importers import IMPORTERS, detect, get_importer, read_transcript
from ctxengine.importers._lines import after_bad_lines
from ctxengine.importers.registry import _load, formats

KNOWN = (
    "ctxengine, qwen, gemini-cli, claude-code, claude-code-stream, codex, openclaw, pi, "
    "swe-agent, copilot, cursor, kimi, droid, grok, hermes, cline, roo-code, openhands, "
    "opencode, aider, anthropic-messages, chat-completions"
)
CHAT = [{"role": "user", "content": "fix the build"}, {"role": "assistant", "content": "ok"}]


def error_of(path: Path, format: str | None = None, *, strict: bool = False) -> TranscriptError:
    with pytest.raises(TranscriptError) as info:
        read_transcript(path, format, strict=strict)
    return info.value


class TestFormats:
    def test_the_native_importer_is_sniffed_first(self) -> None:
        assert IMPORTERS[0].name == "ctxengine"
        assert ", ".join(formats()) == KNOWN

    def test_unsupported_is_not_a_format_a_user_can_choose(self) -> None:
        with pytest.raises(UnknownFormat) as info:
            get_importer("unsupported")
        assert str(info.value) == f"unknown format 'unsupported'; known formats: {KNOWN}"

    def test_an_unknown_format_is_a_config_error_that_lists_the_choosable_ones(self) -> None:
        with pytest.raises(ConfigError) as info:
            read_transcript("whatever.jsonl", "hologram")
        assert isinstance(info.value, UnknownFormat)
        assert (info.value.name, ", ".join(info.value.known)) == ("hologram", KNOWN)
        assert str(info.value) == f"unknown format 'hologram'; known formats: {KNOWN}"

    def test_a_listed_importer_module_that_is_missing_fails_loudly(self) -> None:
        missing = "ctxengine.importers.renamed_away"
        with pytest.raises(ImportError) as info:
            _load(("ctxengine.importers.native", missing))
        assert str(info.value) == (
            f"importer module '{missing}' listed in ctxengine.importers.registry._MODULES "
            "does not exist (renamed or deleted?)"
        )

    def test_a_module_missing_below_a_listed_one_is_not_reworded(self) -> None:
        with pytest.raises(ModuleNotFoundError) as info:
            _load(("ctxengine.no_such_package.importer",))
        assert info.value.name == "ctxengine.no_such_package"

    def test_an_unrecognised_file_lists_them_too(self, tmp_path: Path) -> None:
        path = tmp_path / "notes.txt"
        path.write_text("just notes\n", encoding="utf-8")
        assert str(error_of(path)) == (
            f"{path}: unrecognised transcript format: text (first line: 'just notes') "
            f"(known: {KNOWN})"
        )


class TestNothingUsable:
    def test_an_empty_file_forced_as_claude_code(self, tmp_path: Path) -> None:
        path = tmp_path / "empty.jsonl"
        path.write_bytes(b"")
        err = error_of(path, "claude-code")
        assert str(err) == (
            f"{path}: read as a Claude Code session, but no message could be read from it "
            "(it is empty)"
        )
        assert (err.path, err.line, err.json_path) == (str(path), None, None)

    def test_a_codex_file_forced_as_claude_code_names_what_it_skipped(self) -> None:
        path = require_corpus("codex", "codex-cpolar-connect-2025-09-16-a.jsonl")
        assert str(error_of(path, "claude-code")) == (
            f"{path}: read as a Claude Code session, but no message could be read from it "
            "(skipped 326: record:session_meta ×1 (line 1), record:response_item ×150 "
            "(line 2), record:event_msg ×118 (line 4), record:turn_context ×57 (line 5))"
        )

    def test_strict_stops_at_the_first_line_it_cannot_read(self) -> None:
        path = require_corpus("codex", "codex-cpolar-connect-2025-09-16-a.jsonl")
        err = error_of(path, "claude-code", strict=True)
        assert (err.line, err.expected) == (
            1,
            "expected a Claude Code record type (user, assistant, attachment, system …), "
            "got 'session_meta'",
        )

    def test_a_sniffed_rollout_without_messages_looks_like_one(self, tmp_path: Path) -> None:
        path = tmp_path / "rollout.jsonl"
        lines = [
            {"type": "session_meta", "payload": {"id": "s1"}},
            {"type": "event_msg", "payload": {"type": "token_count"}},
            {"type": "response_item", "payload": {"type": "future_item"}},
        ]
        path.write_text("".join(json.dumps(x) + "\n" for x in lines), encoding="utf-8")
        assert str(error_of(path)) == (
            f"{path}: looks like a Codex rollout, but no message could be read from it "
            "(skipped 1: response_item:future_item ×1 (line 3); ignored 1: "
            "event_msg:token_count ×1)"
        )

    @pytest.mark.parametrize(
        ("name", "format", "data", "label"),
        [
            ("empty.json", "chat-completions", b"[]", "a chat-completions message list"),
            ("only-records.jsonl", "ctxengine", b"", "a ctxengine export"),
        ],
    )
    def test_other_formats_say_the_same(
        self, tmp_path: Path, name: str, format: str, data: bytes, label: str
    ) -> None:
        path = tmp_path / name
        path.write_bytes(data)
        assert str(error_of(path, format)) == (
            f"{path}: read as {label}, but no message could be read from it (it is empty)"
        )


class TestByteOrderMark:
    def test_a_jsonl_file_with_a_bom_imports_like_without(self, tmp_path: Path) -> None:
        source = require_corpus("claude-code", "spotter-short.jsonl")
        path = tmp_path / "bom.jsonl"
        path.write_bytes(b"\xef\xbb\xbf" + source.read_bytes())
        assert detect(path).name == "claude-code"
        with_bom, plain = read_transcript(path), read_transcript(source)
        assert with_bom.session_id == plain.session_id == "55604662-cf2a-4331-851a-ec234028f8ca"
        assert with_bom.entries == plain.entries
        assert len(with_bom.entries) == 5

    def test_a_json_file_with_a_bom_is_sniffed_and_read(self, tmp_path: Path) -> None:
        path = tmp_path / "chat.json"
        path.write_bytes(b"\xef\xbb\xbf" + json.dumps(CHAT).encode())
        session = read_transcript(path)
        assert session.format == "chat-completions"
        assert [e.message.text for e in session.entries if e.message] == ["fix the build", "ok"]


def codex_rollout(output: str) -> str:
    records: list[dict[str, Any]] = [
        {"type": "session_meta", "payload": {"id": "sess-1", "cwd": "/w"}},
        {
            "type": "response_item",
            "payload": {"type": "message", "role": "user", "content": [
                {"type": "input_text", "text": "run it"}
            ]},
        },
        {
            "type": "response_item",
            "payload": {"type": "function_call", "name": "shell", "arguments": "{}",
                        "call_id": "c1"},
        },
        {
            "type": "response_item",
            "payload": {"type": "function_call_output", "call_id": "c1", "output": output},
        },
    ]  # fmt: skip
    return "".join(json.dumps(r) + "\n" for r in records)


class TestTooComplex:
    def test_deeply_nested_json_is_not_recognised_instead_of_crashing(self, tmp_path: Path) -> None:
        path = tmp_path / "deep.json"
        path.write_text("[" * 100_000 + "]" * 100_000, encoding="utf-8")
        assert str(error_of(path)) == (
            f"{path}: unrecognised transcript format: a JSON array (known: {KNOWN})"
        )

    def test_deeply_nested_json_forced_names_the_depth_limit(self, tmp_path: Path) -> None:
        path = tmp_path / "deep.json"
        path.write_text("[" * 100_000 + "]" * 100_000, encoding="utf-8")
        assert str(error_of(path, "chat-completions")) == (
            f"{path}: read as a chat-completions message list, but it is not valid JSON "
            "(depth limit exceeded: line 1 column 1026 (char 1025))"
        )

    def test_a_deep_value_inside_messages_is_a_transcript_error(self, tmp_path: Path) -> None:
        path = tmp_path / "chat.json"
        deep = "[" * 1000 + "]" * 1000
        path.write_text(
            '{"messages": [{"role": "user", "content": "hi", "x": ' + deep + "}]}",
            encoding="utf-8",
        )
        err = error_of(path)
        assert str(err) == f"{path}: expected JSON nested less deeply (too deep to process)"

    def test_a_deep_tool_input_names_the_file(self, tmp_path: Path) -> None:
        user = {
            "type": "user",
            "sessionId": "s-1",
            "uuid": "u1",
            "parentUuid": None,
            "message": {"role": "user", "content": "hi"},
        }
        reply = {
            "type": "assistant", "sessionId": "s-1", "uuid": "a1", "parentUuid": "u1",
            "message": {"id": "m1", "role": "assistant", "content": [
                {"type": "tool_use", "id": "t1", "name": "Bash", "input": {"x": "DEEP"}}
            ]},
        }  # fmt: skip
        line = json.dumps(reply).replace('"DEEP"', "[" * 300 + "]" * 300)
        path = tmp_path / "deep.jsonl"
        path.write_text(json.dumps(user) + "\n" + line + "\n", encoding="utf-8")
        assert detect(path).name == "claude-code"
        assert str(error_of(path)) == (
            f"{path}: expected JSON nested less deeply (too deep to process)"
        )

    def test_an_integer_too_long_for_python_names_the_file_and_line(self, tmp_path: Path) -> None:
        path = tmp_path / "rollout.jsonl"
        path.write_text(codex_rollout("Exit code: " + "9" * 5000 + "\nboom"), encoding="utf-8")
        err = error_of(path)
        assert (err.path, err.line) == (str(path), 4)
        assert str(err) == (
            f"{path}:4: expected shorter integers (Exceeds the limit (4300 digits) for "
            "integer string conversion: value has 5000 digits)"
        )

    def test_an_integer_too_long_in_a_json_head_is_not_a_crash(self, tmp_path: Path) -> None:
        path = tmp_path / "chat.json"
        path.write_text(
            '{"messages": [{"role": "user", "content": "hi", "n": ' + "9" * 5000 + "}]}",
            encoding="utf-8",
        )
        assert str(error_of(path)) == (
            f"{path}: looks like a chat-completions message list, but it is not valid JSON "
            "(number is infinity when parsed as double: line 1 column 54 (char 53))"
        )


class TestBadFirstLines:
    """JSON lines whose first lines are torn, text or of no known shape are still sniffed
    by the records after them; the importer skips and counts those lines."""

    def test_after_bad_lines_finds_the_records(self) -> None:
        rec = b'{"type": "x"}'
        assert after_bad_lines(b"text\n" + rec + b"\n" + rec + b"\n") == rec + b"\n" + rec + b"\n"
        assert after_bad_lines(b'{"torn": \n[1]\n' + rec + b"\n") == rec + b"\n"
        assert after_bad_lines(b"a\nb\nc\n" + rec + b"\n") == rec + b"\n"
        assert after_bad_lines(b"a\nb\nc\nd\n" + rec + b"\n") is None  # at most 3 lines
        assert after_bad_lines(b"no newline " + rec) is None

    @pytest.mark.parametrize(
        "doc",
        [
            [{"role": "user", "content": "a"}, {"role": "user", "content": "b"}],
            {"messages": [{"role": "user", "content": "a"}, {"role": "user", "content": "b"}]},
            {"a": {"b": 1}},
        ],
    )
    def test_a_pretty_printed_document_is_never_cut(self, doc: Any) -> None:
        for indent in (None, 2):
            text = json.dumps(doc, indent=indent)
            lined = text.replace("}, {", "},\n{").encode()  # one element a line
            assert after_bad_lines(lined) is None
            assert after_bad_lines(text.encode()) is None

    @pytest.mark.parametrize(
        ("first", "kind"),
        [(b"Script started on 2026-01-01", "invalid JSON line"), (b"[1, 2]", "non-object line")],
    )
    @pytest.mark.parametrize(
        ("folder", "name", "fmt"),
        [
            ("codex", "codex-cpolar-connect-2025-09-16-a.jsonl", "codex"),
            ("pi", "pi-mono-before-compaction.jsonl", "pi"),
            ("format-fixtures", "copilot/large.jsonl", "copilot"),
        ],
    )
    def test_a_line_before_the_records(
        self, tmp_path: Path, first: bytes, kind: str, folder: str, name: str, fmt: str
    ) -> None:
        source = require_corpus(folder, *name.split("/"))
        path = tmp_path / "prefixed.jsonl"
        path.write_bytes(first + b"\n" + source.read_bytes())
        assert detect(path).name == fmt
        session = read_transcript(path)
        original = read_transcript(source)
        skipped = session.report.of("skipped")
        assert [(i.kind, i.count, i.where()) for i in skipped[:1]] == [(kind, 1, "line 1")]
        assert len(skipped) == len(original.report.of("skipped")) + 1
        assert [e.body for e in session.entries] == [e.body for e in original.entries]

    def test_gemini_recording_after_a_line_of_text(self, tmp_path: Path) -> None:
        source = require_corpus("format-fixtures", "gemini", "jsonl_v040.jsonl")
        path = tmp_path / "prefixed.jsonl"
        path.write_bytes(b"log start\n" + source.read_bytes())
        session = read_transcript(path)
        assert session.format == "gemini-cli"
        assert session.report.summary().startswith("skipped 1: invalid JSON line ×1 (line 1)")
        assert [e.body for e in session.entries] == [
            e.body for e in read_transcript(source).entries
        ]

    def test_an_unsupported_format_after_a_line_of_text_is_named(self, tmp_path: Path) -> None:
        source = require_corpus("live-agents", "codex-0.169.0", "exec-json.jsonl")
        path = tmp_path / "prefixed.jsonl"
        path.write_bytes(b"log start\n" + source.read_bytes())
        with pytest.raises(UnsupportedFormatError) as info:
            read_transcript(path)
        assert str(info.value).startswith(
            f"{path}: format not supported yet: codex exec --json output (events summarising"
        )
