"""Numbered schema migrations of the PostgreSQL store.

Each migration is a function ``mNNN_what(conn)`` registered with :func:`migration`, in the
order it must run; ``conn`` is a SQLAlchemy connection inside the migration's transaction
(PostgreSQL runs DDL in transactions: a failed migration leaves nothing behind).
:func:`migrate` applies the missing ones and records each name in
``schema_migrations(name, applied_at)``. Migrating an up-to-date database only reads.

Every process that opens the store may find migrations missing at once (several workers
starting together): each missing migration runs under a transaction-level advisory lock
(:data:`MIGRATION_LOCK_KEY`) and re-reads what is applied once it holds it, so each runs once.

A migration is never edited once released: a schema change is a new migration. The tables
mirror the SQLite store's (:mod:`ctxengine.stores.migrations`); where SQLite keeps the order
rows were stored in ``rowid``, these tables have an identity column ``ord``.
"""

from __future__ import annotations

from collections.abc import Callable
from datetime import UTC, datetime

from sqlalchemy import Connection, text

from ctxengine.errors import StoreError

Migration = Callable[[Connection], None]

#: Every migration, in application order. Append with :func:`migration`.
MIGRATIONS: list[Migration] = []

#: Key of the transaction-level advisory lock migrations run under (any 64-bit number that
#: no other lock of the store uses: the compaction locks hash into another space, see
#: :func:`ctxengine.stores.postgres.lock_key`). ASCII "ctxmigra".
MIGRATION_LOCK_KEY = 0x6374786D69677261

_APPEND_ONLY = "entries are append-only"


def migration(fn: Migration) -> Migration:
    """Register ``fn`` as the next migration; its ``__name__`` is its recorded name."""
    MIGRATIONS.append(fn)
    return fn


def _run(conn: Connection, *statements: str) -> None:
    for sql in statements:
        conn.execute(text(sql))


@migration
def m001_initial(conn: Connection) -> None:
    """Sessions, entries and the triggers that make entries append-only.

    ``entries.body`` holds the orjson bytes of ``codec.body_to_dict`` (``bytea``: the very
    bytes the SQLite store keeps, so a copied entry is byte for byte the same). The insert
    trigger first locks the session's row (one inserter of a session at a time, whoever
    inserts: the check below then sees every committed entry), then refuses an insert that
    does not continue the log from seq 0 or that repeats an id. Update, delete and truncate
    triggers refuse any change to stored entries.
    """
    _run(
        conn,
        """CREATE TABLE sessions (
            ord BIGINT GENERATED ALWAYS AS IDENTITY,
            id TEXT PRIMARY KEY,
            format TEXT NOT NULL,
            source_path TEXT,
            title TEXT,
            created_at TEXT,
            meta BYTEA
        )""",
        "CREATE INDEX sessions_ord ON sessions (ord)",
        """CREATE TABLE entries (
            session_id TEXT NOT NULL REFERENCES sessions(id),
            seq BIGINT NOT NULL CHECK (seq >= 0),
            id TEXT NOT NULL,
            parent_id TEXT,
            kind TEXT NOT NULL,
            created_at TEXT,
            body BYTEA NOT NULL,
            meta BYTEA,
            PRIMARY KEY (session_id, seq),
            UNIQUE (session_id, id)
        )""",
        f"""CREATE FUNCTION ctxengine_entries_insert() RETURNS trigger
            LANGUAGE plpgsql AS $$
            BEGIN
                PERFORM 1 FROM sessions WHERE id = NEW.session_id FOR NO KEY UPDATE;
                IF NEW.seq <> (SELECT COALESCE(MAX(seq), -1) + 1 FROM entries
                               WHERE session_id = NEW.session_id)
                   OR EXISTS (SELECT 1 FROM entries
                              WHERE session_id = NEW.session_id AND id = NEW.id) THEN
                    RAISE EXCEPTION
                        '{_APPEND_ONLY}: an insert must continue the log with a new id'
                        USING ERRCODE = 'integrity_constraint_violation';
                END IF;
                RETURN NEW;
            END $$""",
        """CREATE FUNCTION ctxengine_refuse_change() RETURNS trigger
            LANGUAGE plpgsql AS $$
            BEGIN
                RAISE EXCEPTION '%', TG_ARGV[0]
                    USING ERRCODE = 'integrity_constraint_violation';
            END $$""",
        """CREATE TRIGGER entries_append_only_insert BEFORE INSERT ON entries
            FOR EACH ROW EXECUTE FUNCTION ctxengine_entries_insert()""",
        f"""CREATE TRIGGER entries_append_only_update BEFORE UPDATE ON entries
            FOR EACH ROW EXECUTE FUNCTION ctxengine_refuse_change('{_APPEND_ONLY}')""",
        f"""CREATE TRIGGER entries_append_only_delete BEFORE DELETE ON entries
            FOR EACH ROW EXECUTE FUNCTION ctxengine_refuse_change('{_APPEND_ONLY}')""",
        f"""CREATE TRIGGER entries_append_only_truncate BEFORE TRUNCATE ON entries
            FOR EACH STATEMENT EXECUTE FUNCTION ctxengine_refuse_change('{_APPEND_ONLY}')""",
    )


@migration
def m002_imports(conn: Connection) -> None:
    """One row per import of a transcript (when, from which file, entries added, the
    importer's report as orjson bytes), and the seqs imports stored, one row per write
    (see :mod:`ctxengine.stores._reimport`)."""
    _run(
        conn,
        """CREATE TABLE import_reports (
            ord BIGINT GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
            session_id TEXT NOT NULL REFERENCES sessions(id),
            imported_at TEXT NOT NULL,
            source_path TEXT,
            format TEXT NOT NULL,
            added BIGINT NOT NULL,
            report BYTEA NOT NULL
        )""",
        "CREATE INDEX import_reports_session ON import_reports (session_id)",
        """CREATE TABLE imported_seqs (
            session_id TEXT NOT NULL REFERENCES sessions(id),
            first_seq BIGINT NOT NULL,
            last_seq BIGINT NOT NULL
        )""",
        "CREATE INDEX imported_seqs_session ON imported_seqs (session_id)",
    )


@migration
def m003_stateless_checkpoints(conn: Connection) -> None:
    """Checkpoints of stateless calls (:mod:`ctxengine.engine.stateless`), as the SQLite
    store's ``m004_stateless_checkpoints``: rows keyed by configuration and prefix hash,
    never changed."""
    _run(
        conn,
        """CREATE TABLE stateless_checkpoints (
            config TEXT NOT NULL,
            prefix TEXT NOT NULL,
            parent TEXT,
            messages BIGINT NOT NULL CHECK (messages > 0),
            tail BYTEA NOT NULL,
            state BYTEA NOT NULL,
            created_at TEXT NOT NULL,
            PRIMARY KEY (config, prefix)
        )""",
    )


@migration
def m004_session_links(conn: Connection) -> None:
    """One row per session started from another one (fork, spawn, hand-off); append-only
    like entries."""
    message = "session links are append-only"
    _run(
        conn,
        """CREATE TABLE session_links (
            ord BIGINT GENERATED ALWAYS AS IDENTITY,
            session_id TEXT PRIMARY KEY REFERENCES sessions(id),
            parent_session_id TEXT NOT NULL REFERENCES sessions(id),
            parent_entry_id TEXT,
            relation TEXT NOT NULL,
            created_at TEXT NOT NULL
        )""",
        "CREATE INDEX session_links_parent ON session_links (parent_session_id, ord)",
        f"""CREATE TRIGGER session_links_append_only_update BEFORE UPDATE ON session_links
            FOR EACH ROW EXECUTE FUNCTION ctxengine_refuse_change('{message}')""",
        f"""CREATE TRIGGER session_links_append_only_delete BEFORE DELETE ON session_links
            FOR EACH ROW EXECUTE FUNCTION ctxengine_refuse_change('{message}')""",
    )


@migration
def m005_usage_anchors(conn: Connection) -> None:
    """The provider usage of replies a proxy passed back (the usage anchor), by conversation
    key and the reply's signature, so that every proxy worker attaches it to the assistant
    message when the client sends it back, whichever worker saw the reply."""
    _run(
        conn,
        """CREATE TABLE usage_anchors (
            conversation TEXT NOT NULL,
            signature TEXT NOT NULL,
            usage BYTEA NOT NULL,
            created_at TEXT NOT NULL,
            PRIMARY KEY (conversation, signature)
        )""",
    )


def applied(conn: Connection) -> set[str] | None:
    """Names recorded in ``schema_migrations``; ``None`` when the table does not exist (no
    store was ever opened for writing in this database and schema). Only reads."""
    found = conn.execute(text("SELECT to_regclass('schema_migrations')")).scalar()
    if found is None:
        return None
    return {row[0] for row in conn.execute(text("SELECT name FROM schema_migrations"))}


def refuse_newer(names: set[str], where: str) -> None:
    """Raise ``StoreError`` when ``names`` holds migrations this version does not know."""
    unknown = sorted(names - {fn.__name__ for fn in MIGRATIONS})
    if unknown:
        raise StoreError(
            f"{where}: database schema is newer than this ctxengine (unknown migrations: "
            f"{', '.join(unknown)}); upgrade ctxengine to open it"
        )


def missing(names: set[str] | None) -> list[str]:
    """The registered migrations not in ``names``, in order."""
    have = names or set()
    return [fn.__name__ for fn in MIGRATIONS if fn.__name__ not in have]


def apply_one(conn: Connection, fn: Migration) -> bool:
    """Run ``fn`` in the transaction ``conn`` has begun, under the migration lock, unless
    it is recorded by then; True when it ran. The caller commits (or rolls back on error)."""
    conn.execute(text("SELECT pg_advisory_xact_lock(:k)"), {"k": MIGRATION_LOCK_KEY})
    conn.execute(
        text(
            "CREATE TABLE IF NOT EXISTS schema_migrations "
            "(name TEXT PRIMARY KEY, applied_at TEXT NOT NULL)"
        )
    )
    if fn.__name__ in (applied(conn) or set()):
        return False
    fn(conn)
    conn.execute(
        text("INSERT INTO schema_migrations (name, applied_at) VALUES (:n, :t)"),
        {"n": fn.__name__, "t": datetime.now(UTC).isoformat(timespec="seconds")},
    )
    return True
