"""Numbered schema migrations of the SQLite store.

Each migration is a function ``mNNN_what(conn)`` registered with :func:`migration`, in the
order it must run. :func:`migrate` applies the missing ones, each in its own transaction,
records each name in ``schema_migrations(name, applied_at)`` and sets ``PRAGMA user_version``
to the number of applied migrations. Migrating an up-to-date database does nothing.

A migration is never edited once released: a schema change is a new migration. Statements run
one by one through ``conn.execute`` (``executescript`` would commit the open transaction).
"""

from __future__ import annotations

import sqlite3
from collections.abc import Callable
from datetime import UTC, datetime

import orjson

from ctxengine.errors import StoreError

Migration = Callable[[sqlite3.Connection], None]

#: Every migration, in application order. Append with :func:`migration`.
MIGRATIONS: list[Migration] = []


def migration(fn: Migration) -> Migration:
    """Register ``fn`` as the next migration; its ``__name__`` is its recorded name."""
    MIGRATIONS.append(fn)
    return fn


_APPEND_ONLY = "entries are append-only"


@migration
def m001_initial(conn: sqlite3.Connection) -> None:
    """Sessions, entries and the triggers that make entries append-only.

    ``entries`` holds each entry body as the orjson bytes of ``codec.body_to_dict``. The
    insert trigger keeps every session log gap-free from seq 0 and refuses a stored id, so
    ``INSERT OR REPLACE`` cannot overwrite an entry; update and delete triggers refuse any
    change to a stored entry.
    """
    statements = (
        """CREATE TABLE sessions (
            id TEXT PRIMARY KEY,
            format TEXT NOT NULL,
            source_path TEXT,
            title TEXT,
            created_at TEXT,
            meta BLOB
        )""",
        """CREATE TABLE entries (
            session_id TEXT NOT NULL REFERENCES sessions(id),
            seq INTEGER NOT NULL CHECK (seq >= 0),
            id TEXT NOT NULL,
            parent_id TEXT,
            kind TEXT NOT NULL,
            created_at TEXT,
            body BLOB NOT NULL,
            meta BLOB,
            PRIMARY KEY (session_id, seq),
            UNIQUE (session_id, id)
        )""",
        f"""CREATE TRIGGER entries_append_only_insert BEFORE INSERT ON entries
            WHEN NEW.seq <> (SELECT COALESCE(MAX(seq), -1) + 1 FROM entries
                             WHERE session_id = NEW.session_id)
              OR EXISTS (SELECT 1 FROM entries
                         WHERE session_id = NEW.session_id AND id = NEW.id)
            BEGIN SELECT RAISE(ABORT,
                '{_APPEND_ONLY}: an insert must continue the log with a new id'); END""",
        f"""CREATE TRIGGER entries_append_only_update BEFORE UPDATE ON entries
            BEGIN SELECT RAISE(ABORT, '{_APPEND_ONLY}'); END""",
        f"""CREATE TRIGGER entries_append_only_delete BEFORE DELETE ON entries
            BEGIN SELECT RAISE(ABORT, '{_APPEND_ONLY}'); END""",
    )
    for sql in statements:
        conn.execute(sql)


@migration
def m002_import_reports(conn: sqlite3.Connection) -> None:
    """One row per import of a transcript: when, from which file, how many entries it added,
    and the importer's report of what it skipped, repaired and ignored (orjson bytes of
    ``ImportReport.to_dict()``)."""
    conn.execute(
        """CREATE TABLE import_reports (
            session_id TEXT NOT NULL REFERENCES sessions(id),
            imported_at TEXT NOT NULL,
            source_path TEXT,
            format TEXT NOT NULL,
            added INTEGER NOT NULL,
            report BLOB NOT NULL
        )"""
    )
    conn.execute("CREATE INDEX import_reports_session ON import_reports (session_id)")


@migration
def m003_imported_seqs(conn: sqlite3.Connection) -> None:
    """The seqs imports stored, one row per committed batch (``first_seq`` … ``last_seq``, a
    supersede record included), so that a later import of the same transcript can tell the
    entries imports stored from those the engine appended (:mod:`ctxengine.stores._reimport`).

    Sessions imported before this migration get their spans from what their entries are:
    in a session with a stored import, every entry but a record only the engine makes (a
    compaction whose ``summarizer`` is not ``"imported"``, a prune or pin record) counts as
    imported, one row per run of such entries.
    """
    conn.execute(
        """CREATE TABLE imported_seqs (
            session_id TEXT NOT NULL REFERENCES sessions(id),
            first_seq INTEGER NOT NULL,
            last_seq INTEGER NOT NULL
        )"""
    )
    conn.execute("CREATE INDEX imported_seqs_session ON imported_seqs (session_id)")
    sessions = [
        row[0]
        for row in conn.execute("SELECT DISTINCT session_id FROM import_reports WHERE added > 0")
    ]
    for sid in sessions:
        spans: list[list[int]] = []
        rows = conn.execute(
            "SELECT seq, kind, body FROM entries WHERE session_id = ? ORDER BY seq", (sid,)
        ).fetchall()
        for seq, kind, body in rows:
            engine = kind in ("prune", "pin", "unpin") or (
                kind == "compaction" and orjson.loads(body).get("summarizer") != "imported"
            )
            if engine:
                continue
            if spans and spans[-1][1] == seq - 1:
                spans[-1][1] = seq
            else:
                spans.append([seq, seq])
        conn.executemany(
            "INSERT INTO imported_seqs (session_id, first_seq, last_seq) VALUES (?, ?, ?)",
            [(sid, a, b) for a, b in spans],
        )


@migration
def m004_stateless_checkpoints(conn: sqlite3.Connection) -> None:
    """Checkpoints of stateless calls (:mod:`ctxengine.engine.stateless`): one row per
    request served, keyed by the configuration's hash and the content hash of the request's
    messages (``prefix``), chained to the checkpoint the request continued from
    (``parent``, ``NULL`` for a request compacted from scratch). ``tail`` holds the log
    entries the request appended after its parent's (orjson bytes), ``state`` the session's
    ladder state after it (orjson bytes). A request seen again is the same row: rows are
    never changed."""
    conn.execute(
        """CREATE TABLE stateless_checkpoints (
            config TEXT NOT NULL,
            prefix TEXT NOT NULL,
            parent TEXT,
            messages INTEGER NOT NULL CHECK (messages > 0),
            tail BLOB NOT NULL,
            state BLOB NOT NULL,
            created_at TEXT NOT NULL,
            PRIMARY KEY (config, prefix)
        )"""
    )


@migration
def m005_session_links(conn: sqlite3.Connection) -> None:
    """One row per session started from another one (a fork, a spawned subagent context,
    a hand-off): the parent session, the parent's entry it starts from, the relation and
    when. Rows are append-only, like entries (update and delete triggers refuse)."""
    statements = (
        """CREATE TABLE session_links (
            session_id TEXT PRIMARY KEY REFERENCES sessions(id),
            parent_session_id TEXT NOT NULL REFERENCES sessions(id),
            parent_entry_id TEXT,
            relation TEXT NOT NULL,
            created_at TEXT NOT NULL
        )""",
        "CREATE INDEX session_links_parent ON session_links (parent_session_id)",
        """CREATE TRIGGER session_links_append_only_update BEFORE UPDATE ON session_links
            BEGIN SELECT RAISE(ABORT, 'session links are append-only'); END""",
        """CREATE TRIGGER session_links_append_only_delete BEFORE DELETE ON session_links
            BEGIN SELECT RAISE(ABORT, 'session links are append-only'); END""",
    )
    for sql in statements:
        conn.execute(sql)


@migration
def m006_usage_anchors(conn: sqlite3.Connection) -> None:
    """The provider usage of replies a proxy passed back (the usage anchor), by conversation
    key and the reply's signature (JSON), so that every proxy process sharing the store
    attaches it to the assistant message when the client sends it back, whichever process
    saw the reply. A later reply of the same signature replaces the row: it is a cache of
    the provider's numbers, not history."""
    conn.execute(
        """CREATE TABLE usage_anchors (
            conversation TEXT NOT NULL,
            signature TEXT NOT NULL,
            usage BLOB NOT NULL,
            created_at TEXT NOT NULL,
            PRIMARY KEY (conversation, signature)
        )"""
    )


def schema_version(conn: sqlite3.Connection) -> int:
    """``PRAGMA user_version``: the number of migrations applied to this database."""
    row = conn.execute("PRAGMA user_version").fetchone()
    return int(row[0])


def migrate(conn: sqlite3.Connection) -> list[str]:
    """Apply every registered migration not yet recorded in ``schema_migrations``.

    ``conn`` must be in autocommit mode (``isolation_level=None``) with no open transaction.
    The check reads first: an up-to-date database is only read (no write lock is taken, so
    opening a store never waits for another connection's write transaction). Only when a
    migration is missing does each missing one run in its own ``BEGIN IMMEDIATE``
    transaction, so two processes opening the same new database do not both apply it.

    Returns:
        the names applied by this call, in order (``[]`` when already up to date).

    Raises:
        StoreError: the database records migrations this version does not know (it was
            written by a newer ctxengine), or a migration failed (it is rolled back).
        sqlite3.Error: the connection itself failed; callers wrap it with their context.
    """
    if conn.in_transaction:
        raise StoreError("migrate() needs a connection with no open transaction")
    applied = _applied_if_recorded(conn)
    _refuse_newer(applied)
    if {fn.__name__ for fn in MIGRATIONS} <= applied:
        return []
    conn.execute(
        "CREATE TABLE IF NOT EXISTS schema_migrations "
        "(name TEXT PRIMARY KEY, applied_at TEXT NOT NULL)"
    )
    done: list[str] = []
    for fn in MIGRATIONS:
        if _apply(conn, fn):
            done.append(fn.__name__)
    return done


def check_current(conn: sqlite3.Connection, path: str) -> None:
    """Check, reading only, that the database at ``path`` has every migration and no
    unknown one (a read-only open cannot migrate).

    Raises:
        StoreError: the schema is newer than this version, or older (open the store for
            writing once, e.g. ``ctxengine import``, to migrate it).
        sqlite3.Error: the connection itself failed; callers wrap it with their context.
    """
    applied = _applied_if_recorded(conn)
    _refuse_newer(applied)
    missing = [fn.__name__ for fn in MIGRATIONS if fn.__name__ not in applied]
    if missing:
        raise StoreError(
            f"sqlite store {path}: the schema lacks migrations {', '.join(missing)}: open the "
            "store for writing once (any import) to migrate it; a read-only open never writes"
        )


def _applied_if_recorded(conn: sqlite3.Connection) -> set[str]:
    """Names recorded in ``schema_migrations``; empty when the table does not exist yet.
    Only reads (each statement is its own read transaction)."""
    table = conn.execute(
        "SELECT 1 FROM sqlite_master WHERE type = 'table' AND name = 'schema_migrations'"
    ).fetchone()
    return set() if table is None else _applied(conn)


def _applied(conn: sqlite3.Connection) -> set[str]:
    return {row[0] for row in conn.execute("SELECT name FROM schema_migrations")}


def _refuse_newer(applied: set[str]) -> None:
    unknown = sorted(applied - {fn.__name__ for fn in MIGRATIONS})
    if unknown:
        raise StoreError(
            f"database schema is newer than this ctxengine (unknown migrations: "
            f"{', '.join(unknown)}); upgrade ctxengine to open it"
        )


def _apply(conn: sqlite3.Connection, fn: Migration) -> bool:
    """Run ``fn`` in its own transaction unless already recorded; True when it ran."""
    conn.execute("BEGIN IMMEDIATE")
    try:
        applied = _applied(conn)
        if fn.__name__ in applied:
            conn.execute("ROLLBACK")
            return False
        fn(conn)
        conn.execute(
            "INSERT INTO schema_migrations (name, applied_at) VALUES (?, ?)",
            (fn.__name__, datetime.now(UTC).isoformat(timespec="seconds")),
        )
        conn.execute(f"PRAGMA user_version = {len(applied) + 1}")
        conn.execute("COMMIT")
    except BaseException as exc:
        if conn.in_transaction:
            conn.execute("ROLLBACK")
        if isinstance(exc, sqlite3.Error):
            raise StoreError(f"migration {fn.__name__} failed: {exc}") from exc
        raise
    return True
