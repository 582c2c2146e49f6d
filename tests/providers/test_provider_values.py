"""Request and reply values, error classification without a server, stream folding, and the
provider factory."""

from __future__ import annotations

import time

import pytest

from ctxengine.errors import (
    Cancelled,
    ConfigError,
    InvalidRequest,
    ProviderOverflow,
    RateLimited,
    TransientProviderError,
)
from ctxengine.model import ReasoningPart, TextPart, ToolCallPart, Usage, user
from ctxengine.providers import (
    AnthropicProvider,
    Completion,
    CompletionRequest,
    OpenAIProvider,
    Provider,
    classify_error,
    create_provider,
    to_provider_error,
)
from ctxengine.providers._call import CallControl, call_with_retries
from ctxengine.providers._parse_anthropic import MessageStreamAccumulator
from ctxengine.providers._parse_openai import ChatStreamAccumulator, chat_usage
from ctxengine.providers.base import RetrySettings
from ctxengine.providers.classify import PayloadError, parse_retry_after


class TestCompletionRequest:
    def test_needs_messages_or_a_body(self) -> None:
        with pytest.raises(InvalidRequest, match="needs messages or a prebuilt body"):
            CompletionRequest(system="S")

    def test_not_both(self) -> None:
        with pytest.raises(InvalidRequest, match="not both"):
            CompletionRequest(messages=(user("x"),), body={"messages": []})

    def test_a_prebuilt_body_declares_its_own_tools(self) -> None:
        with pytest.raises(InvalidRequest, match="a prebuilt body declares its own tools"):
            CompletionRequest(body={"messages": []}, tools=({"name": "bash"},))

    def test_output_budget_must_be_positive(self) -> None:
        with pytest.raises(InvalidRequest, match="max_output_tokens must be positive, got 0"):
            CompletionRequest(messages=(user("x"),), max_output_tokens=0)

    def test_defaults_ask_for_no_cache_and_no_tools(self) -> None:
        request = CompletionRequest(messages=(user("x"),))
        assert (request.cache, request.tools, request.stream, request.max_output_tokens) == (
            False,
            (),
            False,
            4_096,
        )


class TestCompletionToolNames:
    def test_only_the_names_in_the_map_change(self) -> None:
        reply = Completion(
            "", (ToolCallPart("c1", "my_tool_x", "{}"), ToolCallPart("c2", "bash", "{}"))
        )
        mapped = reply.with_tool_names({"my_tool_x": "my.tool", "other": "o"})
        assert mapped.tool_calls == (
            ToolCallPart("c1", "my.tool", "{}"),
            ToolCallPart("c2", "bash", "{}"),
        )
        assert reply.with_tool_names({"other": "o"}) is reply
        assert reply.with_tool_names({}) is reply


class TestCompletionToMessage:
    def test_length_stop_keeps_its_reason(self) -> None:
        msg = Completion("half", finish_reason="length", usage=Usage(10, 5), model="m").to_message()
        assert (msg.role, msg.parts, msg.stop_reason, msg.usage, msg.model) == (
            "assistant",
            (TextPart("half"),),
            "length",
            Usage(10, 5),
            "m",
        )

    def test_tool_calls_become_tool_use(self) -> None:
        call = ToolCallPart("c1", "bash", "{}")
        msg = Completion("", (call,), finish_reason="tool_calls").to_message()
        assert (msg.parts, msg.stop_reason) == ((call,), "tool_use")


class TestRetryAfter:
    def test_seconds_milliseconds_and_dates(self) -> None:
        assert parse_retry_after({"Retry-After": "12"}) == 12.0
        assert parse_retry_after({"retry-after-ms": "250"}) == 0.25
        date = "Wed, 21 Oct 2026 07:28:07 GMT"
        assert parse_retry_after({"retry-after": date}, now=lambda: 1792567677.0) == 10.0
        assert parse_retry_after({"retry-after": date}, now=lambda: 1792567697.0) == 0.0

    def test_absent_or_garbage_is_none(self) -> None:
        assert parse_retry_after(None) is None
        assert parse_retry_after({}) is None
        assert parse_retry_after({"retry-after": "soon"}) is None

    def test_backoff_doubles_up_to_the_ceiling(self) -> None:
        settings = RetrySettings(initial_wait_s=1.0, max_wait_s=5.0)
        assert [settings.backoff(n) for n in (1, 2, 3, 4)] == [1.0, 2.0, 4.0, 5.0]

    @pytest.mark.parametrize(
        ("budget", "attempts", "waits"),
        [(None, 3, [0.1, 0.2]), (0.25, 2, [0.1]), (0.05, 1, [])],
    )
    def test_a_time_budget_stops_retries_whose_wait_would_end_past_it(
        self, budget: float | None, attempts: int, waits: list[float]
    ) -> None:
        settings = RetrySettings(max_attempts=3, initial_wait_s=0.1, max_elapsed_s=budget)
        tries: list[int] = []
        slept: list[float] = []

        def attempt() -> None:
            tries.append(1)
            raise TransientProviderError("no answer", status=None)

        def sleep(seconds: float) -> None:
            slept.append(seconds)
            time.sleep(seconds)

        with pytest.raises(TransientProviderError) as info:
            call_with_retries(attempt, settings, CallControl(None), sleep)
        assert (len(tries), info.value.attempts, slept) == (attempts, attempts, waits)


class TestClassification:
    def test_connection_and_timeout_errors_are_transient(self) -> None:
        assert classify_error(ConnectionResetError("reset")).kind == "transient"
        assert classify_error(TimeoutError("slow")).kind == "transient"

    def test_unknown_exceptions_are_other(self) -> None:
        c = classify_error(ValueError("boom"))
        assert (c.kind, c.status, c.message) == ("other", None, "ValueError: boom")

    def test_a_failed_response_payload_with_an_overflow_code(self) -> None:
        exc = PayloadError(
            "Your input exceeds the context window of this model.", code="context_length_exceeded"
        )
        c = classify_error(exc)
        assert (c.kind, c.tokens, c.limit) == ("overflow", None, None)

    def test_a_failed_response_payload_with_a_server_error(self) -> None:
        mapped = to_provider_error(PayloadError("oops", code="server_error", status=500))
        assert isinstance(mapped, TransientProviderError)
        assert (mapped.status, mapped.retry_after) == (500, None)

    def test_our_errors_classify_as_themselves(self) -> None:
        overflow = ProviderOverflow(300, 200, status=400, provider_message="too long")
        assert (classify_error(overflow).kind, classify_error(overflow).tokens) == ("overflow", 300)
        limited = RateLimited("slow", retry_after=3.0)
        assert (classify_error(limited).kind, classify_error(limited).retry_after) == (
            "rate_limited",
            3.0,
        )
        assert classify_error(Cancelled("x")).kind == "cancelled"
        assert to_provider_error(limited) is limited

    def test_overflow_messages_say_whether_numbers_were_reported(self) -> None:
        assert str(ProviderOverflow(300, 200, status=400, provider_message="too long")) == (
            "context overflow: 300 tokens > limit 200 (too long)"
        )
        assert str(
            ProviderOverflow(None, None, status=413, provider_message="Payload Too Large")
        ) == ("context overflow (sizes not reported): HTTP 413: Payload Too Large")

    def test_exhausted_retries_name_the_attempts(self) -> None:
        err = TransientProviderError("Overloaded", status=529, attempts=3)
        assert str(err) == "provider call failed after 3 attempt(s) (HTTP 529): Overloaded"


class TestStreamFolding:
    def test_chat_tool_call_fragments_are_joined_by_index(self) -> None:
        acc = ChatStreamAccumulator()
        frags = [
            {"index": 0, "id": "c1", "function": {"name": "read", "arguments": '{"pa'}},
            {"index": 1, "id": "c2", "function": {"name": "ls", "arguments": "{}"}},
            {"index": 0, "function": {"arguments": 'th": "a"}'}},
        ]
        for frag in frags:
            acc.add({"id": "x", "model": "m", "choices": [{"delta": {"tool_calls": [frag]}}]})
        acc.add({"choices": [{"delta": {}, "finish_reason": "tool_calls"}]})
        out = acc.result(None)
        assert out.tool_calls == (
            ToolCallPart("c1", "read", '{"path": "a"}'),
            ToolCallPart("c2", "ls", "{}"),
        )
        assert out.finish_reason == "tool_calls"

    def test_a_chat_stream_without_a_finish_reason_is_an_error(self) -> None:
        acc = ChatStreamAccumulator()
        acc.add({"choices": [{"delta": {"content": "half"}}]})
        assert (acc.result(None).text, acc.result(None).finish_reason) == ("half", "error")

    def test_deepseek_cache_hits_are_cache_reads(self) -> None:
        usage = {"prompt_tokens": 1000, "completion_tokens": 9, "prompt_cache_hit_tokens": 640}
        assert chat_usage(usage) == Usage(360, 9, 640, 0)

    def test_anthropic_thinking_signature_and_tool_json_are_folded(self) -> None:
        acc = MessageStreamAccumulator()
        events = [
            {
                "type": "message_start",
                "message": {"id": "m1", "model": "c", "usage": {"input_tokens": 5}},
            },
            {
                "type": "content_block_start",
                "index": 0,
                "content_block": {"type": "thinking", "thinking": ""},
            },
            {
                "type": "content_block_delta",
                "index": 0,
                "delta": {"type": "thinking_delta", "thinking": "plan"},
            },
            {
                "type": "content_block_delta",
                "index": 0,
                "delta": {"type": "signature_delta", "signature": "SIG=="},
            },
            {
                "type": "content_block_start",
                "index": 1,
                "content_block": {"type": "tool_use", "id": "t1", "name": "bash", "input": {}},
            },
            {
                "type": "content_block_delta",
                "index": 1,
                "delta": {"type": "input_json_delta", "partial_json": '{"c'},
            },
            {
                "type": "content_block_delta",
                "index": 1,
                "delta": {"type": "input_json_delta", "partial_json": 'md": 1}'},
            },
            {
                "type": "message_delta",
                "delta": {"stop_reason": "tool_use"},
                "usage": {"output_tokens": 30},
            },
        ]
        for event in events:
            acc.add(event)
        out = acc.result("r1")
        assert out.reasoning == (ReasoningPart("plan", "SIG=="),)
        assert out.tool_calls == (ToolCallPart("t1", "bash", '{"cmd": 1}'),)
        assert (out.finish_reason, out.usage, out.request_id) == ("tool_calls", Usage(5, 30), "r1")


class TestFactory:
    def test_specs_make_the_matching_provider(self) -> None:
        chat = create_provider("openai:gpt-4o", api_key="sk-test")
        assert isinstance(chat, OpenAIProvider)
        assert (chat.name, chat.model, chat.api) == ("openai", "gpt-4o", "chat")
        responses = create_provider("openai-responses:gpt-5", api_key="sk-test")
        assert isinstance(responses, OpenAIProvider)
        assert (responses.name, responses.api) == ("openai-responses", "responses")
        claude = create_provider("anthropic:claude-sonnet-4-5", api_key="sk-ant-test")
        assert isinstance(claude, AnthropicProvider)
        assert (claude.name, claude.model) == ("anthropic", "claude-sonnet-4-5")
        assert all(isinstance(p, Provider) for p in (chat, responses, claude))

    def test_a_bad_spec_is_a_config_error(self) -> None:
        with pytest.raises(ConfigError, match="unknown provider 'cohere'"):
            create_provider("cohere:command-r")
