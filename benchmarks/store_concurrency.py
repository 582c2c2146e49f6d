"""Many processes serving the same sessions through one store: PostgreSQL against SQLite on
the same run (not a test; ``tests/stores/test_concurrency.py`` runs a small copy and asserts
the correctness part).

Run: ``.venv/bin/python benchmarks/store_concurrency.py [--workers 8] [--sessions 50]
[--rounds 4] [--window 4000] [--pg postgresql://…] [--only postgres|sqlite]``.

Simulated agent traffic: ``--workers`` processes (spawned, each with its own store object and
one live :class:`~ctxengine.engine.Session` per session) serve every one of ``--sessions``
sessions ``--rounds`` times, each worker starting at another session so that workers meet on
the same sessions all the time. One round of a session appends a user message, calls
``prepare()`` (timed) and appends the assistant's reply (about 120 tokens each, unique
texts). A session receives ``2 × workers × rounds`` messages, several times its window: it
crosses its compaction trigger several times, and several workers find it past the trigger
at once. Each worker counts the compactions its own ladder ran.

Checked afterwards, per session (the run exits 1 when any check fails):

* no lost or duplicated entry: the stored messages are exactly the texts the workers sent,
  each once; seqs gap-free; each entry's parent the entry before it;
* exactly one compaction per range: the compactions stored equal the compactions the workers
  ran (a loser of the race stores none: it reloads and continues), no two cover the same
  range (distinct first kept entries, each later in the log than the last), and messages
  arrive between any two of them (DESIGN invariant 5).

Printed: both stores' ``prepare()`` latency p50/p95 (ms), entries stored per second (all
workers together, wall time from the start barrier to the last worker's end), and the
counts checked. Without ``--pg`` a throwaway PostgreSQL server is started
(``tests/pg_server.py``: ``initdb`` into a temporary folder, Unix socket only).
"""

from __future__ import annotations

import argparse
import itertools
import multiprocessing
import os
import sys
import tempfile
import time
from collections import Counter
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from ctxengine.engine import Session
from ctxengine.model import CompactionRecord, Entry, assistant, user
from ctxengine.stores.location import open_store

SPAWN = multiprocessing.get_context("spawn")
#: Seconds the parent waits for a worker's result (a loaded 2-core machine included).
RESULT_TIMEOUT_S = 1800
#: Words of a message's text (about 1.2 tokens each under the heuristic estimator).
WORDS = 100


def text(kind: str, worker: int, session: int, turn: int) -> str:
    """The unique text of one message: who sent it, to which session, in which round."""
    words = " ".join(f"w{(worker * 7 + session * 13 + turn * 31 + i) % 997}" for i in range(WORDS))
    return f"{kind} w{worker} s{session} r{turn}: {words}"


def session_id(n: int) -> str:
    return f"agent-{n:03d}"


@dataclass
class WorkerResult:
    """What one worker did: ``prepare()`` latencies (seconds), the messages it appended, and
    the compactions its own ladder ran, per session."""

    worker: int
    latencies: list[float] = field(default_factory=list)
    appended: int = 0
    compactions: Counter[str] = field(default_factory=Counter)
    error: str | None = None


def worker(
    location: str,
    n: int,
    workers: int,
    sessions: int,
    rounds: int,
    window: int,
    barrier: Any,
    out: Any,
) -> None:
    """Worker ``n`` of ``workers`` (see the module docstring); puts its
    :class:`WorkerResult`."""
    result = WorkerResult(n)
    try:
        store = open_store(location)
        live: dict[int, Session] = {}
        barrier.wait()
        start = (n * sessions) // workers
        for r in range(rounds):
            for k in range(sessions):
                s = (start + k) % sessions
                session = live.get(s)
                if session is None:
                    session = live[s] = Session(window, store=store, session_id=session_id(s))
                session.append(user(text("user", n, s, r)))
                before = sum(1 for e in session.events if e.step == "compaction")
                t0 = time.perf_counter()
                session.prepare()
                result.latencies.append(time.perf_counter() - t0)
                ran = sum(1 for e in session.events if e.step == "compaction") - before
                result.compactions[session_id(s)] += ran
                session.append(assistant(text("assistant", n, s, r)))
                result.appended += 2
        store.close()
    except Exception as exc:  # reported to the parent, which fails the run
        result.error = f"{type(exc).__name__}: {exc}"
    out.put(result)


@dataclass
class Outcome:
    """One store's run: timings and what the checks found."""

    store: str
    seconds: float
    latencies: list[float]
    entries: int
    messages: int
    compactions: int
    compactions_run: int
    problems: list[str]


def run(
    location: str, label: str, workers: int, sessions: int, rounds: int, window: int
) -> Outcome:
    """Run the workers on ``location`` (a new, empty store) and check what it holds."""
    with open_store(location) as store:
        for s in range(sessions):
            store.create_session(_info(session_id(s)))
    barrier, out = SPAWN.Barrier(workers + 1), SPAWN.Queue()
    procs = [
        SPAWN.Process(
            target=worker,
            args=(location, n, workers, sessions, rounds, window, barrier, out),
        )
        for n in range(workers)
    ]
    for p in procs:
        p.start()
    barrier.wait()
    t0 = time.perf_counter()
    results: list[WorkerResult] = [out.get(timeout=RESULT_TIMEOUT_S) for _ in procs]
    seconds = time.perf_counter() - t0
    for p in procs:
        p.join(60)
    problems = [f"worker {r.worker}: {r.error}" for r in results if r.error]
    ran: Counter[str] = Counter()
    for r in results:
        ran.update(r.compactions)
    with open_store(location) as store:
        logs = {session_id(s): store.entries(session_id(s)) for s in range(sessions)}
    for s in range(sessions):
        sid = session_id(s)
        expected = Counter(
            text(kind, w, s, r)
            for w in range(workers)
            for r in range(rounds)
            for kind in ("user", "assistant")
        )
        problems += check_session(sid, logs[sid], expected, ran[sid])
    stored_compactions = sum(
        1 for log in logs.values() for e in log if isinstance(e.body, CompactionRecord)
    )
    return Outcome(
        label,
        seconds,
        [x for r in results for x in r.latencies],
        sum(len(log) for log in logs.values()),
        sum(r.appended for r in results),
        stored_compactions,
        sum(ran.values()),
        problems,
    )


def _info(sid: str) -> Any:
    from ctxengine.stores import SessionInfo

    return SessionInfo(sid, "ctxengine")


def check_session(sid: str, log: list[Entry], expected: Counter[str], ran: int) -> list[str]:
    """What is wrong with one stored session log (``[]`` when nothing is): lost or duplicated
    messages, a gap or a broken parent chain, compactions other than one per range."""
    problems: list[str] = []
    texts = Counter(e.message.text for e in log if e.message is not None)
    if texts != expected:
        lost = sum((expected - texts).values())
        extra = sum((texts - expected).values())
        problems.append(f"{sid}: {lost} messages lost, {extra} duplicated or unknown")
    if [e.seq for e in log] != list(range(len(log))):
        problems.append(f"{sid}: seqs are not 0..{len(log) - 1}")
    if [e.parent_id for e in log[1:]] != [e.id for e in log[:-1]]:
        problems.append(f"{sid}: an entry's parent is not the entry before it")
    position = {e.id: i for i, e in enumerate(log)}
    records = [(i, e.body) for i, e in enumerate(log) if isinstance(e.body, CompactionRecord)]
    if len(records) != ran:
        problems.append(f"{sid}: {len(records)} compactions stored, {ran} run by the workers")
    kept = [position.get(body.first_kept_id or "", -1) for _, body in records]
    if len(set(kept)) != len(kept) or kept != sorted(kept):
        problems.append(f"{sid}: two compactions cover the same range (first kept {kept})")
    for (a, _), (b, _) in itertools.pairwise(records):
        if not any(log[i].message is not None for i in range(a + 1, b)):
            problems.append(f"{sid}: compactions at seq {a} and {b} with no message between")
    return problems


def report(outcomes: list[Outcome], workers: int, sessions: int, rounds: int) -> None:
    from _common import percentile, table

    rows = []
    for o in outcomes:
        ms = [x * 1000 for x in o.latencies]
        rows.append(
            [
                o.store,
                f"{len(o.latencies):,}",
                f"{percentile(ms, 50):.1f}",
                f"{percentile(ms, 95):.1f}",
                f"{o.entries:,}",
                f"{o.entries / o.seconds:,.0f}",
                f"{o.seconds:.1f}",
                f"{o.compactions:,}",
                f"{o.compactions_run:,}",
                "none" if not o.problems else f"{len(o.problems)}",
            ]
        )
    table(
        [
            "store",
            "prepare() calls",
            "p50 ms",
            "p95 ms",
            "entries stored",
            "entries/s",
            "wall s",
            "compactions stored",
            "compactions run",
            "problems",
        ],
        rows,
        title=f"{workers} processes x {sessions} sessions x {rounds} rounds "
        f"({2 * workers * rounds} messages a session)",
    )
    for o in outcomes:
        for p in o.problems[:20]:
            print(f"{o.store}: {p}")


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--workers", type=int, default=8)
    parser.add_argument("--sessions", type=int, default=50)
    parser.add_argument("--rounds", type=int, default=4)
    parser.add_argument("--window", type=int, default=4000)
    parser.add_argument("--pg", help="a PostgreSQL URL (an empty database or schema)")
    parser.add_argument("--only", choices=("postgres", "sqlite"))
    args = parser.parse_args(argv)
    outcomes: list[Outcome] = []
    server = None
    with tempfile.TemporaryDirectory(prefix="ctx-bench-") as folder:
        try:
            if args.only != "sqlite":
                url = args.pg
                if url is None:
                    sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "tests"))
                    from pg_server import PgServer

                    server = PgServer.start()
                    url = server.url
                outcomes.append(
                    run(url, "postgres", args.workers, args.sessions, args.rounds, args.window)
                )
            if args.only != "postgres":
                db = os.path.join(folder, "ctx.db")
                outcomes.append(
                    run(db, "sqlite", args.workers, args.sessions, args.rounds, args.window)
                )
        finally:
            if server is not None:
                server.stop()
    report(outcomes, args.workers, args.sessions, args.rounds)
    return 1 if any(o.problems for o in outcomes) else 0


if __name__ == "__main__":
    raise SystemExit(main())
