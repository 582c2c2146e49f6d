"""Token breakdown of a log: by role, by tool, top consumers, epochs."""

from ctxengine.analysis import breakdown
from ctxengine.model import (
    CompactionRecord,
    Entry,
    Message,
    TextPart,
    ToolCallPart,
    ToolResultPart,
)
from ctxengine.tokens.estimate import HeuristicEstimator

EST = HeuristicEstimator()


def test_breakdown_counts_roles_tools_and_epochs_with_kept_tails() -> None:
    bodies = [
        Message("user", (TextPart("fix it"),)),
        Message("assistant", (ToolCallPart("c1", "read", '{"path": "a.py"}'),)),
        Message("tool", (ToolResultPart("c1", (TextPart("x = 1\n" * 50),)),)),
        Message("assistant", (TextPart("done"),)),
        CompactionRecord("state", "e3", 500, 100, "default", "extractive"),
        Message("user", (TextPart("thanks"),)),
    ]
    entries = [Entry(f"e{i}", "s", i, b) for i, b in enumerate(bodies)]
    b = breakdown(entries, EST, top=2)
    sizes = [EST.message(m) for m in bodies if isinstance(m, Message)]
    assert b.total == sum(sizes)
    assert b.by_role == {
        "user": sizes[0] + sizes[4],
        "assistant": sizes[1] + sizes[3],
        "tool": sizes[2],
    }
    assert b.by_tool == {"read": (1, EST.part(bodies[2].parts[0]))}  # type: ignore[union-attr]
    assert [c.entry_id for c in b.top] == ["e2", "e1"]
    assert [(ep.start_seq, ep.end_seq, ep.messages) for ep in b.epochs] == [(0, 4, 4), (3, 5, 2)]
    assert b.epochs[1].tokens == sizes[3] + sizes[4]
    # the second epoch's contexts open with the state "state" of the compaction record
    assert [ep.state_tokens for ep in b.epochs] == [0, EST.text("state")]
    assert b.counts == {"message": 5, "compaction": 1, "tool_calls": 1, "tool_results": 1}
