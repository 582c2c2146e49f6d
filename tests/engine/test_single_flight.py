"""Single-flight compaction: threads of one process and processes sharing one store (SQLite,
PostgreSQL) call ``prepare()`` on one session past the trigger; exactly one summarizer call and one
compaction record, and every worker ends with the same context. A session that another
writer has moved past catches up instead of failing."""

from __future__ import annotations

import multiprocessing
import threading
from pathlib import Path

from engine_helpers import filler
from single_flight_worker import SESSION, body_hash, open_session, prepare_in_process

from ctxengine.engine import Session
from ctxengine.model import CompactionRecord, assistant, user
from ctxengine.stores.location import open_store

#: 24 turns of 150 + 10 tokens: 3,840 tokens, past the 3,200-token trigger at 4,000.
TURNS = 24


def seed(db: str, calls: Path) -> None:
    """Write the shared session: ``TURNS`` answered turns, nothing compacted yet."""
    s = open_session(db, calls)
    for i in range(TURNS):
        s.append(user(filler(f"u{i}", 150)), entry_id=f"u{i}")
        s.append(assistant(filler(f"a{i}", 10)), entry_id=f"a{i}")
    assert s.context_tokens(s.project()) >= s.budget.trigger


def compactions(db: str) -> list[str]:
    with open_store(db) as store:
        return [e.id for e in store.entries(SESSION) if isinstance(e.body, CompactionRecord)]


def calls_made(calls: Path) -> int:
    return len(calls.read_text().splitlines()) if calls.exists() else 0


def prepare_in_threads(sessions: list[Session]) -> list[str]:
    """``prepare()`` each session in a thread of its own, all released together; the
    hashes of their contexts (no thread may raise)."""
    barrier = threading.Barrier(len(sessions))
    hashes: list[str] = []
    errors: list[BaseException] = []

    def work(session: Session) -> None:
        try:
            barrier.wait()
            session.prepare()
            hashes.append(body_hash(session))
        except BaseException as exc:
            errors.append(exc)

    threads = [threading.Thread(target=work, args=(s,)) for s in sessions]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert errors == []
    return hashes


def test_four_threads_sharing_one_session_compact_once(tmp_path: Path, store_location: str) -> None:
    db, calls = store_location, tmp_path / "calls"
    seed(db, calls)
    session = open_session(db, calls)
    hashes = prepare_in_threads([session] * 4)
    assert calls_made(calls) == 1
    assert len(compactions(db)) == 1
    assert len(set(hashes)) == 1 and len(hashes) == 4


def test_four_threads_each_with_its_own_session_compact_once(
    tmp_path: Path, store_location: str
) -> None:
    db, calls = store_location, tmp_path / "calls"
    seed(db, calls)
    sessions = [open_session(db, calls) for _ in range(4)]
    hashes = prepare_in_threads(sessions)
    assert calls_made(calls) == 1
    assert len(compactions(db)) == 1
    assert len(set(hashes)) == 1 and len(hashes) == 4


def test_three_processes_compact_once_and_end_with_the_same_context(
    tmp_path: Path, store_location: str
) -> None:
    db, calls = store_location, tmp_path / "calls"
    seed(db, calls)
    ctx = multiprocessing.get_context("spawn")
    barrier = ctx.Barrier(3)
    out = ctx.Queue()
    procs = [
        ctx.Process(target=prepare_in_process, args=(db, str(calls), barrier, out))
        for _ in range(3)
    ]
    for p in procs:
        p.start()
    hashes = [out.get(timeout=120) for _ in procs]
    for p in procs:
        p.join(timeout=60)
    assert [p.exitcode for p in procs] == [0, 0, 0]
    assert calls_made(calls) == 1
    assert len(compactions(db)) == 1
    assert len(set(hashes)) == 1
    assert hashes[0] == body_hash(open_session(db, calls))


def test_a_session_another_writer_moved_past_catches_up_and_appends_after_it(
    tmp_path: Path, store_location: str
) -> None:
    db, calls = store_location, tmp_path / "calls"
    first, second = open_session(db, calls), open_session(db, calls)
    first.append(user("from the first"), entry_id="one")
    entry = second.append(user("from the second"), entry_id="two")
    assert (entry.seq, entry.parent_id) == (1, "one")
    assert [e.id for e in second.entries] == ["one", "two"]
    third = first.append(assistant("and the first again"), entry_id="three")
    assert (third.seq, third.parent_id) == (2, "two")
    with open_store(db) as store:
        assert [e.id for e in store.entries(SESSION)] == ["one", "two", "three"]
    # A content-hash id is recomputed for the new parent.
    hashed = second.append(user("hashed"))
    assert hashed.parent_id == "three" and hashed.seq == 3
