"""Schema migrations: numbered, recorded, each in its own transaction, idempotent."""

from __future__ import annotations

import sqlite3
import time
from pathlib import Path

import pytest

from ctxengine.errors import StoreBusy, StoreError
from ctxengine.stores import SessionInfo, SQLiteStore
from ctxengine.stores import migrations as mig
from ctxengine.stores.migrations import MIGRATIONS, m001_initial, migrate, schema_version


def schema(conn: sqlite3.Connection) -> list[tuple[str, str, str]]:
    rows = conn.execute("SELECT type, name, sql FROM sqlite_master ORDER BY type, name")
    return [tuple(r) for r in rows]


def connect(path: Path) -> sqlite3.Connection:
    return sqlite3.connect(path, isolation_level=None)


class TestMigrate:
    def test_a_new_database_gets_every_migration_and_a_version(self, tmp_path: Path) -> None:
        conn = connect(tmp_path / "ctx.db")
        applied = migrate(conn)
        assert applied == [
            "m001_initial",
            "m002_import_reports",
            "m003_imported_seqs",
            "m004_stateless_checkpoints",
            "m005_session_links",
            "m006_usage_anchors",
        ]
        assert schema_version(conn) == len(MIGRATIONS) == 6
        names = [r[0] for r in conn.execute("SELECT name FROM schema_migrations")]
        assert names == applied
        objects = [(kind, name) for kind, name, _ in schema(conn) if not name.startswith("sqlite_")]
        assert objects == [
            ("index", "import_reports_session"),
            ("index", "imported_seqs_session"),
            ("index", "session_links_parent"),
            ("table", "entries"),
            ("table", "import_reports"),
            ("table", "imported_seqs"),
            ("table", "schema_migrations"),
            ("table", "session_links"),
            ("table", "sessions"),
            ("table", "stateless_checkpoints"),
            ("table", "usage_anchors"),
            ("trigger", "entries_append_only_delete"),
            ("trigger", "entries_append_only_insert"),
            ("trigger", "entries_append_only_update"),
            ("trigger", "session_links_append_only_delete"),
            ("trigger", "session_links_append_only_update"),
        ]

    def test_migrating_twice_applies_nothing_and_leaves_the_schema_alone(
        self, tmp_path: Path
    ) -> None:
        conn = connect(tmp_path / "ctx.db")
        migrate(conn)
        before = schema(conn)
        assert migrate(conn) == []
        assert schema(conn) == before
        assert schema_version(conn) == 6
        assert conn.execute("SELECT COUNT(*) FROM schema_migrations").fetchone()[0] == 6

    def test_reopening_a_store_applies_nothing(self, tmp_path: Path) -> None:
        SQLiteStore(tmp_path / "ctx.db").close()
        conn = connect(tmp_path / "ctx.db")
        before = schema(conn)
        SQLiteStore(tmp_path / "ctx.db").close()
        assert schema(conn) == before
        assert migrate(conn) == []

    def test_a_failing_migration_is_rolled_back_alone(
        self, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
    ) -> None:
        def m002_broken(conn: sqlite3.Connection) -> None:
            conn.execute("CREATE TABLE half_done (x INTEGER)")
            conn.execute("ALTER TABLE no_such_table ADD COLUMN y TEXT")

        monkeypatch.setattr(mig, "MIGRATIONS", [m001_initial, m002_broken])
        conn = connect(tmp_path / "ctx.db")
        with pytest.raises(StoreError) as info:
            migrate(conn)
        assert str(info.value) == "migration m002_broken failed: no such table: no_such_table"
        names = [r[1] for r in schema(conn)]
        assert "half_done" not in names
        assert "entries" in names
        assert schema_version(conn) == 1
        assert [r[0] for r in conn.execute("SELECT name FROM schema_migrations")] == [
            "m001_initial"
        ]

    def test_a_database_of_the_first_schema_gets_the_import_reports_table(
        self, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
    ) -> None:
        db = tmp_path / "ctx.db"
        monkeypatch.setattr(mig, "MIGRATIONS", [m001_initial])
        with SQLiteStore(db) as store:
            store.create_session(SessionInfo("s1", "live"))
        monkeypatch.undo()
        with SQLiteStore(db) as store:
            assert store.import_reports("s1") == []
        assert schema_version(connect(db)) == 6

    def test_a_database_from_a_newer_version_is_refused(self, tmp_path: Path) -> None:
        conn = connect(tmp_path / "ctx.db")
        migrate(conn)
        conn.execute("INSERT INTO schema_migrations VALUES ('m099_future', '2030-01-01')")
        with pytest.raises(StoreError) as info:
            SQLiteStore(tmp_path / "ctx.db")
        assert str(info.value) == (
            "database schema is newer than this ctxengine (unknown migrations: m099_future); "
            "upgrade ctxengine to open it"
        )

    def test_migrate_refuses_a_connection_inside_a_transaction(self) -> None:
        conn = sqlite3.connect(":memory:", isolation_level=None)
        conn.execute("BEGIN")
        with pytest.raises(StoreError, match="no open transaction"):
            migrate(conn)


class TestReadFirst:
    """An up-to-date database is only read when a store opens: no write lock is taken."""

    def test_a_store_opens_and_reads_while_another_connection_holds_a_write(
        self, tmp_path: Path
    ) -> None:
        db = tmp_path / "ctx.db"
        with SQLiteStore(db) as store:
            store.create_session(SessionInfo("s1", "live"))
        raw = connect(db)
        raw.execute("BEGIN IMMEDIATE")
        raw.execute("INSERT INTO sessions (id, format) VALUES ('s2', 'live')")
        try:
            t0 = time.monotonic()
            with SQLiteStore(db, busy_timeout_s=0.5) as store:
                assert [s.id for s in store.sessions()] == ["s1"]
            opened_s = time.monotonic() - t0
        finally:
            raw.execute("ROLLBACK")
            raw.close()
        assert opened_s < 0.5

    def test_migrate_reads_only_when_nothing_is_missing(self, tmp_path: Path) -> None:
        db = tmp_path / "ctx.db"
        migrate(connect(db))
        raw = connect(db)
        raw.execute("BEGIN IMMEDIATE")
        conn = sqlite3.connect(db, isolation_level=None, timeout=0)
        try:
            assert migrate(conn) == []
            assert not conn.in_transaction
        finally:
            raw.execute("ROLLBACK")
            raw.close()

    def test_a_missing_migration_still_waits_for_the_write_lock(self, tmp_path: Path) -> None:
        db = tmp_path / "ctx.db"
        raw = connect(db)
        assert raw.execute("PRAGMA journal_mode = WAL").fetchone()[0] == "wal"
        raw.execute("BEGIN IMMEDIATE")
        raw.execute("CREATE TABLE other (x INTEGER)")
        try:
            with pytest.raises(StoreError) as info:
                SQLiteStore(db, busy_timeout_s=0.1)
        finally:
            raw.execute("ROLLBACK")
            raw.close()
        assert isinstance(info.value, StoreBusy)
        assert str(info.value) == (
            f"sqlite store {db}: open failed: store busy (another writer held the write lock "
            "longer than the 0.1 s busy timeout)"
        )
        with SQLiteStore(db) as store:
            assert store.sessions() == []
        assert schema_version(connect(db)) == 6
