"""ctxengine's own JSONL (what ``ctxengine export --format jsonl`` writes): sniffing, round
trips through the store and the CLI, and errors naming the line."""

from __future__ import annotations

import json
from pathlib import Path

import orjson
import pytest

from corpus import require_corpus, transcript_files
from ctxengine.cli import main
from ctxengine.errors import TranscriptError
from ctxengine.importers import detect, read_transcript
from ctxengine.importers.base import SNIFF_BYTES
from ctxengine.importers.native import IMPORTER
from ctxengine.model import (
    CompactionRecord,
    Entry,
    Ledgers,
    Message,
    PinRecord,
    PruneRecord,
    TextPart,
)
from ctxengine.model.codec import entry_to_dict
from ctxengine.stores import SQLiteStore
from import_drift import LONE_SURROGATE_ERROR, LONE_SURROGATE_JSON, LONE_SURROGATE_TEXT, tolerated

SMALL = ("claude-code", "spotter-tool-heavy.jsonl")
SMALL_ID = "d6e0bada-1959-4eec-a9d2-0bfade768d8f"


def export_lines(entries: list[Entry] | tuple[Entry, ...]) -> bytes:
    """Exactly what ``ctxengine export --format jsonl`` writes."""
    return b"".join(orjson.dumps(entry_to_dict(e)) + b"\n" for e in entries)


def small_log() -> list[Entry]:
    """The small corpus session plus engine-written records (compaction, prune, pin)."""
    entries = list(read_transcript(require_corpus(*SMALL)).entries)
    last = entries[-1]
    records = (
        CompactionRecord("state", entries[10].id, 3000, 900, "default", "extractive",
                         ledgers=Ledgers(goal="fix it", files_read=("a.py",))),
        PruneRecord(("toolu_1",), 120, "default"),
        PinRecord("keep a.py"),
    )  # fmt: skip
    for i, body in enumerate(records):
        parent = entries[-1].id
        entries.append(Entry(f"rec-{i}", last.session_id, len(entries), body, parent, None))
    return entries


class TestSniff:
    def test_an_export_is_sniffed_as_ctxengine(self, tmp_path: Path) -> None:
        path = tmp_path / "log.jsonl"
        path.write_bytes(export_lines(small_log()))
        assert detect(path).name == "ctxengine"

    def test_a_first_line_longer_than_the_head_is_matched_on_its_start(
        self, tmp_path: Path
    ) -> None:
        big = Entry("e0", "s1", 0, Message("user", (TextPart("x" * (2 * SNIFF_BYTES)),)))
        head = export_lines([big])[:SNIFF_BYTES]
        assert IMPORTER.sniff(tmp_path / "log.jsonl", head) is True
        assert not IMPORTER.sniff(tmp_path / "log.jsonl", head.replace(b'"seq":0', b'"seq":3'))
        assert not IMPORTER.sniff(tmp_path / "log.jsonl", head.replace(b'"id"', b'"uuid"'))

    @pytest.mark.parametrize(
        "line",
        [
            # an extra key
            b'{"id":"e0","session_id":"s","seq":0,"parent_id":null,"created_at":null,'
            b'"body":{"kind":"pin","text":"x"},"extra":1}\n',
            # a body without a known kind
            b'{"id":"e0","session_id":"s","seq":0,"parent_id":null,"created_at":null,'
            b'"body":{"kind":"event"}}\n',
            # not the first entry
            b'{"id":"e5","session_id":"s","seq":5,"parent_id":"e4","created_at":null,'
            b'"body":{"kind":"pin","text":"x"}}\n',
            b"[]\n",
            b"",
        ],
    )
    def test_other_shapes_are_not_sniffed(self, tmp_path: Path, line: bytes) -> None:
        assert IMPORTER.sniff(tmp_path / "x.jsonl", line) is False

    def test_no_corpus_file_is_sniffed_as_ctxengine(self) -> None:
        require_corpus()
        claimed = [
            p.name for p in transcript_files() if IMPORTER.sniff(p, p.read_bytes()[:SNIFF_BYTES])
        ]
        assert claimed == []


class TestRoundTrip:
    def test_reading_an_export_gives_the_same_entries(self, tmp_path: Path) -> None:
        log = small_log()
        path = tmp_path / "log.jsonl"
        path.write_bytes(export_lines(log))
        session = read_transcript(path)
        assert (session.format, session.session_id) == ("ctxengine", SMALL_ID)
        assert list(session.entries) == log
        assert [e.meta for e in session.entries] == [e.meta for e in log]
        assert len(session.entries) == 20
        assert export_lines(session.entries) == path.read_bytes()
        assert session.title == read_transcript(require_corpus(*SMALL)).title

    def test_export_import_export_through_the_cli_is_identical(
        self, capsys: pytest.CaptureFixture[str], tmp_path: Path
    ) -> None:
        log = small_log()
        first_db, second_db = str(tmp_path / "one.db"), str(tmp_path / "two.db")
        with SQLiteStore(first_db) as store:
            store.import_session(read_transcript(require_corpus(*SMALL)))
            assert store.append(SMALL_ID, log[17:]) == 3
        one, two = tmp_path / "one.jsonl", tmp_path / "two.jsonl"
        assert main(["export", SMALL_ID, "--db", first_db, "-o", str(one)]) == 0
        assert main(["import", str(one), "--db", second_db]) == 0
        assert main(["export", SMALL_ID, "--db", second_db, "-o", str(two)]) == 0
        out = " ".join(capsys.readouterr().out.split())
        assert f"{one}: session {SMALL_ID} (ctxengine): 20 entries added, 0 already stored" in out
        assert two.read_bytes() == one.read_bytes() == export_lines(log)
        with SQLiteStore(second_db) as store:
            assert store.entries(SMALL_ID) == log
            info = store.session(SMALL_ID)
        assert (info.format, info.source_path, info.entry_count) == ("ctxengine", str(one), 20)


class TestErrors:
    def error(self, tmp_path: Path, *objects: dict[str, object]) -> str:
        path = tmp_path / "log.jsonl"
        path.write_text("".join(json.dumps(o) + "\n" for o in objects), encoding="utf-8")
        with pytest.raises(TranscriptError) as info:
            IMPORTER.read(path)
        return str(info.value).removeprefix(str(path))

    def entry(self, n: int, **changes: object) -> dict[str, object]:
        base: dict[str, object] = {
            "id": f"e{n}",
            "session_id": "s1",
            "seq": n,
            "parent_id": f"e{n - 1}" if n else None,
            "created_at": None,
            "body": {"kind": "pin", "text": "x"},
        }
        return {**base, **changes}

    def test_a_seq_out_of_order(self, tmp_path: Path) -> None:
        msg = self.error(tmp_path, self.entry(0), self.entry(2))
        assert msg == ":2: expected seq 1, got 2"

    def test_another_session(self, tmp_path: Path) -> None:
        msg = self.error(tmp_path, self.entry(0), self.entry(1, session_id="s2"))
        assert msg == ":2: expected session_id 's1' (the first line's), got 's2'"

    def test_a_repeated_id(self, tmp_path: Path) -> None:
        msg = self.error(tmp_path, self.entry(0), self.entry(1, id="e0"))
        assert msg == ":2: entry id 'e0' occurs twice"

    def test_a_missing_key(self, tmp_path: Path) -> None:
        bad = self.entry(0)
        del bad["created_at"]
        msg = self.error(tmp_path, bad)
        assert msg == (
            ":1: expected a ctxengine entry {id, session_id, seq, parent_id, created_at, "
            "body[, meta]}"
        )

    def test_a_wrongly_typed_field(self, tmp_path: Path) -> None:
        msg = self.error(tmp_path, self.entry(0, seq="0"))
        assert msg == (
            ":1: expected a ctxengine entry {id, session_id, seq, parent_id, created_at, "
            "body[, meta]}: string id and session_id, integer seq, string or null parent_id "
            "and created_at, object meta"
        )

    def test_an_invalid_body(self, tmp_path: Path) -> None:
        bad = self.entry(0, body={"kind": "message", "parts": []})
        msg = self.error(tmp_path, bad)
        assert msg == ":1: expected a valid entry body (KeyError: 'role')"


class TestDrift:
    """An export being written and a lone surrogate are tolerated, refused when strict; an
    entry is never repaired (see :class:`TestErrors`)."""

    def test_partial_last_line(self, tmp_path: Path) -> None:
        log = small_log()
        path = tmp_path / "export.jsonl"
        path.write_bytes(export_lines(log) + b'{"id":"x","session_id":"s')
        session = tolerated(
            path,
            "ctxengine",
            f"skipped 1: partial last line ×1 (line {len(log) + 1})",
            f":{len(log) + 1}: expected a complete JSON object, got a line cut short "
            "(unexpected end of data: line 1 column 26 (char 25))",
        )
        assert session.entries == tuple(log)

    def test_lone_surrogate(self, tmp_path: Path) -> None:
        entry = Entry("e0", "s1", 0, Message("user", (TextPart("SURROGATE"),)))
        line = export_lines([entry]).replace(b"SURROGATE", LONE_SURROGATE_JSON.encode())
        path = tmp_path / "export.jsonl"
        path.write_bytes(line)
        session = tolerated(
            path,
            "ctxengine",
            "repaired 1: lone surrogate ×1 (line 1)",
            f":1: {LONE_SURROGATE_ERROR}",
        )
        message = session.entries[0].message
        assert message is not None and message.text == LONE_SURROGATE_TEXT
