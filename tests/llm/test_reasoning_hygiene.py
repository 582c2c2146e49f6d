"""Reasoning hygiene in the requests we send: OpenAI reasoning is marked as OpenAI's, never
echoed to Anthropic, and replayed to the Responses API only before the item that follows it,
without item ids; signed thinking reaches Anthropic byte-exact."""

from __future__ import annotations

from llm_helpers import ONE_ATTEMPT, call, new_session, result
from servers import ScriptedServer, SleepRecorder, Step, anthropic_reply, responses_reply

from ctxengine.model import Message, ReasoningPart, TextPart, user
from ctxengine.projection.context import Context
from ctxengine.projection.render.anthropic import render_anthropic
from ctxengine.projection.render.openai_responses import render_openai_responses
from ctxengine.providers import AnthropicProvider, OpenAIProvider

OPENAI = {"provider": "openai"}


def test_responses_reasoning_comes_back_marked_and_is_never_sent_to_anthropic(
    server: ScriptedServer, sleeps: SleepRecorder
) -> None:
    reply = responses_reply("Done.")
    reply["output"].insert(
        0,
        {
            "type": "reasoning",
            "id": "rs_1",
            "summary": [{"type": "summary_text", "text": "plan"}],
            "encrypted_content": "gAAAAB-encrypted",
        },
    )
    server.push(Step(body=reply))
    provider = OpenAIProvider(
        "gpt-test", api="responses", base_url=server.url + "/v1", retry=ONE_ATTEMPT
    )
    s = new_session(messages=[user("hi")])
    s.complete(provider)
    answer = s.entries[-1].body
    assert isinstance(answer, Message)
    [thought] = answer.reasoning
    assert (thought.text, thought.signature, thought.meta) == ("plan", "gAAAAB-encrypted", OPENAI)
    body = render_anthropic(Context(messages=(user("hi"), answer, user("next")), sources=()))
    assert body["messages"][1] == {
        "role": "assistant",
        "content": [{"type": "text", "text": "Done."}],
    }


def test_responses_input_keeps_reasoning_only_before_a_following_item_and_strips_ids() -> None:
    thought = ReasoningPart("plan", "enc-1", meta=OPENAI)
    trailing = ReasoningPart("after", "enc-2", meta=OPENAI)
    anthropic_thinking = ReasoningPart("claude", "sig-a")
    messages = (
        user("go"),
        Message("assistant", (thought, call("c1", "Read", path="a.py"))),
        result("c1", "text"),
        Message("assistant", (anthropic_thinking, TextPart("Read it."), trailing)),
    )
    assert render_openai_responses(Context(messages=messages, sources=()))["input"] == [
        {"type": "message", "role": "user", "content": [{"type": "input_text", "text": "go"}]},
        {
            "type": "reasoning",
            "summary": [{"type": "summary_text", "text": "plan"}],
            "encrypted_content": "enc-1",
        },
        {"type": "function_call", "call_id": "c1", "name": "Read", "arguments": '{"path": "a.py"}'},
        {"type": "function_call_output", "call_id": "c1", "output": "text"},
        {
            "type": "message",
            "role": "assistant",
            "content": [{"type": "output_text", "text": "Read it."}],
        },
    ]


def test_signed_thinking_of_the_newest_reply_reaches_anthropic_byte_exact(
    server: ScriptedServer, sleeps: SleepRecorder
) -> None:
    signature = "EqQBCkgIARABGAIi+/==\n"
    server.push(Step(body=anthropic_reply("Next.")))
    s = new_session(
        messages=[
            user("go"),
            Message("assistant", (ReasoningPart("let me look", signature), call("c1", "Read"))),
            result("c1", "file"),
        ]
    )
    provider = AnthropicProvider("claude-test", api_key="k", base_url=server.url, retry=ONE_ATTEMPT)
    s.complete(provider)
    sent = server.received[0].body["messages"][1]["content"][0]
    assert sent == {"type": "thinking", "thinking": "let me look", "signature": signature}
