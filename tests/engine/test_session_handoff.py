"""``Session.handoff``: a long session continued in a new stored session that starts from its
compacted context (Amp's hand-off), the old session left as it was."""

from __future__ import annotations

import hashlib
import json
from pathlib import Path

import orjson
import pytest

from ctxengine.assembly import ContextAssembler
from ctxengine.engine import Session
from ctxengine.engine.children import COPIED_FROM
from ctxengine.model import CompactionRecord, ToolCallPart, assistant, system, tool_result, user
from ctxengine.projection.handoff import SESSION_ENDED_RESULT
from ctxengine.projection.injection import RECALL_NOTE
from ctxengine.projection.render import render_anthropic, render_openai
from ctxengine.projection.tools import tool_name
from ctxengine.recall import RECALL_TOOL
from ctxengine.stores.sqlite import SQLiteStore
from hand_estimator import HandEstimator

EST = HandEstimator()
BASH = {"name": "bash", "parameters": {"type": "object"}}


def started(db: Path | None) -> Session:
    store = SQLiteStore(db) if db is not None else None
    s = Session(8_000, estimator=EST, store=store, session_id="long", tools=[BASH])
    s.append(system("You are careful."))
    for k in range(10):
        s.append(user(f"request {k} " + "word " * 50))
        call = ToolCallPart(f"c{k}", "bash", json.dumps({"command": f"make t{k}"}))
        s.append(assistant(f"answer {k} " + "done " * 60, call))
        s.append(tool_result(f"c{k}", "ok " * 30))
    return s


def request_hash(s: Session) -> str:
    body = render_anthropic(s.project())
    return hashlib.sha256(orjson.dumps(body, option=orjson.OPT_SORT_KEYS)).hexdigest()


def test_the_new_session_starts_from_the_compacted_context(tmp_path: Path) -> None:
    db = tmp_path / "ctx.db"
    old = started(db)
    before, entries = request_hash(old), len(old.entries)
    made = old.handoff()
    # The old session is left as it was.
    assert (request_hash(old), len(old.entries)) == (before, entries)
    # What a compaction in place would have sent, with the recall tool.
    twin = Session(8_000, estimator=EST, entries=old.entries, tools=[BASH, RECALL_TOOL])
    twin.compact()
    new = made.session
    assert new.session_id == "handoff-1.long"
    assert new.project().messages == twin.project().messages
    assert [t["name"] for t in new.tools] == ["bash", "recall"]
    assert RECALL_NOTE in new.project().messages[1].text
    assert made.summarized and made.note == "" and made.closed == ()
    # Stored: head, the continuation state, the kept tail; copies keep their ids.
    stored = Session(8_000, estimator=EST, store=SQLiteStore(db), session_id=new.session_id)
    assert stored.entries == new.entries
    record = stored.entries[-1]
    assert isinstance(record.body, CompactionRecord) and record.id == made.compaction_id
    assert record.meta == {}
    twin_record = twin.entries[-1].body
    assert isinstance(twin_record, CompactionRecord)
    assert record.body.summary == twin_record.summary
    assert record.body.ledgers == twin_record.ledgers
    kept = [e.id for e in stored.entries[:-1]]
    first = twin_record.first_kept_id
    assert kept == [old.entries[0].id] + [
        e.id for e in old.entries[[x.id for x in old.entries].index(first or "") :]
    ]
    assert all(e.meta == {COPIED_FROM: "long"} for e in stored.entries[:-1])
    assert len(stored.entries) < len(old.entries)
    link = stored.link
    assert link is not None
    assert (link.parent_id, link.parent_entry_id, link.relation) == (
        "long",
        old.entries[-1].id,
        "handoff",
    )
    assert [x.session_id for x in SQLiteStore(db).children("long")] == ["handoff-1.long"]


def test_the_new_session_compacts_on_with_the_ledgers() -> None:
    old = started(None)
    new = old.handoff().session
    for k in range(10, 20):
        new.append(user(f"request {k} " + "word " * 50))
        call = ToolCallPart(f"c{k}", "bash", json.dumps({"command": f"make t{k}"}))
        new.append(assistant(f"answer {k} " + "done " * 60, call))
        new.append(tool_result(f"c{k}", "ok " * 30))
    outcome = new.compact()
    record = outcome.entry.body
    assert isinstance(record, CompactionRecord)
    # Every command run before the hand-off is still in the ledgers (they only grow).
    assert [c for c in record.ledgers.commands if c in {f"make t{k}" for k in range(10)}] == [
        f"make t{k}" for k in range(10)
    ]


def test_pending_calls_are_closed_in_the_new_session() -> None:
    old = started(None)
    old.append(assistant("", ToolCallPart("z1", "bash", '{"command": "sleep 100"}')))
    made = old.handoff()
    assert made.closed == ("z1",)
    last = made.session.entries[-1].message
    assert last is not None
    assert [(r.call_id, r.text, r.is_error) for r in last.tool_results] == [
        ("z1", SESSION_ENDED_RESULT, True)
    ]
    assert last.meta == {"synthetic": "session_ended"}


def test_a_short_session_is_carried_verbatim() -> None:
    s = Session(100_000, estimator=EST, session_id="short")
    s.append(user("hello"))
    s.append(assistant("hi"))
    made = s.handoff("next")
    assert made.session.session_id == "next"
    assert (made.summarized, made.compaction_id) == (False, None)
    assert made.note == "no valid cut point leaves anything to summarize"
    assert [m.text for m in made.session.project().messages] == ["hello", "hi"]
    with pytest.raises(ValueError, match="finish: session 'next' is a hand-off of 'short'"):
        made.session.finish("done")
    with pytest.raises(ValueError, match="handoff: the session has no entries to hand off"):
        Session(8_000).handoff()


def test_recall_in_the_new_session_searches_the_old_history(tmp_path: Path) -> None:
    db = tmp_path / "ctx.db"
    old = started(db)
    new = old.handoff().session
    new.append(user("request 10: the parser again"))
    reopened = Session(8_000, estimator=EST, store=SQLiteStore(db), session_id=new.session_id)
    for s in (new, reopened):
        # Summarized away before the hand-off: found in the old session, by its own id.
        hits = s.recall("request 0 ").hits
        assert [h.entry_id for h in hits] == [old.entries[1].id]
        # Copied into the new session too: found once, as the old entry.
        hits = s.recall("You are careful.").hits
        assert [h.entry_id for h in hits] == [old.entries[0].id]
        hits = s.recall("request 9 ").hits
        assert [h.entry_id for h in hits] == [old.entries[28].id]
        # The new session's own entries.
        assert [h.entry_id for h in s.recall("the parser again").hits] == [new.entries[-1].id]
    text, is_error = reopened.run_recall_tool({"query": "make t0"})
    assert not is_error and old.entries[2].id in text


def test_a_stored_hand_off_reopens_with_the_recall_tool(tmp_path: Path) -> None:
    db = tmp_path / "ctx.db"
    old = started(db)
    new = old.handoff().session
    sent = render_openai(new.project(), model="m")
    for tools in ((), [BASH], [BASH, RECALL_TOOL]):
        again = Session(
            8_000, estimator=EST, store=SQLiteStore(db), session_id=new.session_id, tools=tools
        )
        names = [t["name"] for t in again.tools]
        assert names == [*(t["name"] for t in tools if t is not RECALL_TOOL), "recall"]
        assert RECALL_NOTE in again.project().messages[1].text
    # Reopened with the tools it was handed off with, it sends the same request.
    again = Session(
        8_000, estimator=EST, store=SQLiteStore(db), session_id=new.session_id, tools=[BASH]
    )
    assert render_openai(again.project(), model="m") == sent
    # With an assembled head, the head's tools get it.
    head = ContextAssembler(base="You are careful.", tools=[BASH])
    with_head = Session(
        8_000, estimator=EST, store=SQLiteStore(db), session_id=new.session_id, head=head
    )
    assert [tool_name(t) for t in head.tools] == ["bash", "recall"]
    assert [tool_name(t) for t in with_head.project().tools] == ["bash", "recall"]
    # The old session, no hand-off, is opened with the tools given.
    plain = Session(8_000, estimator=EST, store=SQLiteStore(db), session_id="long")
    assert plain.tools == ()
