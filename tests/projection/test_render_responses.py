"""The OpenAI Responses renderer and the provider-name registry: exact bodies and errors."""

from __future__ import annotations

import pytest
from projection_helpers import call, tool

from ctxengine.errors import ConfigError
from ctxengine.model import (
    DocumentPart,
    ImagePart,
    Message,
    NativeCompactionPart,
    ReasoningPart,
    TextPart,
    ToolResultPart,
    system,
    user,
)
from ctxengine.projection import Context
from ctxengine.projection.render import (
    RENDERERS,
    original_tool_names,
    render_anthropic,
    render_openai,
    render_openai_responses,
    renderer_for,
)

PNG = ImagePart("image/png", data="iVBORw0KGgo=", width=2, height=1)
OPENAI_THOUGHT = ReasoningPart("plan", "enc-1", meta={"provider": "openai"})
SCHEMA = {"name": "read", "description": "Read a file", "parameters": {"type": "object"}}


def context(*messages: Message, tools: tuple[dict[str, object], ...] = ()) -> Context:
    return Context(messages=messages, sources=tuple(None for _ in messages), tools=tools)


class TestResponsesRenderer:
    def test_every_part_kind_renders_to_the_exact_body(self) -> None:
        pdf = DocumentPart("application/pdf", data="JVBERi0=", title="spec.pdf")
        notes = DocumentPart("text/plain", text="line one", title="notes.txt")
        ctx = context(
            system("You are terse."),
            Message("user", (TextPart("look"), PNG, pdf, notes, TextPart(""))),
            Message(
                "assistant",
                (
                    NativeCompactionPart(
                        "openai", '{"type":"compaction","id":"cmp_1","encrypted_content":"enc-c"}'
                    ),
                    OPENAI_THOUGHT,
                    TextPart("Reading "),
                    TextPart("it."),
                    call("c1", "read", '{"path": "a.py"}'),
                    NativeCompactionPart("anthropic", '{"type":"compaction","content":"s"}'),
                ),
            ),
            tool(ToolResultPart("c1", (TextPart("print(1)"), PNG, notes))),
            tools=(SCHEMA,),
        )
        # The input holds a compaction item: the system prompt goes to instructions.
        assert render_openai_responses(ctx, model="gpt-5", max_tokens=500) == {
            "model": "gpt-5",
            "instructions": "You are terse.",
            "input": [
                {
                    "type": "message",
                    "role": "user",
                    "content": [
                        {"type": "input_text", "text": "look"},
                        {"type": "input_image", "image_url": "data:image/png;base64,iVBORw0KGgo="},
                        {
                            "type": "input_file",
                            "filename": "spec.pdf",
                            "file_data": "data:application/pdf;base64,JVBERi0=",
                        },
                        {"type": "input_text", "text": "notes.txt\nline one"},
                    ],
                },
                {"type": "compaction", "id": "cmp_1", "encrypted_content": "enc-c"},
                {
                    "type": "reasoning",
                    "summary": [{"type": "summary_text", "text": "plan"}],
                    "encrypted_content": "enc-1",
                },
                {
                    "type": "message",
                    "role": "assistant",
                    "content": [{"type": "output_text", "text": "Reading it."}],
                },
                {
                    "type": "function_call",
                    "call_id": "c1",
                    "name": "read",
                    "arguments": '{"path": "a.py"}',
                },
                {
                    "type": "function_call_output",
                    "call_id": "c1",
                    "output": "print(1)\n[image: image/png, 2×1]\nnotes.txt\nline one",
                },
            ],
            "store": False,
            "tools": [
                {
                    "type": "function",
                    "name": "read",
                    "description": "Read a file",
                    "parameters": {"type": "object"},
                }
            ],
            "max_output_tokens": 500,
        }

    def test_media_outside_user_messages_become_stand_ins(self) -> None:
        ctx = context(
            Message("system", (TextPart("rules"), PNG)),
            Message("assistant", (TextPart("see "), PNG)),
        )
        assert render_openai_responses(ctx)["input"] == [
            {
                "type": "message",
                "role": "system",
                "content": [
                    {"type": "input_text", "text": "rules"},
                    {"type": "input_text", "text": "[image: image/png, 2×1]"},
                ],
            },
            {
                "type": "message",
                "role": "assistant",
                "content": [{"type": "output_text", "text": "see [image: image/png, 2×1]"}],
            },
        ]

    def test_undeclared_tools_and_invalid_names(self) -> None:
        ctx = context(user("go"), Message("assistant", (call("c1", "my.tool/v2", "{}"),)))
        body = render_openai_responses(ctx, declare_tools=True)
        wire = "my_tool_v2_9fb9626a25"
        assert body["input"][1]["name"] == wire
        assert body["tools"] == [
            {
                "type": "function",
                "name": wire,
                "description": "(schema not recorded in the transcript)",
                "parameters": {"type": "object"},
            }
        ]
        assert "tools" not in render_openai_responses(ctx)
        assert set(render_openai_responses(context(user("x")))) == {"input", "store"}


class TestRegistry:
    def test_one_renderer_per_provider_name(self) -> None:
        assert dict(RENDERERS) == {
            "openai": render_openai,
            "openai-responses": render_openai_responses,
            "anthropic": render_anthropic,
        }
        assert renderer_for("anthropic") is render_anthropic

    def test_an_unknown_name_is_a_configuration_error_listing_the_known_ones(self) -> None:
        with pytest.raises(ConfigError) as info:
            renderer_for("gemini")
        assert str(info.value) == (
            "no renderer for provider 'gemini'; known: anthropic, openai, openai-responses"
        )

    @pytest.mark.parametrize("name", ["openai", "openai-responses", "anthropic"])
    def test_every_renderer_takes_the_same_arguments(self, name: str) -> None:
        ctx = context(user("go"))
        body = renderer_for(name)(ctx, model="m", max_tokens=7, declare_tools=True, cache=True)
        assert body["model"] == "m"
        assert 7 in body.values()

    def test_original_tool_names_lists_only_replaced_names(self) -> None:
        ctx = context(
            user("go"),
            Message("assistant", (call("c1", "bash"), call("c2", "a.b"))),
            tools=({"name": "my.tool/v2", "parameters": {}}, SCHEMA),
        )
        assert original_tool_names(ctx, "openai") == {
            "my_tool_v2_9fb9626a25": "my.tool/v2",
            "a_b_ab1f84b1e7": "a.b",
        }
        assert original_tool_names(context(user("go")), "anthropic") == {}
        with pytest.raises(ConfigError, match="'gemini'"):
            original_tool_names(ctx, "gemini")
