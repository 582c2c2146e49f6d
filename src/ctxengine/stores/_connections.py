"""SQLite connections for a store used from many threads: one connection per thread.

Why one connection per thread (and not one shared connection behind a lock):

- WAL lets readers run while a writer holds its transaction. That holds between connections,
  not within one: with a single shared connection, a thread reading would wait behind another
  thread's whole import or append transaction. With a connection per thread, threads of one
  process relate to each other exactly as processes do: reads never wait, writes queue on
  SQLite's own write lock under the busy timeout, and a thread's transaction can never take
  in another thread's statements.
- A connection is only ever used by the thread that opened it, so no Python-level lock sits
  on the read path.

The connections are opened with ``check_same_thread=False`` for one reason only: so
:meth:`ThreadConnections.close` (called from any thread) can close them all. A connection is
closed when its thread ends (its ``threading.local`` slot is dropped), or by ``close()``.

A process forked after a connection was opened never reuses it (SQLite forbids carrying a
connection across ``fork``): a connection remembers the pid that opened it, and the child opens
its own, leaving the inherited one untouched.

``":memory:"`` is the exception: every connection to it is a private, empty database, so the
store keeps one connection and lends it to one thread at a time behind a re-entrant lock.
"""

from __future__ import annotations

import os
import sqlite3
import threading
import weakref
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from pathlib import Path

#: ``sqlite3``'s own message for a closed connection, kept so callers see one wording.
CLOSED_MESSAGE = "Cannot operate on a closed database."


class _Slot:
    """One opened connection and the process that opened it (weak-referenceable, unlike
    ``sqlite3.Connection``, so the registry does not keep a dead thread's connection)."""

    __slots__ = ("__weakref__", "conn", "pid")

    # Kept on the class so ``__del__`` still finds it while the interpreter shuts down.
    _getpid = staticmethod(os.getpid)

    def __init__(self, conn: sqlite3.Connection) -> None:
        self.conn = conn
        self.pid = self._getpid()

    def __del__(self) -> None:
        # The thread that owned this slot ended: close its connection (never a connection a
        # forked child inherited: the parent still uses it).
        if self.pid == self._getpid():
            self.conn.close()


class ThreadConnections:
    """Hands each thread its own connection to the database at ``path``.

    Args:
        path: database file, or ``":memory:"`` (one connection, shared behind a lock).
        busy_timeout_s: seconds a statement waits for another connection's lock (seconds).
        configure: run on every new connection (pragmas); its errors propagate.
        must_exist: open an existing file only (a ``mode=rw`` URI): a missing file is an
            error instead of a new, empty database.

    Raises:
        sqlite3.Error: the first connection cannot be opened or configured.
    """

    def __init__(
        self,
        path: str,
        busy_timeout_s: float,
        configure: Callable[[sqlite3.Connection], None],
        *,
        must_exist: bool = False,
    ) -> None:
        self.path = path
        self._must_exist = must_exist and path != ":memory:"
        self.busy_timeout_s = busy_timeout_s
        self._configure = configure
        self._local = threading.local()
        self._slots: weakref.WeakSet[_Slot] = weakref.WeakSet()
        self._registry_lock = threading.Lock()
        self._closed = False
        self._shared: _Slot | None = None
        self._shared_lock = threading.RLock()
        first = self._open()
        if path == ":memory:":
            self._shared = first
        else:
            self._local.slot = first

    def _open(self) -> _Slot:
        target = Path(self.path).absolute().as_uri() + "?mode=rw" if self._must_exist else self.path
        conn = sqlite3.connect(
            target,
            timeout=self.busy_timeout_s,
            isolation_level=None,
            check_same_thread=False,
            uri=self._must_exist,
        )
        try:
            self._configure(conn)
        except BaseException:
            conn.close()
            raise
        slot = _Slot(conn)
        with self._registry_lock:
            self._slots.add(slot)
        return slot

    @contextmanager
    def use(self) -> Iterator[sqlite3.Connection]:
        """This thread's connection for the duration of the block (for ``":memory:"``, the
        shared connection, held by this thread until the block ends).

        Raises:
            sqlite3.ProgrammingError: the store was closed.
            sqlite3.Error: a new connection cannot be opened.
        """
        if self._shared is not None:
            with self._shared_lock:
                if self._closed:
                    raise sqlite3.ProgrammingError(CLOSED_MESSAGE)
                yield self._shared.conn
            return
        if self._closed:
            raise sqlite3.ProgrammingError(CLOSED_MESSAGE)
        slot: _Slot | None = getattr(self._local, "slot", None)
        if slot is None or slot.pid != os.getpid():
            slot = self._open()
            self._local.slot = slot
        yield slot.conn

    def open_count(self) -> int:
        """Connections opened by this process and not closed yet."""
        pid = os.getpid()
        with self._registry_lock:
            return sum(1 for s in self._slots if s.pid == pid)

    def close(self) -> None:
        """Close every connection this process opened; later :meth:`use` calls raise.
        Idempotent. Call it once no thread is still inside :meth:`use`."""
        with self._shared_lock:
            self._closed = True
            pid = os.getpid()
            with self._registry_lock:
                mine = [slot for slot in self._slots if slot.pid == pid]
                for slot in mine:
                    self._slots.discard(slot)
            for slot in mine:
                slot.conn.close()
