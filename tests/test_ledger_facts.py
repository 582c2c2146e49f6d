"""Typed ledger facts: how two ledgers combine, and their stored form (old and new)."""

from __future__ import annotations

from pathlib import Path

import orjson

from ctxengine.importers.base import ImportedSession
from ctxengine.model import (
    CompactionRecord,
    Entry,
    ErrorFact,
    FileFact,
    IdentifierFact,
    Ledgers,
    RuleFact,
)
from ctxengine.model.codec import entry_from_dict, entry_to_dict
from ctxengine.stores import SQLiteStore

LEDGERS = Ledgers(
    goal="fix it",
    files_modified=("/r/a.py",),
    errors=("KeyError: 'x'",),
    error_facts=(
        ErrorFact("KeyError: 'x'", "open", 4, "python t.py", where='File "/r/a.py", line 3'),
    ),
    files=(FileFact("/r/a.py", "modified", 6, "edited"), FileFact("/r/t.py", "scratch", 2)),
    identifiers=(IdentifierFact("localhost:8080", "port", "8080", 1, "on localhost:8080"),),
    rules=(RuleFact("Use tabs.", "active", 0, "tabs"),),
    cwd="/r",
    passed=("cmd:pytest -q",),
)


def test_errors_are_fixed_by_a_newer_pass_of_their_command_test_or_suite() -> None:
    older = Ledgers(
        error_facts=(
            ErrorFact("boom", "open", 1, "python t.py"),
            ErrorFact(
                "FAILED tests/a.py::t - x", "open", 2, "pytest -q", "tests/a.py::t", runner="pytest"
            ),
            ErrorFact("FAIL: t (m.C)", "open", 3, "x", "m.C.t", runner="unittest"),
            ErrorFact("other", "open", 4, "make"),
        )
    )
    newer = Ledgers(passed=("cmd:python t.py", "test:tests/a.py", "suite:unittest"))
    assert [e.status for e in older.merge(newer).error_facts] == [
        "fixed",
        "fixed",
        "fixed",
        "open",
    ]


def test_a_newer_failure_of_a_fixed_error_reopens_it_in_place() -> None:
    older = Ledgers(error_facts=(ErrorFact("boom", "fixed", 1, "make", fixed_by=3),))
    newer = Ledgers(error_facts=(ErrorFact("boom", "open", 9, "make"),))
    assert older.merge(newer).error_facts == (ErrorFact("boom", "open", 9, "make"),)


def test_files_keep_one_fact_per_path_and_a_created_then_deleted_file_is_scratch() -> None:
    older = Ledgers(
        files=(
            FileFact("/r/a.py", "read", 1, "read"),
            FileFact("/r/new.md", "modified", 2, "created", True),
            FileFact("/r/b.py", "modified", 3, "edited"),
        )
    )
    newer = Ledgers(
        files=(
            FileFact("/r/a.py", "modified", 7, "edited"),
            FileFact("/r/new.md", "modified", 8, "deleted"),
            FileFact("/r/b.py", "read", 9, "read"),
        )
    )
    assert older.merge(newer).files == (
        FileFact("/r/a.py", "modified", 7, "edited"),
        FileFact("/r/new.md", "scratch", 8, "deleted", True),
        FileFact("/r/b.py", "modified", 3, "edited"),
    )


def test_identifiers_keep_first_seen_order_and_the_newest_text() -> None:
    older = Ledgers(
        identifiers=(
            IdentifierFact("Python 3.8", "version", "python", 1),
            IdentifierFact("ABC-1", "ticket", "ABC-1", 2),
        )
    )
    newer = Ledgers(identifiers=(IdentifierFact("Python 3.11", "version", "python", 8),))
    assert older.merge(newer).identifiers == (
        IdentifierFact("Python 3.11", "version", "python", 8),
        IdentifierFact("ABC-1", "ticket", "ABC-1", 2),
    )


def test_merge_keeps_the_first_cwd_and_no_passes() -> None:
    merged = Ledgers(cwd="/a").merge(Ledgers(cwd="/b", passed=("cmd:x",)))
    assert (merged.cwd, merged.passed) == ("/a", ())


def test_typed_ledgers_round_trip_through_the_wire_form_and_sqlite(tmp_path: Path) -> None:
    record = CompactionRecord("state", "e9", 1000, 200, "default", "extractive", ledgers=LEDGERS)
    entry = Entry("c1", "s1", 0, record)
    wire = entry_to_dict(entry)
    assert wire["body"]["ledgers"]["error_facts"] == [
        {
            "text": "KeyError: 'x'",
            "status": "open",
            "source": 4,
            "command": "python t.py",
            "test": "",
            "where": 'File "/r/a.py", line 3',
            "runner": "",
        }
    ]
    assert entry_from_dict(orjson.loads(orjson.dumps(wire))) == entry
    with SQLiteStore(tmp_path / "ctx.db") as store:
        store.import_session(ImportedSession("s1", "native", "x.jsonl", (entry,)))
        assert store.entries("s1") == [entry]


def test_ledgers_stored_before_typed_facts_still_load() -> None:
    old = {
        "id": "c1",
        "session_id": "s1",
        "seq": 0,
        "body": {
            "kind": "compaction",
            "summary": "state",
            "first_kept_id": "e9",
            "tokens_before": 1000,
            "tokens_after": 200,
            "policy": "default",
            "summarizer": "extractive",
            "ledgers": {
                "goal": "g",
                "files_modified": ["a.py"],
                "errors": ["Exit code 1"],
                "constraints": ["Never push."],
            },
        },
    }
    body = entry_from_dict(old).body
    assert isinstance(body, CompactionRecord)
    assert body.ledgers == Ledgers(
        goal="g", files_modified=("a.py",), errors=("Exit code 1",), constraints=("Never push.",)
    )
