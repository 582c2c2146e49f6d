"""Per-session exclusive locks shared by the threads and processes of one database.

A lock is two locks taken in order:

1. an in-process ``threading.Lock`` per lock file (shared by every store object of the
   process), so threads queue on a real lock instead of polling;
2. an advisory lock on a per-session file next to the database, ``<db>-locks/<hash>.lock``
   (``flock`` on POSIX, ``msvcrt.locking`` on Windows), taken with a fresh file descriptor
   per acquisition.

Why a file lock and not a lock row or a held SQLite transaction: the operating system drops a
file lock the moment its holder process dies (killed, crashed, powered off mid-call), so a
dead holder never blocks the next one, with no lease to guess, no clock and no heartbeat. A
held ``BEGIN IMMEDIATE`` would also die with its holder, but it blocks every writer of the
whole database (appends to all sessions) for as long as a compaction runs, which includes a
model call of up to minutes. The file lock blocks only compactions of the same session, and
only the lock takers wait.

A live holder that hangs is bounded by the caller's ``timeout_s``
(:class:`~ctxengine.errors.StoreLockTimeout`). Lock files are empty and never deleted:
deleting a lock file that another process has open would let a third process lock a new file
of the same name while the second still holds the old one. The lock is not re-entrant: a
thread asking again for a lock it holds gets a ``StoreError`` at once (waiting would
deadlock). A process forked while holding a lock shares it with its parent until both close.
"""

from __future__ import annotations

import hashlib
import os
import sys
import threading
import time
import uuid
import weakref
from collections.abc import Iterator
from contextlib import contextmanager

from ctxengine.errors import StoreError, StoreLockTimeout

#: Poll interval while another process holds the file lock: starts here, doubles up to the cap.
_POLL_FIRST_S = 0.005
_POLL_MAX_S = 0.05

if sys.platform == "win32":  # pragma: no cover - exercised on Windows only
    import msvcrt

    def _try_lock(fd: int) -> bool:
        try:
            msvcrt.locking(fd, msvcrt.LK_NBLCK, 1)
        except OSError:
            return False
        return True

    def _unlock(fd: int) -> None:
        msvcrt.locking(fd, msvcrt.LK_UNLCK, 1)

else:
    import fcntl

    def _try_lock(fd: int) -> bool:
        try:
            fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except BlockingIOError:
            return False
        return True

    def _unlock(fd: int) -> None:
        fcntl.flock(fd, fcntl.LOCK_UN)


_guard = threading.Lock()
#: In-process lock per lock key; an entry lives while some thread holds or waits on it.
_thread_locks: weakref.WeakValueDictionary[str, threading.Lock] = weakref.WeakValueDictionary()
#: Lock key -> ident of the thread holding it (to refuse re-entry instead of deadlocking).
_owners: dict[str, int] = {}


def _thread_lock(key: str) -> threading.Lock:
    with _guard:
        lock = _thread_locks.get(key)
        if lock is None:
            lock = threading.Lock()
            _thread_locks[key] = lock
        return lock


def lock_file_name(session_id: str) -> str:
    """File name of a session's lock: the first 32 hex digits of the SHA-256 of its id
    (any id, whatever its characters, gives a safe, fixed-length name)."""
    return hashlib.sha256(session_id.encode("utf-8")).hexdigest()[:32] + ".lock"


@contextmanager
def thread_hold(key: str, session_id: str, timeout_s: float) -> Iterator[float]:
    """Hold the in-process lock ``key`` (one per lock of a session, shared by every store
    object of the process) for the block; yields the ``time.monotonic()`` deadline left for
    the lock between processes taken inside it.

    Raises:
        StoreLockTimeout: another thread held it for ``timeout_s`` seconds.
        StoreError: this thread already holds it (the lock is not re-entrant).
    """
    me = threading.get_ident()
    with _guard:
        if _owners.get(key) == me:
            raise StoreError(
                f"the compaction lock of session {session_id!r} is already held by this "
                "thread (the lock is not re-entrant)"
            )
    deadline = time.monotonic() + max(0.0, timeout_s)
    lock = _thread_lock(key)
    if not lock.acquire(timeout=max(0.0, timeout_s)):
        raise StoreLockTimeout(session_id, timeout_s)
    try:
        with _guard:
            _owners[key] = me
        try:
            yield deadline
        finally:
            with _guard:
                del _owners[key]
    finally:
        lock.release()


class SessionLocks:
    """The per-session locks of one database.

    Args:
        directory: where lock files live (created on first use), or ``None`` for a database
            only this process can see (``":memory:"``): then the in-process lock alone is
            taken, private to this object.
    """

    def __init__(self, directory: str | None) -> None:
        self.directory = directory
        self._namespace = f"memory:{uuid.uuid4().hex}:" if directory is None else ""

    def path(self, session_id: str) -> str | None:
        """The lock file of ``session_id``, or ``None`` without a directory."""
        if self.directory is None:
            return None
        return os.path.join(self.directory, lock_file_name(session_id))

    @contextmanager
    def hold(self, session_id: str, timeout_s: float) -> Iterator[None]:
        """Hold the session's lock for the duration of the block.

        Args:
            session_id: the session to lock.
            timeout_s: longest wait for another holder, in seconds (0: try once).

        Raises:
            StoreLockTimeout: another thread or process still held it after ``timeout_s``.
            StoreError: this thread already holds it, or the lock file cannot be created.
        """
        path = self.path(session_id)
        key = path if path is not None else self._namespace + session_id
        with thread_hold(key, session_id, timeout_s) as deadline:
            if path is None:
                yield
            else:
                with self._file_lock(path, session_id, deadline, timeout_s):
                    yield

    @contextmanager
    def _file_lock(
        self, path: str, session_id: str, deadline: float, timeout_s: float
    ) -> Iterator[None]:
        assert self.directory is not None
        try:
            os.makedirs(self.directory, exist_ok=True)
            fd = os.open(path, os.O_RDWR | os.O_CREAT, 0o644)
        except OSError as exc:
            raise StoreError(f"cannot open the lock file {path}: {exc.strerror}") from exc
        try:
            pause = _POLL_FIRST_S
            while not _try_lock(fd):
                left = deadline - time.monotonic()
                if left <= 0:
                    raise StoreLockTimeout(session_id, timeout_s)
                time.sleep(min(pause, left))
                pause = min(pause * 2, _POLL_MAX_S)
            try:
                yield
            finally:
                _unlock(fd)
        finally:
            os.close(fd)
