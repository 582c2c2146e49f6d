"""OpenAIProvider over real HTTP: the official SDK pointed at a local scripted server."""

from __future__ import annotations

import sys
import threading
import time

import pytest
from servers import (
    ScriptedServer,
    SleepRecorder,
    Step,
    cancel_mid_stream,
    chat_reply,
    chat_stream,
    openai_error,
    responses_reply,
    responses_stream,
)

from ctxengine.errors import (
    Cancelled,
    ConfigError,
    ProviderAuthError,
    ProviderOverflow,
    ProviderRequestError,
    RateLimited,
    TransientProviderError,
)
from ctxengine.model import Usage, assistant, tool_result, user
from ctxengine.model.parts import ToolCallPart
from ctxengine.providers import CompletionRequest, OpenAIProvider, RetrySettings

REQ = CompletionRequest(system="You summarize.", messages=(user("history goes here"),))


def chat(server: ScriptedServer, sleeps: SleepRecorder, **kwargs: object) -> OpenAIProvider:
    return OpenAIProvider("gpt-test", base_url=server.url + "/v1", sleep=sleeps, **kwargs)  # type: ignore[arg-type]


def responses(server: ScriptedServer, sleeps: SleepRecorder) -> OpenAIProvider:
    return OpenAIProvider("gpt-test", api="responses", base_url=server.url + "/v1", sleep=sleeps)


class TestChatCompletionsReplies:
    def test_text_reply_usage_excludes_cached_tokens(
        self, server: ScriptedServer, sleeps: SleepRecorder
    ) -> None:
        server.push(
            Step(
                body=chat_reply("## Goal\nmigrate X", prompt_tokens=1200, cached_tokens=1000),
                headers={"x-request-id": "req_123"},
            )
        )
        out = chat(server, sleeps).complete(REQ)
        assert out.text == "## Goal\nmigrate X"
        assert out.finish_reason == "stop"
        assert out.usage == Usage(
            input_tokens=200, output_tokens=20, cache_read_tokens=1000, cache_write_tokens=0
        )
        assert (out.model, out.request_id, out.response_id) == (
            "gpt-test",
            "req_123",
            "chatcmpl-test",
        )

    def test_request_body_is_the_rendered_conversation(
        self, server: ScriptedServer, sleeps: SleepRecorder
    ) -> None:
        server.push(Step(body=chat_reply("ok")))
        call = ToolCallPart("call_1", "read", '{"path": "a.py"}')
        request = CompletionRequest(
            system="S",
            messages=(user("u1"), assistant("", call), tool_result("call_1", "file text")),
            max_output_tokens=900,
            temperature=0.0,
        )
        chat(server, sleeps).complete(request)
        [got] = server.received
        assert got.path == "/v1/chat/completions"
        assert got.body == {
            "model": "gpt-test",
            "messages": [
                {"role": "system", "content": "S"},
                {"role": "user", "content": "u1"},
                {
                    "role": "assistant",
                    "content": None,
                    "tool_calls": [
                        {
                            "id": "call_1",
                            "type": "function",
                            "function": {"name": "read", "arguments": '{"path": "a.py"}'},
                        }
                    ],
                },
                {"role": "tool", "tool_call_id": "call_1", "content": "file text"},
            ],
            "max_tokens": 900,
            "temperature": 0.0,
        }
        assert got.headers["authorization"] == "Bearer not-needed"
        assert got.headers["x-stainless-retry-count"] == "0"

    def test_tool_call_reply_is_reported_as_such(
        self, server: ScriptedServer, sleeps: SleepRecorder
    ) -> None:
        server.push(
            Step(
                body=chat_reply(
                    "", finish="tool_calls", tool_calls=[("c9", "bash", '{"cmd":"ls"}')]
                )
            )
        )
        out = chat(server, sleeps).complete(REQ)
        assert out.finish_reason == "tool_calls"
        assert out.tool_calls == (ToolCallPart("c9", "bash", '{"cmd":"ls"}'),)
        assert out.to_message().stop_reason == "tool_use"

    def test_reply_cut_by_the_output_limit_reports_length(
        self, server: ScriptedServer, sleeps: SleepRecorder
    ) -> None:
        server.push(Step(body=chat_reply("## Goal\nMigrate the modu", finish="length")))
        out = chat(server, sleeps).complete(REQ)
        assert (out.finish_reason, out.raw_finish_reason) == ("length", "length")
        assert out.text == "## Goal\nMigrate the modu"

    def test_prebuilt_body_is_sent_with_model_and_budget_filled_in(
        self, server: ScriptedServer, sleeps: SleepRecorder
    ) -> None:
        server.push(Step(body=chat_reply("ok")))
        body = {"messages": [{"role": "user", "content": "hi"}], "max_completion_tokens": 77}
        chat(server, sleeps).complete(CompletionRequest(body=body))
        assert server.received[0].body == {
            "model": "gpt-test",
            "messages": [{"role": "user", "content": "hi"}],
            "max_completion_tokens": 77,
        }


class TestRetries:
    def test_429_with_retry_after_is_retried_after_that_wait(
        self, server: ScriptedServer, sleeps: SleepRecorder
    ) -> None:
        server.push(
            Step(
                429,
                openai_error("Rate limit reached", code="rate_limit_exceeded"),
                {"retry-after": "2"},
            ),
            Step(body=chat_reply("done")),
        )
        out = chat(server, sleeps).complete(REQ)
        assert out.text == "done"
        assert sleeps.waits == [2.0]
        assert len(server.received) == 2

    def test_retry_after_ms_wins_over_retry_after(
        self, server: ScriptedServer, sleeps: SleepRecorder
    ) -> None:
        headers = {"retry-after-ms": "1500", "retry-after": "9"}
        server.push(Step(429, openai_error("slow down"), headers), Step(body=chat_reply("ok")))
        chat(server, sleeps).complete(REQ)
        assert sleeps.waits == [1.5]

    def test_retry_after_as_http_date_is_measured_from_now(
        self, server: ScriptedServer, sleeps: SleepRecorder
    ) -> None:
        date = "Wed, 21 Oct 2026 07:28:07 GMT"  # 1792567687
        server.push(
            Step(429, openai_error("slow down"), {"retry-after": date}), Step(body=chat_reply("ok"))
        )
        provider = OpenAIProvider(
            "gpt-test", base_url=server.url + "/v1", sleep=sleeps, now=lambda: 1792567684.0
        )
        provider.complete(REQ)
        assert sleeps.waits == [3.0]

    def test_three_500s_exhaust_the_retries(
        self, server: ScriptedServer, sleeps: SleepRecorder
    ) -> None:
        err = openai_error("The server had an error", type_="server_error")
        server.push(Step(500, err), Step(500, err), Step(500, err))
        with pytest.raises(TransientProviderError) as info:
            chat(server, sleeps).complete(REQ)
        assert (info.value.status, info.value.attempts) == (500, 3)
        assert sleeps.waits == [1.0, 2.0]
        assert len(server.received) == 3

    def test_retry_after_longer_than_the_cap_fails_at_once(
        self, server: ScriptedServer, sleeps: SleepRecorder
    ) -> None:
        server.push(Step(429, openai_error("quota"), {"retry-after": "3600"}))
        with pytest.raises(RateLimited) as info:
            chat(server, sleeps).complete(REQ)
        assert (info.value.retry_after, info.value.attempts) == (3600.0, 1)
        assert sleeps.waits == []

    def test_overloaded_503_then_success_uses_backoff(
        self, server: ScriptedServer, sleeps: SleepRecorder
    ) -> None:
        server.push(Step(503, "upstream unavailable"), Step(body=chat_reply("ok")))
        provider = chat(server, sleeps, retry=RetrySettings(initial_wait_s=0.25))
        assert provider.complete(REQ).text == "ok"
        assert sleeps.waits == [0.25]

    def test_auth_errors_are_not_retried(
        self, server: ScriptedServer, sleeps: SleepRecorder
    ) -> None:
        server.push(Step(401, openai_error("Incorrect API key provided", code="invalid_api_key")))
        with pytest.raises(ProviderAuthError) as info:
            chat(server, sleeps).complete(REQ)
        assert info.value.status == 401
        assert len(server.received) == 1

    def test_other_bad_requests_are_not_retried(
        self, server: ScriptedServer, sleeps: SleepRecorder
    ) -> None:
        server.push(Step(400, openai_error("Invalid value for 'tool_choice'")))
        with pytest.raises(ProviderRequestError) as info:
            chat(server, sleeps).complete(REQ)
        assert (info.value.status, info.value.kind) == (400, "bad_request")
        assert sleeps.waits == []


class TestOverflow:
    def test_400_context_length_is_an_overflow_with_the_numbers(
        self, server: ScriptedServer, sleeps: SleepRecorder
    ) -> None:
        message = (
            "This model's maximum context length is 128000 tokens. However, your messages "
            "resulted in 130415 tokens. Please reduce the length of the messages."
        )
        server.push(Step(400, openai_error(message, code="context_length_exceeded")))
        with pytest.raises(ProviderOverflow) as info:
            chat(server, sleeps).complete(REQ)
        assert (info.value.tokens, info.value.limit, info.value.status) == (130415, 128000, 400)
        assert info.value.reported is True
        assert len(server.received) == 1

    def test_413_is_an_overflow_without_numbers(
        self, server: ScriptedServer, sleeps: SleepRecorder
    ) -> None:
        server.push(Step(413, "<html><body>413 Request Entity Too Large</body></html>"))
        with pytest.raises(ProviderOverflow) as info:
            chat(server, sleeps).complete(REQ)
        assert (info.value.status, info.value.reported) == (413, False)
        assert sleeps.waits == []

    def test_cerebras_bodiless_400_is_an_overflow(
        self, server: ScriptedServer, sleeps: SleepRecorder
    ) -> None:
        server.push(Step(400, None))
        with pytest.raises(ProviderOverflow) as info:
            chat(server, sleeps).complete(REQ)
        assert info.value.status == 400

    def test_llama_cpp_overflow_numbers_come_from_the_body(
        self, server: ScriptedServer, sleeps: SleepRecorder
    ) -> None:
        body = {
            "error": {
                "code": 400,
                "message": "the request exceeds the available context size. try increasing "
                "the context size or enable context shift",
                "type": "exceed_context_size_error",
                "n_prompt_tokens": 14429,
                "n_ctx": 8192,
            }
        }
        server.push(Step(400, body))
        with pytest.raises(ProviderOverflow) as info:
            chat(server, sleeps).complete(REQ)
        assert (info.value.tokens, info.value.limit) == (14429, 8192)


class TestResponsesApi:
    def test_text_reply_and_request_body(
        self, server: ScriptedServer, sleeps: SleepRecorder
    ) -> None:
        server.push(Step(body=responses_reply("summary", input_tokens=900, cached_tokens=800)))
        out = responses(server, sleeps).complete(REQ)
        assert (out.text, out.finish_reason) == ("summary", "stop")
        assert out.usage == Usage(100, 20, 800, 0)
        [got] = server.received
        assert got.path == "/v1/responses"
        assert got.body == {
            "model": "gpt-test",
            "input": [
                {
                    "type": "message",
                    "role": "user",
                    "content": [{"type": "input_text", "text": "history goes here"}],
                }
            ],
            "instructions": "You summarize.",
            "store": False,
            "max_output_tokens": 4096,
        }

    def test_incomplete_for_max_output_tokens_is_length(
        self, server: ScriptedServer, sleeps: SleepRecorder
    ) -> None:
        reply = responses_reply(
            "## Goal\nhalf", status="incomplete", incomplete_reason="max_output_tokens"
        )
        server.push(Step(body=reply))
        out = responses(server, sleeps).complete(REQ)
        assert (out.finish_reason, out.raw_finish_reason) == ("length", "incomplete")

    def test_function_call_is_reported(self, server: ScriptedServer, sleeps: SleepRecorder) -> None:
        server.push(Step(body=responses_reply(function_calls=[("call_7", "grep", '{"q":"x"}')])))
        out = responses(server, sleeps).complete(REQ)
        assert out.finish_reason == "tool_calls"
        assert out.tool_calls == (ToolCallPart("call_7", "grep", '{"q":"x"}'),)

    def test_context_window_error_is_an_overflow(
        self, server: ScriptedServer, sleeps: SleepRecorder
    ) -> None:
        message = (
            "Your input exceeds the context window of this model. Please adjust your input "
            "and try again."
        )
        server.push(Step(400, openai_error(message, code="context_length_exceeded")))
        with pytest.raises(ProviderOverflow) as info:
            responses(server, sleeps).complete(REQ)
        assert (info.value.reported, info.value.status) == (False, 400)

    def test_streamed_reply(self, server: ScriptedServer, sleeps: SleepRecorder) -> None:
        server.push(Step(events=responses_stream(["sum", "mary"], output_tokens=2)))
        out = responses(server, sleeps).complete(
            CompletionRequest(messages=(user("x"),), stream=True)
        )
        assert (out.text, out.finish_reason, out.usage.output_tokens) == ("summary", "stop", 2)
        assert server.received[0].body["stream"] is True


class TestStreaming:
    def test_streamed_chat_reply_with_usage(
        self, server: ScriptedServer, sleeps: SleepRecorder
    ) -> None:
        server.push(Step(events=chat_stream(["## Go", "al\n", "done"], prompt_tokens=321)))
        out = chat(server, sleeps).complete(CompletionRequest(messages=(user("x"),), stream=True))
        assert (out.text, out.finish_reason) == ("## Goal\ndone", "stop")
        assert out.usage == Usage(321, 3, 0, 0)
        assert server.received[0].body["stream_options"] == {"include_usage": True}

    def test_cancel_during_a_slow_stream_closes_it_promptly(
        self, server: ScriptedServer, sleeps: SleepRecorder
    ) -> None:
        # 100 chunks, one every 0.1 s: the server would stream for 10 s.
        server.push(Step(events=chat_stream(["word "] * 100), delay_s=0.1))
        cancel = threading.Event()
        cancelled = cancel_mid_stream(server, cancel)
        with pytest.raises(Cancelled):
            chat(server, sleeps).complete(REQ, cancel=cancel)
        cancelled_at = cancelled()
        # Promptly: well before the 10 s the stream would take (the margin is for a loaded
        # machine, where a thread may wait a second or more to be scheduled).
        assert time.monotonic() - cancelled_at < 4.0
        deadline = time.monotonic() + 4.0
        while not server.disconnects and time.monotonic() < deadline:
            time.sleep(0.05)
        assert len(server.disconnects) == 1
        assert server.disconnects[0] - cancelled_at < 4.0
        assert len(server.received) == 1

    def test_cancel_while_the_server_is_silent_returns_promptly(
        self, server: ScriptedServer, sleeps: SleepRecorder
    ) -> None:
        server.push(Step(events=chat_stream(["a"])[:2], hold_s=10))
        cancel = threading.Event()
        threading.Timer(0.3, cancel.set).start()
        started = time.monotonic()
        with pytest.raises(Cancelled):
            chat(server, sleeps).complete(REQ, cancel=cancel)
        assert time.monotonic() - started - 0.3 < 1.0

    def test_an_already_set_cancel_sends_nothing(
        self, server: ScriptedServer, sleeps: SleepRecorder
    ) -> None:
        cancel = threading.Event()
        cancel.set()
        with pytest.raises(Cancelled):
            chat(server, sleeps).complete(REQ, cancel=cancel)
        assert server.received == []


class TestConfiguration:
    def test_missing_sdk_names_the_extra(self, monkeypatch: pytest.MonkeyPatch) -> None:
        monkeypatch.setitem(sys.modules, "openai", None)
        with pytest.raises(ConfigError, match=r"pip install 'ctxengine\[openai\]'"):
            OpenAIProvider("gpt-4o", api_key="sk-test")

    def test_missing_key_for_the_official_api_is_a_config_error(self) -> None:
        with pytest.raises(ConfigError, match="OPENAI_API_KEY"):
            OpenAIProvider("gpt-4o")

    def test_key_and_base_url_come_from_the_sdk_variables(
        self, server: ScriptedServer, sleeps: SleepRecorder, monkeypatch: pytest.MonkeyPatch
    ) -> None:
        monkeypatch.setenv("OPENAI_BASE_URL", server.url + "/v1")
        monkeypatch.setenv("OPENAI_API_KEY", "sk-from-env")
        server.push(Step(body=chat_reply("ok")))
        provider = OpenAIProvider("gpt-test", sleep=sleeps)
        provider.complete(REQ)
        assert server.received[0].headers["authorization"] == "Bearer sk-from-env"
        assert provider.max_tokens_param == "max_tokens"

    def test_official_api_uses_max_completion_tokens(self) -> None:
        provider = OpenAIProvider("gpt-5", api_key="sk-test")
        body = provider.chat_body(
            CompletionRequest(messages=(user("x"),), max_output_tokens=50), False
        )
        assert body["max_completion_tokens"] == 50
        assert "max_tokens" not in body
