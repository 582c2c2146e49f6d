"""Property tests: over random histories (parallel calls, split replies, reasoning, late,
duplicate and orphan results, abandoned and pending calls) every cut ``find_cut`` returns is
in every invariant's safe set and leaves no result in the tail without its call."""

from __future__ import annotations

from boundary_helpers import Sizes, a, r, u
from hypothesis import given, settings
from hypothesis import strategies as st

from ctxengine.boundaries import find_cut, segment_turns, tool_exchanges, turn_starts
from ctxengine.boundaries.cut import SAFE_INDEX_RULES, valid_cut_points
from ctxengine.boundaries.pending import pending_calls
from ctxengine.model import Message, ToolCallPart, ToolResultPart


@st.composite
def histories(draw: st.DrawFn) -> list[Message]:
    msgs: list[Message] = []
    counter = 0
    if draw(st.booleans()):
        msgs.append(a(text="resumed"))
    for _turn in range(draw(st.integers(1, 5))):
        msgs.append(u())
        for _reply in range(draw(st.integers(0, 3))):
            if draw(st.booleans()):
                msgs.append(a(thinking=True))
            ids = [f"c{counter + k}" for k in range(draw(st.integers(0, 3)))]
            counter += len(ids)
            if draw(st.booleans()) and ids:
                msgs.extend(a(c) for c in ids)  # one message per call
            else:
                msgs.append(a(*ids))
            answered = [c for c in ids if draw(st.integers(0, 5)) > 0]
            order = draw(st.permutations(answered))
            if draw(st.booleans()) and order:
                msgs.append(r(*order))
            else:
                msgs.extend(r(c) for c in order)
            if order and draw(st.integers(0, 6)) == 0:
                msgs.append(r(order[0]))  # duplicated result
            if draw(st.integers(0, 8)) == 0:
                msgs.append(r(f"orphan{counter}"))
    if draw(st.booleans()):
        msgs.append(a(f"pending{counter}", f"pending{counter + 1}"))
        if draw(st.booleans()):
            msgs.append(r(f"pending{counter}"))
    return msgs


def assert_tail_is_paired(msgs: list[Message], index: int) -> None:
    called_anywhere: set[str] = set()
    called_in_tail: set[str] = set()
    for i, m in enumerate(msgs):
        for p in m.parts:
            if isinstance(p, ToolResultPart) and p.call_id in called_anywhere and i >= index:
                assert p.call_id in called_in_tail, (index, i, p.call_id)
            if isinstance(p, ToolCallPart):
                called_anywhere.add(p.id)
                if i >= index:
                    called_in_tail.add(p.id)


@settings(max_examples=400, deadline=None)
@given(histories(), st.data())
def test_every_cut_is_valid_and_keeps_pairs_whole(msgs: list[Message], data: st.DataObject) -> None:
    sizes = data.draw(st.lists(st.integers(1, 60), min_size=len(msgs), max_size=len(msgs)))
    budget = data.draw(st.integers(0, sum(sizes) + 10))
    split = data.draw(st.booleans())
    got = find_cut(msgs, budget, Sizes(), per_message=sizes, allow_split_turn=split)
    if got is None:
        return
    i = got.index
    assert 1 <= i < len(msgs)
    for rule in SAFE_INDEX_RULES:
        assert i in rule(msgs), rule
    assert_tail_is_paired(msgs, i)
    assert got.kept_tokens == sum(sizes[i:])
    assert got.splits_turn == (i not in turn_starts(msgs))
    assert (not split and not got.splits_turn) or split
    turn = next(t for t in segment_turns(msgs) if t.start <= i < t.end)
    assert got.turn_start == turn.start
    for x in tool_exchanges(msgs):
        assert not x.start < i < x.end
    pending = pending_calls(msgs)
    kept_calls = {p.id for m in msgs[i:] for p in m.parts if isinstance(p, ToolCallPart)}
    assert pending <= kept_calls
    if got.kept_tokens > budget:  # kept more only when no valid point fits the budget
        fits = [
            c for c in valid_cut_points(msgs) if 1 <= c < len(msgs) and sum(sizes[c:]) <= budget
        ]
        assert fits == [] or not split


@settings(max_examples=200, deadline=None)
@given(histories())
def test_valid_cut_points_are_the_intersection(msgs: list[Message]) -> None:
    expected = set(range(len(msgs) + 1))
    for rule in SAFE_INDEX_RULES:
        expected &= rule(msgs)
    assert valid_cut_points(msgs) == expected
    assert 0 in expected
