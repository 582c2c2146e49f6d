"""Readers never wait and never write; writers wait up to the busy timeout and then fail
with ``StoreBusy``. A second connection holds the write lock with ``BEGIN IMMEDIATE``."""

from __future__ import annotations

import sqlite3
import time
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

import pytest
from backends import Backend

from ctxengine.errors import ConfigError, StoreBusy, StoreError, StoreMissing
from ctxengine.importers.base import ImportedSession
from ctxengine.model import Entry, Message, TextPart
from ctxengine.policy.defaults import IMPORT_BATCH_ENTRIES
from ctxengine.stores import SessionInfo, SQLiteStore
from ctxengine.stores import sqlite as sqlite_module
from ctxengine.stores.sqlite import BUSY_TIMEOUT_ENV_VAR, BUSY_TIMEOUT_S


def entries(session_id: str, n: int) -> list[Entry]:
    return [
        Entry(
            f"e{i}",
            session_id,
            i,
            Message("user", (TextPart(f"message {i}"),)),
            parent_id=f"e{i - 1}" if i else None,
            created_at=f"2026-03-01T10:00:{i:02d}Z",
        )
        for i in range(n)
    ]


def imported(session_id: str, n: int) -> ImportedSession:
    return ImportedSession(session_id, "test", "t.jsonl", tuple(entries(session_id, n)), "t", {})


@contextmanager
def write_locked(db: Path) -> Iterator[None]:
    """Another connection holds the database's write lock for the block."""
    raw = sqlite3.connect(db, isolation_level=None)
    raw.execute("BEGIN IMMEDIATE")
    raw.execute("INSERT INTO sessions (id, format) VALUES ('held', 'live')")
    try:
        yield
    finally:
        raw.execute("ROLLBACK")
        raw.close()


@pytest.fixture
def filled(backend: Backend) -> Backend:
    with backend.open() as store:
        store.import_session(imported("s1", 3))
    return backend


class TestReadOnly:
    def test_a_missing_store_is_reported_and_not_created(self, tmp_path: Path) -> None:
        path = tmp_path / "new.db"
        with pytest.raises(StoreMissing) as info:
            SQLiteStore(path, read_only=True)
        assert str(info.value) == f"no store at {path} (nothing has been imported there yet)"
        assert info.value.path == str(path)
        assert sorted(p.name for p in tmp_path.iterdir()) == []

    def test_an_empty_postgres_database_is_no_store_and_stays_empty(self, pg_url: str) -> None:
        from ctxengine.stores.location import redact
        from ctxengine.stores.postgres import PostgresStore

        backend = Backend("postgres", pg_url)
        tables = "SELECT tablename FROM pg_tables WHERE schemaname = current_schema()"
        with pytest.raises(StoreMissing) as info:
            PostgresStore(pg_url, read_only=True)
        assert str(info.value) == (
            f"no store at {redact(pg_url)} (nothing has been imported there yet)"
        )
        assert backend.rows(tables) == []

    def test_it_reads_while_another_connection_holds_the_write_lock(self, filled: Backend) -> None:
        with filled.write_locked():
            t0 = time.monotonic()
            with filled.open(read_only=True, busy_timeout_s=3) as store:
                assert [s.id for s in store.sessions()] == ["s1"]
                assert [e.id for e in store.entries("s1")] == ["e0", "e1", "e2"]
                # a stored session is found by a read: no write lock wanted
                assert store.create_session(SessionInfo("s1", "live")) is False
            took = time.monotonic() - t0
        assert took < 1.0

    def test_it_never_writes(self, filled: Backend) -> None:
        before = filled.stored_keys()
        with filled.open(read_only=True) as store:
            with pytest.raises(StoreError) as info:
                store.create_session(SessionInfo("new", "live"))
            assert str(info.value) == filled.where("create session 'new' refused: opened read-only")
            with pytest.raises(StoreError, match="refused: opened read-only"):
                store.append("s1", entries("s1", 4)[3:])
        assert filled.stored_keys() == before

    def test_the_file_is_not_touched(self, tmp_path: Path) -> None:
        db = tmp_path / "ctx.db"
        with SQLiteStore(db) as store:
            store.import_session(imported("s1", 3))
        before = db.read_bytes()
        with SQLiteStore(db, read_only=True) as store:
            assert store.last_seq("s1") == 2
        assert db.read_bytes() == before

    def test_a_postgres_read_only_store_runs_read_only_transactions(self, pg_url: str) -> None:
        from sqlalchemy import text

        with Backend("postgres", pg_url).open() as store:
            store.import_session(imported("s1", 3))
        with (
            Backend("postgres", pg_url).open(read_only=True) as store,
            store._read("check") as conn,  # type: ignore[union-attr]
        ):
            mode = conn.execute(text("SHOW transaction_read_only")).scalar()
        assert mode == "on"

    def test_an_older_schema_is_refused_not_migrated(self, backend: Backend) -> None:
        with backend.raw() as conn:
            conn.execute("CREATE TABLE schema_migrations (name TEXT PRIMARY KEY, applied_at TEXT)")
            conn.execute("INSERT INTO schema_migrations VALUES ('m001_initial', 'x')")
        with pytest.raises(StoreError) as info:
            backend.open(read_only=True)
        lacking = (
            "m002_imports, m003_stateless_checkpoints, m004_session_links, m005_usage_anchors"
            if backend.is_pg
            else "m002_import_reports, m003_imported_seqs, m004_stateless_checkpoints, "
            "m005_session_links, m006_usage_anchors"
        )
        assert str(info.value) == backend.where(
            f"the schema lacks migrations {lacking}: open the store for writing once (any "
            "import) to migrate it; a read-only open never writes"
        )
        assert backend.rows("SELECT name FROM schema_migrations") == [("m001_initial",)]


class TestBusy:
    def test_a_writer_waits_the_busy_timeout_then_fails_with_store_busy(
        self, filled: Backend
    ) -> None:
        with filled.open(busy_timeout_s=0.4) as store, filled.write_locked():
            t0 = time.monotonic()
            with pytest.raises(StoreBusy) as info:
                store.import_session(imported("s2", 2))
            waited = time.monotonic() - t0
        assert 0.4 <= waited < 2.0
        assert info.value.timeout_s == 0.4
        held = "held a lock this write needs" if filled.is_pg else "held the write lock"
        assert str(info.value) == filled.where(
            f"import session 's2' from t.jsonl failed: store busy (another writer {held} "
            "longer than the 0.4 s busy timeout)"
        )
        with filled.open() as store:
            assert [s.id for s in store.sessions()] == ["s1"]

    def test_the_environment_sets_the_default(
        self, filled: Backend, monkeypatch: pytest.MonkeyPatch
    ) -> None:
        monkeypatch.setenv(BUSY_TIMEOUT_ENV_VAR, "0.25")
        with filled.open() as store:
            assert store.busy_timeout_s == 0.25
        with filled.open(busy_timeout_s=2) as store:
            assert store.busy_timeout_s == 2.0
        monkeypatch.delenv(BUSY_TIMEOUT_ENV_VAR)
        with filled.open() as store:
            assert store.busy_timeout_s == BUSY_TIMEOUT_S == 5.0

    @pytest.mark.parametrize("bad", ["soon", "-1", "inf"])
    def test_a_bad_environment_value_is_refused(
        self, filled: Backend, monkeypatch: pytest.MonkeyPatch, bad: str
    ) -> None:
        monkeypatch.setenv(BUSY_TIMEOUT_ENV_VAR, bad)
        with pytest.raises(ConfigError) as info:
            filled.open()
        assert str(info.value) == (
            f"CTXENGINE_BUSY_TIMEOUT={bad!r}: expected a finite number of seconds >= 0"
        )

    def test_opening_a_stored_session_for_writing_does_not_wait(self, filled: Backend) -> None:
        with filled.write_locked(), filled.open(busy_timeout_s=3) as store:
            t0 = time.monotonic()
            assert store.create_session(SessionInfo("s1", "live")) is False
            assert time.monotonic() - t0 < 1.0


class TestBatchedImport:
    def test_the_batch_size_is_the_policy_default(self) -> None:
        assert sqlite_module.IMPORT_BATCH_ENTRIES == IMPORT_BATCH_ENTRIES == 5_000

    def test_an_import_commits_in_batches_and_records_itself_with_the_last(
        self, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
    ) -> None:
        monkeypatch.setattr(sqlite_module, "IMPORT_BATCH_ENTRIES", 3)
        with SQLiteStore(tmp_path / "ctx.db") as store:
            writes: list[str] = []
            real = store._write

            @contextmanager
            def counted(operation: str) -> Iterator[sqlite3.Connection]:
                writes.append(operation)
                with real(operation) as conn:
                    yield conn

            monkeypatch.setattr(store, "_write", counted)
            result = store.import_session(imported("s1", 10))
            assert (result.added, result.skipped) == (10, 0)
            assert len(writes) == 4  # 3 + 3 + 3 + 1
            assert [e.id for e in store.entries("s1")] == [f"e{i}" for i in range(10)]
            assert [r.added for r in store.import_reports("s1")] == [10]

    def test_an_import_cut_off_leaves_a_prefix_that_a_second_import_completes(
        self, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
    ) -> None:
        monkeypatch.setattr(sqlite_module, "IMPORT_BATCH_ENTRIES", 3)
        db = tmp_path / "ctx.db"
        with SQLiteStore(db, busy_timeout_s=0.2) as store:
            real = store._write
            calls = [0]

            @contextmanager
            def third_is_busy(operation: str) -> Iterator[sqlite3.Connection]:
                calls[0] += 1
                if calls[0] == 3:
                    with write_locked(db), real(operation) as conn:
                        yield conn
                else:
                    with real(operation) as conn:
                        yield conn

            monkeypatch.setattr(store, "_write", third_is_busy)
            with pytest.raises(StoreBusy) as info:
                store.import_session(imported("s1", 10))
            assert info.value.stored == 6
            assert str(info.value) == (
                f"sqlite store {db}: import session 's1' from t.jsonl failed: store busy "
                "(another writer held the write lock longer than the 0.2 s busy timeout); 6 of "
                "its 10 entries were stored before the failure: import the file again to add "
                "the rest"
            )
            assert [e.id for e in store.entries("s1")] == [f"e{i}" for i in range(6)]
            assert store.import_reports("s1") == []
            monkeypatch.setattr(store, "_write", real)
            result = store.import_session(imported("s1", 10))
            assert (result.added, result.skipped) == (4, 6)
            assert [e.seq for e in store.entries("s1")] == list(range(10))
            assert [r.added for r in store.import_reports("s1")] == [4]
