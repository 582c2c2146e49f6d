"""Simulated agent traffic from 4 processes on the same 5 sessions of one store (a small run
of ``benchmarks/store_concurrency.py``), on PostgreSQL and on SQLite: every message stored
exactly once, the logs gap-free, and exactly one compaction per range (the compactions
stored are the ones the workers' ladders ran: a worker that lost the race stored none)."""

from __future__ import annotations

import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[2] / "benchmarks"))

import store_concurrency as bench

WORKERS, SESSIONS, ROUNDS, WINDOW = 4, 5, 4, 4_000


def test_four_processes_on_five_sessions_lose_nothing_and_compact_once_per_range(
    store_location: str,
) -> None:
    outcome = bench.run(store_location, "store", WORKERS, SESSIONS, ROUNDS, WINDOW)
    assert outcome.problems == []
    assert outcome.messages == 2 * WORKERS * SESSIONS * ROUNDS == 160
    assert len(outcome.latencies) == WORKERS * SESSIONS * ROUNDS
    assert outcome.entries == outcome.messages + outcome.compactions
    assert outcome.compactions == outcome.compactions_run
    # Each session crossed its trigger several times: 32 messages of about 120 tokens
    # against a 4,000-token window.
    assert outcome.compactions >= 3 * SESSIONS


def test_the_check_finds_a_lost_a_duplicated_message_and_a_second_compaction() -> None:
    from collections import Counter

    from ctxengine.model import CompactionRecord, Entry, assistant, user

    def entry(seq: int, body: object, parent: str | None) -> Entry:
        return Entry(f"e{seq}", "s", seq, body, parent_id=parent)  # type: ignore[arg-type]

    bodies = [user("a"), assistant("b"), user("c"), user("c")]
    log = [entry(i, b, f"e{i - 1}" if i else None) for i, b in enumerate(bodies)]
    record = CompactionRecord("state", "e2", 900, 100, "default", "extractive")
    log += [entry(4, record, "e3"), entry(5, record, "e4")]
    expected = Counter(["a", "b", "c", "d"])
    assert bench.check_session("s", log, expected, 1) == [
        "s: 1 messages lost, 1 duplicated or unknown",
        "s: 2 compactions stored, 1 run by the workers",
        "s: two compactions cover the same range (first kept [2, 2])",
        "s: compactions at seq 4 and 5 with no message between",
    ]
