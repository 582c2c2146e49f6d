"""Schema migrations of the PostgreSQL store: numbered, recorded, each once under an advisory
lock (however many processes open a new database together), a failed one rolled back whole,
an up-to-date database only read, a newer one refused."""

from __future__ import annotations

import multiprocessing
from typing import Any

import pytest
from backends import Backend

from ctxengine.errors import StoreError
from ctxengine.stores import SessionInfo

pytest.importorskip("sqlalchemy")
pytest.importorskip("psycopg")

from sqlalchemy import Connection, text

from ctxengine.stores import pg_migrations as mig
from ctxengine.stores.postgres import PostgresStore

SPAWN = multiprocessing.get_context("spawn")
NAMES = [
    "m001_initial",
    "m002_imports",
    "m003_stateless_checkpoints",
    "m004_session_links",
    "m005_usage_anchors",
]
OBJECTS = "SELECT tablename FROM pg_tables WHERE schemaname = current_schema() ORDER BY 1"
TRIGGERS = (
    "SELECT tgrelid::regclass::text, tgname FROM pg_trigger WHERE NOT tgisinternal ORDER BY 1, 2"
)


def open_in_child(url: str, barrier: Any, out: Any) -> None:
    """Wait for the others, open the store (migrating), report the session count."""
    barrier.wait()
    with PostgresStore(url) as store:
        out.put(len(store.sessions()))


def test_a_new_database_gets_every_migration_once(pg_url: str) -> None:
    backend = Backend("postgres", pg_url)
    PostgresStore(pg_url).close()
    assert [r[0] for r in backend.rows("SELECT name FROM schema_migrations ORDER BY name")] == (
        NAMES
    )
    assert [fn.__name__ for fn in mig.MIGRATIONS] == NAMES
    assert [r[0] for r in backend.rows(OBJECTS)] == [
        "entries",
        "import_reports",
        "imported_seqs",
        "schema_migrations",
        "session_links",
        "sessions",
        "stateless_checkpoints",
        "usage_anchors",
    ]
    assert backend.rows(TRIGGERS) == [
        ("entries", "entries_append_only_delete"),
        ("entries", "entries_append_only_insert"),
        ("entries", "entries_append_only_truncate"),
        ("entries", "entries_append_only_update"),
        ("session_links", "session_links_append_only_delete"),
        ("session_links", "session_links_append_only_update"),
    ]
    before = backend.rows("SELECT name, applied_at FROM schema_migrations ORDER BY name")
    with PostgresStore(pg_url) as store:
        assert store.sessions() == []
    assert backend.rows("SELECT name, applied_at FROM schema_migrations ORDER BY name") == before


def test_four_processes_opening_a_new_database_apply_each_migration_once(pg_url: str) -> None:
    barrier, out = SPAWN.Barrier(4), SPAWN.Queue()
    procs = [SPAWN.Process(target=open_in_child, args=(pg_url, barrier, out)) for _ in range(4)]
    for p in procs:
        p.start()
    for p in procs:
        p.join(120)
    assert [p.exitcode for p in procs] == [0] * 4
    assert sorted(out.get(timeout=10) for _ in range(4)) == [0, 0, 0, 0]
    rows = Backend("postgres", pg_url).rows(
        "SELECT name, COUNT(*) FROM schema_migrations GROUP BY name ORDER BY name"
    )
    assert rows == [(name, 1) for name in NAMES]


def test_an_up_to_date_database_opens_while_another_transaction_locks_every_table(
    pg_url: str,
) -> None:
    with PostgresStore(pg_url) as store:
        store.create_session(SessionInfo("s1", "live"))
    backend = Backend("postgres", pg_url)
    with backend.write_locked(), PostgresStore(pg_url, busy_timeout_s=0.2) as store:
        assert [s.id for s in store.sessions()] == ["s1"]


def test_a_failing_migration_is_rolled_back_whole(
    pg_url: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    def m002_broken(conn: Connection) -> None:
        conn.execute(text("CREATE TABLE half_done (x INTEGER)"))
        conn.execute(text("ALTER TABLE no_such_table ADD COLUMN y TEXT"))

    monkeypatch.setattr(mig, "MIGRATIONS", [mig.m001_initial, m002_broken])
    backend = Backend("postgres", pg_url)
    with pytest.raises(StoreError) as info:
        PostgresStore(pg_url)
    assert str(info.value) == backend.where(
        'migration m002_broken failed: relation "no_such_table" does not exist'
    )
    assert [r[0] for r in backend.rows(OBJECTS)] == ["entries", "schema_migrations", "sessions"]
    assert backend.rows("SELECT name FROM schema_migrations") == [("m001_initial",)]
    monkeypatch.undo()
    with PostgresStore(pg_url) as store:
        assert store.sessions() == []
    assert len(backend.rows("SELECT name FROM schema_migrations")) == len(NAMES)


def test_a_database_from_a_newer_version_is_refused(pg_url: str) -> None:
    PostgresStore(pg_url).close()
    backend = Backend("postgres", pg_url)
    with backend.raw() as conn:
        conn.execute("INSERT INTO schema_migrations VALUES ('m099_future', '2030-01-01')")
    for read_only in (False, True):
        with pytest.raises(StoreError) as info:
            PostgresStore(pg_url, read_only=read_only)
        assert str(info.value) == backend.where(
            "database schema is newer than this ctxengine (unknown migrations: m099_future); "
            "upgrade ctxengine to open it"
        )


def test_a_server_that_cannot_be_reached_is_a_store_error() -> None:
    url = "postgresql://nobody:secret@/nowhere?host=/nonexistent-socket-dir"
    with pytest.raises(StoreError) as info:
        PostgresStore(url)
    assert str(info.value) == (
        "postgresql store postgresql://nobody:***@/nowhere?host=/nonexistent-socket-dir: "
        'open failed: connection is bad: connection to server on socket "/nonexistent-socket-'
        'dir/.s.PGSQL.5432" failed: No such file or directory'
    )
