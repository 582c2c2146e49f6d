"""Native compaction on the wire, through the official SDKs against a local server: the
request fields and beta headers, and the compaction block or item read back exactly as the
server wrote it (whole and streamed)."""

from __future__ import annotations

import json

import pytest
from native_helpers import (
    ANTHROPIC_BLOCK,
    ANTHROPIC_STREAMED_BLOCK,
    OPENAI_ITEM,
    anthropic_reply_step,
    anthropic_stream_step,
    anthropic_text,
    compacted_body,
    responses_message,
    responses_reply_step,
    responses_stream_step,
)
from servers import ScriptedServer, Step

from ctxengine.errors import ConfigError, ProviderRequestError
from ctxengine.model import NativeCompactionPart, Usage, user
from ctxengine.policy import Policy
from ctxengine.providers import AnthropicProvider, OpenAIProvider, RetrySettings
from ctxengine.providers.base import CompletionRequest
from ctxengine.providers.native import (
    NativeSettings,
    anthropic_on_demand,
    anthropic_threshold,
    anthropic_usages,
    openai_threshold,
)

ONE = RetrySettings(max_attempts=1)


def anthropic(server: ScriptedServer) -> AnthropicProvider:
    return AnthropicProvider("claude-sonnet-4-6", api_key="k", base_url=server.url, retry=ONE)


def responses(server: ScriptedServer) -> OpenAIProvider:
    return OpenAIProvider(
        "gpt-5.2", api="responses", api_key="k", base_url=server.url + "/v1", retry=ONE
    )


class TestAnthropicRequestFields:
    def test_threshold_edit_with_instructions_pause_and_context_editing(self) -> None:
        policy = Policy(
            native_clear_tool_uses={"trigger_tokens": 30_000, "keep_tool_uses": 2},
            native_clear_thinking={"keep_turns": 1},
        )
        edits = (
            policy.native_clear_tool_uses.edit(),  # type: ignore[union-attr]
            policy.native_clear_thinking.edit(),  # type: ignore[union-attr]
        )
        settings = NativeSettings(
            trigger_tokens=60_000,
            instructions="Keep file paths.",
            pause_after_compaction=True,
            edits=edits,
        )
        fields, betas = anthropic_threshold(settings)
        assert fields == {
            "context_management": {
                "edits": [
                    {
                        "type": "clear_thinking_20251015",
                        "keep": {"type": "thinking_turns", "value": 1},
                    },
                    {
                        "type": "clear_tool_uses_20250919",
                        "trigger": {"type": "input_tokens", "value": 30_000},
                        "keep": {"type": "tool_uses", "value": 2},
                    },
                    {
                        "type": "compact_20260112",
                        "trigger": {"type": "input_tokens", "value": 60_000},
                        "instructions": "Keep file paths.",
                        "pause_after_compaction": True,
                    },
                ]
            }
        }
        assert betas == ("compact-2026-01-12", "context-management-2025-06-27")

    def test_a_trigger_under_the_minimum_is_refused(self) -> None:
        with pytest.raises(ConfigError, match="49,999 tokens is below the API's minimum of 50,000"):
            anthropic_threshold(NativeSettings(trigger_tokens=49_999))
        fields, _ = anthropic_threshold(NativeSettings(trigger_tokens=50_000))
        assert fields["context_management"]["edits"][0]["trigger"]["value"] == 50_000

    def test_no_trigger_leaves_the_api_default_and_editing_alone_needs_no_compact_beta(
        self,
    ) -> None:
        assert anthropic_threshold(NativeSettings()) == (
            {"context_management": {"edits": [{"type": "compact_20260112"}]}},
            ("compact-2026-01-12",),
        )
        edit = {"type": "clear_thinking_20251015", "keep": "all"}
        assert anthropic_threshold(NativeSettings(compact=False, edits=(edit,))) == (
            {"context_management": {"edits": [edit]}},
            ("context-management-2025-06-27",),
        )
        assert anthropic_threshold(NativeSettings(compact=False)) == ({}, ())

    def test_on_demand_request_drops_what_a_compaction_request_may_not_carry(self) -> None:
        body = {
            "model": "m",
            "messages": [{"role": "user", "content": "x"}],
            "context_management": {"edits": []},
            "stop_sequences": ["END"],
            "tool_choice": {"type": "any"},
        }
        out, betas = anthropic_on_demand(body, "  ")
        assert out == {
            "model": "m",
            "messages": [{"role": "user", "content": "x"}],
            "compaction": {"type": "summarize"},
        }
        assert betas == ("compact-2026-09-04",)
        out, _ = anthropic_on_demand({**body, "tool_choice": {"type": "auto"}}, "Focus on tests.")
        assert out["compaction"] == {"type": "summarize", "instructions": "Focus on tests."}
        assert out["tool_choice"] == {"type": "auto"}

    def test_openai_threshold(self) -> None:
        assert openai_threshold(NativeSettings(trigger_tokens=90_000)) == {
            "context_management": [{"type": "compaction", "compact_threshold": 90_000}]
        }
        assert openai_threshold(NativeSettings()) == {}
        assert openai_threshold(NativeSettings(compact=False, trigger_tokens=9)) == {}

    def test_usage_iterations_split_the_reply_from_its_compaction(self) -> None:
        usage = {
            "input_tokens": 5,
            "output_tokens": 50,
            "iterations": [
                {"type": "compaction", "input_tokens": 180_000, "output_tokens": 3_000},
                {"type": "message", "input_tokens": 4_000, "output_tokens": 20},
                {"type": "message", "input_tokens": 4_100, "output_tokens": 30},
            ],
        }
        assert anthropic_usages(usage) == (Usage(4_100, 30), Usage(180_000, 3_000))
        assert anthropic_usages({"input_tokens": 7, "output_tokens": 2}) == (Usage(7, 2), None)


class TestAnthropicReplies:
    @pytest.mark.parametrize("stream", [False, True])
    def test_a_compaction_block_is_read_byte_exact_with_its_usage(
        self, server: ScriptedServer, stream: bool
    ) -> None:
        if stream:
            server.push(anthropic_stream_step("after"))
        else:
            server.push(anthropic_reply_step([ANTHROPIC_BLOCK, anthropic_text("after")]))
        request = CompletionRequest(
            messages=(user("go"),), stream=stream, native=NativeSettings(trigger_tokens=80_000)
        )
        reply = anthropic(server).complete(request)
        expected = ANTHROPIC_STREAMED_BLOCK if stream else ANTHROPIC_BLOCK
        assert reply.native == (NativeCompactionPart("anthropic", expected),)
        assert reply.native[0].payload == expected
        assert reply.text == "after"
        assert reply.usage == (Usage(800, 30) if stream else Usage(900, 40))
        assert reply.native_usage == (Usage(70_000, 500) if stream else Usage(61_000, 700))
        sent = server.received[0]
        assert sent.headers["anthropic-beta"] == "compact-2026-01-12"
        assert sent.body["context_management"] == {
            "edits": [
                {"type": "compact_20260112", "trigger": {"type": "input_tokens", "value": 80_000}}
            ]
        }
        message = reply.to_message()
        assert [p.kind for p in message.parts] == ["native_compaction", "text"]
        assert message.meta["native_usage"]["input_tokens"] == (70_000 if stream else 61_000)

    def test_on_demand_compaction(self, server: ScriptedServer) -> None:
        server.push(anthropic_reply_step([ANTHROPIC_BLOCK], stop_reason="compaction"))
        reply = anthropic(server).compact(
            CompletionRequest(messages=(user("a long conversation"),)), instructions="Be brief."
        )
        assert reply.finish_reason == "compaction"
        assert reply.native[0].payload == ANTHROPIC_BLOCK
        sent = server.received[0]
        assert sent.path == "/v1/messages"
        assert sent.headers["anthropic-beta"] == "compact-2026-09-04"
        assert sent.body["compaction"] == {"type": "summarize", "instructions": "Be brief."}
        assert "context_management" not in sent.body
        assert reply.to_message().usage is None

    def test_on_demand_without_a_block_is_an_error(self, server: ScriptedServer) -> None:
        server.push(anthropic_reply_step([anthropic_text("no")], compaction_usage=None))
        with pytest.raises(ProviderRequestError, match="returned no compaction block"):
            anthropic(server).compact(CompletionRequest(messages=(user("x"),)))

    def test_an_error_event_in_a_stream_is_classified_by_its_type(
        self, server: ScriptedServer
    ) -> None:
        error = {
            "type": "error",
            "error": {"type": "invalid_request_error", "message": "bad block"},
        }
        server.push(Step(events=[("error", error)]))
        with pytest.raises(ProviderRequestError, match="bad block") as caught:
            anthropic(server).complete(CompletionRequest(messages=(user("x"),), stream=True))
        assert caught.value.status == 400


class TestOpenAIReplies:
    @pytest.mark.parametrize("stream", [False, True])
    def test_an_encrypted_compaction_item_is_read_byte_exact(
        self, server: ScriptedServer, stream: bool
    ) -> None:
        items = [OPENAI_ITEM, responses_message("after")]
        server.push(responses_stream_step(items) if stream else responses_reply_step(items))
        request = CompletionRequest(
            messages=(user("go"),), stream=stream, native=NativeSettings(trigger_tokens=90_000)
        )
        reply = responses(server).complete(request)
        assert reply.native == (NativeCompactionPart("openai", OPENAI_ITEM),)
        assert reply.text == "after"
        assert server.received[0].body["context_management"] == [
            {"type": "compaction", "compact_threshold": 90_000}
        ]

    def test_the_standalone_compact_endpoint(self, server: ScriptedServer) -> None:
        server.push(
            Step(
                body=compacted_body(["first ask", "second ask"]),
                headers={"content-type": "application/json"},
            )
        )
        reply = responses(server).compact(
            CompletionRequest(system="Be terse.", messages=(user("first ask"), user("second ask")))
        )
        sent = server.received[0]
        assert sent.path == "/v1/responses/compact"
        assert set(sent.body) == {"model", "input", "instructions"}
        assert sent.body["instructions"] == "Be terse."
        assert [json.loads(p.payload)["type"] for p in reply.native] == [
            "message",
            "message",
            "compaction",
        ]
        assert reply.native[-1].payload == OPENAI_ITEM
        assert reply.native_usage == Usage(5_000, 300)
        assert reply.finish_reason == "compaction"

    def test_a_compact_reply_without_one_compaction_item_is_an_error(
        self, server: ScriptedServer
    ) -> None:
        body = '{"id":"c","object":"response.compaction","output":[],"usage":null}'
        server.push(Step(body=body, headers={"content-type": "application/json"}))
        with pytest.raises(ProviderRequestError, match="holds 0 compaction items"):
            responses(server).compact(CompletionRequest(messages=(user("x"),)))

    def test_chat_completions_has_no_native_compaction(self) -> None:
        chat = OpenAIProvider("gpt-4o", api_key="k", base_url="http://127.0.0.1:9/v1", retry=ONE)
        with pytest.raises(NotImplementedError, match="needs the Responses API"):
            chat.compact(CompletionRequest(messages=(user("x"),)))
