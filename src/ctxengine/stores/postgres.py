"""The PostgreSQL store: every session log in one PostgreSQL database, shared by any number of
processes on any number of hosts (SQLAlchemy 2 Core over psycopg 3: the ``postgres`` extra).

Open it with a URL, ``postgresql://user:password@host:port/database`` (``postgres://`` and
``postgresql+psycopg://`` too); query parameters go to libpq (``?sslmode=require``,
``?options=-csearch_path%3Dmy_schema`` for a schema of its own). Opening a store applies
missing migrations (:mod:`ctxengine.stores.pg_migrations`, each once, under an advisory
lock); an up-to-date database is only read. ``read_only=True`` never writes: every
transaction is ``READ ONLY`` and nothing is migrated.

The guarantees are the SQLite store's (:mod:`ctxengine.stores.sqlite`):

* **Append-only in the database.** Triggers refuse ``UPDATE``, ``DELETE`` and ``TRUNCATE`` of
  ``entries`` and any insert that does not continue a session's log with a new id, whoever
  runs it; this class has no statement that changes or removes an entry.
* **One transaction per write.** An append, a new session with its link and entries, and a
  whole import (its entries, the seqs it stored and its report) each commit together or not
  at all.
* **Readers never wait.** PostgreSQL reads a snapshot (MVCC): no read waits for a writer.
  Writers of one session queue on its ``sessions`` row (``FOR NO KEY UPDATE``), so appends to
  other sessions go on meanwhile; a writer waits ``busy_timeout_s`` (PostgreSQL's
  ``lock_timeout``) and then fails with :class:`~ctxengine.errors.StoreBusy`.
* **Compare-and-append** (:meth:`PostgresStore.append` with ``expect_last_seq``): the check
  and the insert run in one transaction holding the session's row lock.
* **Single-flight compaction across hosts** (:meth:`PostgresStore.compaction_lock`): a
  session-level advisory lock per session, held on a connection of its own for the block,
  released by the server the moment its holder's connection ends (the process died, the host
  went away), so a dead holder never blocks the next one.

One store object may be used from every thread of its process (a pool of connections); a
process forked after the store was opened opens connections of its own.
"""

from __future__ import annotations

import hashlib
import math
import os
from collections.abc import Iterator, Sequence
from contextlib import AbstractContextManager, contextmanager
from dataclasses import replace
from datetime import UTC, datetime
from types import TracebackType
from typing import Any, Self

import sqlalchemy as sa
from sqlalchemy import Connection, text
from sqlalchemy.engine import make_url

from ctxengine.errors import (
    ConfigError,
    SessionNotFound,
    StoreBusy,
    StoreConflict,
    StoreError,
    StoreLockTimeout,
    StoreMissing,
)
from ctxengine.model import Entry, SupersedeRecord
from ctxengine.stores import _reimport, _rows
from ctxengine.stores import pg_migrations as mig
from ctxengine.stores._checks import ambiguous, check_continues, check_unique
from ctxengine.stores._connections import CLOSED_MESSAGE
from ctxengine.stores._copy import clip_spans, plan_restore
from ctxengine.stores._locks import thread_hold
from ctxengine.stores._reimport import StoredEntry
from ctxengine.stores.base import (
    RELATIONS,
    ImportedLog,
    ImportRecord,
    ImportResult,
    RestoreResult,
    SessionCopy,
    SessionInfo,
    SessionLink,
    StoredCheckpoint,
)
from ctxengine.stores.location import POSTGRES_SCHEMES, is_postgres_url, redact
from ctxengine.stores.sqlite import busy_timeout_from_env

#: The SQLAlchemy driver every PostgreSQL URL is opened with (psycopg 3).
DRIVER = "postgresql+psycopg"
#: Connections a store keeps open (SQLAlchemy pool size) and may open beyond them under load;
#: a compaction lock holds one for its block. SQLAlchemy's own defaults.
POOL_SIZE = 5
POOL_OVERFLOW = 10
#: PostgreSQL's SQLSTATE for a lock wait past ``lock_timeout``.
_LOCK_NOT_AVAILABLE = "55P03"
#: SQLSTATEs of a connection that broke (the server went away, the network dropped).
_CONNECTION_LOST = ("08000", "08003", "08006", "57P01", "57P02", "57P03")

_SESSION_COLUMNS = "s.id, s.format, s.source_path, s.title, s.created_at, s.meta"
_COUNT = "(SELECT COALESCE(MAX(seq), -1) + 1 FROM entries e WHERE e.session_id = s.id)"
#: The newest entry's time (a primary-key seek), else the newest import's.
_UPDATED = (
    "COALESCE((SELECT created_at FROM entries e WHERE e.session_id = s.id "
    "ORDER BY seq DESC LIMIT 1), (SELECT MAX(imported_at) FROM import_reports r "
    "WHERE r.session_id = s.id))"
)
_SELECT_SESSIONS = f"SELECT {_SESSION_COLUMNS}, {_COUNT}, {_UPDATED} FROM sessions s"
_SESSION_NAMES = ("id", "format", "source_path", "title", "created_at", "meta")
_ENTRY_NAMES = tuple(c.strip() for c in _rows.ENTRY_COLUMNS.split(","))
_INSERT_ENTRY = text(
    f"INSERT INTO entries ({_rows.ENTRY_COLUMNS}) VALUES "
    f"({', '.join(':' + n for n in _ENTRY_NAMES)})"
)


def lock_key(session_id: str) -> int:
    """The advisory lock key of a session's compaction lock: the first 8 bytes of the
    SHA-256 of ``"ctxengine compaction\\0" + session_id`` as a signed 64-bit number (any id
    gives a key; two ids share one with probability about 2^-64)."""
    digest = hashlib.sha256(b"ctxengine compaction\0" + session_id.encode("utf-8")).digest()
    return int.from_bytes(digest[:8], "big", signed=True)


def engine_url(url: str) -> str:
    """``url`` with its scheme made :data:`DRIVER` (``postgresql://`` and ``postgres://``
    name no driver; SQLAlchemy's default for them is psycopg2).

    Raises:
        ConfigError: not a PostgreSQL URL.
    """
    if not is_postgres_url(url):
        raise ConfigError(
            f"{redact(url)!r} is not a PostgreSQL URL (expected one of the schemes "
            f"{', '.join(POSTGRES_SCHEMES)})"
        )
    return DRIVER + url[url.index("://") :]


class PostgresStore:
    """A :class:`~ctxengine.stores.base.Store` (and checkpoint and usage store) in one
    PostgreSQL database; see the module docstring.

    Args:
        url: ``postgresql://user:password@host:port/database`` (the password is never shown:
            messages name the store by :attr:`label`).
        busy_timeout_s: seconds a write waits for another writer of the same session (a row
            lock; PostgreSQL's ``lock_timeout``) before failing with
            :class:`~ctxengine.errors.StoreBusy` (default ``$CTXENGINE_BUSY_TIMEOUT``, else
            5). Reads never wait.
        read_only: never write: every transaction is read-only, nothing is migrated (a
            write method raises ``StoreError``).

    Raises:
        ConfigError: not a PostgreSQL URL; ``busy_timeout_s`` negative or not finite.
        StoreMissing: ``read_only`` and the database has no store (nothing was ever
            stored there).
        StoreBusy: a missing migration waited past the busy timeout.
        StoreError: the server cannot be reached, refuses the login, or holds a schema
            newer than this version of ctxengine (or, ``read_only``, older).
    """

    def __init__(
        self,
        url: str,
        *,
        busy_timeout_s: float | None = None,
        read_only: bool = False,
    ) -> None:
        if busy_timeout_s is None:
            busy_timeout_s = busy_timeout_from_env()
        if not (isinstance(busy_timeout_s, int | float) and math.isfinite(busy_timeout_s)) or (
            busy_timeout_s < 0
        ):
            raise ConfigError(
                f"busy_timeout_s must be a finite number of seconds >= 0, got {busy_timeout_s!r}"
            )
        self.url = url
        #: The URL with its password hidden: how messages name this store.
        self.label = redact(url)
        self.path = self.label
        self.busy_timeout_s = float(busy_timeout_s)
        self.read_only = read_only
        self._closed = False
        self._pid = os.getpid()
        self._lock_prefix = f"pg:{make_url(engine_url(url)).render_as_string()}:"
        self._engine = sa.create_engine(
            engine_url(url),
            pool_size=POOL_SIZE,
            max_overflow=POOL_OVERFLOW,
            pool_pre_ping=True,
        )
        sa.event.listen(self._engine, "connect", self._configure)
        try:
            with self._errors("open"):
                self._open()
        except BaseException:
            self._engine.dispose()
            raise

    def _configure(self, dbapi_connection: Any, _record: Any) -> None:
        """Session settings of every new connection: the busy timeout as ``lock_timeout``,
        read-only transactions for a read-only store."""
        ms = _milliseconds(self.busy_timeout_s)
        with dbapi_connection.cursor() as cursor:
            cursor.execute(f"SET lock_timeout = {ms}")
            if self.read_only:
                cursor.execute("SET default_transaction_read_only = on")
        dbapi_connection.commit()

    def _open(self) -> None:
        """Check the schema (read-only) or apply the missing migrations."""
        with self._engine.connect() as conn:
            names = mig.applied(conn)
            conn.rollback()
        if self.read_only:
            if names is None:
                raise StoreMissing(self.label)
            mig.refuse_newer(names, f"postgresql store {self.label}")
            lacking = mig.missing(names)
            if lacking:
                raise StoreError(
                    f"postgresql store {self.label}: the schema lacks migrations "
                    f"{', '.join(lacking)}: open the store for writing once (any import) to "
                    "migrate it; a read-only open never writes"
                )
            return
        if names is not None:
            mig.refuse_newer(names, f"postgresql store {self.label}")
        for fn in mig.MIGRATIONS:
            if names is not None and fn.__name__ in names:
                continue
            try:
                with self._engine.begin() as conn:
                    mig.apply_one(conn, fn)
            except sa.exc.DBAPIError as exc:
                if _sqlstate(exc) == _LOCK_NOT_AVAILABLE:
                    raise
                raise StoreError(
                    f"postgresql store {self.label}: migration {fn.__name__} failed: "
                    f"{_message(exc)}"
                ) from exc

    # -- plumbing ---------------------------------------------------------------------------

    def _where(self, operation: str) -> str:
        return f"postgresql store {self.label}: {operation}"

    def _check_open(self) -> None:
        """Open connections of this process's own after a fork."""
        if os.getpid() != self._pid:
            # A forked child: the pool's connections belong to the parent.
            self._engine.dispose(close=False)
            self._pid = os.getpid()

    @contextmanager
    def _errors(self, operation: str) -> Iterator[None]:
        """Re-raise database errors as ``StoreError`` naming this store and ``operation``
        (``StoreBusy`` for a lock wait past the busy timeout)."""
        try:
            yield
        except sa.exc.DBAPIError as exc:
            if _sqlstate(exc) == _LOCK_NOT_AVAILABLE:
                raise StoreBusy(
                    self.label,
                    operation,
                    self.busy_timeout_s,
                    message=f"{self._where(operation)} failed: store busy (another writer "
                    f"held a lock this write needs longer than the {self.busy_timeout_s:g} s "
                    "busy timeout)",
                ) from exc
            raise StoreError(f"{self._where(operation)} failed: {_message(exc)}") from exc
        except sa.exc.SQLAlchemyError as exc:
            raise StoreError(f"{self._where(operation)} failed: {exc}") from exc

    @contextmanager
    def _read(self, operation: str) -> Iterator[Connection]:
        """A connection for reads (one snapshot per statement; nothing written)."""
        with self._errors(operation):
            if self._closed:
                raise StoreError(f"{self._where(operation)} failed: {CLOSED_MESSAGE}")
            self._check_open()
            with self._engine.connect() as conn:
                yield conn
                conn.rollback()

    @contextmanager
    def _write(self, operation: str) -> Iterator[Connection]:
        """One write transaction: committed when the block ends, rolled back on any error.

        Raises:
            StoreError: the store was opened read-only, or is closed.
            StoreBusy: another writer held a lock this write needs past the busy timeout.
        """
        if self.read_only:
            raise StoreError(f"{self._where(operation)} refused: opened read-only")
        with self._errors(operation):
            if self._closed:
                raise StoreError(f"{self._where(operation)} failed: {CLOSED_MESSAGE}")
            self._check_open()
            with self._engine.begin() as conn:
                yield conn

    @staticmethod
    def _require(conn: Connection, session_id: str, *, lock: bool = False) -> None:
        """Raise ``SessionNotFound`` unless the session is stored; with ``lock``, take its
        row lock (the one writer of the session for the rest of the transaction)."""
        sql = "SELECT 1 FROM sessions WHERE id = :s" + (" FOR NO KEY UPDATE" if lock else "")
        if conn.execute(text(sql), {"s": session_id}).first() is None:
            raise SessionNotFound(session_id)

    @staticmethod
    def _last_seq(conn: Connection, session_id: str) -> int:
        value = conn.execute(
            text("SELECT MAX(seq) FROM entries WHERE session_id = :s"), {"s": session_id}
        ).scalar()
        return -1 if value is None else int(value)

    @staticmethod
    def _stored_ids(conn: Connection, session_id: str, ids: list[str]) -> set[str]:
        if not ids:
            return set()
        rows = conn.execute(
            text("SELECT id FROM entries WHERE session_id = :s AND id = ANY(:ids)"),
            {"s": session_id, "ids": ids},
        )
        return {row[0] for row in rows}

    @staticmethod
    def _insert_rows(conn: Connection, rows: Sequence[_rows.EntryRow]) -> None:
        if rows:
            conn.execute(_INSERT_ENTRY, [dict(zip(_ENTRY_NAMES, r, strict=True)) for r in rows])

    # -- writes -----------------------------------------------------------------------------

    def create_session(
        self,
        info: SessionInfo,
        *,
        link: SessionLink | None = None,
        entries: Sequence[Entry] = (),
    ) -> bool:
        """Store a new session, with its ``link`` to a parent session and its first
        ``entries``, in one transaction; ``False`` when ``info.id`` already exists (nothing
        is changed). See :meth:`ctxengine.stores.base.Store.create_session`.

        ``created_at`` defaults to now (UTC) when ``info.created_at`` is ``None``; the link's
        too. A session already stored is found by a read.

        Raises:
            StoreError: a link of another session, to a parent not stored, or with an unknown
                relation; entries of another session or not numbered from 0.
        """
        operation = f"create session {info.id!r}"
        where = self._where(operation)
        if link is not None:
            if link.session_id != info.id:
                raise StoreError(
                    f"{where}: the link is of session {link.session_id!r}, not {info.id!r}"
                )
            if link.relation not in RELATIONS:
                raise StoreError(
                    f"{where}: unknown relation {link.relation!r} (expected one of "
                    f"{', '.join(RELATIONS)})"
                )
        with self._read(operation) as conn:
            if conn.execute(text("SELECT 1 FROM sessions WHERE id = :s"), {"s": info.id}).first():
                return False
        with self._write(operation) as conn:
            if not self._insert_session(conn, info, where):
                return False
            if link is not None:
                self._insert_link(conn, link, where)
            if entries:
                check_unique(list(entries), where)
                check_continues(entries, info.id, 0, where)
                self._insert_rows(conn, [_rows.entry_row(e, where) for e in entries])
            return True

    @staticmethod
    def _insert_session(conn: Connection, info: SessionInfo, where: str) -> bool:
        if info.created_at is None:
            info = replace(info, created_at=datetime.now(UTC).isoformat(timespec="seconds"))
        row = _rows.session_row(info, where)
        result = conn.execute(
            text(
                "INSERT INTO sessions (id, format, source_path, title, created_at, meta) "
                "VALUES (:id, :format, :source_path, :title, :created_at, :meta) "
                "ON CONFLICT (id) DO NOTHING"
            ),
            dict(zip(_SESSION_NAMES, row, strict=True)),
        )
        return bool(result.rowcount == 1)

    @staticmethod
    def _insert_link(conn: Connection, link: SessionLink, where: str) -> None:
        found = conn.execute(
            text("SELECT 1 FROM sessions WHERE id = :s"), {"s": link.parent_id}
        ).first()
        if found is None:
            raise StoreError(f"{where}: parent session {link.parent_id!r} is not stored")
        created = link.created_at or datetime.now(UTC).isoformat(timespec="seconds")
        conn.execute(
            text(f"INSERT INTO session_links ({_rows.LINK_COLUMNS}) VALUES (:s, :p, :e, :r, :t)"),
            {
                "s": link.session_id,
                "p": link.parent_id,
                "e": link.parent_entry_id,
                "r": link.relation,
                "t": created,
            },
        )

    def append(
        self,
        session_id: str,
        entries: Sequence[Entry],
        *,
        expect_last_seq: int | None = None,
    ) -> int:
        """Append ``entries`` in one transaction, skipping ids already stored; with
        ``expect_last_seq``, only if the log still ends at that seq (compare-and-append: the
        transaction holds the session's row lock from the check to the commit). See
        :meth:`ctxengine.stores.base.Store.append`. Returns the number added.

        Raises:
            StoreConflict: the log does not end at ``expect_last_seq``, or (without it) the
                first new entry's seq is already taken; nothing is stored.
            StoreBusy: another writer of the session held its lock past the busy timeout.
            SessionNotFound, StoreError: as :meth:`ctxengine.stores.base.Store.append`.
        """
        operation = f"append to session {session_id!r}"
        where = self._where(operation)
        with self._write(operation) as conn:
            self._require(conn, session_id, lock=True)
            last = self._last_seq(conn, session_id)
            if expect_last_seq is not None and last != expect_last_seq:
                raise StoreConflict(session_id, expect_last_seq, last)
            stored = self._stored_ids(conn, session_id, [e.id for e in entries])
            fresh = [e for e in entries if e.id not in stored]
            check_continues(fresh, session_id, last + 1, where)
            self._insert_rows(conn, [_rows.entry_row(e, where) for e in fresh])
            return len(fresh)

    def import_session(self, imported: ImportedLog) -> ImportResult:
        """Store an imported transcript in one transaction: the session row when new, a
        supersede record when stored entries diverge from the file, the new entries (with
        seqs that continue the stored log), the seqs the import stored and its
        :class:`~ctxengine.stores.base.ImportRecord`. See
        :meth:`ctxengine.stores.base.Store.import_session`.

        The comparison with what earlier imports stored (:mod:`ctxengine.stores._reimport`)
        reads the stored log inside the transaction, after taking the session's row lock:
        no other writer of the session can append between the comparison and the insert.

        Raises:
            StoreError: an entry of another session, an id repeated in the import, an entry
                that cannot be serialised, divergent stored entries with messages appended
                after them, or a failed write (nothing is stored).
            StoreBusy: another writer of the session held its lock past the busy timeout.
        """
        sid = imported.session_id
        operation = f"import session {sid!r} from {imported.source_path}"
        where = self._where(operation)
        entries = imported.entries
        for e in entries:
            if e.session_id != sid:
                raise StoreError(f"{where}: entry {e.id!r} belongs to session {e.session_id!r}")
        check_unique(list(entries), where)
        rows_now = [_rows.entry_row(e, where) for e in entries]  # serialisable before writing
        first = entries[0].created_at if entries else None
        info = SessionInfo(
            sid, imported.format, imported.source_path, imported.title, first, 0, imported.meta
        )
        report = _rows.import_row(imported, 0, where)
        with self._write(operation) as conn:
            self._insert_session(conn, info, where)
            self._require(conn, sid, lock=True)
            stored = self._stored_for_import(conn, sid)
            if stored:
                plan = _reimport.plan_import(stored, entries, where)
            else:
                plan = _reimport.ImportPlan(0, (), None, list(entries))
            new = _reimport.entries_to_store(sid, stored, plan)
            rows = rows_now if new == list(entries) else [_rows.entry_row(e, where) for e in new]
            next_seq = stored[-1].seq + 1 if stored else 0
            self._insert_rows(conn, [(r[0], next_seq + i, *r[2:]) for i, r in enumerate(rows)])
            if new:
                conn.execute(
                    text(
                        "INSERT INTO imported_seqs (session_id, first_seq, last_seq) "
                        "VALUES (:s, :a, :b)"
                    ),
                    {"s": sid, "a": next_seq, "b": next_seq + len(new) - 1},
                )
            added = sum(1 for e in new if not isinstance(e.body, SupersedeRecord))
            conn.execute(
                text(
                    f"INSERT INTO import_reports ({_rows.IMPORT_COLUMNS}) "
                    "VALUES (:s, :t, :p, :f, :a, :r)"
                ),
                dict(zip("stpfar", (*report[:4], added, *report[5:]), strict=True)),
            )
        return ImportResult(
            sid, added, plan.matched, len(plan.withdrawn), plan.change, plan.diverged_at
        )

    @staticmethod
    def _stored_for_import(conn: Connection, session_id: str) -> list[StoredEntry]:
        """Every stored entry of the session, marked imported when an import recorded its
        seq (see :mod:`ctxengine.stores._reimport`)."""
        ranges = conn.execute(
            text("SELECT first_seq, last_seq FROM imported_seqs WHERE session_id = :s"),
            {"s": session_id},
        ).all()
        rows = conn.execute(
            text(
                "SELECT seq, id, kind, body, meta FROM entries WHERE session_id = :s ORDER BY seq"
            ),
            {"s": session_id},
        ).all()
        return _reimport.stored_entries(
            [(int(r[0]), r[1], r[2], bytes(r[3]), _bytes(r[4])) for r in rows],
            [(int(a), int(b)) for a, b in ranges],
        )

    # -- reads ------------------------------------------------------------------------------

    def import_reports(self, session_id: str) -> list[ImportRecord]:
        """Every stored import of the session, oldest first (see
        :meth:`ctxengine.stores.base.Store.import_reports`)."""
        with self._read(f"read import reports of {session_id!r}") as conn:
            self._require(conn, session_id)
            rows = conn.execute(
                text(
                    f"SELECT {_rows.IMPORT_COLUMNS} FROM import_reports WHERE session_id = :s "
                    "ORDER BY ord"
                ),
                {"s": session_id},
            ).all()
        return [_rows.row_import((*r[:4], int(r[4]), bytes(r[5]))) for r in rows]

    def entries(self, session_id: str, *, after_seq: int | None = None) -> list[Entry]:
        """The session's entries in seq order (only ``seq > after_seq`` when given): a range
        scan of the ``(session_id, seq)`` primary key, whose cost follows the entries
        returned."""
        operation = f"read entries of session {session_id!r}"
        with self._read(operation) as conn:
            self._require(conn, session_id)
            rows = conn.execute(
                text(
                    f"SELECT {_rows.ENTRY_COLUMNS} FROM entries "
                    "WHERE session_id = :s AND seq > :a ORDER BY seq"
                ),
                {"s": session_id, "a": -1 if after_seq is None else after_seq},
            ).all()
        where = self._where(operation)
        return [
            _rows.row_entry(
                (r[0], int(r[1]), r[2], r[3], r[4], r[5], bytes(r[6]), _bytes(r[7])), where
            )
            for r in rows
        ]

    def last_seq(self, session_id: str) -> int:
        """Seq of the newest entry, ``-1`` when the session has none."""
        with self._read(f"read last seq of session {session_id!r}") as conn:
            self._require(conn, session_id)
            return self._last_seq(conn, session_id)

    def sessions(self) -> list[SessionInfo]:
        """Every session with its entry count, in the order they were first stored."""
        with self._read("list sessions") as conn:
            rows = conn.execute(text(f"{_SELECT_SESSIONS} ORDER BY s.ord")).all()
        return [_session(r) for r in rows]

    def session(self, session_id: str) -> SessionInfo:
        """The session with this id, or with the only id that starts with this prefix.

        Raises:
            SessionNotFound: nothing matches (or the prefix is empty).
            StoreError: the prefix is ambiguous; the message lists the matching ids.
        """
        with self._read(f"look up session {session_id!r}") as conn:
            exact = conn.execute(
                text(f"{_SELECT_SESSIONS} WHERE s.id = :s"), {"s": session_id}
            ).first()
            if exact is not None:
                return _session(exact)
            if not session_id:
                raise SessionNotFound(session_id)
            matches = conn.execute(
                text(f'{_SELECT_SESSIONS} WHERE left(s.id, :n) = :p ORDER BY s.id COLLATE "C"'),
                {"n": len(session_id), "p": session_id},
            ).all()
        if not matches:
            raise SessionNotFound(session_id)
        if len(matches) > 1:
            raise StoreError(ambiguous(session_id, [row[0] for row in matches]))
        return _session(matches[0])

    def session_link(self, session_id: str) -> SessionLink | None:
        """The link of a session started from another one, else ``None``.

        Raises:
            SessionNotFound: no session ``session_id``.
        """
        with self._read(f"read the link of session {session_id!r}") as conn:
            self._require(conn, session_id)
            row = conn.execute(
                text(f"SELECT {_rows.LINK_COLUMNS} FROM session_links WHERE session_id = :s"),
                {"s": session_id},
            ).first()
        return None if row is None else _rows.row_link(tuple(row))

    def children(self, session_id: str) -> list[SessionLink]:
        """The links of the sessions started from this one, in the order they were stored.

        Raises:
            SessionNotFound: no session ``session_id``.
        """
        with self._read(f"read the children of session {session_id!r}") as conn:
            self._require(conn, session_id)
            rows = conn.execute(
                text(
                    f"SELECT {_rows.LINK_COLUMNS} FROM session_links "
                    "WHERE parent_session_id = :s ORDER BY ord"
                ),
                {"s": session_id},
            ).all()
        return [_rows.row_link(tuple(r)) for r in rows]

    # -- copies -----------------------------------------------------------------------------

    def export_session(self, session_id: str) -> SessionCopy:
        """The whole session read in one ``REPEATABLE READ`` snapshot; see
        :meth:`ctxengine.stores.base.Store.export_session`.

        Raises:
            SessionNotFound: no session ``session_id``.
        """
        operation = f"export session {session_id!r}"
        where = self._where(operation)
        with self._read(operation) as plain:
            conn = plain.execution_options(isolation_level="REPEATABLE READ")
            row = conn.execute(
                text(f"{_SELECT_SESSIONS} WHERE s.id = :s"), {"s": session_id}
            ).first()
            if row is None:
                raise SessionNotFound(session_id)
            link = conn.execute(
                text(f"SELECT {_rows.LINK_COLUMNS} FROM session_links WHERE session_id = :s"),
                {"s": session_id},
            ).first()
            rows = conn.execute(
                text(
                    f"SELECT {_rows.ENTRY_COLUMNS} FROM entries WHERE session_id = :s ORDER BY seq"
                ),
                {"s": session_id},
            ).all()
            imports = conn.execute(
                text(
                    f"SELECT {_rows.IMPORT_COLUMNS} FROM import_reports WHERE session_id = :s "
                    "ORDER BY ord"
                ),
                {"s": session_id},
            ).all()
            spans = self._spans(conn, session_id)
        entries = tuple(_rows.row_entry(_entry_row(r), where) for r in rows)
        return SessionCopy(
            _session(row),
            None if link is None else _rows.row_link(tuple(link)),
            entries,
            tuple(_rows.row_import((*r[:4], int(r[4]), bytes(r[5]))) for r in imports),
            clip_spans(spans, len(entries) - 1),
        )

    @staticmethod
    def _spans(conn: Connection, session_id: str) -> list[tuple[int, int]]:
        rows = conn.execute(
            text("SELECT first_seq, last_seq FROM imported_seqs WHERE session_id = :s"),
            {"s": session_id},
        ).all()
        return [(int(a), int(b)) for a, b in rows]

    def restore_session(self, copy: SessionCopy) -> RestoreResult:
        """Store a session read from another store unchanged, in one transaction holding the
        session's row lock; a session already held gets only what it lacks. See
        :meth:`ctxengine.stores.base.Store.restore_session`.

        Raises:
            StoreError: the stored session differs from ``copy``, or the link's parent is
                not stored; nothing is stored.
            StoreBusy: another writer of the session held its lock past the busy timeout.
        """
        sid = copy.info.id
        operation = f"copy session {sid!r}"
        where = self._where(operation)
        with self._write(operation) as conn:
            created = self._insert_session(conn, copy.info, where)
            if created and copy.link is not None:
                self._insert_link(conn, copy.link, where)
            self._require(conn, sid, lock=True)
            rows = conn.execute(
                text(
                    f"SELECT {_rows.ENTRY_COLUMNS} FROM entries WHERE session_id = :s ORDER BY seq"
                ),
                {"s": sid},
            ).all()
            count = conn.execute(
                text("SELECT COUNT(*) FROM import_reports WHERE session_id = :s"), {"s": sid}
            ).scalar()
            plan = plan_restore(
                copy,
                [_rows.row_entry(_entry_row(r), where) for r in rows],
                int(count or 0),
                self._spans(conn, sid),
                where,
            )
            check_continues(plan.entries, sid, len(rows), where)
            self._insert_rows(conn, [_rows.entry_row(e, where) for e in plan.entries])
            if plan.imports:
                conn.execute(
                    text(
                        f"INSERT INTO import_reports ({_rows.IMPORT_COLUMNS}) "
                        "VALUES (:s, :t, :p, :f, :a, :r)"
                    ),
                    [
                        dict(zip("stpfar", _rows.import_record_row(r, where), strict=True))
                        for r in plan.imports
                    ],
                )
            if plan.spans:
                conn.execute(
                    text(
                        "INSERT INTO imported_seqs (session_id, first_seq, last_seq) "
                        "VALUES (:s, :a, :b)"
                    ),
                    [{"s": sid, "a": a, "b": b} for a, b in plan.spans],
                )
        return RestoreResult(sid, created, len(plan.entries), len(plan.imports))

    # -- stateless checkpoints and usage anchors --------------------------------------------

    def save_checkpoint(self, checkpoint: StoredCheckpoint) -> None:
        """Store a stateless call's checkpoint; one already stored under its
        ``(config, prefix)`` is kept (see
        :meth:`ctxengine.stores.base.CheckpointStore.save_checkpoint`)."""
        c = checkpoint
        now = datetime.now(UTC).isoformat(timespec="milliseconds")
        with self._write("save stateless checkpoint") as conn:
            conn.execute(
                text(
                    "INSERT INTO stateless_checkpoints "
                    "(config, prefix, parent, messages, tail, state, created_at) "
                    "VALUES (:c, :p, :par, :m, :tail, :state, :t) "
                    "ON CONFLICT (config, prefix) DO NOTHING"
                ),
                {
                    "c": c.config,
                    "p": c.prefix,
                    "par": c.parent,
                    "m": c.messages,
                    "tail": c.tail,
                    "state": c.state,
                    "t": now,
                },
            )

    def longest_checkpoint(self, config: str, prefixes: Sequence[str]) -> str | None:
        """The last of ``prefixes`` stored under ``config`` (see
        :meth:`ctxengine.stores.base.CheckpointStore.longest_checkpoint`)."""
        if not prefixes:
            return None
        with self._read("look up stateless checkpoints") as conn:
            row = conn.execute(
                text(
                    "SELECT prefix FROM stateless_checkpoints "
                    "WHERE config = :c AND prefix = ANY(:p) ORDER BY messages DESC LIMIT 1"
                ),
                {"c": config, "p": list(prefixes)},
            ).first()
        return None if row is None else str(row[0])

    def checkpoint_chain(self, config: str, prefix: str) -> list[StoredCheckpoint]:
        """The checkpoint and its ancestors, oldest first (see
        :meth:`ctxengine.stores.base.CheckpointStore.checkpoint_chain`)."""
        with self._read("read stateless checkpoints") as conn:
            rows = conn.execute(
                text(
                    """WITH RECURSIVE chain(prefix, parent, messages, tail, state, depth) AS (
                    SELECT prefix, parent, messages, tail, state, 0 FROM stateless_checkpoints
                    WHERE config = :c AND prefix = :p
                    UNION ALL
                    SELECT c.prefix, c.parent, c.messages, c.tail, c.state, chain.depth + 1
                    FROM stateless_checkpoints c JOIN chain
                    ON c.config = :c AND c.prefix = chain.parent AND c.messages < chain.messages
                )
                SELECT prefix, parent, messages, tail, state FROM chain ORDER BY depth DESC"""
                ),
                {"c": config, "p": prefix},
            ).all()
        if not rows or rows[0][1] is not None:
            return []  # not stored, or an ancestor is missing
        return [
            StoredCheckpoint(config, r[0], r[1], int(r[2]), bytes(r[3]), bytes(r[4])) for r in rows
        ]

    def save_usage_anchor(self, conversation: str, signature: str, usage: bytes) -> None:
        """Keep the usage of a reply (see
        :meth:`ctxengine.stores.base.UsageAnchorStore.save_usage_anchor`); a later reply of
        the same signature replaces it."""
        now = datetime.now(UTC).isoformat(timespec="milliseconds")
        with self._write("save usage anchor") as conn:
            conn.execute(
                text(
                    "INSERT INTO usage_anchors (conversation, signature, usage, created_at) "
                    "VALUES (:c, :s, :u, :t) ON CONFLICT (conversation, signature) "
                    "DO UPDATE SET usage = EXCLUDED.usage, created_at = EXCLUDED.created_at"
                ),
                {"c": conversation, "s": signature, "u": usage, "t": now},
            )

    def usage_anchor(self, conversation: str, signature: str) -> bytes | None:
        """The usage kept for a reply, else ``None`` (see
        :meth:`ctxengine.stores.base.UsageAnchorStore.usage_anchor`)."""
        with self._read("read usage anchor") as conn:
            row = conn.execute(
                text("SELECT usage FROM usage_anchors WHERE conversation = :c AND signature = :s"),
                {"c": conversation, "s": signature},
            ).first()
        return None if row is None else bytes(row[0])

    # -- coordination -----------------------------------------------------------------------

    def compaction_lock(self, session_id: str, *, timeout_s: float) -> AbstractContextManager[None]:
        """Hold the session's compaction lock for the duration of a ``with`` block: one
        holder at a time across every thread, process and host using this database. Follow
        the protocol in :meth:`ctxengine.stores.base.Store.compaction_lock`.

        The lock is a session-level advisory lock (``pg_advisory_lock``, key
        :func:`lock_key`) held on a connection of its own (autocommit: no transaction stays
        open while a compaction runs), taken after an in-process lock so threads queue
        without holding connections. The server releases it when the holder's connection
        ends, so a holder that dies never blocks the next. It holds no row or table lock:
        appends and reads go on meanwhile. Not re-entrant.

        Args:
            session_id: the session (it need not be stored yet).
            timeout_s: longest wait for the current holder, in seconds (0: try once).

        Raises:
            StoreLockTimeout: still held by another holder after ``timeout_s``.
            StoreError: this thread already holds it, or the server cannot be reached.
        """
        return self._hold(session_id, timeout_s)

    @contextmanager
    def _hold(self, session_id: str, timeout_s: float) -> Iterator[None]:
        operation = f"compaction lock of session {session_id!r}"
        key = lock_key(session_id)
        with thread_hold(self._lock_prefix + session_id, session_id, timeout_s) as deadline:
            with self._errors(operation):
                if self._closed:
                    raise StoreError(f"{self._where(operation)} failed: {CLOSED_MESSAGE}")
                self._check_open()
                conn = self._engine.connect().execution_options(isolation_level="AUTOCOMMIT")
            try:
                with self._errors(operation):
                    self._acquire(conn, key, session_id, deadline, timeout_s)
                try:
                    yield
                finally:
                    self._release(conn, key, operation)
            finally:
                conn.close()

    def _acquire(
        self, conn: Connection, key: int, session_id: str, deadline: float, timeout_s: float
    ) -> None:
        """Take the advisory lock ``key`` on ``conn`` before ``deadline`` (monotonic).

        Raises:
            StoreLockTimeout: the deadline passed first.
        """
        import time

        left = deadline - time.monotonic()
        if left <= 0:
            if not conn.execute(text("SELECT pg_try_advisory_lock(:k)"), {"k": key}).scalar():
                raise StoreLockTimeout(session_id, timeout_s)
            return
        conn.execute(text(f"SET lock_timeout = {_milliseconds(left)}"))
        try:
            conn.execute(text("SELECT pg_advisory_lock(:k)"), {"k": key})
        except sa.exc.DBAPIError as exc:
            if _sqlstate(exc) == _LOCK_NOT_AVAILABLE:
                raise StoreLockTimeout(session_id, timeout_s) from exc
            raise
        finally:
            if not conn.invalidated:
                conn.execute(text(f"SET lock_timeout = {_milliseconds(self.busy_timeout_s)}"))

    def _release(self, conn: Connection, key: int, operation: str) -> None:
        """Release the advisory lock; a connection that broke has lost it already (the
        server dropped it with the connection), so it is discarded instead."""
        try:
            conn.execute(text("SELECT pg_advisory_unlock(:k)"), {"k": key})
        except sa.exc.DBAPIError as exc:
            if not conn.invalidated:
                conn.invalidate()
            if _sqlstate(exc) not in _CONNECTION_LOST and not exc.connection_invalidated:
                raise StoreError(f"{self._where(operation)} failed: {_message(exc)}") from exc

    # -- lifetime ---------------------------------------------------------------------------

    def close(self) -> None:
        """Close every pooled connection; later calls raise ``StoreError``. Idempotent. Call
        it once no other thread is inside a store call."""
        if not self._closed:
            self._closed = True
            self._engine.dispose(close=os.getpid() == self._pid)

    def __enter__(self) -> Self:
        return self

    def __exit__(
        self,
        exc_type: type[BaseException] | None,
        exc: BaseException | None,
        tb: TracebackType | None,
    ) -> None:
        self.close()

    def __repr__(self) -> str:
        return f"PostgresStore({self.label!r})"


def _milliseconds(seconds: float) -> int:
    """``seconds`` as whole milliseconds for ``lock_timeout``, at least 1 (0 would mean no
    limit at all to PostgreSQL)."""
    return max(1, math.ceil(seconds * 1000))


def _bytes(value: Any) -> bytes | None:
    return None if value is None else bytes(value)


def _entry_row(r: Any) -> tuple[Any, ...]:
    """A fetched ``entries`` row with plain ints and bytes (as :func:`_rows.row_entry` reads
    them)."""
    return (r[0], int(r[1]), r[2], r[3], r[4], r[5], bytes(r[6]), _bytes(r[7]))


def _session(row: Any) -> SessionInfo:
    sid, fmt, source, title, created, meta, count, updated = row
    return _rows.row_session((sid, fmt, source, title, created, _bytes(meta), int(count), updated))


def _sqlstate(exc: sa.exc.DBAPIError) -> str | None:
    """The SQLSTATE of the psycopg error under ``exc``, if any."""
    state = getattr(exc.orig, "sqlstate", None)
    return state if isinstance(state, str) else None


def _message(exc: sa.exc.DBAPIError) -> str:
    """The server's primary message (a trigger's ``RAISE`` text), else the driver's first
    line."""
    diag = getattr(exc.orig, "diag", None)
    primary = getattr(diag, "message_primary", None)
    if isinstance(primary, str) and primary:
        return primary
    text_ = str(exc.orig).strip()
    return text_.splitlines()[0] if text_ else type(exc.orig).__name__
