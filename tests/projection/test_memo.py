"""A projection memo and a caching estimator change nothing but speed."""

from __future__ import annotations

from ctxengine.model import Entry, Message, TextPart, ToolCallPart, ToolResultPart
from ctxengine.model.entries import PruneRecord
from ctxengine.projection import ProjectionSettings, project
from ctxengine.projection.memo import ProjectionMemo
from ctxengine.tokens.cache import CachingEstimator
from ctxengine.tokens.estimate import HeuristicEstimator


def _log() -> list[Entry]:
    bodies: list[Message | PruneRecord] = [Message("system", (TextPart("be brief"),))]
    for i in range(6):
        bodies.append(Message("user", (TextPart(f"step {i}"),)))
        bodies.append(Message("assistant", (ToolCallPart(f"c{i}", "read", '{"path": "a"}'),)))
        bodies.append(
            Message("tool", (ToolResultPart(f"c{i}", (TextPart("line\n" * (400 * i + 1)),)),))
        )
    bodies.append(PruneRecord(("c1", "c2"), 500, "default"))
    return [Entry(f"e{i}", "s", i, b) for i, b in enumerate(bodies)]


def test_memo_and_cache_give_the_identical_context_on_every_call() -> None:
    settings = ProjectionSettings(
        truncate_tokens=300, truncate_max_chars=4000, truncate_head_ratio=0.6
    )
    plain = project(_log(), settings, HeuristicEstimator())
    memo, cached = ProjectionMemo(), CachingEstimator(HeuristicEstimator())
    first = project(_log(), settings, cached, memo=memo)
    second = project(_log(), settings, cached, memo=memo)
    assert first == plain
    assert second == plain
    assert len(plain.truncations) == 3
    assert plain.pruned == ("c1", "c2")
    # the second call reuses the rewritten messages themselves
    assert all(
        a is b for a, b in zip(first.messages, second.messages, strict=True) if a.role == "tool"
    )


def test_caching_estimator_returns_the_base_values() -> None:
    base = HeuristicEstimator()
    cached = CachingEstimator(base, max_items=2)
    msgs = [Message("user", (TextPart("x" * (100 * i + 300)),)) for i in range(5)]
    for _ in range(2):
        assert [cached.message(m) for m in msgs] == [base.message(m) for m in msgs]
        assert [cached.text(m.text) for m in msgs] == [base.text(m.text) for m in msgs]
