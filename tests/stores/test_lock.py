"""The per-session compaction lock within one process, on every store kind: threads
serialise, sessions do not block each other, timeouts are bounded, re-entry is refused, errors
release it; where each kind keeps it (a lock file, a PostgreSQL advisory lock)."""

from __future__ import annotations

import hashlib
import threading
import time
from pathlib import Path

import pytest
from backends import Backend, Store

from ctxengine.errors import StoreError, StoreLockTimeout
from ctxengine.stores import SessionInfo, SQLiteStore
from ctxengine.stores._locks import lock_file_name


def hold_in_thread(store: Store, session_id: str) -> tuple[threading.Event, threading.Thread]:
    """Start a thread holding the session's lock until the returned event is set."""
    held, release = threading.Event(), threading.Event()

    def hold() -> None:
        with store.compaction_lock(session_id, timeout_s=5):
            held.set()
            release.wait(30)

    thread = threading.Thread(target=hold)
    thread.start()
    assert held.wait(30)
    return release, thread


def test_four_threads_hold_the_lock_one_at_a_time(store: Store) -> None:
    inside = 0
    most = 0
    order: list[int] = []
    count_lock = threading.Lock()

    def work(i: int) -> None:
        nonlocal inside, most
        for _ in range(3):
            with store.compaction_lock("s", timeout_s=30):
                with count_lock:
                    inside += 1
                    most = max(most, inside)
                order.append(i)
                time.sleep(0.005)
                with count_lock:
                    inside -= 1

    threads = [threading.Thread(target=work, args=(i,)) for i in range(4)]
    for t in threads:
        t.start()
    for t in threads:
        t.join(60)
    assert most == 1
    assert sorted(order) == [0, 0, 0, 1, 1, 1, 2, 2, 2, 3, 3, 3]


def test_a_held_lock_times_out_after_the_wait_and_other_sessions_are_free(
    store: Store,
) -> None:
    release, thread = hold_in_thread(store, "s1")
    try:
        t0 = time.monotonic()
        with pytest.raises(StoreLockTimeout) as info, store.compaction_lock("s1", timeout_s=0.2):
            pass
        waited = time.monotonic() - t0
        with store.compaction_lock("s2", timeout_s=0):
            pass
    finally:
        release.set()
        thread.join()
    assert 0.2 <= waited < 5
    assert (info.value.session_id, info.value.timeout_s) == ("s1", 0.2)
    assert str(info.value) == (
        "the compaction lock of session 's1' is still held by another writer after 0.2 s"
    )
    with store.compaction_lock("s1", timeout_s=0):
        pass


def test_two_store_objects_on_one_database_share_the_lock(backend: Backend) -> None:
    with backend.open() as a, backend.open() as b:
        release, thread = hold_in_thread(a, "s")
        try:
            with pytest.raises(StoreLockTimeout), b.compaction_lock("s", timeout_s=0.05):
                pass
        finally:
            release.set()
            thread.join()
        with b.compaction_lock("s", timeout_s=0):
            pass


def test_in_memory_stores_have_their_own_locks() -> None:
    with SQLiteStore(":memory:") as a, SQLiteStore(":memory:") as b:
        release, thread = hold_in_thread(a, "s")
        try:
            with b.compaction_lock("s", timeout_s=0):
                pass
        finally:
            release.set()
            thread.join()


def test_taking_the_lock_again_in_the_same_thread_is_refused(store: Store) -> None:
    with store.compaction_lock("s", timeout_s=1):
        t0 = time.monotonic()
        with pytest.raises(StoreError) as info, store.compaction_lock("s", timeout_s=1):
            pass
        assert time.monotonic() - t0 < 0.5
    assert str(info.value) == (
        "the compaction lock of session 's' is already held by this thread "
        "(the lock is not re-entrant)"
    )
    with store.compaction_lock("s", timeout_s=0):
        pass


def test_an_error_inside_the_block_releases_the_lock(store: Store) -> None:
    with pytest.raises(ZeroDivisionError), store.compaction_lock("s", timeout_s=0):
        _ = 1 / 0
    result: list[str] = []

    def other() -> None:
        with store.compaction_lock("s", timeout_s=0):
            result.append("taken")

    thread = threading.Thread(target=other)
    thread.start()
    thread.join()
    assert result == ["taken"]


def test_the_lock_file_sits_next_to_the_database(tmp_path: Path) -> None:
    sid = "a/../b ü"
    with SQLiteStore(tmp_path / "ctx.db") as store, store.compaction_lock(sid, timeout_s=0):
        pass
    name = hashlib.sha256(sid.encode()).hexdigest()[:32] + ".lock"
    assert lock_file_name(sid) == name
    assert sorted(p.name for p in (tmp_path / "ctx.db-locks").iterdir()) == [name]
    assert (tmp_path / "ctx.db-locks" / name).stat().st_size == 0


def test_a_lock_directory_that_cannot_be_made_is_a_store_error(tmp_path: Path) -> None:
    with SQLiteStore(tmp_path / "ctx.db") as store:
        (tmp_path / "ctx.db-locks").write_text("a file where the directory should be")
        with pytest.raises(StoreError) as info, store.compaction_lock("s", timeout_s=0):
            pass
    name = lock_file_name("s")
    assert str(info.value) == (
        f"cannot open the lock file {tmp_path / 'ctx.db-locks' / name}: File exists"
    )


def test_the_postgres_lock_is_an_advisory_lock_that_holds_no_row(pg_url: str) -> None:
    from ctxengine.stores.postgres import PostgresStore, lock_key

    key = lock_key("a/../b ü")
    with PostgresStore(pg_url) as store:
        assert key == int.from_bytes(
            hashlib.sha256(b"ctxengine compaction\0" + "a/../b ü".encode()).digest()[:8],
            "big",
            signed=True,
        )
        backend = Backend("postgres", pg_url)
        query = (
            "SELECT (classid::bigint << 32) | objid::bigint, mode, granted FROM pg_locks "
            "WHERE locktype = 'advisory'"
        )
        with store.compaction_lock("a/../b ü", timeout_s=0):
            held = backend.rows(query)
            # Appends of the session go on while it is held.
            store.create_session(SessionInfo("a/../b ü", "live"))
        assert held == [(key & 0xFFFFFFFFFFFFFFFF, "ExclusiveLock", True)]
        assert backend.rows(query) == []
