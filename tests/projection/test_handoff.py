"""A hand-off closes the unanswered calls of the newest reply."""

from ctxengine.model import Message, TextPart, ToolCallPart, ToolResultPart
from ctxengine.projection.context import Context
from ctxengine.projection.handoff import SESSION_ENDED_RESULT, close_pending
from ctxengine.projection.render.anthropic import render_anthropic
from ctxengine.projection.render.openai import render_openai
from ctxengine.projection.validate import validate
from ctxengine.tokens.estimate import HeuristicEstimator

EST = HeuristicEstimator()


def _ctx(*messages: Message) -> Context:
    return Context(
        messages,
        tuple(f"e{i}" for i in range(len(messages))),
        tokens=sum(EST.message(m) for m in messages),
    )


def test_a_parallel_call_with_one_result_missing_is_closed_and_valid() -> None:
    ctx = _ctx(
        Message("user", (TextPart("go"),)),
        Message("assistant", (ToolCallPart("a", "read", "{}"), ToolCallPart("b", "read", "{}"))),
        Message("tool", (ToolResultPart("a", (TextPart("ok"),)),)),
    )
    assert validate(render_openai(ctx), "openai") != []
    closed, ids = close_pending(ctx, EST)
    assert ids == ("b",)
    last = closed.messages[-1]
    assert last.tool_results == (ToolResultPart("b", (TextPart(SESSION_ENDED_RESULT),), True),)
    assert closed.sources[-1] is None
    assert closed.tokens == ctx.tokens + EST.message(last)
    assert validate(render_openai(closed), "openai") == []
    assert validate(render_anthropic(closed), "anthropic") == []


def test_nothing_pending_returns_the_same_context() -> None:
    ctx = _ctx(Message("user", (TextPart("hi"),)), Message("assistant", (TextPart("hello"),)))
    assert close_pending(ctx, EST) == (ctx, ())
