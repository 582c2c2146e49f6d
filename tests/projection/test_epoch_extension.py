"""An epoch's projection extended by the entries appended since equals the projection made
from scratch, whatever is appended: replies, results, a call awaiting its result, a late or
duplicate result, an orphan result, a prune or a compaction record."""

from __future__ import annotations

from hypothesis import given, settings
from hypothesis import strategies as st

from ctxengine.model import (
    CompactionRecord,
    Entry,
    Message,
    PruneRecord,
    TextPart,
    ToolCallPart,
    ToolResultPart,
)
from ctxengine.model.entries import Body
from ctxengine.projection import ProjectionSettings, project
from ctxengine.projection.memo import ProjectionMemo
from ctxengine.tokens.cache import CachingEstimator
from ctxengine.tokens.estimate import HeuristicEstimator

SETTINGS = ProjectionSettings(truncate_tokens=200, truncate_max_chars=2000, truncate_head_ratio=0.6)

MOVES = ["user", "reply", "call", "result", "pending", "late", "orphan", "duplicate", "prune",
         "compaction", "long"]  # fmt: skip


def _body(move: str, n: int, calls: list[str], answered: set[str], kept: str) -> Body:
    if move == "reply":
        return Message("assistant", (TextPart(f"reply {n}"),))
    if move in ("call", "pending"):
        calls.append(f"c{n}")
        return Message("assistant", (ToolCallPart(f"c{n}", "read", '{"path": "a"}'),))
    if move == "result" and calls and calls[-1] not in answered:
        answered.add(calls[-1])
        return Message("tool", (ToolResultPart(calls[-1], (TextPart(f"out {n}"),)),))
    if move == "late" and len(calls) > 1:
        return Message("tool", (ToolResultPart(calls[0], (TextPart("late"),)),))
    if move == "duplicate" and answered:
        return Message("tool", (ToolResultPart(sorted(answered)[0], (TextPart("again"),)),))
    if move == "orphan":
        return Message("tool", (ToolResultPart(f"nobody{n}", (TextPart("?"),)),))
    if move == "prune" and answered:
        return PruneRecord(tuple(sorted(answered))[:1], 10, "default")
    if move == "compaction":
        return CompactionRecord(f"state {n}", kept, 100, 10, "default", "extractive")
    if move == "long":
        return Message("user", (TextPart("x " * 3000),))
    return Message("user", (TextPart(f"user {n}"),))


@given(moves=st.lists(st.sampled_from(MOVES), min_size=1, max_size=40))
@settings(max_examples=300, deadline=None)
def test_extending_the_previous_projection_equals_projecting_from_scratch(
    moves: list[str],
) -> None:
    entries = [
        Entry("e0", "s", 0, Message("system", (TextPart("be brief"),))),
        Entry("e1", "s", 1, Message("user", (TextPart("the task"),))),
    ]
    memo = ProjectionMemo()
    cached = CachingEstimator(HeuristicEstimator())
    calls: list[str] = []
    answered: set[str] = set()
    for n, move in enumerate(moves, start=2):
        body = _body(move, n, calls, answered, entries[len(entries) // 2].id)
        entries.append(Entry(f"e{n}", "s", n, body))
        pruned = frozenset(
            cid for e in entries if isinstance(e.body, PruneRecord) for cid in e.body.call_ids
        )
        with_memo = project(entries, SETTINGS, cached, memo=memo, pruned=pruned)
        scratch = project(entries, SETTINGS, HeuristicEstimator(), pruned=pruned)
        assert with_memo == scratch


def test_a_closed_epoch_is_extended_not_projected_again() -> None:
    entries = [
        Entry("e0", "s", 0, Message("system", (TextPart("be brief"),))),
        Entry("e1", "s", 1, Message("user", (TextPart("go"),))),
        Entry("e2", "s", 2, Message("assistant", (ToolCallPart("c1", "read", "{}"),))),
        Entry("e3", "s", 3, Message("tool", (ToolResultPart("c1", (TextPart("ok"),)),))),
    ]
    memo = ProjectionMemo()
    first = project(entries, SETTINGS, HeuristicEstimator(), memo=memo, pruned=frozenset())
    assert memo.epoch is not None and memo.epoch.closed
    entries.append(Entry("e4", "s", 4, Message("assistant", (TextPart("done"),))))
    second = project(entries, SETTINGS, HeuristicEstimator(), memo=memo, pruned=frozenset())
    assert second.messages[:-1] == first.messages
    assert all(a is b for a, b in zip(first.messages, second.messages, strict=False))
    assert memo.epoch.count == 5
    # A call awaiting its result leaves the epoch open: the next call projects it again.
    entries.append(Entry("e5", "s", 5, Message("assistant", (ToolCallPart("c2", "read", "{}"),))))
    project(entries, SETTINGS, HeuristicEstimator(), memo=memo, pruned=frozenset())
    assert not memo.epoch.closed
