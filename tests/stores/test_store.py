"""Every store kind (SQLite file and in memory, PostgreSQL): round trips, dedup on re-import,
append-only in the database itself, atomicity, isolation, compare-and-append."""

from __future__ import annotations

import time
from dataclasses import replace

import pytest
from backends import Backend, Store

from ctxengine.errors import SessionNotFound, StoreBusy, StoreConflict, StoreError
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
from ctxengine.stores import SessionInfo
from ctxengine.stores import Store as StoreProtocol
from ctxengine.stores.sqlite import SQLiteStore

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


def store_where(store: Store) -> str:
    """How the store's errors name it."""
    if not isinstance(store, SQLiteStore):
        return f"postgresql store {store.label}"
    return f"sqlite store {store.path}"


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


class TestRoundTrip:
    def test_entries_of_every_body_kind_come_back_equal(self, store: Store) -> None:
        log = make_log("s1", len(BODIES))
        store.import_session(imported("s1", log))
        back = store.entries("s1")
        assert back == log
        assert [entry_to_dict(e) for e in back] == [entry_to_dict(e) for e in log]
        assert [e.kind for e in back] == ["message"] * 6 + ["compaction", "prune", "pin"]

    def test_after_seq_returns_only_later_entries_in_order(self, store: Store) -> None:
        store.import_session(imported("s1", make_log("s1", 12)))
        assert [e.seq for e in store.entries("s1", after_seq=8)] == [9, 10, 11]
        assert store.entries("s1", after_seq=11) == []
        assert store.last_seq("s1") == 11

    def test_imported_session_is_listed_with_its_count_and_source(self, store: Store) -> None:
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

    def test_the_store_satisfies_the_store_protocol(self, store: Store) -> None:
        as_protocol: StoreProtocol = store
        assert as_protocol.create_session(SessionInfo("s9", "live")) is True
        assert as_protocol.create_session(SessionInfo("s9", "other")) is False
        assert as_protocol.session("s9").format == "live"


class TestDedup:
    def test_importing_the_same_log_twice_adds_nothing(self, store: Store) -> None:
        log = make_log("s1", 9)
        first = store.import_session(imported("s1", log))
        second = store.import_session(imported("s1", log))
        assert (first.added, first.skipped) == (9, 0)
        assert (second.session_id, second.added, second.skipped) == ("s1", 0, 9)
        assert store.session("s1").entry_count == 9

    def test_reimporting_a_grown_log_appends_only_the_new_tail(self, store: Store) -> None:
        store.import_session(imported("s1", make_log("s1", 4)))
        result = store.import_session(imported("s1", make_log("s1", 7)))
        assert (result.added, result.skipped) == (3, 4)
        assert store.entries("s1") == make_log("s1", 7)

    def test_a_grown_transcript_follows_entries_the_engine_appended(self, store: Store) -> None:
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

    def test_an_import_ignores_the_seqs_of_the_file(self, store: Store) -> None:
        log = [replace(e, seq=100 + 2 * e.seq) for e in make_log("s1", 3)]
        result = store.import_session(imported("s1", log))
        assert (result.added, result.skipped) == (3, 0)
        assert store.entries("s1") == make_log("s1", 3)

    def test_append_continues_the_log_and_skips_stored_ids(self, store: Store) -> None:
        store.create_session(SessionInfo("s1", "live"))
        assert store.append("s1", make_log("s1", 3)) == 3
        assert store.append("s1", make_log("s1", 5)) == 2
        assert store.append("s1", []) == 0
        assert store.last_seq("s1") == 4


class TestSeqContinuity:
    def test_a_gap_in_seq_is_refused(self, store: Store) -> None:
        store.import_session(imported("s1", make_log("s1", 3)))
        with pytest.raises(StoreError) as info:
            store.append("s1", make_log("s1", 6, start=4))
        assert str(info.value) == (
            f"{store_where(store)}: append to session 's1': entry 'e4' has seq 4, "
            "expected 3: new entries must continue the log without gaps"
        )
        assert store.last_seq("s1") == 2

    def test_an_entry_of_another_session_is_refused(self, store: Store) -> None:
        store.create_session(SessionInfo("s1", "live"))
        with pytest.raises(StoreError, match="entry 'e0' belongs to session 's2'"):
            store.append("s1", make_log("s2", 1))

    def test_unknown_session_raises_session_not_found(self, store: Store) -> None:
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
    def filled(self, store: Store) -> Store:
        for sid in ("abc123", "abd456", "xyz789", "xyz"):
            store.create_session(SessionInfo(sid, "live"))
        return store

    def test_a_unique_prefix_finds_the_session(self, filled: Store) -> None:
        assert filled.session("abc").id == "abc123"
        assert filled.session("abd456").id == "abd456"

    def test_an_exact_id_wins_over_longer_ids_it_prefixes(self, filled: Store) -> None:
        assert filled.session("xyz").id == "xyz"

    def test_an_ambiguous_prefix_names_the_candidates(self, filled: Store) -> None:
        with pytest.raises(StoreError) as info:
            filled.session("ab")
        assert not isinstance(info.value, SessionNotFound)
        assert str(info.value) == (
            "session prefix 'ab' is ambiguous: it matches 2 sessions (abc123, abd456); "
            "give more characters"
        )

    def test_no_match_or_an_empty_prefix_is_not_found(self, filled: Store) -> None:
        for prefix in ("q", "", "%", "ab_"):
            with pytest.raises(SessionNotFound):
                filled.session(prefix)


class TestAppendOnly:
    @pytest.mark.parametrize("kind", ["sqlite", "postgres"])
    def test_the_store_has_no_method_that_changes_or_removes_entries(self, kind: str) -> None:
        if kind == "postgres":
            cls: type = pytest.importorskip("ctxengine.stores.postgres").PostgresStore
        else:
            cls = SQLiteStore
        words = ("update", "delete", "remove", "replace", "edit", "set_", "truncate")
        assert [n for n in dir(cls) if any(w in n.lower() for w in words)] == []

    #: For each statement: the SQLite form, the PostgreSQL form, the database's refusal.
    CHANGES = (
        ("UPDATE entries SET kind = 'pin' WHERE seq = 1",) * 2 + ("entries are append-only",),
        ("DELETE FROM entries WHERE seq = 2",) * 2 + ("entries are append-only",),
        ("DELETE FROM entries", "TRUNCATE entries", "entries are append-only"),
        (
            "INSERT OR REPLACE INTO entries SELECT session_id, 3, 'e0', NULL, kind, "
            "created_at, body, meta FROM entries WHERE seq = 0",
            "INSERT INTO entries SELECT session_id, 3, 'e0', NULL, kind, created_at, body, "
            "meta FROM entries WHERE seq = 0 ON CONFLICT DO NOTHING",
            "entries are append-only: an insert must continue the log with a new id",
        ),
        (
            "INSERT INTO entries SELECT session_id, 5, 'e9', NULL, kind, created_at, body, "
            "meta FROM entries WHERE seq = 0",
        )
        * 2
        + ("entries are append-only: an insert must continue the log with a new id",),
    )

    @pytest.mark.parametrize(("sqlite_sql", "pg_sql", "message"), CHANGES)
    def test_raw_sql_cannot_change_a_stored_entry(
        self, backend: Backend, sqlite_sql: str, pg_sql: str, message: str
    ) -> None:
        with backend.open() as store:
            store.import_session(imported("s1", make_log("s1", 3)))
        before = backend.stored_keys()
        with backend.raw() as conn, pytest.raises(backend.integrity_errors) as info:
            conn.execute(pg_sql if backend.is_pg else sqlite_sql)
        assert backend.message(info.value) == message
        assert backend.stored_keys() == before
        with backend.open() as store:
            assert store.entries("s1") == make_log("s1", 3)


class TestAtomicity:
    def test_a_failing_fifth_insert_leaves_the_database_as_it_was(self, backend: Backend) -> None:
        with backend.open() as store:
            store.import_session(imported("s1", make_log("s1", 3)))
            before = backend.stored_keys()
            batch = make_log("s1", 10, start=3)
            batch[4] = Entry("e4", "s1", 7, batch[4].body)  # the id of the 2nd, a fresh seq
            with pytest.raises(StoreError) as info:
                store.append("s1", batch)
            assert backend.stored_keys() == before
            assert store.last_seq("s1") == 2
        assert str(info.value) == backend.where(
            "append to session 's1' failed: entries are append-only: "
            "an insert must continue the log with a new id"
        )
        assert isinstance(info.value.__cause__, backend.integrity_errors) or isinstance(
            getattr(info.value.__cause__, "orig", None), backend.integrity_errors
        )

    def test_an_unserialisable_meta_aborts_the_whole_import(self, backend: Backend) -> None:
        with backend.open() as store:
            store.import_session(imported("s1", make_log("s1", 3)))
            before = backend.stored_keys()
            log = make_log("s2", 8)
            log[4] = Entry("e4", "s2", 4, log[4].body, meta={"handle": object()})
            with pytest.raises(StoreError) as info:
                store.import_session(imported("s2", log, path="new.jsonl"))
            assert backend.stored_keys() == before
            assert [s.id for s in store.sessions()] == ["s1"]
        assert str(info.value) == backend.where(
            "import session 's2' from new.jsonl: entry 'e4' (seq 4) "
            "cannot be serialised: Type is not JSON serializable: object"
        )

    def test_a_repeated_id_in_a_grown_log_stores_none_of_the_tail(self, backend: Backend) -> None:
        with backend.open() as store:
            store.import_session(imported("s1", make_log("s1", 3)))
            before = backend.stored_keys()
            grown = make_log("s1", 9)
            grown[7] = Entry("e5", "s1", 7, grown[7].body)
            with pytest.raises(StoreError) as info:
                store.import_session(imported("s1", grown))
            assert backend.stored_keys() == before
        assert str(info.value) == backend.where(
            "import session 's1' from log.jsonl: entry id 'e5' occurs twice"
        )

    def test_an_entry_of_another_session_aborts_the_import(self, backend: Backend) -> None:
        with backend.open() as store:
            store.import_session(imported("s1", make_log("s1", 3)))
            before = backend.stored_keys()
            grown = make_log("s1", 6)
            grown[4] = Entry("e4", "s2", 4, grown[4].body)
            with pytest.raises(StoreError, match="entry 'e4' belongs to session 's2'"):
                store.import_session(imported("s1", grown))
            assert backend.stored_keys() == before


class TestIsolation:
    def test_a_reader_sees_only_committed_writes(self, backend: Backend) -> None:
        with backend.open() as writer, backend.open() as reader:
            writer.import_session(imported("s1", make_log("s1", 2)))
            with backend.raw() as raw:
                raw.execute("BEGIN" if backend.is_pg else "BEGIN IMMEDIATE")
                raw.execute(
                    "INSERT INTO entries SELECT session_id, 2, 'e2', 'e1', kind, created_at, "
                    "body, meta FROM entries WHERE seq = 0"
                )
                raw.execute("INSERT INTO sessions (id, format) VALUES ('s2', 'live')")
                assert reader.last_seq("s1") == 1
                assert [(s.id, s.entry_count) for s in reader.sessions()] == [("s1", 2)]
                raw.execute("COMMIT")
            assert [e.id for e in reader.entries("s1")] == ["e0", "e1", "e2"]
            assert [(s.id, s.entry_count) for s in reader.sessions()] == [("s1", 3), ("s2", 0)]

    def test_a_second_store_sees_an_import_once_it_returns(self, backend: Backend) -> None:
        with backend.open() as writer, backend.open() as reader:
            assert reader.sessions() == []
            writer.import_session(imported("s1", make_log("s1", 4)))
            assert reader.entries("s1") == make_log("s1", 4)

    def test_a_reader_does_not_wait_for_a_writer_holding_its_locks(self, backend: Backend) -> None:
        with backend.open(busy_timeout_s=0.3) as store:
            store.import_session(imported("s1", make_log("s1", 2)))
            with backend.write_locked():
                t0 = time.monotonic()
                assert [e.id for e in store.entries("s1")] == ["e0", "e1"]
                assert [s.id for s in store.sessions()] == ["s1"]
                read_s = time.monotonic() - t0
                t0 = time.monotonic()
                with pytest.raises(StoreBusy) as info:
                    store.append("s1", make_log("s1", 3, start=2))
                write_s = time.monotonic() - t0
            assert store.append("s1", make_log("s1", 3, start=2)) == 1
        assert read_s < 0.3
        assert 0.3 <= write_s < 5
        expected = "held a lock this write needs" if backend.is_pg else "held the write lock"
        assert str(info.value) == backend.where(
            f"append to session 's1' failed: store busy (another writer {expected} longer "
            "than the 0.3 s busy timeout)"
        )


class TestCompareAndAppend:
    def test_an_append_on_the_expected_last_seq_is_stored(self, store: Store) -> None:
        store.create_session(SessionInfo("s1", "live"))
        assert store.append("s1", make_log("s1", 2), expect_last_seq=-1) == 2
        assert store.append("s1", make_log("s1", 5, start=2), expect_last_seq=1) == 3
        assert store.entries("s1") == make_log("s1", 5)

    @pytest.mark.parametrize("expected", [-1, 1, 3, 7])
    def test_any_other_expectation_is_a_conflict_and_stores_nothing(
        self, store: Store, expected: int
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

    def test_the_expectation_is_checked_before_stored_ids_are_skipped(self, store: Store) -> None:
        store.import_session(imported("s1", make_log("s1", 3)))
        with pytest.raises(StoreConflict):
            store.append("s1", make_log("s1", 3), expect_last_seq=-1)
        assert store.append("s1", make_log("s1", 3), expect_last_seq=2) == 0

    def test_an_unknown_session_is_not_found_before_any_conflict(self, store: Store) -> None:
        with pytest.raises(SessionNotFound):
            store.append("nope", make_log("nope", 1), expect_last_seq=5)

    def test_a_stale_plain_append_is_a_conflict_a_gap_stays_a_store_error(
        self, store: Store
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

    def test_a_loser_catches_up_with_entries_after_and_appends_on_top(self, store: Store) -> None:
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


def test_a_session_given_a_location_opens_that_store(backend: Backend) -> None:
    from ctxengine.engine import Session
    from ctxengine.model import user

    location = backend.location if backend.is_pg else f"sqlite:///{backend.location}"
    session = Session(8_000, store=location, session_id="live-1")
    first = session.append(user("hello"), entry_id="u0")
    assert session.store is not None and session.store.last_seq("live-1") == 0
    session.store.close()
    with backend.open() as store:
        assert store.entries("live-1") == [first]
