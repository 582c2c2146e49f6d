"""Recognised but not yet importable formats fail with a clear error naming the format."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from corpus import CORPUS, require_corpus
from ctxengine.errors import TranscriptError, UnsupportedFormatError
from ctxengine.importers import read_transcript
from ctxengine.importers.base import SNIFF_BYTES
from ctxengine.importers.unsupported import (
    AIDER,
    GEMINI_CLI,
    IMPORTER,
    OPENCODE,
    OPENHANDS,
)

CASES = (
    ("openhands", "openhands-multi-swe-bench-ponyc-3runs.jsonl", OPENHANDS),
    ("openhands", "openhands-resolver-mock-output.jsonl", OPENHANDS),
    ("openhands", "openhands-traj-basic.json", OPENHANDS),
    ("openhands", "openhands-traj-vue-todo-gui.json", OPENHANDS),
    ("gemini-cli", "gemini-cli-chat-share-2025-11-05.md", GEMINI_CLI),
    ("gemini-cli", "gemini-cli-chat-share-2025-11-17.md", GEMINI_CLI),
    ("gemini-cli", "go-ai-agent-chat-share-long-2025-11-09.md", GEMINI_CLI),
    ("aider", "aider-dev-chat-history-first-sessions.aider.chat.history.md", AIDER),
    ("aider", "aider-dev-chat-history-full.aider.chat.history.md", AIDER),
)


class TestCorpus:
    @pytest.mark.parametrize(("folder", "name", "format_name"), CASES)
    def test_read_transcript_names_the_unsupported_format(
        self, folder: str, name: str, format_name: str
    ) -> None:
        path = require_corpus(folder, name)
        with pytest.raises(UnsupportedFormatError) as info:
            read_transcript(path)
        assert info.value.format_name == format_name
        assert str(info.value) == f"{path}: format not supported yet: {format_name}"

    def test_every_file_of_those_folders_is_covered(self) -> None:
        require_corpus()
        listed = {(folder, name) for folder, name, _ in CASES}
        on_disk = {
            (p.parent.name, p.name)
            for folder in ("openhands", "gemini-cli", "aider")
            for p in (CORPUS / folder).iterdir()
        }
        assert on_disk == listed

    @pytest.mark.parametrize("folder", ["claude-code", "codex", "pi"])
    def test_supported_agent_logs_are_not_claimed(self, folder: str) -> None:
        for path in sorted(require_corpus(folder).iterdir()):
            head = path.read_bytes()[:SNIFF_BYTES]
            assert IMPORTER.sniff(path, head) is False, path.name


class TestOpenCode:
    def test_session_info_file(self, tmp_path: Path) -> None:
        path = tmp_path / "ses_4b1a2c3d.json"
        info = {
            "id": "ses_4b1a2c3d",
            "version": "1.0.0",
            "projectID": "p1",
            "directory": "/w",
            "title": "Fix the build",
            "time": {"created": 1, "updated": 2},
        }
        path.write_text(json.dumps(info), encoding="utf-8")
        with pytest.raises(UnsupportedFormatError) as info_err:
            read_transcript(path)
        assert info_err.value.format_name == OPENCODE

    def test_message_file(self, tmp_path: Path) -> None:
        path = tmp_path / "msg_01.json"
        msg = {
            "id": "msg_01ab",
            "sessionID": "ses_4b1a2c3d",
            "role": "assistant",
            "time": {"created": 1},
        }
        path.write_text(json.dumps(msg, indent=2), encoding="utf-8")
        with pytest.raises(UnsupportedFormatError) as info:
            read_transcript(path)
        assert info.value.format_name == OPENCODE


class TestForced:
    def test_other_file_forced_to_unsupported_says_what_was_expected(self, tmp_path: Path) -> None:
        path = tmp_path / "notes.txt"
        path.write_text("just some notes\n", encoding="utf-8")
        with pytest.raises(TranscriptError) as info:
            IMPORTER.read(path)
        assert not isinstance(info.value, UnsupportedFormatError)
        assert str(info.value) == (
            f"{path}: expected one of: OpenHands events, Gemini CLI chat share (Markdown), "
            "aider chat history (Markdown), OpenCode storage JSON, "
            "Antigravity trajectory steps (tool steps name no call, so tool exchanges cannot "
            "be rebuilt), Antigravity brain artifact (Markdown notes, not a conversation), "
            "Grok session summary (metadata only; import chat_history.jsonl beside it), "
            "Kimi Code session state (metadata only; import the agents' JSONL logs)"
        )
