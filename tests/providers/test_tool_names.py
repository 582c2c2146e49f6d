"""Tool names a renderer replaced (``my.tool/v2`` is not a valid API name) come back in the
reply under the caller's own name, over real HTTP against the local scripted server."""

from __future__ import annotations

from servers import (
    ScriptedServer,
    SleepRecorder,
    Step,
    anthropic_reply,
    chat_reply,
    responses_reply,
)

from ctxengine.model import Message, ToolCallPart, tool_result, user
from ctxengine.projection.context import Context
from ctxengine.projection.render.anthropic import render_anthropic
from ctxengine.projection.render.registry import original_tool_names
from ctxengine.providers import AnthropicProvider, CompletionRequest, OpenAIProvider

NAME = "my.tool/v2"
#: ``wire_name("my.tool/v2", …)``: invalid characters replaced, then ``_`` and the hash.
WIRE = "my_tool_v2_9fb9626a25"
SCHEMA = {"name": NAME, "description": "d", "parameters": {"type": "object"}}


def _history() -> tuple[Message, ...]:
    """A conversation that already called the tool once."""
    return (
        user("go"),
        Message("assistant", (ToolCallPart("c1", NAME, "{}"),)),
        tool_result("c1", "done"),
    )


def test_chat_completions_declares_the_wire_name_and_maps_the_reply_back(
    server: ScriptedServer, sleeps: SleepRecorder
) -> None:
    server.push(Step(body=chat_reply(finish="tool_calls", tool_calls=[("c2", WIRE, "{}")])))
    provider = OpenAIProvider("gpt-test", base_url=server.url + "/v1", sleep=sleeps)
    out = provider.complete(CompletionRequest(messages=_history(), tools=(SCHEMA,)))
    sent = server.received[0].body
    assert sent["tools"] == [
        {
            "type": "function",
            "function": {"name": WIRE, "description": "d", "parameters": {"type": "object"}},
        }
    ]
    assert sent["messages"][1]["tool_calls"][0]["function"]["name"] == WIRE
    assert out.tool_calls == (ToolCallPart("c2", NAME, "{}"),)


def test_responses_maps_the_name_of_a_tool_the_history_called(
    server: ScriptedServer, sleeps: SleepRecorder
) -> None:
    server.push(Step(body=responses_reply(function_calls=[("c2", WIRE, '{"a": 1}')])))
    provider = OpenAIProvider(
        "gpt-test", api="responses", base_url=server.url + "/v1", sleep=sleeps
    )
    out = provider.complete(CompletionRequest(messages=_history()))
    sent = server.received[0].body
    assert sent["input"][1] == {
        "type": "function_call",
        "call_id": "c1",
        "name": WIRE,
        "arguments": "{}",
    }
    assert "tools" not in sent
    assert out.tool_calls == (ToolCallPart("c2", NAME, '{"a": 1}'),)


def test_a_prebuilt_body_is_mapped_back_through_the_names_the_caller_gives(
    server: ScriptedServer, sleeps: SleepRecorder
) -> None:
    ctx = Context(messages=_history(), sources=(None, None, None), tools=(SCHEMA,))
    body = render_anthropic(ctx)
    assert [t["name"] for t in body["tools"]] == [WIRE]
    names = original_tool_names(ctx, "anthropic")
    assert names == {WIRE: NAME}
    provider = AnthropicProvider("claude-test", api_key="k", base_url=server.url, sleep=sleeps)
    reply = anthropic_reply(stop_reason="tool_use", tool_uses=[("t2", WIRE, {"a": 1})])
    server.push(Step(body=reply), Step(body=reply))
    out = provider.complete(CompletionRequest(body=body, tool_names=names))
    assert out.tool_calls == (ToolCallPart("t2", NAME, '{"a": 1}'),)
    unmapped = provider.complete(CompletionRequest(body=body))
    assert unmapped.tool_calls == (ToolCallPart("t2", WIRE, '{"a": 1}'),)


def test_valid_names_are_left_alone(server: ScriptedServer, sleeps: SleepRecorder) -> None:
    server.push(Step(body=chat_reply(finish="tool_calls", tool_calls=[("c2", "bash", "{}")])))
    provider = OpenAIProvider("gpt-test", base_url=server.url + "/v1", sleep=sleeps)
    tools = ({"name": "bash", "parameters": {"type": "object"}},)
    out = provider.complete(CompletionRequest(messages=(user("go"),), tools=tools))
    assert out.tool_calls == (ToolCallPart("c2", "bash", "{}"),)
