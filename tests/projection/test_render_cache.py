"""Prompt-cache breakpoints in Anthropic bodies (only when asked for)."""

from ctxengine.model import Message, TextPart, ToolCallPart, ToolResultPart
from ctxengine.projection.context import Context
from ctxengine.projection.render.anthropic import render_anthropic
from ctxengine.projection.validate import validate


def _ctx() -> Context:
    messages = (
        Message("system", (TextPart("Be careful."),)),
        Message("user", (TextPart("List the files."),)),
        Message("assistant", (ToolCallPart("toolu_1", "ls", "{}"),)),
        Message("tool", (ToolResultPart("toolu_1", (TextPart("a.py"),)),)),
    )
    return Context(messages, tuple(f"e{i}" for i in range(4)))


def test_cache_marks_the_system_prompt_and_the_last_block() -> None:
    body = render_anthropic(_ctx(), cache=True)
    assert body["system"] == [
        {"type": "text", "text": "Be careful.", "cache_control": {"type": "ephemeral"}}
    ]
    assert body["messages"][-1]["content"] == [
        {
            "type": "tool_result",
            "tool_use_id": "toolu_1",
            "content": [{"type": "text", "text": "a.py"}],
            "cache_control": {"type": "ephemeral"},
        }
    ]
    assert validate(body, "anthropic") == []


def test_no_cache_markers_unless_asked() -> None:
    body = render_anthropic(_ctx())
    assert body["system"] == "Be careful."
    assert "cache_control" not in str(body)
