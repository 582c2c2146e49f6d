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
from ctxengine.importers import _refusals as refused
from ctxengine.importers import detect, formats, read_transcript, unsupported
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
            "Kimi Code session state (metadata only; import the agents' JSONL logs), "
            f"{refused.CODEX_EXEC}, {refused.CLAUDE_SUBAGENT_META}, "
            f"{refused.OPENCODE_STORAGE_FILE}, {refused.REQUEST_LOG}"
        )


#: Corpus files refused on purpose, by path under the corpus, and what the refusal names.
REFUSED = {
    "live-agents/codex-0.169.0/exec-json.jsonl": refused.CODEX_EXEC,
    "live-agents/claude-code-2.1.328/session/subagents/agent-a73f6f8bdab2fbcaf.meta.json": (
        refused.CLAUDE_SUBAGENT_META
    ),
    "format-fixtures/claude/subagent/0a1b2c3d-4e5f-4061-8071-2a3b4c5d6e7f/subagents/"
    "agent-a0ad4f44468bdf20d.meta.json": refused.CLAUDE_SUBAGENT_META,
    "format-fixtures/opencode/storage_v2/migration": refused.OPENCODE_STORAGE_FILE,
    "live-agents/claude-code-2.1.328/model-requests.jsonl": refused.REQUEST_LOG,
    "live-agents/codex-0.169.0/model-requests.jsonl": refused.REQUEST_LOG,
}


class TestRefusedCorpusFiles:
    @pytest.mark.parametrize("rel", sorted(REFUSED))
    def test_each_is_refused_naming_what_it_is(self, rel: str) -> None:
        path = require_corpus(*rel.split("/"))
        with pytest.raises(UnsupportedFormatError) as info:
            read_transcript(path)
        assert info.value.format_name == REFUSED[rel]

    def test_the_20_opencode_message_and_part_files_name_the_storage_folder(self) -> None:
        root = require_corpus("format-fixtures", "opencode", "storage_v2")
        pieces = sorted([*root.glob("message/*/*.json"), *root.glob("part/*/*.json")])
        assert len(pieces) == 20
        for path in pieces:
            with pytest.raises(UnsupportedFormatError) as info:
                read_transcript(path)
            assert str(info.value) == (
                f"{path}: format not supported yet: an OpenCode storage file (one message, "
                "part or marker of a JSON storage folder; point at the storage folder)"
            )
        assert detect(root).name == "opencode"

    def test_no_corpus_file_is_left_unrecognised(self) -> None:
        """Every corpus file imports or is refused naming what it looks like."""
        root = require_corpus()
        unnamed = []
        for path in sorted(p for p in root.rglob("*") if p.is_file()):
            if path.name in ("SOURCES.md", "LICENSE"):
                continue
            try:
                read_transcript(path)
            except TranscriptError as exc:
                if "unrecognised transcript format" in str(exc):
                    unnamed.append((str(path.relative_to(root)), str(exc).split(": ", 2)[2]))
        # a tool output Claude Code saved beside the session: plain text, named as such
        assert unnamed == [
            (
                "live-agents/claude-code-2.1.328/session/tool-results/bfqtef09m.txt",
                "text (first line: '1400 readings from 6 sensors') (known: "
                + ", ".join(formats())
                + ")",
            )
        ]


CONVERT = "text (transcripts are read as UTF-8: convert it, e.g. with iconv)"


class TestWhatAFileLooksLike:
    @pytest.mark.parametrize(
        ("content", "named"),
        [
            (b"", "an empty file"),
            (b"  \n", "an empty file"),
            (b'{"a": 1, "b": [2]}', "a JSON object (keys: a, b)"),
            (b'{"a": 1}\n{"a": 2}\n', "JSON lines (first record's keys: a)"),
            (b"[1, 2]", "a JSON array"),
            (b"\x00\x01binary", "binary data"),
            ('{"type": "user"}\n'.encode("utf-16"), f"UTF-16 (little-endian) {CONVERT}"),
            ('{"type": "user"}\n'.encode("utf-16-be"), f"UTF-16 (big-endian) {CONVERT}"),
            ('{"type": "user"}\n'.encode("utf-32"), f"UTF-32 (little-endian) {CONVERT}"),
            (b"hello there\nsecond", "text (first line: 'hello there')"),
        ],
    )
    def test_an_unrecognised_file_is_described(
        self, tmp_path: Path, content: bytes, named: str
    ) -> None:
        path = tmp_path / "x.dat"
        path.write_bytes(content)
        with pytest.raises(TranscriptError) as info:
            read_transcript(path)
        assert str(info.value) == (
            f"{path}: unrecognised transcript format: {named} (known: {', '.join(formats())})"
        )


class TestCutDocuments:
    """A JSON transcript cut short (a live one being written) names the format its start
    looks like."""

    @pytest.mark.parametrize(
        ("rel", "label", "where"),
        [
            (("swe-agent", "swe-agent-pydicom-1458-gpt4.traj"), "a SWE-agent trajectory", 3000),
            (
                ("openhands", "openhands-traj-vue-todo-gui.json"),
                "an OpenHands event stream",
                1500,
            ),
        ],
    )
    def test_a_cut_document_names_its_format(
        self, tmp_path: Path, rel: tuple[str, str], label: str, where: int
    ) -> None:
        cut = tmp_path / rel[1]
        cut.write_bytes(require_corpus(*rel).read_bytes()[:where])
        with pytest.raises(TranscriptError) as info:
            read_transcript(cut)
        text = str(info.value)
        assert text.startswith(f"{cut}: looks like {label}, but it is not valid JSON ")
        assert "unexpected end of data: " in text and f"(char {where})" in text
        with pytest.raises(TranscriptError) as forced:
            read_transcript(cut, detect(cut).name)
        assert str(forced.value).startswith(f"{cut}: read as {label}, but it is not valid JSON")

    def test_a_claude_code_file_with_only_a_snapshot_is_named(self, tmp_path: Path) -> None:
        path = tmp_path / "s.jsonl"
        path.write_text(
            '{"type":"file-history-snapshot","messageId":"m1","snapshot":{"messageId":"m1",'
            '"trackedFileBackups":{}},"isSnapshotUpdate":false}\n',
            encoding="utf-8",
        )
        with pytest.raises(TranscriptError) as info:
            read_transcript(path)
        assert str(info.value) == (
            f"{path}: looks like a Claude Code session, but no message could be read from it "
            "(ignored 1: file-history-snapshot ×1)"
        )
