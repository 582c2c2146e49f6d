"""The ImportReport every importer fills: counts and first place per kind, the one-line
summary, strict mode, its JSON form, and its record in the store."""

from __future__ import annotations

from pathlib import Path

import pytest

from corpus import require_corpus
from ctxengine.errors import TranscriptError
from ctxengine.importers import read_transcript
from ctxengine.importers.report import ImportReport, Issue
from ctxengine.stores import SQLiteStore


def filled(strict: bool = False) -> ImportReport:
    report = ImportReport("s.jsonl", strict=strict)
    report.ignore("progress", line=1)
    report.repair("tool_use without id", "expected a string `id`", line=4)
    report.skip("record:foo", "expected a known record", line=7)
    report.ignore("progress", line=9)
    report.repair("tool_use without id", "expected a string `id`", line=12)
    report.skip("partial last line", "expected a complete line", line=20)
    return report


class TestReport:
    def test_counts_and_first_place_per_kind(self) -> None:
        report = filled()
        assert report.issues == (
            Issue("skipped", "record:foo", 1, 7, None, "expected a known record"),
            Issue("skipped", "partial last line", 1, 20, None, "expected a complete line"),
            Issue("repaired", "tool_use without id", 2, 4, None, "expected a string `id`"),
            Issue("ignored", "progress", 2, 1, None, None),
        )
        assert report.counts("skipped", "repaired") == {
            "partial last line": 1,
            "record:foo": 1,
            "tool_use without id": 2,
        }
        assert not report.clean

    def test_ignored_records_counted_at_once_keep_their_first_place(self) -> None:
        report = ImportReport("s.jsonl")
        report.ignore("output", line=3)
        report.ignore("empty input", line=5)
        report.ignore("output", count=41)
        assert report.issues == (
            Issue("ignored", "output", 42, 3, None, None),
            Issue("ignored", "empty input", 1, 5, None, None),
        )

    def test_the_summary_is_one_line_of_skipped_then_repaired(self) -> None:
        assert filled().summary() == (
            "skipped 2: record:foo ×1 (line 7), partial last line ×1 (line 20); "
            "repaired 2: tool_use without id ×2 (line 4)"
        )

    def test_ignored_records_alone_leave_it_clean(self) -> None:
        report = ImportReport("s.jsonl")
        report.ignore("progress", line=3)
        assert (report.clean, report.summary()) == (True, "")

    def test_a_json_path_stands_for_the_line_of_document_formats(self) -> None:
        report = ImportReport("c.json")
        report.repair("null arguments", "expected arguments", json_path="$[1].tool_calls[0]")
        assert report.summary() == "repaired 1: null arguments ×1 ($[1].tool_calls[0])"

    def test_strict_raises_at_the_first_skip_or_repair_but_not_at_an_ignore(self) -> None:
        report = ImportReport("s.jsonl", strict=True)
        report.ignore("progress", line=1)
        with pytest.raises(TranscriptError) as info:
            report.repair("tool_use without id", "expected a string `id`", line=4)
        assert str(info.value) == "s.jsonl:4: expected a string `id`"
        assert (info.value.line, info.value.json_path) == (4, None)
        with pytest.raises(TranscriptError) as at_path:
            report.skip("role robot", "expected a role", json_path="$[2].role")
        assert str(at_path.value) == "s.jsonl at $[2].role: expected a role"

    def test_json_form_round_trips(self) -> None:
        report = filled()
        data = report.to_dict()
        assert data["path"] == "s.jsonl" and data["strict"] is False
        assert data["issues"][0] == {
            "action": "skipped",
            "kind": "record:foo",
            "count": 1,
            "first_line": 7,
            "expected": "expected a known record",
        }
        again = ImportReport.from_dict(data)
        assert again.issues == report.issues
        assert again.summary() == report.summary()

    def test_an_unknown_action_is_refused_when_read_back(self) -> None:
        with pytest.raises(ValueError, match="unknown issue action 'lost'"):
            ImportReport.from_dict(
                {"path": "x", "issues": [{"action": "lost", "kind": "k", "count": 1}]}
            )


class TestStored:
    def test_each_import_stores_its_report_with_the_session(self, tmp_path: Path) -> None:
        path = require_corpus("format-fixtures", "codex", "large.jsonl")
        session = read_transcript(path)
        with SQLiteStore(tmp_path / "ctx.db") as store:
            store.import_session(session)
            store.import_session(session)
            records = store.import_reports(session.session_id)
        assert [(r.format, r.added, r.source_path) for r in records] == [
            ("codex", 15, str(path)),
            ("codex", 0, str(path)),
        ]
        assert all(r.report == session.report.to_dict() for r in records)
        assert ImportReport.from_dict(records[0].report).summary() == (
            "repaired 2: tool_call without call_id ×1 (line 6), tool_result without call_id ×1 "
            "(line 7)"
        )
