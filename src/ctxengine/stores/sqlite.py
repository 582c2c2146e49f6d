"""The SQLite store: one database file (stdlib ``sqlite3``, WAL) holding every session log.

The file lives at :func:`default_db_path` unless a path is given; ``":memory:"`` gives a
private in-memory database (tests). Opening a store applies missing migrations (reading only,
when none is missing; the missing ones under the write lock, once). ``read_only=True`` opens an
existing file without ever writing: no file is created, nothing is migrated, and every
statement is a read. Writes run in ``BEGIN IMMEDIATE`` transactions, so a whole import or
append is stored completely or not at all, and readers (other connections, other processes)
see only committed data and never wait for a writer. A writer waits for another writer's
transaction up to the busy timeout (``busy_timeout_s``, else ``$CTXENGINE_BUSY_TIMEOUT``, else
:data:`BUSY_TIMEOUT_S`) and then fails with :class:`~ctxengine.errors.StoreBusy`.

One store object may be used from every thread of its process: each thread gets its own
connection (see :mod:`ctxengine.stores._connections` for why). Several processes may open the
same file. :meth:`SQLiteStore.append` with ``expect_last_seq`` is a compare-and-append, and
:meth:`SQLiteStore.compaction_lock` serialises compactions of one session across threads and
processes (see :meth:`ctxengine.stores.base.Store.compaction_lock` for the protocol).

Append-only is enforced twice: this class has no statement that updates or deletes an entry,
and triggers in the schema refuse ``UPDATE``/``DELETE`` on ``entries`` and any insert that
does not continue a session's log with a new id.
"""

from __future__ import annotations

import math
import os
import sqlite3
from collections.abc import Iterator, Sequence
from contextlib import AbstractContextManager, contextmanager
from dataclasses import replace
from datetime import UTC, datetime
from pathlib import Path
from types import TracebackType
from typing import Self

import platformdirs

from ctxengine.errors import (
    ConfigError,
    SessionNotFound,
    StoreBusy,
    StoreConflict,
    StoreError,
    StoreMissing,
    seconds_from_env,
)
from ctxengine.model import Entry, SupersedeRecord
from ctxengine.stores import _reimport, _rows
from ctxengine.stores._checks import ambiguous as _ambiguous
from ctxengine.stores._checks import check_continues as _check_continues
from ctxengine.stores._checks import check_unique as _check_unique
from ctxengine.stores._connections import ThreadConnections
from ctxengine.stores._copy import clip_spans, plan_restore
from ctxengine.stores._locks import SessionLocks
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
from ctxengine.stores.migrations import check_current, migrate

#: Environment variable that overrides the default database path.
DB_ENV_VAR = "CTXENGINE_DB"
#: Environment variable that overrides :data:`BUSY_TIMEOUT_S` (seconds) for stores opened
#: without an explicit ``busy_timeout_s``.
BUSY_TIMEOUT_ENV_VAR = "CTXENGINE_BUSY_TIMEOUT"
#: Seconds a write waits for another connection's write lock before failing (SQLite's busy
#: timeout). The same value as ``policy.defaults.DEFAULT_STORE_BUSY_TIMEOUT_S``, which callers
#: above the store pass; stores sit below ``policy`` and cannot import it (DESIGN layers).
BUSY_TIMEOUT_S = 5.0
#: Suffix of the directory, next to the database file, that holds the compaction lock files.
LOCK_DIR_SUFFIX = "-locks"
#: Entries committed per write transaction of an import: about 0.1–0.4 s of write lock on a
#: 2-core machine (14,000–40,000 inserts a second, measured on 300,000-message imports), far
#: below the 5 s busy timeout other writers wait. ``policy.defaults.IMPORT_BATCH_ENTRIES``
#: holds the same value (the store cannot import ``policy``).
IMPORT_BATCH_ENTRIES = 5_000
#: Ids per ``IN (…)`` query when looking up which entries are already stored.
_ID_CHUNK = 500

_COUNT = "(SELECT COALESCE(MAX(seq), -1) + 1 FROM entries e WHERE e.session_id = s.id)"
#: The newest entry's time (a primary-key seek), else the newest import's.
_UPDATED = (
    "COALESCE((SELECT created_at FROM entries e WHERE e.session_id = s.id "
    "ORDER BY seq DESC LIMIT 1), (SELECT MAX(imported_at) FROM import_reports r "
    "WHERE r.session_id = s.id))"
)
_SELECT_SESSIONS = f"SELECT {_rows.SESSION_COLUMNS}, {_COUNT}, {_UPDATED} FROM sessions s"


def busy_timeout_from_env() -> float:
    """``$CTXENGINE_BUSY_TIMEOUT`` in seconds, else :data:`BUSY_TIMEOUT_S`.

    Raises:
        ConfigError: the variable is set but not a finite number of seconds >= 0.
    """
    return seconds_from_env(BUSY_TIMEOUT_ENV_VAR, BUSY_TIMEOUT_S)


def default_db_path(*, create_dir: bool = True) -> Path:
    """The database used when none is given: ``$CTXENGINE_DB`` when set, else
    ``ctxengine.db`` in the platform's user data directory (``platformdirs``; on Linux
    ``~/.local/share/ctxengine/ctxengine.db``). Creates the parent directory unless
    ``create_dir`` is false.

    Raises:
        StoreError: the directory cannot be created.
    """
    env = os.environ.get(DB_ENV_VAR)
    if env == ":memory:":
        return Path(env)
    if env:
        path = Path(env).expanduser()
    else:
        path = Path(platformdirs.user_data_dir("ctxengine", appauthor=False)) / "ctxengine.db"
    try:
        if create_dir:
            path.parent.mkdir(parents=True, exist_ok=True)
    except OSError as exc:
        raise StoreError(f"cannot create the directory of {path}: {exc.strerror}") from exc
    return path


class SQLiteStore:
    """A :class:`~ctxengine.stores.base.Store` in one SQLite database.

    Usable from any thread of the process that opened it (a connection per thread); several
    processes may open the same file.

    Args:
        path: database file, or ``":memory:"``; ``None`` means :func:`default_db_path`.
            The parent directory of an explicit path must exist.
        busy_timeout_s: seconds a write waits for another connection's (thread's, process's)
            write transaction before failing with :class:`~ctxengine.errors.StoreBusy`
            (default ``$CTXENGINE_BUSY_TIMEOUT``, else :data:`BUSY_TIMEOUT_S`). Reads never
            wait (WAL).
        read_only: open an existing store for reading only: nothing is created or migrated
            and no statement writes (a write method raises ``StoreError``).

    Raises:
        ConfigError: ``busy_timeout_s`` (or ``$CTXENGINE_BUSY_TIMEOUT``) is negative or not
            finite.
        StoreMissing: ``read_only`` and no file exists at the path.
        StoreBusy: a missing migration waited past the busy timeout for the write lock.
        StoreError: the file cannot be opened, is not a SQLite database, or holds a schema
            newer than this version of ctxengine (or, ``read_only``, older: open it for
            writing once to migrate it).
    """

    def __init__(
        self,
        path: str | Path | None = None,
        *,
        busy_timeout_s: float | None = None,
        read_only: bool = False,
    ):
        if busy_timeout_s is None:
            busy_timeout_s = busy_timeout_from_env()
        if not (isinstance(busy_timeout_s, int | float) and math.isfinite(busy_timeout_s)) or (
            busy_timeout_s < 0
        ):
            raise ConfigError(
                f"busy_timeout_s must be a finite number of seconds >= 0, got {busy_timeout_s!r}"
            )
        where = default_db_path(create_dir=not read_only) if path is None else path
        self.path = str(where)
        self.busy_timeout_s = float(busy_timeout_s)
        memory = self.path == ":memory:"
        self.read_only = read_only and not memory
        if self.read_only and not Path(self.path).is_file():
            raise StoreMissing(self.path)
        self._locks = SessionLocks(None if memory else self.path + LOCK_DIR_SUFFIX)
        with self._errors("open"):
            self._connections = ThreadConnections(
                self.path, self.busy_timeout_s, self._configure, must_exist=self.read_only
            )
        try:
            with self._errors("open"), self._connections.use() as conn:
                if self.read_only:
                    check_current(conn, self.path)
                else:
                    migrate(conn)
        except BaseException:
            self._connections.close()
            raise

    def _configure(self, conn: sqlite3.Connection) -> None:
        """Per-connection settings, run on each thread's new connection."""
        conn.execute("PRAGMA foreign_keys = ON")
        if self.read_only:
            # A reader never writes: not even the journal mode (a store is WAL from its
            # first open for writing).
            conn.execute("PRAGMA query_only = ON")
            return
        if self.path != ":memory:":
            mode = conn.execute("PRAGMA journal_mode = WAL").fetchone()[0]
            if mode != "wal":
                raise StoreError(f"{self.path}: cannot switch to WAL mode (got {mode!r})")
        conn.execute("PRAGMA synchronous = NORMAL")

    # -- plumbing ---------------------------------------------------------------------------

    @contextmanager
    def _errors(self, operation: str) -> Iterator[None]:
        """Re-raise ``sqlite3`` errors as ``StoreError`` naming this store and ``operation``."""
        try:
            yield
        except sqlite3.Error as exc:
            if _is_busy(exc):
                raise StoreBusy(self.path, operation, self.busy_timeout_s) from exc
            raise StoreError(f"sqlite store {self.path}: {operation} failed: {exc}") from exc

    @contextmanager
    def _read(self, operation: str) -> Iterator[sqlite3.Connection]:
        """This thread's connection, with ``sqlite3`` errors re-raised as ``StoreError``."""
        with self._errors(operation), self._connections.use() as conn:
            yield conn

    @contextmanager
    def _write(self, operation: str) -> Iterator[sqlite3.Connection]:
        """One write transaction: committed when the block ends, rolled back on any error.

        Raises:
            StoreError: the store was opened read-only.
            StoreBusy: another writer held the write lock past the busy timeout.
        """
        if self.read_only:
            raise StoreError(f"sqlite store {self.path}: {operation} refused: opened read-only")
        with self._errors(operation), self._connections.use() as conn:
            conn.execute("BEGIN IMMEDIATE")
            try:
                yield conn
            except BaseException:
                if conn.in_transaction:
                    conn.execute("ROLLBACK")
                raise
            conn.execute("COMMIT")

    def _where(self, operation: str) -> str:
        return f"sqlite store {self.path}: {operation}"

    @staticmethod
    def _require(conn: sqlite3.Connection, session_id: str) -> None:
        row = conn.execute("SELECT 1 FROM sessions WHERE id = ?", (session_id,)).fetchone()
        if row is None:
            raise SessionNotFound(session_id)

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
        too. A session already stored is found by a read: no write lock is taken (a reader
        that opens a stored session never waits for another writer).

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
            if conn.execute("SELECT 1 FROM sessions WHERE id = ?", (info.id,)).fetchone():
                return False
        with self._write(operation) as conn:
            if not self._insert_session(conn, info, operation):
                return False
            if link is not None:
                self._insert_link(conn, link, where)
            if entries:
                _check_unique(list(entries), where)
                self._insert(conn, info.id, entries, 0, operation)
            return True

    @staticmethod
    def _insert_link(conn: sqlite3.Connection, link: SessionLink, where: str) -> None:
        found = conn.execute("SELECT 1 FROM sessions WHERE id = ?", (link.parent_id,)).fetchone()
        if found is None:
            raise StoreError(f"{where}: parent session {link.parent_id!r} is not stored")
        created = link.created_at or datetime.now(UTC).isoformat(timespec="seconds")
        conn.execute(
            f"INSERT INTO session_links ({_rows.LINK_COLUMNS}) VALUES (?, ?, ?, ?, ?)",
            (link.session_id, link.parent_id, link.parent_entry_id, link.relation, created),
        )

    def _insert_session(self, conn: sqlite3.Connection, info: SessionInfo, operation: str) -> bool:
        if info.created_at is None:
            now = datetime.now(UTC).isoformat(timespec="seconds")
            info = replace(info, created_at=now)
        cursor = conn.execute(
            f"INSERT INTO sessions ({_rows.SESSION_COLUMNS}) VALUES (?, ?, ?, ?, ?, ?) "
            "ON CONFLICT(id) DO NOTHING",
            _rows.session_row(info, self._where(operation)),
        )
        return cursor.rowcount == 1

    def append(
        self,
        session_id: str,
        entries: Sequence[Entry],
        *,
        expect_last_seq: int | None = None,
    ) -> int:
        """Append ``entries`` in one transaction, skipping ids already stored; with
        ``expect_last_seq``, only if the log still ends at that seq (compare-and-append; the
        check and the insert share one ``BEGIN IMMEDIATE`` transaction). See
        :meth:`ctxengine.stores.base.Store.append`. Returns the number added.

        Raises:
            StoreConflict: the log does not end at ``expect_last_seq``, or (without it) the
                first new entry's seq is already taken; nothing is stored.
            SessionNotFound, StoreError: as :meth:`ctxengine.stores.base.Store.append`.
        """
        operation = f"append to session {session_id!r}"
        with self._write(operation) as conn:
            return self._append(conn, session_id, entries, operation, expect_last_seq)

    def import_session(self, imported: ImportedLog) -> ImportResult:
        """Store an imported transcript (session row when new, then its new entries); see
        :meth:`ctxengine.stores.base.Store.import_session`. New entries get the seqs that
        continue the stored log, whatever seqs the file gave them. Returns how many entries
        were added, skipped and superseded.

        Every entry is checked (its session, ids not repeated) before anything is written.
        In the first batch's write transaction the import is compared with what earlier
        imports stored (:mod:`ctxengine.stores._reimport`), read in that transaction, and
        what to store (a supersede record when stored entries diverge, then the new entries)
        is serialised before its first insert, so no other writer appends between the
        comparison and the first batch, and a failure leaves nothing written (a new
        session's entries are all serialised before that transaction). The entries are
        committed in batches of
        :data:`IMPORT_BATCH_ENTRIES`, each its own short write transaction, so another writer
        (a live session appending) waits for one batch at most, never for a whole large
        import. Each batch continues the stored log and records the seqs it stored as
        imported (table ``imported_seqs``), so an import cut off after its first batch
        (killed, or a store busy past the timeout) leaves a complete prefix of the session,
        and importing the file again adds the rest; the error then says how many entries
        were stored (:attr:`~ctxengine.errors.StoreError.stored`). The import record is
        written with the last batch.

        Raises:
            StoreError: an entry of another session, an id repeated in the import, an entry
                that cannot be serialised, divergent stored entries with messages appended
                after them (nothing written), or a failed write.
            StoreBusy: another writer held the write lock past the busy timeout.
        """
        sid = imported.session_id
        operation = f"import session {sid!r} from {imported.source_path}"
        where = self._where(operation)
        first = imported.entries[0].created_at if imported.entries else None
        info = SessionInfo(
            sid, imported.format, imported.source_path, imported.title, first, 0, imported.meta
        )
        entries = imported.entries
        for e in entries:
            if e.session_id != sid:
                raise StoreError(f"{where}: entry {e.id!r} belongs to session {e.session_id!r}")
        _check_unique(list(entries), where)
        with self._read(operation) as conn:
            has_entries = self._last_seq(conn, sid) >= 0
        # every entry serialised before writing when all are new; else only those the plan
        # adds, in its write transaction (a failure there rolls it back: nothing written)
        rows_now = [] if has_entries else [_rows.entry_row(e, where) for e in entries]
        report = _rows.import_row(imported, 0, where)
        plan = _reimport.ImportPlan(0, (), None, list(entries))
        new: Sequence[Entry] = entries
        rows = rows_now
        added = 0
        start = 0
        while True:
            try:
                with self._write(operation) as conn:
                    created = start == 0 and self._insert_session(conn, info, operation)
                    if start == 0 and not created:
                        plan, new, rows = self._plan_import(conn, sid, entries, rows_now, where)
                    elif created and len(rows) != len(new):  # its entries were deleted since
                        rows = [_rows.entry_row(e, where) for e in new]
                    batch = list(
                        zip(new[start : start + IMPORT_BATCH_ENTRIES], rows[start:], strict=False)
                    )
                    if created:
                        # the session row is new in this transaction, so no entry refers to
                        # it yet (entries reference their session; the insert trigger would
                        # refuse a wrong seq or a stored id all the same)
                        fresh, next_seq = batch, 0
                    else:
                        known = self._stored_ids(conn, sid, [e.id for e, _ in batch])
                        fresh = [(e, row) for e, row in batch if e.id not in known]
                        next_seq = self._last_seq(conn, sid) + 1
                    conn.executemany(
                        f"INSERT INTO entries ({_rows.ENTRY_COLUMNS}) "
                        "VALUES (?, ?, ?, ?, ?, ?, ?, ?)",
                        ((row[0], next_seq + i, *row[2:]) for i, (_, row) in enumerate(fresh)),
                    )
                    if fresh:
                        conn.execute(
                            "INSERT INTO imported_seqs (session_id, first_seq, last_seq) "
                            "VALUES (?, ?, ?)",
                            (sid, next_seq, next_seq + len(fresh) - 1),
                        )
                    here = sum(1 for e, _ in fresh if not isinstance(e.body, SupersedeRecord))
                    last_batch = start + IMPORT_BATCH_ENTRIES >= len(new)
                    if last_batch:
                        conn.execute(
                            f"INSERT INTO import_reports ({_rows.IMPORT_COLUMNS}) "
                            "VALUES (?, ?, ?, ?, ?, ?)",
                            (*report[:4], added + here, *report[5:]),
                        )
            except StoreError as exc:
                if added:
                    exc.stored = added
                    exc.args = (
                        f"{exc}; {added:,} of its {len(entries):,} entries were stored before "
                        "the failure: import the file again to add the rest",
                    )
                raise
            added += here
            if last_batch:
                break
            start += IMPORT_BATCH_ENTRIES
        return ImportResult(
            sid, added, plan.matched, len(plan.withdrawn), plan.change, plan.diverged_at
        )

    def _plan_import(
        self,
        conn: sqlite3.Connection,
        session_id: str,
        entries: Sequence[Entry],
        rows_now: list[_rows.EntryRow],
        where: str,
    ) -> tuple[_reimport.ImportPlan, Sequence[Entry], list[_rows.EntryRow]]:
        """Inside the import's first write transaction, for a session already stored: the
        plan (:func:`~ctxengine.stores._reimport.plan_import` against the stored log, read
        in this transaction, so no other writer appends between the comparison and the
        first batch), the entries to store (a supersede record first when stored entries
        diverge) and their rows (``entries`` and their rows, ``rows_now`` when it holds them,
        when the session has none)."""
        stored = self._stored_for_import(conn, session_id)
        if not stored:
            if len(rows_now) != len(entries):
                rows_now = [_rows.entry_row(e, where) for e in entries]
            return _reimport.ImportPlan(0, (), None, list(entries)), entries, rows_now
        plan = _reimport.plan_import(stored, entries, where)
        new = _reimport.entries_to_store(session_id, stored, plan)
        return plan, new, [_rows.entry_row(e, where) for e in new]

    @staticmethod
    def _stored_for_import(conn: sqlite3.Connection, session_id: str) -> list[StoredEntry]:
        """Every stored entry of the session (``[]`` for a new one), marked imported when an
        import recorded its seq (see :mod:`ctxengine.stores._reimport`)."""
        ranges = conn.execute(
            "SELECT first_seq, last_seq FROM imported_seqs WHERE session_id = ?", (session_id,)
        ).fetchall()
        rows = conn.execute(
            "SELECT seq, id, kind, body, meta FROM entries WHERE session_id = ? ORDER BY seq",
            (session_id,),
        ).fetchall()
        return _reimport.stored_entries(rows, ranges)

    def import_reports(self, session_id: str) -> list[ImportRecord]:
        """Every stored import of the session, oldest first (see
        :meth:`ctxengine.stores.base.Store.import_reports`)."""
        with self._read(f"read import reports of {session_id!r}") as conn:
            self._require(conn, session_id)
            rows = conn.execute(
                f"SELECT {_rows.IMPORT_COLUMNS} FROM import_reports WHERE session_id = ? "
                "ORDER BY rowid",
                (session_id,),
            ).fetchall()
        return [_rows.row_import(row) for row in rows]

    def _append(
        self,
        conn: sqlite3.Connection,
        session_id: str,
        entries: Sequence[Entry],
        operation: str,
        expect_last_seq: int | None,
    ) -> int:
        self._require(conn, session_id)
        last = self._last_seq(conn, session_id)
        if expect_last_seq is not None and last != expect_last_seq:
            raise StoreConflict(session_id, expect_last_seq, last)
        stored = self._stored_ids(conn, session_id, [e.id for e in entries])
        fresh = [e for e in entries if e.id not in stored]
        self._insert(conn, session_id, fresh, last + 1, operation)
        return len(fresh)

    def _insert(
        self,
        conn: sqlite3.Connection,
        session_id: str,
        fresh: Sequence[Entry],
        next_seq: int,
        operation: str,
    ) -> None:
        """Insert ``fresh`` (none stored yet), which must carry seqs ``next_seq`` …"""
        where = self._where(operation)
        _check_continues(fresh, session_id, next_seq, where)
        conn.executemany(
            f"INSERT INTO entries ({_rows.ENTRY_COLUMNS}) VALUES (?, ?, ?, ?, ?, ?, ?, ?)",
            (_rows.entry_row(e, where) for e in fresh),
        )

    @staticmethod
    def _stored_ids(conn: sqlite3.Connection, session_id: str, ids: list[str]) -> set[str]:
        found: set[str] = set()
        for start in range(0, len(ids), _ID_CHUNK):
            chunk = ids[start : start + _ID_CHUNK]
            marks = ", ".join("?" * len(chunk))
            rows = conn.execute(
                f"SELECT id FROM entries WHERE session_id = ? AND id IN ({marks})",
                (session_id, *chunk),
            )
            found.update(row[0] for row in rows)
        return found

    # -- reads ------------------------------------------------------------------------------

    def entries(self, session_id: str, *, after_seq: int | None = None) -> list[Entry]:
        """The session's entries in seq order (only ``seq > after_seq`` when given).

        With ``after_seq`` the read is a range scan of the ``(session_id, seq)`` primary key:
        its cost follows the entries returned, not the length of the log.
        """
        operation = f"read entries of session {session_id!r}"
        with self._read(operation) as conn:
            self._require(conn, session_id)
            rows = conn.execute(
                f"SELECT {_rows.ENTRY_COLUMNS} FROM entries "
                "WHERE session_id = ? AND seq > ? ORDER BY seq",
                (session_id, -1 if after_seq is None else after_seq),
            ).fetchall()
        where = self._where(operation)
        return [_rows.row_entry(row, where) for row in rows]

    def last_seq(self, session_id: str) -> int:
        """Seq of the newest entry, ``-1`` when the session has none."""
        with self._read(f"read last seq of session {session_id!r}") as conn:
            self._require(conn, session_id)
            return self._last_seq(conn, session_id)

    @staticmethod
    def _last_seq(conn: sqlite3.Connection, session_id: str) -> int:
        row = conn.execute(
            "SELECT MAX(seq) FROM entries WHERE session_id = ?", (session_id,)
        ).fetchone()
        return -1 if row[0] is None else int(row[0])

    def sessions(self) -> list[SessionInfo]:
        """Every session with its entry count, in the order they were first stored."""
        with self._read("list sessions") as conn:
            rows = conn.execute(f"{_SELECT_SESSIONS} ORDER BY s.rowid").fetchall()
        return [_rows.row_session(row) for row in rows]

    def session(self, session_id: str) -> SessionInfo:
        """The session with this id, or with the only id that starts with this prefix.

        Raises:
            SessionNotFound: nothing matches (or the prefix is empty).
            StoreError: the prefix is ambiguous; the message lists the matching ids.
        """
        with self._read(f"look up session {session_id!r}") as conn:
            rows = conn.execute(f"{_SELECT_SESSIONS} WHERE s.id = ?", (session_id,))
            exact = rows.fetchone()
            if exact is not None:
                return _rows.row_session(exact)
            if not session_id:
                raise SessionNotFound(session_id)
            rows = conn.execute(
                f"{_SELECT_SESSIONS} WHERE substr(s.id, 1, ?) = ? ORDER BY s.id",
                (len(session_id), session_id),
            )
            matches = rows.fetchall()
        if not matches:
            raise SessionNotFound(session_id)
        if len(matches) > 1:
            raise StoreError(_ambiguous(session_id, [row[0] for row in matches]))
        return _rows.row_session(matches[0])

    def session_link(self, session_id: str) -> SessionLink | None:
        """The link of a session started from another one, else ``None``.

        Raises:
            SessionNotFound: no session ``session_id``.
        """
        with self._read(f"read the link of session {session_id!r}") as conn:
            self._require(conn, session_id)
            row = conn.execute(
                f"SELECT {_rows.LINK_COLUMNS} FROM session_links WHERE session_id = ?",
                (session_id,),
            ).fetchone()
        return None if row is None else _rows.row_link(row)

    def children(self, session_id: str) -> list[SessionLink]:
        """The links of the sessions started from this one, in the order they were stored.

        Raises:
            SessionNotFound: no session ``session_id``.
        """
        with self._read(f"read the children of session {session_id!r}") as conn:
            self._require(conn, session_id)
            rows = conn.execute(
                f"SELECT {_rows.LINK_COLUMNS} FROM session_links "
                "WHERE parent_session_id = ? ORDER BY rowid",
                (session_id,),
            ).fetchall()
        return [_rows.row_link(row) for row in rows]

    # -- copies -----------------------------------------------------------------------------

    def export_session(self, session_id: str) -> SessionCopy:
        """The whole session read in one snapshot (a read transaction: WAL readers see one
        commit, never part of another); see
        :meth:`ctxengine.stores.base.Store.export_session`.

        Raises:
            SessionNotFound: no session ``session_id``.
        """
        operation = f"export session {session_id!r}"
        where = self._where(operation)
        with self._read(operation) as conn:
            conn.execute("BEGIN")
            try:
                row = conn.execute(f"{_SELECT_SESSIONS} WHERE s.id = ?", (session_id,)).fetchone()
                if row is None:
                    raise SessionNotFound(session_id)
                link = conn.execute(
                    f"SELECT {_rows.LINK_COLUMNS} FROM session_links WHERE session_id = ?",
                    (session_id,),
                ).fetchone()
                rows = conn.execute(
                    f"SELECT {_rows.ENTRY_COLUMNS} FROM entries WHERE session_id = ? ORDER BY seq",
                    (session_id,),
                ).fetchall()
                imports = conn.execute(
                    f"SELECT {_rows.IMPORT_COLUMNS} FROM import_reports WHERE session_id = ? "
                    "ORDER BY rowid",
                    (session_id,),
                ).fetchall()
                spans = self._spans(conn, session_id)
            finally:
                conn.execute("COMMIT")
        entries = tuple(_rows.row_entry(r, where) for r in rows)
        return SessionCopy(
            _rows.row_session(row),
            None if link is None else _rows.row_link(link),
            entries,
            tuple(_rows.row_import(r) for r in imports),
            clip_spans(spans, len(entries) - 1),
        )

    @staticmethod
    def _spans(conn: sqlite3.Connection, session_id: str) -> list[tuple[int, int]]:
        rows = conn.execute(
            "SELECT first_seq, last_seq FROM imported_seqs WHERE session_id = ?", (session_id,)
        ).fetchall()
        return [(int(a), int(b)) for a, b in rows]

    def restore_session(self, copy: SessionCopy) -> RestoreResult:
        """Store a session read from another store unchanged, in one ``BEGIN IMMEDIATE``
        transaction; a session already held gets only what it lacks. See
        :meth:`ctxengine.stores.base.Store.restore_session`.

        Raises:
            StoreError: the stored session differs from ``copy``, or the link's parent is
                not stored; nothing is stored.
        """
        sid = copy.info.id
        operation = f"copy session {sid!r}"
        where = self._where(operation)
        with self._write(operation) as conn:
            created = self._insert_session(conn, copy.info, operation)
            if created and copy.link is not None:
                self._insert_link(conn, copy.link, where)
            rows = conn.execute(
                f"SELECT {_rows.ENTRY_COLUMNS} FROM entries WHERE session_id = ? ORDER BY seq",
                (sid,),
            ).fetchall()
            count = conn.execute(
                "SELECT COUNT(*) FROM import_reports WHERE session_id = ?", (sid,)
            ).fetchone()[0]
            plan = plan_restore(
                copy,
                [_rows.row_entry(r, where) for r in rows],
                int(count),
                self._spans(conn, sid),
                where,
            )
            self._insert(conn, sid, plan.entries, len(rows), operation)
            conn.executemany(
                f"INSERT INTO import_reports ({_rows.IMPORT_COLUMNS}) VALUES (?, ?, ?, ?, ?, ?)",
                (_rows.import_record_row(r, where) for r in plan.imports),
            )
            conn.executemany(
                "INSERT INTO imported_seqs (session_id, first_seq, last_seq) VALUES (?, ?, ?)",
                ((sid, a, b) for a, b in plan.spans),
            )
        return RestoreResult(sid, created, len(plan.entries), len(plan.imports))

    # -- stateless checkpoints --------------------------------------------------------------

    def save_checkpoint(self, checkpoint: StoredCheckpoint) -> None:
        """Store a stateless call's checkpoint (see
        :meth:`ctxengine.stores.base.CheckpointStore.save_checkpoint`)."""
        c = checkpoint
        now = datetime.now(UTC).isoformat(timespec="milliseconds")
        with self._write("save stateless checkpoint") as conn:
            conn.execute(
                "INSERT OR IGNORE INTO stateless_checkpoints "
                "(config, prefix, parent, messages, tail, state, created_at) "
                "VALUES (?, ?, ?, ?, ?, ?, ?)",
                (c.config, c.prefix, c.parent, c.messages, c.tail, c.state, now),
            )

    def longest_checkpoint(self, config: str, prefixes: Sequence[str]) -> str | None:
        """The last of ``prefixes`` stored under ``config`` (see
        :meth:`ctxengine.stores.base.CheckpointStore.longest_checkpoint`)."""
        found: dict[str, int] = {}
        with self._read("look up stateless checkpoints") as conn:
            for start in range(0, len(prefixes), _ID_CHUNK):
                chunk = list(prefixes[start : start + _ID_CHUNK])
                marks = ", ".join("?" * len(chunk))
                rows = conn.execute(
                    "SELECT prefix, messages FROM stateless_checkpoints "
                    f"WHERE config = ? AND prefix IN ({marks})",
                    (config, *chunk),
                )
                found.update((row[0], int(row[1])) for row in rows)
        return max(found, key=lambda p: found[p]) if found else None

    def checkpoint_chain(self, config: str, prefix: str) -> list[StoredCheckpoint]:
        """The checkpoint and its ancestors, oldest first (see
        :meth:`ctxengine.stores.base.CheckpointStore.checkpoint_chain`)."""
        with self._read("read stateless checkpoints") as conn:
            rows = conn.execute(
                """WITH RECURSIVE chain(prefix, parent, messages, tail, state, depth) AS (
                    SELECT prefix, parent, messages, tail, state, 0 FROM stateless_checkpoints
                    WHERE config = ?1 AND prefix = ?2
                    UNION ALL
                    SELECT c.prefix, c.parent, c.messages, c.tail, c.state, chain.depth + 1
                    FROM stateless_checkpoints c JOIN chain
                    ON c.config = ?1 AND c.prefix = chain.parent AND c.messages < chain.messages
                )
                SELECT prefix, parent, messages, tail, state FROM chain ORDER BY depth DESC""",
                (config, prefix),
            ).fetchall()
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
                "INSERT INTO usage_anchors (conversation, signature, usage, created_at) "
                "VALUES (?, ?, ?, ?) ON CONFLICT (conversation, signature) "
                "DO UPDATE SET usage = excluded.usage, created_at = excluded.created_at",
                (conversation, signature, usage, now),
            )

    def usage_anchor(self, conversation: str, signature: str) -> bytes | None:
        """The usage kept for a reply, else ``None`` (see
        :meth:`ctxengine.stores.base.UsageAnchorStore.usage_anchor`)."""
        with self._read("read usage anchor") as conn:
            row = conn.execute(
                "SELECT usage FROM usage_anchors WHERE conversation = ? AND signature = ?",
                (conversation, signature),
            ).fetchone()
        return None if row is None else bytes(row[0])

    # -- coordination -----------------------------------------------------------------------

    def compaction_lock(self, session_id: str, *, timeout_s: float) -> AbstractContextManager[None]:
        """Hold the session's compaction lock for the duration of a ``with`` block: one
        holder at a time across every thread and process using this database file. Follow
        the protocol in :meth:`ctxengine.stores.base.Store.compaction_lock`.

        The lock is an advisory lock on ``<db>-locks/<sha256(session_id)[:32]>.lock``
        (released by the operating system when its holder dies), taken after an in-process
        lock; it holds no SQLite lock, so appends and reads go on meanwhile. For
        ``":memory:"`` it is an in-process lock of this store object. Not re-entrant.

        Args:
            session_id: the session (it need not be stored yet).
            timeout_s: longest wait for the current holder, in seconds (0: try once).

        Raises:
            StoreLockTimeout: still held by another thread or process after ``timeout_s``.
            StoreError: this thread already holds it, or the lock file cannot be created.
        """
        return self._locks.hold(session_id, timeout_s)

    # -- lifetime ---------------------------------------------------------------------------

    def close(self) -> None:
        """Close every connection this process opened (all threads'); later calls raise
        ``StoreError``. Idempotent. Call it once no other thread is inside a store call."""
        self._connections.close()

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
        return f"SQLiteStore({self.path!r})"


def _is_busy(exc: sqlite3.Error) -> bool:
    """True for SQLite's "database is locked" (``SQLITE_BUSY``): another connection held the
    lock past the busy timeout."""
    code = getattr(exc, "sqlite_errorcode", None)
    if code is not None:
        return bool(code & 0xFF == sqlite3.SQLITE_BUSY)
    return "database is locked" in str(exc)
