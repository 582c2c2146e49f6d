"""Re-importing a transcript whose stored entries were read while the agent was still writing
them: the divergent stored tail is withdrawn by an appended supersede record, never changed,
and the current log equals a fresh import of the file."""

from __future__ import annotations

import sqlite3
from collections.abc import Iterator
from dataclasses import replace
from pathlib import Path
from typing import Any

import pytest
from backends import Backend, Store
from test_store import store_where

from ctxengine.errors import StoreError
from ctxengine.importers.base import ImportedSession
from ctxengine.model import (
    CompactionRecord,
    Entry,
    Message,
    SupersedeRecord,
    TextPart,
    current_entries,
)
from ctxengine.stores import SQLiteStore
from ctxengine.stores import migrations as mig
from ctxengine.stores._reimport import REASON, REASON_EDITED
from ctxengine.stores.base import ImportResult
from ctxengine.stores.migrations import m001_initial, m002_import_reports


def msg(role: str, text: str) -> Message:
    return Message(role, (TextPart(text),))  # type: ignore[arg-type]


def log(*bodies: tuple[str, Message | CompactionRecord]) -> list[Entry]:
    """Entries with the given ids and bodies, seq = index, parent = the previous one."""
    return [
        Entry(eid, "s1", i, body, parent_id=bodies[i - 1][0] if i else None)
        for i, (eid, body) in enumerate(bodies)
    ]


def imported(entries: list[Entry]) -> ImportedSession:
    return ImportedSession("s1", "test", "log.jsonl", tuple(entries), "go", {})


def ids(entries: list[Entry]) -> list[str]:
    return [e.id for e in entries]


@pytest.fixture
def store(backend: Backend) -> Iterator[Store]:
    with backend.open() as s:
        yield s


GO = ("u1", msg("user", "go"))
THINKING = ("a1", msg("assistant", "thinking only"))
GROWN = ("a1..a3", msg("assistant", "thinking, text and two calls"))
RESULT = ("r1", msg("tool", "result"))
NEXT = ("u2", msg("user", "next"))


class TestDivergentTail:
    def test_a_grown_message_with_a_new_id_supersedes_the_stored_one(self, store: Store) -> None:
        store.import_session(imported(log(GO, THINKING)))
        full = log(GO, GROWN, RESULT, NEXT)
        result = store.import_session(imported(full))
        assert (result.added, result.skipped, result.superseded) == (3, 1, 1)
        assert (result.change, result.diverged_at) == ("grown", 1)
        stored = store.entries("s1")
        assert [e.kind for e in stored] == [
            "message", "message", "supersede", "message", "message", "message"
        ]  # fmt: skip
        record = stored[2]
        assert record.body == SupersedeRecord(("a1",), REASON)
        assert (record.seq, record.parent_id) == (2, "a1")
        assert stored[1].body == THINKING[1]  # withdrawn, still stored as it was
        seqs = (0, 3, 4, 5)
        assert current_entries(stored) == [
            replace(e, seq=s) for e, s in zip(full, seqs, strict=True)
        ]
        again = store.import_session(imported(full))
        assert (again.added, again.skipped, again.superseded) == (0, 4, 0)
        assert len(store.entries("s1")) == 6

    def test_same_id_with_another_body_is_superseded_and_the_new_one_renamed(
        self, store: Store
    ) -> None:
        """A Codex reply whose usage came after it, or a result line kept while its reply
        grew: the id comes back with another body, so it is stored as ``<id>~2``."""
        store.import_session(imported(log(GO, THINKING, RESULT)))
        grown = log(GO, ("a1", GROWN[1]), RESULT, NEXT)
        result = store.import_session(imported(grown))
        assert (result.added, result.skipped, result.superseded) == (3, 1, 2)
        stored = store.entries("s1")
        assert ids(stored)[3:] == [stored[3].id, "a1~2", "r1~2", "u2"]
        assert stored[3].body == SupersedeRecord(("a1", "r1"), REASON)
        assert [e.meta for e in stored[4:]] == [{"import_id": "a1"}, {"import_id": "r1"}, {}]
        assert [e.parent_id for e in stored[4:]] == ["u1", "a1~2", "r1~2"]
        current = current_entries(stored)
        assert ids(current) == ["u1", "a1~2", "r1~2", "u2"]
        assert [e.body for e in current] == [e.body for e in grown]
        again = store.import_session(imported(grown))
        assert (again.added, again.skipped, again.superseded) == (0, 4, 0)
        longer = log(GO, ("a1", GROWN[1]), RESULT, NEXT, ("a2", msg("assistant", "done")))
        more = store.import_session(imported(longer))
        assert (more.added, more.skipped, more.superseded) == (1, 4, 0)
        assert store.entries("s1")[-1].parent_id == "u2"

    def test_a_compaction_kept_head_is_rewritten_to_the_stored_id(self, store: Store) -> None:
        store.import_session(imported(log(GO, THINKING, RESULT)))
        boundary = CompactionRecord("summary", "r1", 900, 0, "claude-code", "imported")
        grown = log(GO, ("a1", GROWN[1]), RESULT, ("c1", boundary), NEXT)
        store.import_session(imported(grown))
        current = current_entries(store.entries("s1"))
        assert ids(current) == ["u1", "a1~2", "r1~2", "c1", "u2"]
        record = current[3].body
        assert isinstance(record, CompactionRecord) and record.first_kept_id == "r1~2"
        again = store.import_session(imported(grown))
        assert (again.added, again.skipped) == (0, 5)

    def test_an_older_copy_of_the_file_adds_nothing(self, store: Store) -> None:
        store.import_session(imported(log(GO, GROWN, RESULT)))
        result = store.import_session(imported(log(GO, GROWN)))
        assert (result.added, result.skipped, result.superseded) == (0, 2, 0)
        assert len(store.entries("s1")) == 3

    def test_a_compaction_the_engine_appended_stays_and_the_file_follows_it(
        self, store: Store
    ) -> None:
        store.import_session(imported(log(GO, THINKING)))
        record = CompactionRecord("state", "a1", 900, 100, "default", "extractive")
        store.append("s1", [Entry("k1", "s1", 2, record, parent_id="a1")])
        result = store.import_session(imported(log(GO, GROWN, RESULT)))
        assert (result.added, result.skipped, result.superseded) == (2, 1, 1)
        stored = store.entries("s1")
        assert [e.kind for e in stored] == [
            "message", "message", "compaction", "supersede", "message", "message"
        ]  # fmt: skip
        assert ids(current_entries(stored)) == ["u1", "k1", "a1..a3", "r1"]

    def test_messages_the_engine_appended_on_top_refuse_the_import(self, store: Store) -> None:
        store.import_session(imported(log(GO, THINKING)))
        store.append("s1", [Entry("live-1", "s1", 2, msg("user", "typed later"), "a1")])
        before = store.entries("s1")
        with pytest.raises(StoreError) as info:
            store.import_session(imported(log(GO, GROWN, RESULT)))
        assert str(info.value) == (
            f"{store_where(store)}: import session 's1' from log.jsonl: the transcript "
            "differs from the entries an earlier import stored from seq 1 on (entry "
            "'a1'), and messages were appended to the session after them (seq 2); nothing "
            "was imported"
        )
        assert store.entries("s1") == before
        assert len(store.import_reports("s1")) == 1

    def test_the_seqs_each_import_stored_are_recorded(self, store: Store, backend: Backend) -> None:
        store.import_session(imported(log(GO, THINKING)))
        record = CompactionRecord("state", "a1", 900, 100, "default", "extractive")
        store.append("s1", [Entry("k1", "s1", 2, record, parent_id="a1")])
        store.import_session(imported(log(GO, GROWN, RESULT)))
        store.import_session(imported(log(GO, GROWN, RESULT)))
        spans = backend.rows("SELECT first_seq, last_seq FROM imported_seqs ORDER BY first_seq")
        assert spans == [(0, 1), (3, 5)]
        assert [r.added for r in store.import_reports("s1")] == [2, 2, 0]


def counts(result: ImportResult) -> tuple[int, int, int, str, int | None]:
    """(added, skipped, superseded, change, diverged_at) of an import."""
    return (result.added, result.skipped, result.superseded, result.change, result.diverged_at)


TWO_EDITS = ("a1", msg("assistant", "two edits"))
ONE_EDIT = ("a1", msg("assistant", "one edit"))
THANKS = ("u2", msg("user", "thanks"))
DONE = ("a2", msg("assistant", "done"))
#: A session, and a copy of it with a line changed in the middle (same ids).
ORIGINAL = log(GO, TWO_EDITS, RESULT, THANKS, DONE)
EDITED = log(GO, ONE_EDIT, RESULT, THANKS, DONE)


class TestEditedCopies:
    """A copy of a stored session with a line changed or removed before its end is another
    version: stored as the current one (the stored entries from the difference on
    superseded, never described as still being written); importing either version again
    adds nothing."""

    def test_two_versions_imported_in_turn_store_each_once(self, store: Store) -> None:
        assert counts(store.import_session(imported(ORIGINAL))) == (5, 0, 0, "none", None)
        assert counts(store.import_session(imported(EDITED))) == (4, 1, 4, "edited", 1)
        stored = store.entries("s1")
        assert len(stored) == 10
        assert stored[5].body == SupersedeRecord(("a1", "r1", "u2", "a2"), REASON_EDITED)
        current = current_entries(stored)
        assert ids(current) == ["u1", "a1~2", "r1~2", "u2~2", "a2~2"]
        assert [e.body for e in current] == [e.body for e in EDITED]
        assert [e.parent_id for e in current] == [None, "u1", "a1~2", "r1~2", "u2~2"]
        # the first version again: stored whole before the supersede record
        assert counts(store.import_session(imported(ORIGINAL))) == (0, 5, 0, "earlier", 1)
        assert counts(store.import_session(imported(EDITED))) == (0, 5, 0, "none", None)
        assert counts(store.import_session(imported(ORIGINAL[:3]))) == (0, 3, 0, "earlier", 1)
        assert store.entries("s1") == stored
        assert [r.added for r in store.import_reports("s1")] == [5, 4, 0, 0, 0]

    def test_the_first_version_grown_is_stored_as_the_current_one(self, store: Store) -> None:
        store.import_session(imported(ORIGINAL))
        store.import_session(imported(EDITED))
        grown = log(GO, TWO_EDITS, RESULT, THANKS, DONE, ("u3", msg("user", "more")))
        assert counts(store.import_session(imported(grown))) == (5, 1, 4, "edited", 1)
        stored = store.entries("s1")
        assert len(stored) == 16
        assert stored[10].body == SupersedeRecord(("a1~2", "r1~2", "u2~2", "a2~2"), REASON_EDITED)
        current = current_entries(stored)
        assert ids(current) == ["u1", "a1~3", "r1~3", "u2~3", "a2~3", "u3"]
        assert [e.body for e in current] == [e.body for e in grown]
        # each version stored before adds nothing, and the current one stays
        assert counts(store.import_session(imported(EDITED))) == (0, 5, 0, "earlier", 1)
        assert counts(store.import_session(imported(ORIGINAL))) == (0, 5, 0, "none", None)
        assert counts(store.import_session(imported(grown))) == (0, 6, 0, "none", None)
        assert len(store.entries("s1")) == 16

    def test_an_entry_removed_from_the_middle(self, store: Store) -> None:
        store.import_session(imported(ORIGINAL))
        shorter = log(GO, TWO_EDITS, THANKS, DONE)
        assert counts(store.import_session(imported(shorter))) == (2, 2, 3, "edited", 2)
        stored = store.entries("s1")
        assert len(stored) == 8
        assert stored[5].body == SupersedeRecord(("r1", "u2", "a2"), REASON_EDITED)
        assert ids(current_entries(stored)) == ["u1", "a1", "u2~2", "a2~2"]
        assert counts(store.import_session(imported(ORIGINAL))) == (0, 5, 0, "earlier", 2)
        assert counts(store.import_session(imported(shorter))) == (0, 4, 0, "none", None)
        assert len(store.entries("s1")) == 8

    def test_a_changed_last_reply_with_no_user_message_after_it_is_still_grown(
        self, store: Store
    ) -> None:
        """A tail holding no real user message is what a live agent leaves while writing
        a reply; the file no shorter than what is stored."""
        store.import_session(imported(log(GO, THINKING, RESULT)))
        result = store.import_session(imported(log(GO, ("a1", GROWN[1]), RESULT)))
        assert counts(result) == (2, 1, 2, "grown", 1)

    def test_a_changed_reply_followed_by_another_reply_is_an_edited_copy(
        self, store: Store
    ) -> None:
        """No user message after the change (a subagent's log has none after its task), but
        two assistant replies in the stored tail: not the one reply a live agent was
        writing."""
        later = ("a2", msg("assistant", "second reply"))
        store.import_session(imported(log(GO, THINKING, RESULT, later)))
        result = store.import_session(imported(log(GO, ("a1", GROWN[1]), RESULT, later)))
        assert counts(result) == (3, 1, 3, "edited", 1)

    def test_a_shorter_file_differing_at_its_end_is_an_edited_copy(self, store: Store) -> None:
        store.import_session(imported(log(GO, THINKING, RESULT)))
        result = store.import_session(imported(log(GO, ("a1", GROWN[1]))))
        assert counts(result) == (1, 1, 2, "edited", 1)


class TestComparedInTheWriteTransaction:
    def test_a_message_appended_after_the_import_looked_is_seen(
        self, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
    ) -> None:
        """SQLite: another writer appends a message to the session after the import's first
        read and before its write; the comparison runs in the write transaction, so the
        edited copy is refused (it cannot be placed before that message), nothing written."""
        db = tmp_path / "ctx.db"
        with SQLiteStore(db) as store, SQLiteStore(db) as other:
            store.import_session(imported(ORIGINAL))
            write = SQLiteStore._write
            appended: list[int] = []

            def late(self: SQLiteStore, operation: str) -> Any:
                if self is store and not appended:
                    live = Entry("live-1", "s1", 5, msg("user", "typed meanwhile"), "a2")
                    appended.append(other.append("s1", [live]))
                return write(self, operation)

            monkeypatch.setattr(SQLiteStore, "_write", late)
            with pytest.raises(StoreError, match=r"appended to the session after them \(seq 5\)"):
                store.import_session(imported(EDITED))
            assert appended == [1]
            assert ids(store.entries("s1")) == [*ids(ORIGINAL), "live-1"]


class TestImportsStoredBeforeSeqsWereRecorded:
    def test_the_migration_records_every_entry_but_the_engine_s_records(
        self, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
    ) -> None:
        db = tmp_path / "old.db"
        monkeypatch.setattr(mig, "MIGRATIONS", [m001_initial, m002_import_reports])
        with SQLiteStore(db) as old:
            with old._connections.use() as conn:
                conn.execute("BEGIN IMMEDIATE")
                conn.execute("INSERT INTO sessions (id, format) VALUES ('s1', 'test')")
                conn.execute(
                    "INSERT INTO import_reports VALUES ('s1', 'then', 'log.jsonl', 'test', 2, '{}')"
                )
                conn.execute("COMMIT")
            old.append("s1", log(GO, THINKING))
            record = CompactionRecord("state", "a1", 900, 100, "default", "extractive")
            old.append("s1", [Entry("k1", "s1", 2, record, parent_id="a1")])
            boundary = CompactionRecord("theirs", None, 900, 0, "claude-code", "imported")
            old.append("s1", [Entry("b1", "s1", 3, boundary, parent_id="k1")])
        monkeypatch.undo()
        with SQLiteStore(db) as store:
            with sqlite3.connect(db) as conn:
                spans = conn.execute("SELECT first_seq, last_seq FROM imported_seqs").fetchall()
            assert spans == [(0, 1), (3, 3)]
            grown = log(GO, GROWN, RESULT)
            result = store.import_session(imported(grown))
            assert (result.added, result.skipped, result.superseded) == (2, 1, 2)
            current = current_entries(store.entries("s1"))
        assert ids(current) == ["u1", "k1", "a1..a3", "r1"]
