"""Renderers: exact request bodies for small contexts."""

from projection_helpers import call, result, tool

from ctxengine.model import (
    DocumentPart,
    ImagePart,
    Message,
    NativeCompactionPart,
    ReasoningPart,
    TextPart,
    ToolResultPart,
    assistant,
    system,
    user,
)
from ctxengine.projection import Context
from ctxengine.projection.render import render_anthropic, render_openai
from ctxengine.projection.validate import validate

PNG = ImagePart("image/png", data="iVBORw0KGgo=", width=1920, height=1080)
THOUGHT = ReasoningPart("check both files", signature="sig-1")
SCHEMA = {"name": "read", "description": "Read a file", "parameters": {"type": "object"}}


def context(*messages: Message, tools: tuple[dict[str, object], ...] = ()) -> Context:
    return Context(messages=messages, sources=tuple(None for _ in messages), tools=tools)


EXCHANGE = context(
    system("You are terse."),
    Message("user", (TextPart("what is in this screenshot?"), PNG)),
    Message(
        "assistant",
        (THOUGHT, TextPart("Reading both."), call("a", "read", '{"path": "a.py"}'), call("b")),
    ),
    tool(result("a", "print(1)")),
    Message("tool", (ToolResultPart("b", (TextPart("shot"), PNG), is_error=True),)),
    user("thanks"),
    tools=(SCHEMA,),
)


class TestOpenAI:
    def test_a_parallel_exchange_with_images_renders_to_the_exact_body(self) -> None:
        body = render_openai(EXCHANGE, model="gpt-4.1", max_tokens=1000)
        image = {"type": "image_url", "image_url": {"url": "data:image/png;base64,iVBORw0KGgo="}}
        assert body == {
            "model": "gpt-4.1",
            "messages": [
                {"role": "system", "content": "You are terse."},
                {
                    "role": "user",
                    "content": [{"type": "text", "text": "what is in this screenshot?"}, image],
                },
                {
                    "role": "assistant",
                    "content": "Reading both.",
                    "tool_calls": [
                        {
                            "id": "a",
                            "type": "function",
                            "function": {"name": "read", "arguments": '{"path": "a.py"}'},
                        },
                        {
                            "id": "b",
                            "type": "function",
                            "function": {"name": "bash", "arguments": '{"cmd": "ls"}'},
                        },
                    ],
                },
                {"role": "tool", "tool_call_id": "a", "content": "print(1)"},
                {
                    "role": "tool",
                    "tool_call_id": "b",
                    "content": [
                        {"type": "text", "text": "shot"},
                        {"type": "text", "text": "[image: image/png, 1920×1080]"},
                    ],
                },
                {
                    "role": "user",
                    "content": [
                        {"type": "text", "text": "Images returned by tool call b:"},
                        image,
                    ],
                },
                {"role": "user", "content": "thanks"},
            ],
            "tools": [
                {
                    "type": "function",
                    "function": {
                        "name": "read",
                        "description": "Read a file",
                        "parameters": {"type": "object"},
                    },
                }
            ],
            "max_completion_tokens": 1000,
        }
        assert validate(body, "openai") == []

    def test_a_context_opening_with_an_assistant_message_gets_a_continuing_user_message(
        self,
    ) -> None:
        body = render_openai(context(system("s"), assistant("where was I"), user("go on")))
        assert body == {
            "messages": [
                {"role": "system", "content": "s"},
                {"role": "user", "content": "(continuing)"},
                {"role": "assistant", "content": "where was I"},
                {"role": "user", "content": "go on"},
            ]
        }

    def test_reasoning_only_and_native_compaction_messages_are_skipped_and_documents_inlined(
        self,
    ) -> None:
        doc = DocumentPart("text/markdown", title="NOTES.md", text="# notes")
        pdf = DocumentPart("application/pdf", title="spec.pdf", data="JVBERi0=")
        native = NativeCompactionPart("openai", '{"type": "compaction", "encrypted": "x"}')
        body = render_openai(
            context(
                Message("user", (doc, pdf)),
                Message("assistant", (ReasoningPart("hmm", signature="s"),)),
                Message("assistant", (native, TextPart("ok"))),
            )
        )
        assert body["messages"] == [
            {
                "role": "user",
                "content": [
                    {"type": "text", "text": "NOTES.md\n# notes"},
                    {
                        "type": "file",
                        "file": {
                            "filename": "spec.pdf",
                            "file_data": "data:application/pdf;base64,JVBERi0=",
                        },
                    },
                ],
            },
            {"role": "assistant", "content": "ok"},
        ]


class TestAnthropic:
    def test_a_parallel_exchange_with_images_renders_to_the_exact_body(self) -> None:
        body = render_anthropic(EXCHANGE, model="claude-sonnet-4-5", max_tokens=1000)
        image = {
            "type": "image",
            "source": {"type": "base64", "media_type": "image/png", "data": "iVBORw0KGgo="},
        }
        assert body == {
            "model": "claude-sonnet-4-5",
            "max_tokens": 1000,
            "system": "You are terse.",
            "messages": [
                {
                    "role": "user",
                    "content": [{"type": "text", "text": "what is in this screenshot?"}, image],
                },
                {
                    "role": "assistant",
                    "content": [
                        {"type": "thinking", "thinking": "check both files", "signature": "sig-1"},
                        {"type": "text", "text": "Reading both."},
                        {"type": "tool_use", "id": "a", "name": "read", "input": {"path": "a.py"}},
                        {"type": "tool_use", "id": "b", "name": "bash", "input": {"cmd": "ls"}},
                    ],
                },
                {
                    "role": "user",
                    "content": [
                        {
                            "type": "tool_result",
                            "tool_use_id": "a",
                            "content": [{"type": "text", "text": "print(1)"}],
                        },
                        {
                            "type": "tool_result",
                            "tool_use_id": "b",
                            "content": [{"type": "text", "text": "shot"}, image],
                            "is_error": True,
                        },
                        {"type": "text", "text": "thanks"},
                    ],
                },
            ],
            "tools": [
                {
                    "name": "read",
                    "description": "Read a file",
                    "input_schema": {"type": "object"},
                }
            ],
        }
        assert validate(body, "anthropic") == []

    def test_system_messages_anywhere_go_to_the_top_level_system_and_roles_are_merged(
        self,
    ) -> None:
        body = render_anthropic(
            context(
                system("first"),
                Message("developer", (TextPart("second"),)),
                assistant("resuming"),
                system("mode: plan"),
                assistant("planned"),
                user("ok"),
                user("   "),
                user("go"),
            )
        )
        assert body == {
            "system": "first\n\nsecond\n\nmode: plan",
            "messages": [
                {"role": "user", "content": [{"type": "text", "text": "(continuing)"}]},
                {
                    "role": "assistant",
                    "content": [
                        {"type": "text", "text": "resuming"},
                        {"type": "text", "text": "planned"},
                    ],
                },
                {
                    "role": "user",
                    "content": [{"type": "text", "text": "ok"}, {"type": "text", "text": "go"}],
                },
            ],
        }

    def test_compaction_then_thinking_lead_a_merged_reply_and_foreign_reasoning_is_dropped(
        self,
    ) -> None:
        foreign = ReasoningPart("", signature="gAAAA-openai", meta={"provider": "openai"})
        redacted = ReasoningPart("", signature="REDACTED", redacted=True)
        native = NativeCompactionPart("anthropic", '{"type": "compaction", "content": "sum"}')
        body = render_anthropic(
            context(
                user("go"),
                Message("assistant", (TextPart("part one"), ReasoningPart("unsigned"), foreign)),
                Message("assistant", (redacted, native, call("a", "noargs", ""))),
                tool(result("a", "")),
            )
        )
        assert body["messages"][1:] == [
            {
                "role": "assistant",
                "content": [
                    {"type": "compaction", "content": "sum"},
                    {"type": "redacted_thinking", "data": "REDACTED"},
                    {"type": "text", "text": "part one"},
                    {"type": "tool_use", "id": "a", "name": "noargs", "input": {}},
                ],
            },
            {"role": "user", "content": [{"type": "tool_result", "tool_use_id": "a"}]},
        ]
        assert validate(body, "anthropic") == []

    def test_arguments_that_are_not_a_json_object_are_kept_raw(self) -> None:
        body = render_anthropic(context(user("go"), assistant("", call("a", "sh", "ls -la"))))
        assert body["messages"][1]["content"] == [
            {"type": "tool_use", "id": "a", "name": "sh", "input": {"_raw": "ls -la"}}
        ]

    def test_a_native_compaction_of_the_other_provider_is_dropped(self) -> None:
        native = NativeCompactionPart("openai", '{"type": "compaction"}')
        body = render_anthropic(context(user("go"), Message("assistant", (native, TextPart("x")))))
        assert body["messages"][1]["content"] == [{"type": "text", "text": "x"}]


REUSED = "call_5iDdbOYybq7L19vqXmR0DPaU#2"
LONG = "fc_68a1b2c3d4e5f60718293a4b5c6d7e8f90a1b2c3d4e5f607"
ODD = {"name": "my.tool/v2", "parameters": {"type": "object"}}
#: A reused id (importers add ``#n``), a source id with ``.`` and ``:``, an id over 40
#: characters and a tool name with ``.`` and ``/``; "bash" is called but never declared.
ODD_IDS = context(
    user("go"),
    assistant("", call(REUSED, "my.tool/v2", "{}"), call("t.1:x"), call(LONG)),
    tool(result(REUSED, "a"), result("t.1:x", "b")),
    Message("tool", (ToolResultPart(LONG, (PNG,)),)),
    tools=(ODD, ODD),
)


class TestIdsAndNames:
    def test_anthropic_gets_valid_ids_and_names_the_same_in_calls_results_and_tools(
        self,
    ) -> None:
        body = render_anthropic(ODD_IDS)
        reused = "call_5iDdbOYybq7L19vqXmR0DPaU_2_c90a0b5062"
        assert body["messages"][1:] == [
            {
                "role": "assistant",
                "content": [
                    {
                        "type": "tool_use",
                        "id": reused,
                        "name": "my_tool_v2_9fb9626a25",
                        "input": {},
                    },
                    {
                        "type": "tool_use",
                        "id": "t_1_x_704f315ccc",
                        "name": "bash",
                        "input": {"cmd": "ls"},
                    },
                    {"type": "tool_use", "id": LONG, "name": "bash", "input": {"cmd": "ls"}},
                ],
            },
            {
                "role": "user",
                "content": [
                    {
                        "type": "tool_result",
                        "tool_use_id": reused,
                        "content": [{"type": "text", "text": "a"}],
                    },
                    {
                        "type": "tool_result",
                        "tool_use_id": "t_1_x_704f315ccc",
                        "content": [{"type": "text", "text": "b"}],
                    },
                    {
                        "type": "tool_result",
                        "tool_use_id": LONG,
                        "content": [
                            {
                                "type": "image",
                                "source": {
                                    "type": "base64",
                                    "media_type": "image/png",
                                    "data": "iVBORw0KGgo=",
                                },
                            }
                        ],
                    },
                ],
            },
        ]
        assert body["tools"] == [
            {"name": "my_tool_v2_9fb9626a25", "input_schema": {"type": "object"}}
        ]
        assert validate(body, "anthropic") == []

    def test_openai_cuts_the_long_id_everywhere_and_keeps_the_others(self) -> None:
        body = render_openai(ODD_IDS)
        cut = "fc_68a1b2c3d4e5f60718293a4b5c_e8b7aa8455"
        assert body["messages"][1:] == [
            {
                "role": "assistant",
                "content": None,
                "tool_calls": [
                    {
                        "id": REUSED,
                        "type": "function",
                        "function": {"name": "my_tool_v2_9fb9626a25", "arguments": "{}"},
                    },
                    {
                        "id": "t.1:x",
                        "type": "function",
                        "function": {"name": "bash", "arguments": '{"cmd": "ls"}'},
                    },
                    {
                        "id": cut,
                        "type": "function",
                        "function": {"name": "bash", "arguments": '{"cmd": "ls"}'},
                    },
                ],
            },
            {"role": "tool", "tool_call_id": REUSED, "content": "a"},
            {"role": "tool", "tool_call_id": "t.1:x", "content": "b"},
            {"role": "tool", "tool_call_id": cut, "content": "[image: image/png, 1920×1080]"},
            {
                "role": "user",
                "content": [
                    {"type": "text", "text": f"Images returned by tool call {cut}:"},
                    {
                        "type": "image_url",
                        "image_url": {"url": "data:image/png;base64,iVBORw0KGgo="},
                    },
                ],
            },
        ]
        assert body["tools"] == [
            {
                "type": "function",
                "function": {"name": "my_tool_v2_9fb9626a25", "parameters": {"type": "object"}},
            }
        ]
        assert validate(body, "openai") == []


class TestDeclareTools:
    def test_anthropic_declares_each_called_but_undeclared_tool_once_after_the_schemas(
        self,
    ) -> None:
        body = render_anthropic(
            ODD_IDS, model="claude-sonnet-4-5", max_tokens=64, declare_tools=True
        )
        assert body["tools"] == [
            {"name": "my_tool_v2_9fb9626a25", "input_schema": {"type": "object"}},
            {
                "name": "bash",
                "description": "(schema not recorded in the transcript)",
                "input_schema": {"type": "object"},
            },
        ]
        assert validate(body, "anthropic", strict=True) == []

    def test_openai_declares_the_undeclared_function(self) -> None:
        body = render_openai(EXCHANGE, model="gpt-4.1", declare_tools=True)
        assert body["tools"] == [
            {
                "type": "function",
                "function": {
                    "name": "read",
                    "description": "Read a file",
                    "parameters": {"type": "object"},
                },
            },
            {
                "type": "function",
                "function": {
                    "name": "bash",
                    "description": "(schema not recorded in the transcript)",
                    "parameters": {"type": "object"},
                },
            },
        ]
        assert validate(body, "openai", strict=True) == []

    def test_without_it_the_body_is_valid_but_not_ready_to_send(self) -> None:
        assert "tools" not in render_anthropic(context(user("go"), assistant("", call("a"))))
        assert validate(
            render_anthropic(EXCHANGE, model="claude-sonnet-4-5"), "anthropic", strict=True
        ) == [
            "max_tokens is missing (required)",
            "messages[1].content[3]: tool 'bash' is not declared in tools",
        ]
        assert validate(render_openai(EXCHANGE), "openai", strict=True) == [
            "model must be a non-empty string (required)",
            "messages[2].tool_calls[1]: tool 'bash' is not declared in tools",
        ]
        assert render_openai(context(user("hi")), declare_tools=True) == {
            "messages": [{"role": "user", "content": "hi"}]
        }
