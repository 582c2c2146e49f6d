"""AnthropicProvider over real HTTP: the official SDK pointed at a local scripted server."""

from __future__ import annotations

import asyncio
import json
import sys
import threading
import time

import pytest
from servers import (
    ScriptedServer,
    SleepRecorder,
    Step,
    anthropic_error,
    anthropic_reply,
    anthropic_stream,
    cancel_mid_stream,
)

from ctxengine.errors import (
    Cancelled,
    ConfigError,
    ProviderOverflow,
    TransientProviderError,
)
from ctxengine.model import Message, ReasoningPart, TextPart, Usage, assistant, user
from ctxengine.model.parts import ToolCallPart
from ctxengine.providers import AnthropicProvider, CompletionRequest

REQ = CompletionRequest(system="You summarize.", messages=(user("history goes here"),))


def make(server: ScriptedServer, sleeps: SleepRecorder) -> AnthropicProvider:
    return AnthropicProvider(
        "claude-test", api_key="sk-ant-test", base_url=server.url, sleep=sleeps
    )


class TestReplies:
    def test_text_reply_and_usage(self, server: ScriptedServer, sleeps: SleepRecorder) -> None:
        server.push(
            Step(
                body=anthropic_reply("## Goal\nX", input_tokens=50, cache_read=900, cache_write=40),
                headers={"request-id": "req_ant_1"},
            )
        )
        out = make(server, sleeps).complete(REQ)
        assert (out.text, out.finish_reason, out.raw_finish_reason) == (
            "## Goal\nX",
            "stop",
            "end_turn",
        )
        assert out.usage == Usage(50, 20, 900, 40)
        assert (out.request_id, out.response_id, out.model) == (
            "req_ant_1",
            "msg_test",
            "claude-test",
        )
        [got] = server.received
        assert got.path == "/v1/messages"
        assert got.headers["authorization"] == "Bearer sk-ant-test"

    def test_tool_use_reply_is_reported_as_such(
        self, server: ScriptedServer, sleeps: SleepRecorder
    ) -> None:
        reply = anthropic_reply(
            "", stop_reason="tool_use", tool_uses=[("toolu_1", "bash", {"cmd": "ls"})]
        )
        server.push(Step(body=reply))
        out = make(server, sleeps).complete(REQ)
        assert out.finish_reason == "tool_calls"
        assert out.tool_calls == (ToolCallPart("toolu_1", "bash", '{"cmd": "ls"}'),)

    def test_max_tokens_stop_is_length(self, server: ScriptedServer, sleeps: SleepRecorder) -> None:
        server.push(
            Step(body=anthropic_reply("## Goal\nMigrate the modu", stop_reason="max_tokens"))
        )
        out = make(server, sleeps).complete(REQ)
        assert (out.finish_reason, out.raw_finish_reason) == ("length", "max_tokens")

    def test_signed_thinking_comes_back_byte_exact(
        self, server: ScriptedServer, sleeps: SleepRecorder
    ) -> None:
        reply = anthropic_reply("answer")
        reply["content"].insert(
            0, {"type": "thinking", "thinking": "hmm", "signature": "EqQBCkgIARABGAIi+/=="}
        )
        server.push(Step(body=reply))
        out = make(server, sleeps).complete(REQ)
        assert out.reasoning == (ReasoningPart("hmm", "EqQBCkgIARABGAIi+/=="),)
        assert out.to_message().parts == (
            ReasoningPart("hmm", "EqQBCkgIARABGAIi+/=="),
            TextPart("answer"),
        )


class TestCacheControl:
    def test_a_summary_request_carries_no_cache_control(
        self, server: ScriptedServer, sleeps: SleepRecorder
    ) -> None:
        server.push(Step(body=anthropic_reply("ok")))
        body = {
            "system": [{"type": "text", "text": "S", "cache_control": {"type": "ephemeral"}}],
            "messages": [
                {
                    "role": "user",
                    "content": [
                        {
                            "type": "text",
                            "text": "old",
                            "cache_control": {"type": "ephemeral", "ttl": "1h"},
                        },
                        {"type": "text", "text": "Summarize the above."},
                    ],
                }
            ],
            "tools": [
                {
                    "name": "t",
                    "input_schema": {"type": "object"},
                    "cache_control": {"type": "ephemeral"},
                }
            ],
            "cache_control": {"type": "ephemeral"},
            "max_tokens": 500,
        }
        make(server, sleeps).complete(CompletionRequest(body=body, cache=False))
        sent = server.received[0].body
        assert "cache_control" not in json.dumps(sent)
        assert sent == {
            "system": [{"type": "text", "text": "S"}],
            "messages": [
                {
                    "role": "user",
                    "content": [
                        {"type": "text", "text": "old"},
                        {"type": "text", "text": "Summarize the above."},
                    ],
                }
            ],
            "tools": [{"name": "t", "input_schema": {"type": "object"}}],
            "max_tokens": 500,
            "model": "claude-test",
        }

    def test_cache_reuse_mode_marks_the_system_prompt(
        self, server: ScriptedServer, sleeps: SleepRecorder
    ) -> None:
        server.push(Step(body=anthropic_reply("ok")))
        request = CompletionRequest(system="S", messages=(user("u"),), cache=True)
        make(server, sleeps).complete(request)
        assert server.received[0].body["system"] == [
            {"type": "text", "text": "S", "cache_control": {"type": "ephemeral"}}
        ]

    def test_built_request_merges_roles_and_lifts_system_messages(
        self, server: ScriptedServer, sleeps: SleepRecorder
    ) -> None:
        server.push(Step(body=anthropic_reply("ok")))
        messages = (
            Message("system", (TextPart("rules"),)),
            user("a"),
            user("b"),
            assistant("c"),
        )
        make(server, sleeps).complete(
            CompletionRequest(system="S", messages=messages, max_output_tokens=64)
        )
        assert server.received[0].body == {
            "messages": [
                {
                    "role": "user",
                    "content": [{"type": "text", "text": "a"}, {"type": "text", "text": "b"}],
                },
                {"role": "assistant", "content": [{"type": "text", "text": "c"}]},
            ],
            "system": [{"type": "text", "text": "S\n\nrules"}],
            "model": "claude-test",
            "max_tokens": 64,
        }


class TestErrors:
    def test_prompt_too_long_is_an_overflow_with_the_numbers(
        self, server: ScriptedServer, sleeps: SleepRecorder
    ) -> None:
        server.push(
            Step(400, anthropic_error("prompt is too long: 213462 tokens > 200000 maximum"))
        )
        with pytest.raises(ProviderOverflow) as info:
            make(server, sleeps).complete(REQ)
        assert (info.value.tokens, info.value.limit, info.value.status) == (213462, 200000, 400)
        assert len(server.received) == 1

    def test_413_request_too_large_is_an_overflow(
        self, server: ScriptedServer, sleeps: SleepRecorder
    ) -> None:
        body = {
            "error": {"type": "request_too_large", "message": "Request exceeds the maximum size"}
        }
        server.push(Step(413, body))
        with pytest.raises(ProviderOverflow) as info:
            make(server, sleeps).complete(REQ)
        assert (info.value.status, info.value.reported) == (413, False)
        assert sleeps.waits == []

    def test_529_overloaded_is_retried_then_raised(
        self, server: ScriptedServer, sleeps: SleepRecorder
    ) -> None:
        err = anthropic_error("Overloaded", type_="overloaded_error")
        server.push(Step(529, err), Step(529, err), Step(529, err))
        with pytest.raises(TransientProviderError) as info:
            make(server, sleeps).complete(REQ)
        assert (info.value.status, info.value.attempts) == (529, 3)
        assert sleeps.waits == [1.0, 2.0]

    def test_429_with_retry_after_is_retried(
        self, server: ScriptedServer, sleeps: SleepRecorder
    ) -> None:
        err = anthropic_error(
            "Number of request tokens has exceeded your rate limit", type_="rate_limit_error"
        )
        server.push(Step(429, err, {"retry-after": "7"}), Step(body=anthropic_reply("ok")))
        assert make(server, sleeps).complete(REQ).text == "ok"
        assert sleeps.waits == [7.0]
        assert len(server.received) == 2


class TestStreaming:
    def test_streamed_reply(self, server: ScriptedServer, sleeps: SleepRecorder) -> None:
        server.push(Step(events=anthropic_stream(["## Go", "al"], input_tokens=77)))
        out = make(server, sleeps).complete(CompletionRequest(messages=(user("x"),), stream=True))
        assert (out.text, out.finish_reason) == ("## Goal", "stop")
        assert out.usage == Usage(77, 2, 0, 0)
        assert server.received[0].body["stream"] is True

    def test_cancel_during_a_slow_stream_closes_it_promptly(
        self, server: ScriptedServer, sleeps: SleepRecorder
    ) -> None:
        server.push(Step(events=anthropic_stream(["word "] * 100), delay_s=0.1))
        cancel = threading.Event()
        cancelled = cancel_mid_stream(server, cancel)
        with pytest.raises(Cancelled):
            make(server, sleeps).complete(REQ, cancel=cancel)
        # Promptly: well before the 10 s the stream would take (a margin for a loaded machine).
        cancelled_at = cancelled()
        assert time.monotonic() - cancelled_at < 4.0
        deadline = time.monotonic() + 4.0
        while not server.disconnects and time.monotonic() < deadline:
            time.sleep(0.05)
        assert len(server.disconnects) == 1

    def test_cancelling_the_awaiting_task_cancels_the_stream(
        self, server: ScriptedServer, sleeps: SleepRecorder
    ) -> None:
        server.push(Step(events=anthropic_stream(["word "] * 100), delay_s=0.1))
        provider = make(server, sleeps)

        async def scenario() -> float:
            task = asyncio.create_task(provider.acomplete(REQ))
            await asyncio.sleep(0.4)
            started = time.monotonic()
            task.cancel()
            with pytest.raises(asyncio.CancelledError):
                await task
            return time.monotonic() - started

        assert asyncio.run(scenario()) < 1.0
        deadline = time.monotonic() + 2.0
        while not server.disconnects and time.monotonic() < deadline:
            time.sleep(0.05)
        assert len(server.disconnects) == 1


class TestConfiguration:
    def test_missing_sdk_names_the_extra(self, monkeypatch: pytest.MonkeyPatch) -> None:
        monkeypatch.setitem(sys.modules, "anthropic", None)
        with pytest.raises(ConfigError, match=r"pip install 'ctxengine\[anthropic\]'"):
            AnthropicProvider("claude-sonnet-4-5", api_key="sk-ant-test")

    def test_missing_key_is_a_config_error(self) -> None:
        with pytest.raises(ConfigError, match="ANTHROPIC_API_KEY"):
            AnthropicProvider("claude-sonnet-4-5")

    def test_key_and_base_url_come_from_the_sdk_variables(
        self, server: ScriptedServer, sleeps: SleepRecorder, monkeypatch: pytest.MonkeyPatch
    ) -> None:
        monkeypatch.setenv("ANTHROPIC_BASE_URL", server.url)
        monkeypatch.setenv("ANTHROPIC_API_KEY", "sk-ant-env")
        server.push(Step(body=anthropic_reply("ok")))
        AnthropicProvider("claude-test", sleep=sleeps).complete(REQ)
        assert server.received[0].headers["authorization"] == "Bearer sk-ant-env"
