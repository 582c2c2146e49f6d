"""Default child ids under concurrency: two writers picking the same ``spawn-<n>.<parent>``
(another process, another connection) both get a child, the later one the next free id; an
explicit id that is taken stays an error. Through real SQLite files and processes."""

from __future__ import annotations

import multiprocessing
from collections.abc import Sequence
from pathlib import Path
from typing import Any

import pytest
from child_id_worker import PARENT, spawn_child

from ctxengine.engine import Session
from ctxengine.engine.children import FORK_POINT_RESULT
from ctxengine.model import Entry, ToolCallPart, assistant, system, user
from ctxengine.stores import SessionInfo, SessionLink
from ctxengine.stores.sqlite import SQLiteStore
from hand_estimator import HandEstimator

EST = HandEstimator()
SPAWN = multiprocessing.get_context("spawn")
#: Generous bound on a child's whole run (interpreter start included) on a loaded machine.
CHILD_TIMEOUT_S = 120


class RacedStore(SQLiteStore):
    """A store whose first ``create_session`` of a child is preceded by ``before(id)``: what
    another writer does between this writer's choice of an id and its transaction."""

    def __init__(self, path: Path, before: Any) -> None:
        super().__init__(path)
        self.before = before
        self.tried: list[str] = []

    def create_session(
        self,
        info: SessionInfo,
        *,
        link: SessionLink | None = None,
        entries: Sequence[Entry] = (),
    ) -> bool:
        if link is not None:
            self.tried.append(info.id)
            if len(self.tried) == 1:
                self.before(info.id)
        return super().create_session(info, link=link, entries=entries)


def parent(db: Path) -> None:
    s = Session(64_000, estimator=EST, store=SQLiteStore(db), session_id=PARENT)
    s.append(system("You are careful."))
    s.append(user("speed up the parser"))


@pytest.mark.parametrize("relation", ["spawn", "fork", "handoff"])
def test_a_default_id_taken_meanwhile_gives_the_next_free_one(
    tmp_path: Path, relation: str
) -> None:
    db = tmp_path / "ctx.db"
    parent(db)

    def other_writer(chosen: str) -> None:
        # Another connection, another Session: it picks the same default id and wins.
        other = Session(64_000, estimator=EST, store=SQLiteStore(db), session_id=PARENT)
        assert other.spawn("the other task", session_id=chosen).session_id == chosen

    store = RacedStore(db, other_writer)
    s = Session(64_000, estimator=EST, store=store, session_id=PARENT)
    if relation == "spawn":
        child = s.spawn("my task")
    elif relation == "fork":
        child = s.fork(task="my task")
    else:
        child = s.handoff().session
    assert store.tried == [f"{relation}-1.{PARENT}", f"{relation}-2.{PARENT}"]
    assert child.session_id == f"{relation}-2.{PARENT}"
    # The child's entries are its own, under the id it got.
    stored = SQLiteStore(db).entries(child.session_id)
    assert [e.session_id for e in stored] == [child.session_id] * len(stored) != []
    assert [e.id for e in stored] == [e.id for e in child.entries]
    if relation != "handoff":
        assert stored[-1].message is not None and stored[-1].message.text == "my task"
    other = SQLiteStore(db).entries(f"{relation}-1.{PARENT}")
    assert other[-1].message is not None and other[-1].message.text == "the other task"
    assert [x.session_id for x in SQLiteStore(db).children(PARENT)] == [
        f"{relation}-1.{PARENT}",
        f"{relation}-2.{PARENT}",
    ]


def test_a_fork_point_result_names_the_id_the_fork_got(tmp_path: Path) -> None:
    db = tmp_path / "ctx.db"
    parent(db)
    Session(64_000, estimator=EST, store=SQLiteStore(db), session_id=PARENT).append(
        assistant("", ToolCallPart("t1", "task", '{"prompt": "look"}'))
    )

    def other_writer(chosen: str) -> None:
        Session(64_000, estimator=EST, store=SQLiteStore(db), session_id=PARENT).spawn(
            "x", session_id=chosen
        )

    s = Session(64_000, estimator=EST, store=RacedStore(db, other_writer), session_id=PARENT)
    child = s.fork()
    assert child.session_id == f"fork-2.{PARENT}"
    last = child.entries[-1].message
    assert last is not None
    assert [r.text for r in last.tool_results] == [
        FORK_POINT_RESULT.format(child=f"fork-2.{PARENT}")
    ]


def test_an_explicit_id_taken_meanwhile_stays_an_error(tmp_path: Path) -> None:
    db = tmp_path / "ctx.db"
    parent(db)

    def other_writer(chosen: str) -> None:
        Session(64_000, estimator=EST, store=SQLiteStore(db), session_id=PARENT).spawn(
            "the other task", session_id=chosen
        )

    s = Session(64_000, estimator=EST, store=RacedStore(db, other_writer), session_id=PARENT)
    with pytest.raises(ValueError, match=r"^spawn: session 'mine' exists already$"):
        s.spawn("my task", session_id="mine")
    assert [x.session_id for x in SQLiteStore(db).children(PARENT)] == ["mine"]
    with pytest.raises(ValueError, match=r"^fork: session 'mine' exists already$"):
        s.fork(session_id="mine")


def test_processes_spawning_at_once_each_get_a_child(tmp_path: Path) -> None:
    db = tmp_path / "ctx.db"
    parent(db)
    n = 4
    barrier, out = SPAWN.Barrier(n), SPAWN.Queue()
    procs = [SPAWN.Process(target=spawn_child, args=(str(db), i, barrier, out)) for i in range(n)]
    for p in procs:
        p.start()
    for p in procs:
        p.join(CHILD_TIMEOUT_S)
    assert [p.exitcode for p in procs] == [0] * n
    got = sorted(out.get(timeout=CHILD_TIMEOUT_S) for _ in range(n))
    assert [(i, status) for i, status, _ in got] == [(i, "ok") for i in range(n)]
    assert sorted(child for _, _, child in got) == [f"spawn-{k}.{PARENT}" for k in range(1, n + 1)]
    with SQLiteStore(db, read_only=True) as store:
        tasks = {
            link.session_id: store.entries(link.session_id)[-1].message
            for link in store.children(PARENT)
        }
    assert {k: m.text for k, m in tasks.items() if m is not None} == {
        child: f"task {i}" for i, _, child in got
    }
