"""Prompt-cache breakpoints in Anthropic bodies (only when asked for): at most four, on stable
boundaries (last tool, system prompt, end of the preamble, the message before the last one);
and the state as mid-conversation system messages for a model that takes them."""

from typing import Any

import pytest

from ctxengine.model import Message, ReasoningPart, TextPart, ToolCallPart, ToolResultPart
from ctxengine.projection.context import Context
from ctxengine.projection.render.anthropic import cache_breakpoints, cache_layout, render_anthropic
from ctxengine.projection.validate import validate
from ctxengine.summarizers.cache_reuse import NotReusable, append_to_body

MARK = {"type": "ephemeral"}
TOOLS = (
    {"name": "ls", "description": "List files.", "parameters": {"type": "object"}},
    {"name": "read", "description": "Read a file.", "parameters": {"type": "object"}},
)


def user(text: str, **meta: Any) -> Message:
    return Message("user", (TextPart(text),), meta=meta)


def _simple() -> Context:
    messages = (
        Message("system", (TextPart("Be careful."),)),
        user("List the files."),
        Message("assistant", (ToolCallPart("toolu_1", "ls", "{}"),)),
        Message("tool", (ToolResultPart("toolu_1", (TextPart("a.py"),)),)),
    )
    return Context(messages, tuple(f"e{i}" for i in range(4)))


def _compacted(tail_starts_with_user: bool = False) -> Context:
    """Head, continuation state, re-injected rules and pinned items (the preamble), then a
    tail that starts with an assistant message (or a user one)."""
    preamble = (
        Message("system", (TextPart("Be careful."),)),
        user("The earlier part of this session was compacted. <state>"),
        user("Contents of CLAUDE.md: never add a co-author trailer.", synthetic="reinjected"),
        user("Pinned by the user: …\n\n[1]\nUse tabs.", synthetic="pinned"),
    )
    tail = (
        *((user("Go on."),) if tail_starts_with_user else ()),
        Message("assistant", (ToolCallPart("toolu_1", "read", '{"path": "a.py"}'),)),
        Message("tool", (ToolResultPart("toolu_1", (TextPart("print(1)"),)),)),
        Message("assistant", (TextPart("a.py prints 1."),)),
        user("Now b.py."),
    )
    sources = ("e0", None, None, None, *(f"e{10 + i}" for i in range(len(tail))))
    return Context((*preamble, *tail), sources, tools=TOOLS, preamble=4)


def test_the_system_prompt_and_the_message_before_the_last_are_marked() -> None:
    body = render_anthropic(_simple(), cache=True)
    assert body["system"] == [{"type": "text", "text": "Be careful.", "cache_control": MARK}]
    assert body["messages"][1]["content"] == [
        {"type": "tool_use", "id": "toolu_1", "name": "ls", "input": {}, "cache_control": MARK}
    ]
    # The last message (what this call adds) carries no marker.
    assert body["messages"][-1]["content"] == [
        {
            "type": "tool_result",
            "tool_use_id": "toolu_1",
            "content": [{"type": "text", "text": "a.py"}],
        }
    ]
    assert cache_breakpoints(body) == ["system[0]", "messages[1].content[0]"]
    assert validate(body, "anthropic") == []


def test_four_markers_on_the_tools_system_preamble_end_and_newest_stable_message() -> None:
    body = render_anthropic(_compacted(), cache=True)
    assert cache_breakpoints(body) == [
        "tools[1]",
        "system[0]",
        "messages[0].content[2]",
        "messages[3].content[0]",
    ]
    assert body["messages"][0]["content"][2] == {
        "type": "text",
        "text": "Pinned by the user: …\n\n[1]\nUse tabs.",
        "cache_control": MARK,
    }
    assert body["messages"][3]["content"][0] == {
        "type": "text",
        "text": "a.py prints 1.",
        "cache_control": MARK,
    }
    assert validate(body, "anthropic") == []


def test_the_layout_names_the_boundary_of_each_marker() -> None:
    assert cache_layout(_compacted()) == [
        ("tools[1]", "last tool"),
        ("system[0]", "system prompt"),
        ("messages[0].content[2]", "end of the preamble"),
        ("messages[3].content[0]", "newest stable message"),
    ]
    assert cache_layout(_compacted(), system_messages=True)[2:] == [
        ("messages[2].content[0]", "end of the preamble"),
        ("messages[5].content[0]", "newest stable message"),
    ]


def test_a_marker_on_the_same_block_counts_once() -> None:
    # The preamble ends in the message before the last one: one marker there, not two.
    ctx = _compacted()
    short = Context(
        (*ctx.messages[:4], Message("assistant", (TextPart("Going on."),))),
        (*ctx.sources[:4], "e9"),
        preamble=4,
    )
    body = render_anthropic(short, cache=True)
    assert cache_breakpoints(body) == ["system[0]", "messages[0].content[2]"]


def test_right_after_a_compaction_the_preamble_end_is_marked_in_the_last_turn() -> None:
    # The state and the first kept user message merge into one user turn: the state's end
    # is stable (every request of the epoch repeats it), the turn's last block is not.
    ctx = _compacted()
    short = Context((*ctx.messages[:4], user("Go on.")), (*ctx.sources[:4], "e9"), preamble=4)
    body = render_anthropic(short, cache=True)
    assert cache_breakpoints(body) == ["system[0]", "messages[0].content[2]"]
    assert "cache_control" not in body["messages"][0]["content"][3]


def test_a_thinking_block_is_never_marked() -> None:
    messages = (
        user("Why?"),
        Message("assistant", (ReasoningPart("hmm", signature="sig"), TextPart("Because."))),
        user("Thanks."),
    )
    body = render_anthropic(Context(messages, ("e0", "e1", "e2")), cache=True)
    assert cache_breakpoints(body) == ["messages[1].content[1]"]


def test_no_cache_markers_unless_asked() -> None:
    body = render_anthropic(_simple())
    assert body["system"] == "Be careful."
    assert "cache_control" not in str(body)


class TestMidConversationSystemMessages:
    def test_the_state_after_the_first_message_goes_as_system_messages(self) -> None:
        body = render_anthropic(_compacted(), system_messages=True, cache=True)
        assert [m["role"] for m in body["messages"]] == [
            "user",
            "system",
            "system",
            "assistant",
            "user",
            "assistant",
            "user",
        ]
        assert body["messages"][:3] == [
            {
                "role": "user",
                "content": [
                    {
                        "type": "text",
                        "text": "The earlier part of this session was compacted. <state>",
                    }
                ],
            },
            {
                "role": "system",
                "content": [
                    {
                        "type": "text",
                        "text": "Contents of CLAUDE.md: never add a co-author trailer.",
                    }
                ],
            },
            {
                "role": "system",
                "content": [
                    {
                        "type": "text",
                        "text": "Pinned by the user: …\n\n[1]\nUse tabs.",
                        "cache_control": MARK,
                    }
                ],
            },
        ]
        assert cache_breakpoints(body) == [
            "tools[1]",
            "system[0]",
            "messages[2].content[0]",
            "messages[5].content[0]",
        ]
        assert validate(body, "anthropic") == []

    def test_before_a_user_message_the_state_stays_a_user_turn(self) -> None:
        ctx = _compacted(tail_starts_with_user=True)
        assert render_anthropic(ctx, system_messages=True) == render_anthropic(ctx)
        assert [m["role"] for m in render_anthropic(ctx)["messages"]] == [
            "user",
            "assistant",
            "user",
            "assistant",
            "user",
        ]

    def test_without_the_flag_nothing_changes(self) -> None:
        ctx = _compacted()
        assert "system" not in [m["role"] for m in render_anthropic(ctx)["messages"]]


def test_a_summary_is_not_appended_after_a_trailing_system_message() -> None:
    # The request ends with the state as system messages (no tail yet): a user turn after
    # it would be refused, so cache-reuse mode gives way to a request of its own.
    ctx = _compacted()
    ended = Context(ctx.messages[:4], ctx.sources[:4], preamble=4)
    body = render_anthropic(ended, system_messages=True)
    assert [m["role"] for m in body["messages"]] == ["user", "system", "system"]
    with pytest.raises(NotReusable, match="ends with a mid-conversation system message"):
        append_to_body(body, "anthropic", "Summarize.")
