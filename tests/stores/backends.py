"""The store kinds the store tests run over, with a raw connection to each (the tests check
what the database itself refuses, and read what is stored without the store class).

``Backend.kind`` is ``"sqlite"`` (a file), ``"memory"`` (SQLite ``:memory:``) or
``"postgres"`` (a schema of the test server: ``tests/conftest.py``).
"""

from __future__ import annotations

import sqlite3
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, TypeAlias

from ctxengine.stores.location import open_store, redact
from ctxengine.stores.sqlite import SQLiteStore

if TYPE_CHECKING:
    from ctxengine.stores.postgres import PostgresStore

Store: TypeAlias = "SQLiteStore | PostgresStore"


@dataclass(frozen=True)
class Backend:
    """One store location and how to reach its database directly."""

    kind: str
    location: str

    @property
    def is_pg(self) -> bool:
        return self.kind == "postgres"

    def open(self, **options: Any) -> Store:
        """A new store object on this location."""
        return open_store(self.location, **options)

    def where(self, operation: str) -> str:
        """How a store error names this store and ``operation``."""
        if self.is_pg:
            return f"postgresql store {redact(self.location)}: {operation}"
        return f"sqlite store {self.location}: {operation}"

    @property
    def integrity_errors(self) -> tuple[type[BaseException], ...]:
        """What the raw driver raises when a trigger or constraint refuses a statement."""
        if self.is_pg:
            import psycopg

            return (psycopg.errors.IntegrityError,)
        return (sqlite3.IntegrityError,)

    @contextmanager
    def raw(self) -> Iterator[Any]:
        """A raw autocommit connection (``sqlite3`` or ``psycopg``): ``.execute(sql)``."""
        if self.is_pg:
            import psycopg

            with psycopg.connect(self.location, autocommit=True) as conn:
                yield conn
        else:
            conn = sqlite3.connect(self.location, isolation_level=None)
            try:
                yield conn
            finally:
                conn.close()

    def rows(self, sql: str) -> list[tuple[Any, ...]]:
        """The rows of ``sql``, read by an independent connection."""
        with self.raw() as conn:
            return [tuple(r) for r in conn.execute(sql).fetchall()]

    def stored_keys(self) -> list[tuple[Any, ...]]:
        """Every (session_id, seq, id) and session id."""
        return self.rows("SELECT session_id, seq, id FROM entries ORDER BY 1, 2") + self.rows(
            "SELECT id FROM sessions ORDER BY id"
        )

    def message(self, exc: BaseException) -> str:
        """The database's own message of a refused statement (a trigger's text)."""
        diag = getattr(exc, "diag", None)
        primary = getattr(diag, "message_primary", None)
        return primary if isinstance(primary, str) else str(exc)

    @contextmanager
    def write_locked(self) -> Iterator[Any]:
        """Another connection holds what every write needs for the block (SQLite: the
        database's write lock; PostgreSQL: exclusive locks on ``sessions`` and
        ``entries``, which readers do not wait for); rolled back at the end. Yields that
        connection."""
        with self.raw() as conn:
            if self.is_pg:
                conn.execute("BEGIN")
                conn.execute("LOCK TABLE sessions, entries IN EXCLUSIVE MODE")
                conn.execute("INSERT INTO sessions (id, format) VALUES ('held', 'live')")
            else:
                conn.execute("BEGIN IMMEDIATE")
                conn.execute("INSERT INTO sessions (id, format) VALUES ('held', 'live')")
            try:
                yield conn
            finally:
                conn.execute("ROLLBACK")


def backend_of(kind: str, location: str) -> Backend:
    """The backend of a ``store_location`` fixture value."""
    return Backend(kind, location)
