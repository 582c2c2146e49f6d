"""A hand-off of a hand-off: recall follows the whole hand-off chain (every older session up
to the entry it was handed off at), newest session first, each hit naming its session and
numbered in it; through real SQLite files and in memory."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from ctxengine.engine import Session
from ctxengine.engine.children import COPIED_FROM
from ctxengine.model import Entry, ToolCallPart, assistant, system, tool_result, user
from ctxengine.recall import RecallQuery
from ctxengine.recall.chain import SessionHit
from ctxengine.stores.sqlite import SQLiteStore
from hand_estimator import HandEstimator

EST = HandEstimator()
BASH = {"name": "bash", "parameters": {"type": "object"}}


def steps(s: Session, first: int, count: int, tag: str) -> None:
    """``count`` turns: a request, a bash call and its output, each text naming ``tag``."""
    for k in range(first, first + count):
        s.append(user(f"{tag} request {k} " + "word " * 50))
        call = ToolCallPart(f"c{k}", "bash", json.dumps({"command": f"make t{k}"}))
        s.append(assistant(f"{tag} answer {k} " + "done " * 60, call))
        s.append(tool_result(f"c{k}", f"{tag} output {k} " + "ok " * 30))


def chain(db: Path | None) -> tuple[Session, Session, Session]:
    """``g0`` (10 turns) handed off to ``handoff-1.g0`` (4 more turns), handed off to
    ``handoff-1.handoff-1.g0`` (2 more turns)."""
    store = SQLiteStore(db) if db is not None else None
    g0 = Session(8_000, estimator=EST, store=store, session_id="g0", tools=[BASH])
    g0.append(system("You are careful."))
    steps(g0, 0, 10, "MARK g0")
    h1 = g0.handoff().session
    steps(h1, 10, 4, "MARK h1")
    h2 = h1.handoff().session
    steps(h2, 14, 2, "MARK h2")
    return g0, h1, h2


def own(s: Session) -> list[Entry]:
    """A session's entries that are not copies of an older session's."""
    return [e for e in s.entries if COPIED_FROM not in e.meta]


def found(hits: tuple[object, ...]) -> list[tuple[str, int, str]]:
    out = []
    for h in hits:
        assert isinstance(h, SessionHit)
        out.append((h.session_id, h.seq, h.entry_id))
    return out


def test_the_ids_and_the_copies_of_a_chain() -> None:
    g0, h1, h2 = chain(None)
    assert (h1.session_id, h2.session_id) == ("handoff-1.g0", "handoff-1.handoff-1.g0")
    assert h2.link is not None and h2.link.parent_id == "handoff-1.g0"
    # h2 holds copies of h1's entries, some of which are h1's copies of g0's.
    assert {e.meta[COPIED_FROM] for e in h2.entries if COPIED_FROM in e.meta} == {"handoff-1.g0"}
    assert len(g0.entries) == 31 and len(own(h1)) == 13 and len(own(h2)) == 7


@pytest.mark.parametrize("stored", [True, False])
def test_recall_of_a_hand_off_of_a_hand_off_reaches_the_first_session(
    tmp_path: Path, stored: bool
) -> None:
    db = tmp_path / "chain.db"
    g0, h1, h2 = chain(db if stored else None)
    s = h2
    if stored:
        s = Session(8_000, estimator=EST, store=SQLiteStore(db), session_id=h2.session_id)
    # Summarized away two hand-offs ago: found in g0, with g0's seq.
    assert found(s.recall("MARK g0 request 0 ").hits) == [("g0", 1, g0.entries[1].id)]
    assert found(s.recall("MARK g0 output 9 ").hits) == [("g0", 30, g0.entries[30].id)]
    # Summarized away one hand-off ago: found in h1.
    first_h1 = next(e for e in h1.entries if "MARK h1 request 10 " in (e.message or user("")).text)
    assert found(s.recall("MARK h1 request 10 ").hits) == [
        ("handoff-1.g0", first_h1.seq, first_h1.id)
    ]
    # Every marked request, newest session first: each found once (copies are skipped),
    # in the session that wrote it.
    expected = [
        (x.session_id, e.seq, e.id)
        for x in (h2, h1, g0)
        for e in reversed(own(x))
        if (m := e.message) is not None and m.role == "user" and " request " in m.text
    ]
    hits = s.recall(RecallQuery(text=" request ", role="user"), budget=100_000).hits
    assert found(hits) == expected
    assert [x[0] for x in expected] == ["handoff-1.handoff-1.g0"] * 2 + ["handoff-1.g0"] * 4 + [
        "g0"
    ] * 10
    oldest = s.recall(
        RecallQuery(text=" request ", role="user"), budget=100_000, newest_first=False
    )
    assert found(oldest.hits) == expected[::-1]


def test_seq_numbers_are_per_session_and_every_hit_names_its_session(tmp_path: Path) -> None:
    db = tmp_path / "chain.db"
    g0, h1, h2 = chain(db)
    s = Session(8_000, estimator=EST, store=SQLiteStore(db), session_id=h2.session_id)
    # Entry 22 of each session is one of its own: h2's a reply with a bash call, h1's a
    # bash result, g0's a request.
    e2, e1, e0 = h2.entries[22], h1.entries[22], g0.entries[22]
    assert [COPIED_FROM in e.meta for e in (e2, e1, e0)] == [False, False, False]
    hits = s.recall(RecallQuery(first_seq=22, last_seq=22)).hits
    assert [(h.seq, h.kind) for h in hits] == [
        (22, "tool_call"),
        (22, "message"),
        (22, "tool_result"),
        (22, "message"),
    ]
    assert found(hits) == [
        ("handoff-1.handoff-1.g0", 22, e2.id),
        ("handoff-1.handoff-1.g0", 22, e2.id),
        ("handoff-1.g0", 22, e1.id),
        ("g0", 22, e0.id),
    ]
    text, is_error = s.run_recall_tool({"from_seq": 22, "to_seq": 22})
    assert not is_error
    assert [line for line in text.splitlines() if line.startswith("[")] == [
        f"[session handoff-1.handoff-1.g0 · {e2.id} · seq 22 · call of bash] line 1:",
        f"[session handoff-1.handoff-1.g0 · {e2.id} · seq 22 · assistant message] line 1:",
        f"[session handoff-1.g0 · {e1.id} · seq 22 · tool result of bash] line 1:",
        f"[session g0 · {e0.id} · seq 22 · user message] line 1:",
    ]
    # A session that is no hand-off keeps plain hits.
    assert [h.label() for h in g0.recall(RecallQuery(first_seq=22, last_seq=22)).hits] == [
        f"{e0.id} · seq 22 · user message"
    ]


def test_a_hand_off_after_a_checkout_keeps_the_branch_left_searchable(tmp_path: Path) -> None:
    db = tmp_path / "co.db"
    s = Session(8_000, estimator=EST, store=SQLiteStore(db), session_id="co", tools=[BASH])
    s.append(system("You are careful."))
    steps(s, 0, 2, "kept")
    target = s.entries[-1]
    steps(s, 2, 1, "ABANDONED")
    record = s.checkout(target.id).record
    new = s.handoff().session
    link = new.link
    assert link is not None
    # The old session's newest entry (the checkout record), not the entry checked out.
    assert (link.parent_entry_id, s.log.history.leaf_id) == (record.id, target.id)
    reopened = Session(8_000, estimator=EST, store=SQLiteStore(db), session_id=new.session_id)
    abandoned = s.entries[7]
    assert "ABANDONED request 2 " in (abandoned.message or user("")).text
    for x in (new, reopened):
        assert found(x.recall("ABANDONED request 2 ").hits) == [("co", 7, abandoned.id)]
    # Entries the old session gets after the hand-off are not the new one's history.
    s.append(user("LATE in the old session"))
    late = Session(8_000, estimator=EST, store=SQLiteStore(db), session_id=new.session_id)
    assert (late.recall("LATE in the old").matched, new.recall("LATE in the old").matched) == (
        0,
        0,
    )
