"""Recognised but not yet importable formats fail with a clear error naming the format.

The formats once listed here for OpenHands events, Gemini CLI chat shares, aider histories
and OpenCode storage now import; the files refused on purpose remain
(:mod:`ctxengine.importers._refusals`). The mechanism is also checked with a format listed
for the test."""

from __future__ import annotations

from pathlib import Path

import pytest

from corpus import require_corpus
from ctxengine.errors import TranscriptError, UnsupportedFormatError
from ctxengine.importers import detect, read_transcript, unsupported
from ctxengine.importers.base import SNIFF_BYTES
from ctxengine.importers.unsupported import IMPORTER

#: The corpus folders whose files were recognised here, and the importer that reads them.
NOW_IMPORTED = {"openhands": "openhands", "gemini-cli": "gemini-cli", "aider": "aider"}


def _hologram(path: Path, head: bytes) -> bool:
    return head.startswith(b"HOLOGRAM")


class TestListedFormat:
    @pytest.fixture(autouse=True)
    def _listed(self, monkeypatch: pytest.MonkeyPatch) -> None:
        monkeypatch.setattr(unsupported, "FORMATS", (("Hologram log", _hologram),))

    def test_read_transcript_names_the_unsupported_format(self, tmp_path: Path) -> None:
        path = tmp_path / "a.log"
        path.write_bytes(b"HOLOGRAM v1\n")
        with pytest.raises(UnsupportedFormatError) as info:
            read_transcript(path)
        assert info.value.format_name == "Hologram log"
        assert str(info.value) == f"{path}: format not supported yet: Hologram log"


class TestCorpus:
    @pytest.mark.parametrize("folder", sorted(NOW_IMPORTED))
    def test_formerly_recognised_corpus_files_now_have_an_importer(self, folder: str) -> None:
        for path in sorted(require_corpus(folder).iterdir()):
            assert IMPORTER.sniff(path, path.read_bytes()[:SNIFF_BYTES]) is False, path.name
            assert detect(path).name == NOW_IMPORTED[folder], path.name

    @pytest.mark.parametrize("folder", ["claude-code", "codex", "pi"])
    def test_supported_agent_logs_are_not_claimed(self, folder: str) -> None:
        for path in sorted(require_corpus(folder).iterdir()):
            head = path.read_bytes()[:SNIFF_BYTES]
            assert IMPORTER.sniff(path, head) is False, path.name


class TestForced:
    def test_other_file_forced_to_unsupported_says_what_was_expected(self, tmp_path: Path) -> None:
        path = tmp_path / "notes.txt"
        path.write_text("just some notes\n", encoding="utf-8")
        with pytest.raises(TranscriptError) as info:
            IMPORTER.read(path)
        assert not isinstance(info.value, UnsupportedFormatError)
        assert str(info.value) == (
            f"{path}: expected one of: "
            "Antigravity trajectory steps (tool steps name no call, so tool exchanges cannot "
            "be rebuilt), Antigravity brain artifact (Markdown notes, not a conversation), "
            "Grok session summary (metadata only; import chat_history.jsonl beside it), "
            "Kimi Code session state (metadata only; import the agents' JSONL logs)"
        )
