"""Processes sharing one store (a SQLite file, a PostgreSQL database): compare-and-append
races, single-flight compaction under the compaction lock, a killed lock holder, and a store
object carried across fork."""

from __future__ import annotations

import itertools
import multiprocessing
import os
import signal
import sys
import time
from typing import Any

import pytest
import race_workers
from backends import Backend, Store
from race_workers import SESSION, message

from ctxengine.errors import StoreLockTimeout
from ctxengine.model import CompactionRecord
from ctxengine.stores import SessionInfo, SQLiteStore
from ctxengine.stores.location import open_store

SPAWN = multiprocessing.get_context("spawn")
#: Generous bound on a child's whole run (interpreter start included) on a loaded machine.
CHILD_TIMEOUT_S = 120


def drain(queue: Any, n: int) -> list[Any]:
    return [queue.get(timeout=CHILD_TIMEOUT_S) for _ in range(n)]


def run_all(procs: list[Any]) -> None:
    for p in procs:
        p.start()
    for p in procs:
        p.join(CHILD_TIMEOUT_S)
    assert [p.exitcode for p in procs] == [0] * len(procs)


@pytest.fixture
def db(backend: Backend) -> str:
    with backend.open() as store:
        store.create_session(SessionInfo(SESSION, "live"))
    return backend.location


def test_three_processes_racing_an_append_leave_exactly_one_winner_per_parent(db: str) -> None:
    rounds, names = 6, ["p0", "p1", "p2"]
    barrier, out = SPAWN.Barrier(len(names)), SPAWN.Queue()
    procs = [
        SPAWN.Process(target=race_workers.cas_rounds, args=(db, n, rounds, barrier, out))
        for n in names
    ]
    run_all(procs)
    results = drain(out, rounds * len(names))
    winners: dict[int, str] = {}
    for r in range(rounds):
        this_round = sorted(x for x in results if x[0] == r)
        won = [x for x in this_round if x[2] == "won"]
        lost = [x for x in this_round if x[2] == "lost"]
        assert len(won) == 1 and len(lost) == 2, this_round
        # Every loser expected the same parent and was told the winner's seq.
        assert [(x[3], x[4]) for x in lost] == [(r - 1, r), (r - 1, r)]
        winners[r] = won[0][1]
    with open_store(db) as store:
        log = store.entries(SESSION)
    assert [e.seq for e in log] == list(range(rounds))
    assert [e.id for e in log] == [f"{winners[r]}-{r}" for r in range(rounds)]
    assert [e.parent_id for e in log] == [None] + [e.id for e in log[:-1]]


def test_single_flight_three_processes_store_one_compaction_the_others_reuse_it(
    db: str,
) -> None:
    with open_store(db) as store:
        store.append(
            SESSION, [message(SESSION, i, f"e{i}", f"e{i - 1}" if i else None) for i in range(10)]
        )
    names = ["p0", "p1", "p2"]
    barrier, out = SPAWN.Barrier(len(names)), SPAWN.Queue()
    procs = [
        SPAWN.Process(target=race_workers.single_flight, args=(db, n, 9, barrier, out))
        for n in names
    ]
    run_all(procs)
    results = drain(out, len(names))
    compacted = [x for x in results if x[1] == "compacted"]
    reused = [x for x in results if x[1] == "reused"]
    assert len(compacted) == 1 and len(reused) == 2
    winner = compacted[0][0]
    assert [x[2] for x in results] == [f"compaction-{winner}"] * 3
    # The lock was held by one process at a time: the hold intervals do not overlap.
    spans = sorted((x[3], x[4]) for x in results)
    assert all(a_end <= b_start for (_, a_end), (b_start, _) in itertools.pairwise(spans))
    assert compacted[0][3] == spans[0][0]
    with open_store(db) as store:
        log = store.entries(SESSION)
    assert len(log) == 11
    assert [e.id for e in log if isinstance(e.body, CompactionRecord)] == [f"compaction-{winner}"]
    assert (log[10].seq, log[10].parent_id) == (10, "e9")


def test_a_killed_lock_holder_does_not_block_the_next_taker(db: str) -> None:
    out = SPAWN.Queue()
    holder = SPAWN.Process(target=race_workers.hold_lock, args=(db, SESSION, out))
    holder.start()
    try:
        assert out.get(timeout=CHILD_TIMEOUT_S) == ("held", holder.pid)
        with open_store(db) as store:
            t0 = time.monotonic()
            with (
                pytest.raises(StoreLockTimeout) as info,
                store.compaction_lock(SESSION, timeout_s=0.3),
            ):
                pass
            waited = time.monotonic() - t0
            assert (info.value.session_id, info.value.timeout_s) == (SESSION, 0.3)
            assert 0.3 <= waited < 5
            assert holder.pid is not None
            os.kill(holder.pid, signal.SIGKILL)
            holder.join(CHILD_TIMEOUT_S)
            assert holder.exitcode == -signal.SIGKILL
            t0 = time.monotonic()
            with store.compaction_lock(SESSION, timeout_s=10):
                taken = time.monotonic() - t0
        # The kernel dropped the dead holder's lock: taken at the first try, no lease to wait.
        assert taken < 0.5
    finally:
        if holder.is_alive():
            holder.kill()
            holder.join()


def _append_in_child(store: Store) -> None:
    store.append(SESSION, [message(SESSION, 1, "from-child", "e0")])
    store.close()


@pytest.mark.skipif(sys.platform != "linux", reason="fork start method")
def test_a_store_carried_across_fork_opens_its_own_connection(db: str) -> None:
    with open_store(db) as store:
        store.append(SESSION, [message(SESSION, 0, "e0", None)])
        child = multiprocessing.get_context("fork").Process(target=_append_in_child, args=(store,))
        child.start()
        child.join(CHILD_TIMEOUT_S)
        assert child.exitcode == 0
        # The parent's connection was neither used nor closed by the child.
        assert [e.id for e in store.entries(SESSION)] == ["e0", "from-child"]
        if isinstance(store, SQLiteStore):
            assert store._connections.open_count() == 1
        assert store.append(SESSION, [message(SESSION, 2, "after", "from-child")]) == 1
