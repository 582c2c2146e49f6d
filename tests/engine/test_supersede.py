"""Supersede records: the entries they withdraw stay in history but leave every projection,
replay and breakdown, as if the log had never held them."""

from __future__ import annotations

from ctxengine.analysis import breakdown
from ctxengine.engine import Session
from ctxengine.model import (
    CompactionRecord,
    Entry,
    Message,
    SupersedeRecord,
    TextPart,
    ToolCallPart,
    ToolResultPart,
    current_entries,
)
from ctxengine.model.codec import body_from_dict, body_to_dict
from ctxengine.projection import ProjectionSettings, project
from ctxengine.replay import source_messages
from ctxengine.tokens.estimate import HeuristicEstimator

EST = HeuristicEstimator()
GO = Message("user", (TextPart("fix the bug"),))
PARTIAL = Message("assistant", (TextPart("reading"),))
FULL = Message(
    "assistant",
    (TextPart("reading"), ToolCallPart("c1", "read", "{}"), ToolCallPart("c2", "read", "{}")),
)
RESULTS = Message(
    "tool",
    (ToolResultPart("c1", (TextPart("one"),)), ToolResultPart("c2", (TextPart("two"),))),
)
DONE = Message("assistant", (TextPart("fixed"),))


def entries(*pairs: tuple[str, object]) -> list[Entry]:
    return [Entry(eid, "s", i, body) for i, (eid, body) in enumerate(pairs)]  # type: ignore[arg-type]


def grown_log() -> list[Entry]:
    """``a1`` (a reply cut short) withdrawn, then the whole reply and what followed."""
    return entries(
        ("u1", GO),
        ("a1", PARTIAL),
        ("s1", SupersedeRecord(("a1",), "re-import")),
        ("a1..a3", FULL),
        ("r1", RESULTS),
        ("a4", DONE),
    )


def fresh_log() -> list[Entry]:
    return entries(("u1", GO), ("a1..a3", FULL), ("r1", RESULTS), ("a4", DONE))


def test_the_record_round_trips_through_the_wire_form() -> None:
    record = SupersedeRecord(("a1", "r1"), "re-import")
    data = body_to_dict(record)
    assert data == {"entry_ids": ["a1", "r1"], "reason": "re-import", "kind": "supersede"}
    assert body_from_dict(data) == record


def test_current_entries_leave_out_the_withdrawn_entries_and_the_record() -> None:
    current = current_entries(grown_log())
    assert [(e.id, e.seq) for e in current] == [("u1", 0), ("a1..a3", 3), ("r1", 4), ("a4", 5)]


def test_a_session_projects_as_the_log_without_the_withdrawn_entries() -> None:
    grown = Session(100_000, entries=grown_log())
    fresh = Session(100_000, entries=fresh_log())
    assert grown.project().messages == fresh.project().messages == (GO, FULL, RESULTS, DONE)
    assert grown.project().sources == ("u1", "a1..a3", "r1", "a4")
    assert len(grown.entries) == 6
    assert grown.log.history.hidden == {1, 2}


def test_a_withdrawn_compaction_no_longer_starts_an_epoch() -> None:
    boundary = CompactionRecord("summary cut short", None, 900, 0, "claude-code", "imported")
    log = entries(
        ("u1", GO),
        ("a1..a3", FULL),
        ("r1", RESULTS),
        ("c1", boundary),
        ("s1", SupersedeRecord(("c1",), "re-import")),
        ("a4", DONE),
    )
    session = Session(100_000, entries=log)
    ctx = session.project()
    assert (ctx.epoch, ctx.messages) == (0, (GO, FULL, RESULTS, DONE))
    assert session.log.history.compactions == 0
    assert session.log.history.goal_id == "u1"


def test_project_honours_a_record_in_the_entries_it_is_given() -> None:
    settings = ProjectionSettings(10_000, 100_000, 0.5)
    assert project(grown_log(), settings, EST) == project(fresh_log(), settings, EST)


def test_replay_and_breakdown_read_the_current_log() -> None:
    assert source_messages(grown_log()) == [GO, FULL, RESULTS, DONE]
    grown, fresh = breakdown(grown_log(), EST), breakdown(fresh_log(), EST)
    assert grown.total == fresh.total
    assert grown.counts == {"message": 4, "tool_calls": 2, "tool_results": 2}
