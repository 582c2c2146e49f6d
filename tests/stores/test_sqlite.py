"""The SQLite store: round trips, dedup on re-import, append-only, atomicity, isolation."""

from __future__ import annotations

import sqlite3
import sys
import threading
import time
from collections.abc import Iterator
from dataclasses import replace
from pathlib import Path
from typing import Any

import pytest

from ctxengine.errors import (
    ConfigError,
    SessionNotFound,
    StoreBusy,
    StoreConflict,
    StoreError,
)
from ctxengine.importers.base import ImportedSession
from ctxengine.model import (
    CompactionRecord,
    DocumentPart,
    Entry,
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
from ctxengine.model.codec import entry_to_dict
from ctxengine.model.entries import Body
from ctxengine.policy.defaults import DEFAULT_STORE_BUSY_TIMEOUT_S
from ctxengine.stores import DB_ENV_VAR, SessionInfo, SQLiteStore, Store, default_db_path
from ctxengine.stores.sqlite import BUSY_TIMEOUT_S

BODIES: tuple[Body, ...] = (
    Message("system", (TextPart("You are terse."),)),
    Message("user", (TextPart("fix it"), ImagePart("image/png", data="AAAA", width=8, height=4))),
    Message(
        "assistant",
        (
            ReasoningPart("look first", signature="sig==", meta={"k": 1}),
            TextPart("reading"),
            ToolCallPart("c1", "read", '{"path": "a.py"}'),
            ToolCallPart("c2", "bash", '{"cmd": "ls"}'),
        ),
        usage=Usage(10, 5, 100, 3),
        model="m-1",
        stop_reason="tool_use",
    ),
    Message(
        "tool",
        (
            ToolResultPart("c1", (TextPart("print(1)"),), name="read"),
            ToolResultPart("c2", (DocumentPart("text/plain", text="a.py"),), is_error=True),
        ),
    ),
    Message("assistant", (ReasoningPart("", signature="x", redacted=True),)),
    Message("assistant", (NativeCompactionPart("openai", '{"type": "compaction"}'),)),
    CompactionRecord(
        "state", "e3", 900, 120, "default", "extractive", ledgers=Ledgers(goal="fix it")
    ),
    PruneRecord(("c1", "c2"), 400, "default"),
    PinRecord("keep a.py"),
)


def make_log(session_id: str, n: int, *, start: int = 0) -> list[Entry]:
    """Entries ``e{start}`` … with seq = index, cycling through every body kind."""
    return [
        Entry(
            f"e{i}",
            session_id,
            i,
            BODIES[i % len(BODIES)],
            parent_id=f"e{i - 1}" if i else None,
            created_at=f"2026-01-01T00:00:{i % 60:02d}Z",
            meta={"line": i + 1},
        )
        for i in range(start, n)
    ]


def imported(session_id: str, entries: list[Entry], path: str = "log.jsonl") -> ImportedSession:
    return ImportedSession(session_id, "test", path, tuple(entries), "fix it", {"cwd": "/w"})


def pragmas(store: SQLiteStore, names: tuple[str, ...]) -> list[Any]:
    """The values of ``PRAGMA name`` on the calling thread's connection of ``store``."""
    with store._connections.use() as conn:
        return [conn.execute(f"PRAGMA {name}").fetchone()[0] for name in names]


def stored_keys(path: Path) -> list[tuple[Any, ...]]:
    """Every (session_id, seq, id) and session id, read by a second, independent connection."""
    with sqlite3.connect(path) as conn:
        rows = conn.execute("SELECT session_id, seq, id FROM entries ORDER BY 1, 2").fetchall()
        sessions = conn.execute("SELECT id FROM sessions ORDER BY id").fetchall()
    return rows + sessions


@pytest.fixture(params=["file", "memory"])
def store(request: pytest.FixtureRequest, tmp_path: Path) -> Iterator[SQLiteStore]:
    location = str(tmp_path / "ctx.db") if request.param == "file" else ":memory:"
    with SQLiteStore(location) as s:
        yield s


@pytest.fixture
def db(tmp_path: Path) -> Path:
    return tmp_path / "ctx.db"


class TestRoundTrip:
    def test_entries_of_every_body_kind_come_back_equal(self, store: SQLiteStore) -> None:
        log = make_log("s1", len(BODIES))
        store.import_session(imported("s1", log))
        back = store.entries("s1")
        assert back == log
        assert [entry_to_dict(e) for e in back] == [entry_to_dict(e) for e in log]
        assert [e.kind for e in back] == ["message"] * 6 + ["compaction", "prune", "pin"]

    def test_after_seq_returns_only_later_entries_in_order(self, store: SQLiteStore) -> None:
        store.import_session(imported("s1", make_log("s1", 12)))
        assert [e.seq for e in store.entries("s1", after_seq=8)] == [9, 10, 11]
        assert store.entries("s1", after_seq=11) == []
        assert store.last_seq("s1") == 11

    def test_imported_session_is_listed_with_its_count_and_source(self, store: SQLiteStore) -> None:
        store.import_session(imported("s1", make_log("s1", 5)))
        store.create_session(SessionInfo("live-1", "live", created_at="2026-02-02T00:00:00Z"))
        # updated: the newest entry's time; none for a session without entries or imports
        assert store.sessions() == [
            SessionInfo(
                "s1",
                "test",
                "log.jsonl",
                "fix it",
                "2026-01-01T00:00:00Z",
                5,
                updated_at="2026-01-01T00:00:04Z",
            ),
            SessionInfo("live-1", "live", None, None, "2026-02-02T00:00:00Z", 0),
        ]
        assert store.session("s1").meta == {"cwd": "/w"}
        assert store.last_seq("live-1") == -1

    def test_the_store_satisfies_the_store_protocol(self, store: SQLiteStore) -> None:
        as_protocol: Store = store
        assert as_protocol.create_session(SessionInfo("s9", "live")) is True
        assert as_protocol.create_session(SessionInfo("s9", "other")) is False
        assert as_protocol.session("s9").format == "live"


class TestDedup:
    def test_importing_the_same_log_twice_adds_nothing(self, store: SQLiteStore) -> None:
        log = make_log("s1", 9)
        first = store.import_session(imported("s1", log))
        second = store.import_session(imported("s1", log))
        assert (first.added, first.skipped) == (9, 0)
        assert (second.session_id, second.added, second.skipped) == ("s1", 0, 9)
        assert store.session("s1").entry_count == 9

    def test_reimporting_a_grown_log_appends_only_the_new_tail(self, store: SQLiteStore) -> None:
        store.import_session(imported("s1", make_log("s1", 4)))
        result = store.import_session(imported("s1", make_log("s1", 7)))
        assert (result.added, result.skipped) == (3, 4)
        assert store.entries("s1") == make_log("s1", 7)

    def test_a_grown_transcript_follows_entries_the_engine_appended(
        self, store: SQLiteStore
    ) -> None:
        full = make_log("s1", 60)
        store.import_session(imported("s1", full[:40]))
        record = Entry(
            "compaction-1",
            "s1",
            40,
            CompactionRecord("state", "e30", 9000, 1200, "default", "extractive"),
            parent_id="e39",
            created_at="2026-01-02T00:00:00Z",
        )
        assert store.append("s1", [record]) == 1
        before = store.entries("s1")
        result = store.import_session(imported("s1", full))
        assert (result.session_id, result.added, result.skipped) == ("s1", 20, 40)
        after = store.entries("s1")
        assert after[:41] == before
        assert after[40] == record
        assert [e.seq for e in after[41:]] == list(range(41, 61))
        assert [e.id for e in after[41:]] == [f"e{i}" for i in range(40, 60)]
        assert after[41:] == [replace(e, seq=e.seq + 1) for e in full[40:]]
        assert after[41].parent_id == "e39"
        assert store.session("s1").entry_count == 61
        again = store.import_session(imported("s1", full))
        assert (again.added, again.skipped) == (0, 60)
        assert store.entries("s1") == after

    def test_an_import_ignores_the_seqs_of_the_file(self, store: SQLiteStore) -> None:
        log = [replace(e, seq=100 + 2 * e.seq) for e in make_log("s1", 3)]
        result = store.import_session(imported("s1", log))
        assert (result.added, result.skipped) == (3, 0)
        assert store.entries("s1") == make_log("s1", 3)

    def test_append_continues_the_log_and_skips_stored_ids(self, store: SQLiteStore) -> None:
        store.create_session(SessionInfo("s1", "live"))
        assert store.append("s1", make_log("s1", 3)) == 3
        assert store.append("s1", make_log("s1", 5)) == 2
        assert store.append("s1", []) == 0
        assert store.last_seq("s1") == 4


class TestSeqContinuity:
    def test_a_gap_in_seq_is_refused(self, store: SQLiteStore) -> None:
        store.import_session(imported("s1", make_log("s1", 3)))
        with pytest.raises(StoreError) as info:
            store.append("s1", make_log("s1", 6, start=4))
        assert str(info.value) == (
            f"sqlite store {store.path}: append to session 's1': entry 'e4' has seq 4, "
            "expected 3: new entries must continue the log without gaps"
        )
        assert store.last_seq("s1") == 2

    def test_an_entry_of_another_session_is_refused(self, store: SQLiteStore) -> None:
        store.create_session(SessionInfo("s1", "live"))
        with pytest.raises(StoreError, match="entry 'e0' belongs to session 's2'"):
            store.append("s1", make_log("s2", 1))

    def test_unknown_session_raises_session_not_found(self, store: SQLiteStore) -> None:
        for call in (
            lambda: store.append("nope", make_log("nope", 1)),
            lambda: store.entries("nope"),
            lambda: store.last_seq("nope"),
        ):
            with pytest.raises(SessionNotFound) as info:
                call()
            assert info.value.session_id == "nope"


class TestSessionLookup:
    @pytest.fixture
    def filled(self, store: SQLiteStore) -> SQLiteStore:
        for sid in ("abc123", "abd456", "xyz789", "xyz"):
            store.create_session(SessionInfo(sid, "live"))
        return store

    def test_a_unique_prefix_finds_the_session(self, filled: SQLiteStore) -> None:
        assert filled.session("abc").id == "abc123"
        assert filled.session("abd456").id == "abd456"

    def test_an_exact_id_wins_over_longer_ids_it_prefixes(self, filled: SQLiteStore) -> None:
        assert filled.session("xyz").id == "xyz"

    def test_an_ambiguous_prefix_names_the_candidates(self, filled: SQLiteStore) -> None:
        with pytest.raises(StoreError) as info:
            filled.session("ab")
        assert not isinstance(info.value, SessionNotFound)
        assert str(info.value) == (
            "session prefix 'ab' is ambiguous: it matches 2 sessions (abc123, abd456); "
            "give more characters"
        )

    def test_no_match_or_an_empty_prefix_is_not_found(self, filled: SQLiteStore) -> None:
        for prefix in ("q", "", "%", "ab_"):
            with pytest.raises(SessionNotFound):
                filled.session(prefix)


class TestAppendOnly:
    def test_the_store_has_no_method_that_changes_or_removes_entries(self) -> None:
        words = ("update", "delete", "remove", "replace", "edit", "set_", "truncate")
        assert [n for n in dir(SQLiteStore) if any(w in n.lower() for w in words)] == []

    @pytest.mark.parametrize(
        ("sql", "message"),
        [
            ("UPDATE entries SET kind = 'pin' WHERE seq = 1", "entries are append-only"),
            ("DELETE FROM entries WHERE seq = 2", "entries are append-only"),
            (
                "INSERT OR REPLACE INTO entries SELECT session_id, 3, 'e0', NULL, kind, "
                "created_at, body, meta FROM entries WHERE seq = 0",
                "entries are append-only: an insert must continue the log with a new id",
            ),
        ],
    )
    def test_raw_sql_cannot_change_a_stored_entry(self, db: Path, sql: str, message: str) -> None:
        with SQLiteStore(db) as store:
            store.import_session(imported("s1", make_log("s1", 3)))
        before = stored_keys(db)
        conn = sqlite3.connect(db)
        with pytest.raises(sqlite3.IntegrityError) as info:
            conn.execute(sql)
        conn.close()
        assert str(info.value) == message
        assert stored_keys(db) == before
        with SQLiteStore(db) as store:
            assert store.entries("s1") == make_log("s1", 3)


class TestAtomicity:
    def test_a_failing_fifth_insert_leaves_the_database_as_it_was(self, db: Path) -> None:
        with SQLiteStore(db) as store:
            store.import_session(imported("s1", make_log("s1", 3)))
            before = stored_keys(db)
            batch = make_log("s1", 10, start=3)
            batch[4] = Entry("e4", "s1", 7, batch[4].body)  # the id of the 2nd, a fresh seq
            with pytest.raises(StoreError) as info:
                store.append("s1", batch)
            assert stored_keys(db) == before
            assert store.last_seq("s1") == 2
        assert str(info.value) == (
            f"sqlite store {db}: append to session 's1' failed: entries are append-only: "
            "an insert must continue the log with a new id"
        )
        assert isinstance(info.value.__cause__, sqlite3.IntegrityError)

    def test_an_unserialisable_meta_aborts_the_whole_import(self, db: Path) -> None:
        with SQLiteStore(db) as store:
            store.import_session(imported("s1", make_log("s1", 3)))
            before = stored_keys(db)
            log = make_log("s2", 8)
            log[4] = Entry("e4", "s2", 4, log[4].body, meta={"handle": object()})
            with pytest.raises(StoreError) as info:
                store.import_session(imported("s2", log, path="new.jsonl"))
            assert stored_keys(db) == before
            assert [s.id for s in store.sessions()] == ["s1"]
        assert str(info.value) == (
            f"sqlite store {db}: import session 's2' from new.jsonl: entry 'e4' (seq 4) "
            "cannot be serialised: Type is not JSON serializable: object"
        )

    def test_a_repeated_id_in_a_grown_log_stores_none_of_the_tail(self, db: Path) -> None:
        with SQLiteStore(db) as store:
            store.import_session(imported("s1", make_log("s1", 3)))
            before = stored_keys(db)
            grown = make_log("s1", 9)
            grown[7] = Entry("e5", "s1", 7, grown[7].body)
            with pytest.raises(StoreError) as info:
                store.import_session(imported("s1", grown))
            assert stored_keys(db) == before
        assert str(info.value) == (
            f"sqlite store {db}: import session 's1' from log.jsonl: entry id 'e5' occurs twice"
        )

    def test_an_entry_of_another_session_aborts_the_import(self, db: Path) -> None:
        with SQLiteStore(db) as store:
            store.import_session(imported("s1", make_log("s1", 3)))
            before = stored_keys(db)
            grown = make_log("s1", 6)
            grown[4] = Entry("e4", "s2", 4, grown[4].body)
            with pytest.raises(StoreError, match="entry 'e4' belongs to session 's2'"):
                store.import_session(imported("s1", grown))
            assert stored_keys(db) == before


class TestIsolation:
    def test_a_reader_sees_only_committed_writes(self, db: Path) -> None:
        with SQLiteStore(db) as writer, SQLiteStore(db) as reader:
            writer.import_session(imported("s1", make_log("s1", 2)))
            raw = sqlite3.connect(db, isolation_level=None)
            raw.execute("BEGIN IMMEDIATE")
            raw.execute(
                "INSERT INTO entries SELECT session_id, 2, 'e2', 'e1', kind, created_at, "
                "body, meta FROM entries WHERE seq = 0"
            )
            raw.execute("INSERT INTO sessions (id, format) VALUES ('s2', 'live')")
            assert reader.last_seq("s1") == 1
            assert [(s.id, s.entry_count) for s in reader.sessions()] == [("s1", 2)]
            raw.execute("COMMIT")
            raw.close()
            assert [e.id for e in reader.entries("s1")] == ["e0", "e1", "e2"]
            assert [(s.id, s.entry_count) for s in reader.sessions()] == [("s1", 3), ("s2", 0)]

    def test_a_second_store_sees_an_import_once_it_returns(self, db: Path) -> None:
        with SQLiteStore(db) as writer, SQLiteStore(db) as reader:
            assert reader.sessions() == []
            writer.import_session(imported("s1", make_log("s1", 4)))
            assert reader.entries("s1") == make_log("s1", 4)


class TestDatabaseFile:
    def test_a_file_database_uses_wal_normal_sync_and_foreign_keys(self, db: Path) -> None:
        names = ("journal_mode", "synchronous", "foreign_keys", "busy_timeout")
        with SQLiteStore(db, busy_timeout_s=1.25) as store:
            here = pragmas(store, names)
            seen: list[list[Any]] = []
            worker = threading.Thread(target=lambda: seen.append(pragmas(store, names)))
            worker.start()
            worker.join()
        assert here == ["wal", 1, 1, 1250]
        assert seen == [["wal", 1, 1, 1250]]
        with sqlite3.connect(db) as conn:
            assert conn.execute("PRAGMA journal_mode").fetchone()[0] == "wal"

    def test_an_in_memory_database_keeps_its_own_journal(self) -> None:
        with SQLiteStore(":memory:") as store:
            assert pragmas(store, ("journal_mode",)) == ["memory"]

    def test_a_file_that_is_not_a_database_is_a_store_error(self, tmp_path: Path) -> None:
        path = tmp_path / "notes.db"
        path.write_text("not sqlite at all, just some text that is long enough" * 40)
        with pytest.raises(StoreError) as info:
            SQLiteStore(path)
        assert str(info.value) == f"sqlite store {path}: open failed: file is not a database"

    def test_a_missing_directory_is_a_store_error(self, tmp_path: Path) -> None:
        path = tmp_path / "absent" / "ctx.db"
        with pytest.raises(StoreError) as info:
            SQLiteStore(path)
        assert str(info.value) == (
            f"sqlite store {path}: open failed: unable to open database file"
        )

    def test_a_closed_store_raises_store_error(self, db: Path) -> None:
        store = SQLiteStore(db)
        store.close()
        store.close()
        with pytest.raises(StoreError, match="list sessions failed: Cannot operate on a closed"):
            store.sessions()


class TestDefaultPath:
    def test_the_environment_variable_wins(
        self, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
    ) -> None:
        monkeypatch.setenv(DB_ENV_VAR, str(tmp_path / "sub" / "my.db"))
        assert default_db_path() == tmp_path / "sub" / "my.db"
        assert (tmp_path / "sub").is_dir()

    @pytest.mark.skipif(sys.platform != "linux", reason="XDG_DATA_HOME is read on Linux only")
    def test_otherwise_the_user_data_directory_is_used(
        self, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
    ) -> None:
        monkeypatch.delenv(DB_ENV_VAR, raising=False)
        monkeypatch.setenv("XDG_DATA_HOME", str(tmp_path / "data"))
        assert default_db_path() == tmp_path / "data" / "ctxengine" / "ctxengine.db"
        with SQLiteStore() as store:
            assert store.path == str(tmp_path / "data" / "ctxengine" / "ctxengine.db")
        assert (tmp_path / "data" / "ctxengine" / "ctxengine.db").is_file()


class TestCompareAndAppend:
    def test_an_append_on_the_expected_last_seq_is_stored(self, store: SQLiteStore) -> None:
        store.create_session(SessionInfo("s1", "live"))
        assert store.append("s1", make_log("s1", 2), expect_last_seq=-1) == 2
        assert store.append("s1", make_log("s1", 5, start=2), expect_last_seq=1) == 3
        assert store.entries("s1") == make_log("s1", 5)

    @pytest.mark.parametrize("expected", [-1, 1, 3, 7])
    def test_any_other_expectation_is_a_conflict_and_stores_nothing(
        self, store: SQLiteStore, expected: int
    ) -> None:
        store.import_session(imported("s1", make_log("s1", 3)))
        before = store.entries("s1")
        with pytest.raises(StoreConflict) as info:
            store.append("s1", make_log("s1", 4, start=3), expect_last_seq=expected)
        assert (info.value.session_id, info.value.expected, info.value.actual) == (
            "s1",
            expected,
            2,
        )
        assert isinstance(info.value, StoreError)
        assert str(info.value) == (
            f"session 's1' moved on: the append expected its last entry at seq {expected}, "
            f"the store holds seq 2; re-read the entries after seq {expected} and retry"
        )
        assert store.entries("s1") == before

    def test_the_expectation_is_checked_before_stored_ids_are_skipped(
        self, store: SQLiteStore
    ) -> None:
        store.import_session(imported("s1", make_log("s1", 3)))
        with pytest.raises(StoreConflict):
            store.append("s1", make_log("s1", 3), expect_last_seq=-1)
        assert store.append("s1", make_log("s1", 3), expect_last_seq=2) == 0

    def test_an_unknown_session_is_not_found_before_any_conflict(self, store: SQLiteStore) -> None:
        with pytest.raises(SessionNotFound):
            store.append("nope", make_log("nope", 1), expect_last_seq=5)

    def test_a_stale_plain_append_is_a_conflict_a_gap_stays_a_store_error(
        self, store: SQLiteStore
    ) -> None:
        store.import_session(imported("s1", make_log("s1", 3)))
        stale = Entry("mine", "s1", 1, BODIES[0], parent_id="e0")
        with pytest.raises(StoreConflict) as info:
            store.append("s1", [stale])
        assert (info.value.expected, info.value.actual) == (0, 2)
        with pytest.raises(StoreError) as gap:
            store.append("s1", [Entry("mine", "s1", 4, BODIES[0])])
        assert not isinstance(gap.value, StoreConflict)
        assert store.last_seq("s1") == 2

    def test_a_loser_catches_up_with_entries_after_and_appends_on_top(
        self, store: SQLiteStore
    ) -> None:
        store.import_session(imported("s1", make_log("s1", 3)))
        store.append("s1", make_log("s1", 5, start=3))  # another writer
        mine = Entry("mine", "s1", 3, BODIES[0], parent_id="e2")
        with pytest.raises(StoreConflict) as info:
            store.append("s1", [mine], expect_last_seq=2)
        missed = store.entries("s1", after_seq=info.value.expected)
        assert [e.id for e in missed] == ["e3", "e4"]
        assert missed[-1].seq == info.value.actual
        rebuilt = replace(mine, seq=missed[-1].seq + 1, parent_id=missed[-1].id)
        assert store.append("s1", [rebuilt], expect_last_seq=info.value.actual) == 1
        assert [e.id for e in store.entries("s1")] == ["e0", "e1", "e2", "e3", "e4", "mine"]


class TestCatchUpCost:
    def test_reading_the_newest_entries_costs_the_same_for_a_short_and_a_long_log(
        self, db: Path
    ) -> None:
        with SQLiteStore(db) as store:
            store.import_session(imported("short", make_log("short", 300)))
            store.import_session(imported("long", make_log("long", 6000)))
            steps = []
            for sid, last in (("short", 299), ("long", 5999)):
                counted = [0]

                def tick(counted: list[int] = counted) -> int:
                    counted[0] += 1
                    return 0

                with store._connections.use() as conn:
                    conn.set_progress_handler(tick, 1)
                    newest = store.entries(sid, after_seq=last - 3)
                    conn.set_progress_handler(None, 1)
                assert [e.seq for e in newest] == [last - 2, last - 1, last]
                steps.append(counted[0])
        # Progress-handler calls (about one per SQLite loop step): the same, give or take a
        # B-tree seek, for 300 and 6,000 entries. A walk over the log would add thousands.
        assert abs(steps[0] - steps[1]) <= 2
        assert steps[1] < 100


class TestBusyTimeout:
    def test_the_default_is_the_policy_default(self, db: Path) -> None:
        with SQLiteStore(db) as store:
            assert store.busy_timeout_s == BUSY_TIMEOUT_S == DEFAULT_STORE_BUSY_TIMEOUT_S
            assert pragmas(store, ("busy_timeout",)) == [5000]

    @pytest.mark.parametrize("bad", [-1, float("nan"), float("inf"), "5"])
    def test_a_timeout_that_is_not_a_finite_non_negative_number_is_refused(
        self, db: Path, bad: object
    ) -> None:
        with pytest.raises(ConfigError) as info:
            SQLiteStore(db, busy_timeout_s=bad)  # type: ignore[arg-type]
        assert str(info.value) == (
            f"busy_timeout_s must be a finite number of seconds >= 0, got {bad!r}"
        )
        assert not db.exists()

    def test_a_write_waits_the_configured_time_for_another_writer(self, db: Path) -> None:
        with SQLiteStore(db, busy_timeout_s=0.3) as store:
            store.create_session(SessionInfo("s1", "live"))
            raw = sqlite3.connect(db, isolation_level=None)
            raw.execute("BEGIN IMMEDIATE")
            t0 = time.monotonic()
            with pytest.raises(StoreBusy, match="store busy"):
                store.append("s1", make_log("s1", 1))
            waited = time.monotonic() - t0
            assert store.entries("s1") == []
            raw.execute("ROLLBACK")
            raw.close()
            assert store.append("s1", make_log("s1", 1)) == 1
        assert 0.3 <= waited < 3
