"""An agent call through ``Session.complete`` records the model's tool calls under the
session's own tool names, even when the renderer had to replace them on the wire."""

from __future__ import annotations

from llm_helpers import ONE_ATTEMPT, call, new_session, result
from servers import ScriptedServer, SleepRecorder, Step, responses_reply

from ctxengine.model import Message, ToolCallPart, user
from ctxengine.providers import OpenAIProvider


def test_a_replaced_tool_name_is_recorded_under_its_own_name(
    server: ScriptedServer, sleeps: SleepRecorder
) -> None:
    wire = "my_tool_v2_9fb9626a25"  # wire_name("my.tool/v2", "openai")
    server.push(Step(body=responses_reply(function_calls=[("c2", wire, "{}")])))
    provider = OpenAIProvider(
        "gpt-test", api="responses", base_url=server.url + "/v1", retry=ONE_ATTEMPT
    )
    s = new_session(messages=[user("go"), Message("assistant", (call("c1", "my.tool/v2"),))])
    s.append(result("c1", "done"))
    s.complete(provider)
    assert server.received[0].body["input"][1]["name"] == wire
    answer = s.entries[-1].body
    assert isinstance(answer, Message)
    assert answer.tool_calls == (ToolCallPart("c2", "my.tool/v2", "{}"),)
