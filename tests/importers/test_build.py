"""Shared importer helpers read from bytes already in memory exactly as from the file, the
importers' entry-id hash is the codec's, and the one-pass body bytes the store writes are the
codec's dict serialised."""

from __future__ import annotations

from hashlib import blake2b
from pathlib import Path

import orjson
import pytest

from corpus import CORPUS, fixture_files, live_agent_files, transcript_files
from ctxengine.errors import TranscriptError
from ctxengine.importers import read_transcript
from ctxengine.importers._build import LogBuilder, body_hash, iter_jsonl, load_json
from ctxengine.importers._lines import iter_objects
from ctxengine.importers.report import ImportReport
from ctxengine.model import (
    CompactionRecord,
    DocumentPart,
    ImagePart,
    Ledgers,
    Message,
    NativeCompactionPart,
    PinRecord,
    PruneRecord,
    ReasoningPart,
    TextPart,
    ToolCallPart,
    ToolResultPart,
    Usage,
)
from ctxengine.model.codec import body_hash as codec_body_hash
from ctxengine.model.codec import body_json, body_to_dict
from ctxengine.model.entries import Body

BODIES: list[Body] = [
    Message("user", (TextPart("hi"),)),
    Message("user", (TextPart("hi", meta={"cache": {"ttl": 5}}),), meta={"synthetic": "x"}),
    Message(
        "assistant",
        (
            ReasoningPart("think", signature="sig", meta={"provider": "p"}),
            ReasoningPart("", redacted=True),
            TextPart(""),
            ToolCallPart("c1", "read", '{"path": "a.py"}', meta={"type": "custom"}),
        ),
        usage=Usage(10, 5, 100, 7),
        model="m",
        stop_reason="tool_use",
        meta={"response_id": "r", "list": [1, {"b": 2, "a": None}]},
    ),
    Message(
        "tool",
        (
            ToolResultPart(
                "c1",
                (
                    TextPart("ok"),
                    ImagePart("image/png", data="AAAA", width=10, height=20),
                    DocumentPart("application/pdf", title="t", data="QUFB", byte_size=3),
                ),
                is_error=True,
                name="read",
            ),
        ),
    ),
    Message("assistant", (NativeCompactionPart("openai", "blob"),)),
    CompactionRecord(
        "state",
        "e5",
        1000,
        200,
        "default",
        "extractive",
        ledgers=Ledgers(goal="g", files_modified=("a.py",), constraints=("never x",)),
    ),
    CompactionRecord("s", None, 0, 0, "openhands", "imported", reason="imported"),
    PruneRecord(("c1", "c2"), 40, "default"),
    PinRecord("keep"),
]


class TestBodyHash:
    @pytest.mark.parametrize("parent", [None, "p", "b2:00"])
    def test_every_kind_of_body_gets_the_codec_hash(self, parent: str | None) -> None:
        for body in BODIES:
            assert body_hash(body, parent) == codec_body_hash(body, parent), body

    def test_every_corpus_entry_gets_the_codec_hash(self) -> None:
        if not CORPUS.exists():
            pytest.skip("corpus missing")
        checked = 0
        for path in [*transcript_files(), *fixture_files(), *live_agent_files()]:
            try:
                session = read_transcript(path)
            except TranscriptError:  # formats without an importer, files refused as a whole
                continue
            for entry in session.entries:
                assert body_hash(entry.body, entry.parent_id) == codec_body_hash(
                    entry.body, entry.parent_id
                ), (path, entry.seq)
                checked += 1
        assert checked > 8_000


class TestBodyJson:
    def test_every_kind_of_body_is_written_as_its_codec_dict(self) -> None:
        for body in BODIES:
            assert body_json(body) == orjson.dumps(body_to_dict(body)), body

    def test_every_corpus_entry_is_written_as_its_codec_dict(self) -> None:
        if not CORPUS.exists():
            pytest.skip("corpus missing")
        checked = 0
        for path in [*transcript_files(), *fixture_files(), *live_agent_files()]:
            try:
                session = read_transcript(path)
            except TranscriptError:  # formats without an importer, files refused as a whole
                continue
            for entry in session.entries:
                assert body_json(entry.body) == orjson.dumps(body_to_dict(entry.body)), (
                    path,
                    entry.seq,
                )
                checked += 1
        assert checked > 8_000

    def test_a_value_that_is_not_json_is_refused_with_orjsons_message(self) -> None:
        body = Message("user", (TextPart("x", meta={"handle": object()}),))
        with pytest.raises(TypeError, match=r"^Type is not JSON serializable: object$"):
            body_json(body)
        with pytest.raises(TypeError, match=r"^Type is not JSON serializable: object$"):
            orjson.dumps(body_to_dict(body))


def _lines(path: Path, data: bytes | None) -> tuple[list[tuple[int, object]], str]:
    report = ImportReport(path)
    found = list(iter_jsonl(path, report, data))
    return [(n, obj) for n, obj in found], report.summary()


class TestFromBytes:
    def test_jsonl_lines_from_bytes_are_those_read_from_the_file(self, tmp_path: Path) -> None:
        data = (
            b'\xef\xbb\xbf{"a": 1}\n\n  \n[1]\nnot json\n{"s": "\\ud83d"}\n{"b": "\xff"}\r\n'
            b'{"c": 3}\n{"cut": '
        )
        path = tmp_path / "x.jsonl"
        path.write_bytes(data)
        from_file = _lines(path, None)
        assert from_file == _lines(path, data)
        assert [n for n, _ in from_file[0]] == [1, 6, 7, 8]
        assert from_file[1] == (
            "skipped 3: non-object line ×1 (line 4), invalid JSON line ×1 (line 5), "
            "partial last line ×1 (line 9); repaired 2: lone surrogate ×1 (line 6), "
            "invalid UTF-8 ×1 (line 7)"
        )

    def test_objects_from_bytes_are_those_read_from_the_file(self, tmp_path: Path) -> None:
        data = b'\xef\xbb\xbf{"a": 1}\n\n{"g": 1}{"g": 2}\n[1]\n{"b": "\xff"}\r\n{"cut": '
        path = tmp_path / "x.jsonl"
        path.write_bytes(data)
        found = []
        for given in (None, data):
            report = ImportReport(path)
            found.append((list(iter_objects(path, report, given)), report.summary()))
        assert found[0] == found[1]
        assert [(n, obj) for n, obj, _ in found[0][0]] == [
            (1, {"a": 1}), (3, {"g": 1}), (3, {"g": 2}), (5, {"b": "\ufffd"})
        ]  # fmt: skip
        assert found[0][1] == (
            "skipped 2: non-object line ×1 (line 4), partial last line ×1 (line 6); "
            "repaired 2: glued JSON objects ×1 (line 3), invalid UTF-8 ×1 (line 5)"
        )

    def test_a_json_document_from_bytes_is_the_one_read_from_the_file(self, tmp_path: Path) -> None:
        data = b'\xef\xbb\xbf{"a": [1, "\\ud83d"]}'
        path = tmp_path / "x.json"
        path.write_bytes(data)
        report_file, report_bytes = ImportReport(path), ImportReport(path)
        assert load_json(path, report_file) == {"a": [1, "\ufffd"]}
        assert load_json(path, report_bytes, data) == {"a": [1, "\ufffd"]}
        assert (
            report_file.summary()
            == report_bytes.summary()
            == ("repaired 1: lone surrogate ×1 (line 1)")
        )


def test_extend_keyed_gives_the_entries_add_keyed_gives() -> None:
    """``LogBuilder.extend_keyed`` builds, for each ``(body, created_at, digest)``, the entry
    ``add_keyed`` builds: the id chained from the previous id and the digest, the previous
    entry as parent; an id already taken falls back to the body hash, as with ``add_keyed``."""
    digests = [bytes([k]) * 16 for k in range(len(BODIES))]
    rows = [
        (body, f"2025-01-0{k + 1}T00:00:00Z" if k % 2 else None, digests[k])
        for k, body in enumerate(BODIES)
    ]
    one, batch = LogBuilder("s"), LogBuilder("s")
    for body, created, digest in rows:
        one.add_keyed(body, digest, created_at=created)
    batch.extend_keyed(rows)
    assert batch.entries == one.entries
    first = "b2:" + blake2b(b"\0" + digests[0], digest_size=16).hexdigest()
    assert batch.entries[0].id == first
    second = blake2b(first.encode() + b"\0" + digests[1], digest_size=16).hexdigest()
    assert batch.entries[1].id == "b2:" + second
    assert [e.parent_id for e in batch.entries] == [None] + [e.id for e in one.entries[:-1]]
    # the second row's chained id already taken: the body hash chained to the first entry
    taken_one, taken_batch = LogBuilder("s"), LogBuilder("s")
    for builder in (taken_one, taken_batch):
        builder._ids.add("b2:" + second)
    taken_one.add_keyed(BODIES[0], digests[0])
    taken_one.add_keyed(BODIES[1], digests[1], created_at="t")
    taken_batch.extend_keyed([(BODIES[0], None, digests[0]), (BODIES[1], "t", digests[1])])
    assert taken_batch.entries == taken_one.entries
    assert taken_batch.entries[1].id == body_hash(BODIES[1], first)
    assert taken_batch.entries[1].created_at == "t"
