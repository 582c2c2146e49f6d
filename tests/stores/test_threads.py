"""One store object used from many threads, on every store kind: compare-and-append between
threads, readers that never wait for a writer thread, and closing; SQLite's connection per
thread."""

from __future__ import annotations

import gc
import threading
import time
from collections.abc import Callable
from pathlib import Path

import pytest
from backends import Backend, Store
from race_workers import message

from ctxengine.errors import StoreBusy, StoreConflict, StoreError
from ctxengine.model import Entry
from ctxengine.stores import SessionInfo, SQLiteStore

THREADS = 4


def run_threads(target: Callable[[int], None], n: int = THREADS) -> None:
    """Run ``target(i)`` in ``n`` threads started together; re-raise the first failure."""
    errors: list[BaseException] = []
    start = threading.Barrier(n)

    def body(i: int) -> None:
        try:
            start.wait()
            target(i)
        except BaseException as exc:
            errors.append(exc)

    threads = [threading.Thread(target=body, args=(i,)) for i in range(n)]
    for t in threads:
        t.start()
    for t in threads:
        t.join(60)
    assert not any(t.is_alive() for t in threads)
    if errors:
        raise errors[0]


def test_a_store_opened_in_one_thread_works_in_another(backend: Backend) -> None:
    store = backend.open()
    store.create_session(SessionInfo("s", "live"))
    seen: list[object] = []

    def work() -> None:
        store.append("s", [message("s", 0, "e0", None)])
        seen.append([e.id for e in store.entries("s")])
        seen.append(store.last_seq("s"))

    worker = threading.Thread(target=work)
    worker.start()
    worker.join()
    assert seen == [["e0"], 0]
    assert [e.id for e in store.entries("s")] == ["e0"]
    store.close()


def test_four_threads_append_and_read_their_own_sessions(store: Store) -> None:
    per_thread = 25

    def work(i: int) -> None:
        sid = f"s{i}"
        store.create_session(SessionInfo(sid, "live"))
        for n in range(per_thread):
            entry = message(sid, n, f"t{i}-{n}", f"t{i}-{n - 1}" if n else None)
            assert store.append(sid, [entry]) == 1
            assert store.last_seq(sid) == n
            assert store.entries(sid, after_seq=n - 1) == [entry]

    run_threads(work)
    assert [(s.id, s.entry_count) for s in sorted(store.sessions(), key=lambda s: s.id)] == [
        (f"s{i}", per_thread) for i in range(THREADS)
    ]
    for i in range(THREADS):
        assert [e.id for e in store.entries(f"s{i}")] == [f"t{i}-{n}" for n in range(per_thread)]
    store.close()


def test_four_threads_compare_and_append_to_one_session_lose_nothing(
    store: Store,
) -> None:
    store.create_session(SessionInfo("s", "live"))
    per_thread = 20
    conflicts = [0] * THREADS

    def work(i: int) -> None:
        written = 0
        while written < per_thread:
            last = store.last_seq("s")
            parent = store.entries("s", after_seq=last - 1)[0].id if last >= 0 else None
            entry = message("s", last + 1, f"t{i}-{written}", parent)
            try:
                store.append("s", [entry], expect_last_seq=last)
            except StoreConflict as conflict:
                assert conflict.expected == last
                assert conflict.actual > last
                conflicts[i] += 1
            else:
                written += 1

    run_threads(work)
    log = store.entries("s")
    assert [e.seq for e in log] == list(range(THREADS * per_thread))
    assert sorted(e.id for e in log) == sorted(
        f"t{i}-{n}" for i in range(THREADS) for n in range(per_thread)
    )
    # Each entry was appended on top of the entry stored just before it.
    assert [e.parent_id for e in log] == [None] + [e.id for e in log[:-1]]
    for i in range(THREADS):
        mine = [e.id for e in log if e.id.startswith(f"t{i}-")]
        assert mine == [f"t{i}-{n}" for n in range(per_thread)]
    store.close()


def test_a_reader_thread_does_not_wait_for_a_writer_thread(backend: Backend) -> None:
    store = backend.open(busy_timeout_s=0.2)
    store.create_session(SessionInfo("s", "live"))
    store.append("s", [message("s", 0, "e0", None)])
    inside, release = threading.Event(), threading.Event()

    def long_write() -> None:
        with store._write("a long transaction") as conn:
            if backend.is_pg:
                from sqlalchemy import text

                conn.execute(text("LOCK TABLE sessions, entries IN EXCLUSIVE MODE"))
                conn.execute(text("INSERT INTO sessions (id, format) VALUES ('s2', 'live')"))
            else:
                conn.execute("INSERT INTO sessions (id, format) VALUES ('s2', 'live')")
            inside.set()
            release.wait(30)

    writer = threading.Thread(target=long_write)
    writer.start()
    try:
        assert inside.wait(30)
        t0 = time.monotonic()
        assert [e.id for e in store.entries("s")] == ["e0"]
        assert [s.id for s in store.sessions()] == ["s"]
        read_s = time.monotonic() - t0
        t0 = time.monotonic()
        with pytest.raises(StoreError) as info:
            store.append("s", [message("s", 1, "e1", "e0")])
        write_s = time.monotonic() - t0
    finally:
        release.set()
        writer.join()
    assert read_s < 0.2
    assert isinstance(info.value, StoreBusy)
    held = "held a lock this write needs" if backend.is_pg else "held the write lock"
    assert str(info.value) == backend.where(
        f"append to session 's' failed: store busy (another writer {held} longer than the "
        "0.2 s busy timeout)"
    )
    assert 0.2 <= write_s < 5
    assert [s.id for s in store.sessions()] == ["s", "s2"]
    store.close()


def test_a_finished_thread_gives_its_connection_back(tmp_path: Path) -> None:
    store = SQLiteStore(tmp_path / "ctx.db")
    assert store._connections.open_count() == 1
    alive = threading.Event()

    def read() -> None:
        store.sessions()
        alive.wait(30)

    threads = [threading.Thread(target=read) for _ in range(3)]
    for t in threads:
        t.start()
    deadline = time.monotonic() + 30
    while store._connections.open_count() < 4 and time.monotonic() < deadline:
        time.sleep(0.01)
    assert store._connections.open_count() == 4
    alive.set()
    for t in threads:
        t.join()
    gc.collect()
    assert store._connections.open_count() == 1
    store.close()
    assert store._connections.open_count() == 0


def test_a_closed_store_refuses_every_thread(any_backend: Backend) -> None:
    store = any_backend.open()
    store.create_session(SessionInfo("s", "live"))
    store.close()
    store.close()
    errors: list[str] = []

    def read(_: int) -> None:
        with pytest.raises(StoreError) as info:
            store.entries("s")
        errors.append(str(info.value))

    run_threads(read, 2)
    assert (
        errors
        == [
            any_backend.where(
                "read entries of session 's' failed: Cannot operate on a closed database."
            )
        ]
        * 2
    )


def test_compare_and_append_of_one_expected_seq_has_one_winner_among_threads(
    store: Store,
) -> None:
    store.create_session(SessionInfo("s", "live"))
    store.append("s", [message("s", 0, "e0", None)])
    outcome: dict[int, object] = {}

    def race(i: int) -> None:
        entry: Entry = message("s", 1, f"t{i}", "e0")
        try:
            outcome[i] = store.append("s", [entry], expect_last_seq=0)
        except StoreConflict as conflict:
            outcome[i] = (conflict.expected, conflict.actual)

    run_threads(race)
    assert sorted(outcome.values(), key=repr) == sorted([1, (0, 1), (0, 1), (0, 1)], key=repr)
    winner = next(i for i, v in outcome.items() if v == 1)
    assert [e.id for e in store.entries("s")] == ["e0", f"t{winner}"]
    store.close()
