"""``validate``: one exact problem line per violated protocol invariant."""

from typing import Any

import pytest

import ctxengine
from ctxengine.errors import InvalidRequest
from ctxengine.projection.validate import ensure_valid, validate


def fn_call(cid: str, args: Any = "{}") -> dict[str, Any]:
    return {"id": cid, "type": "function", "function": {"name": "bash", "arguments": args}}


def tool_msg(cid: str) -> dict[str, Any]:
    return {"role": "tool", "tool_call_id": cid, "content": "ok"}


USER = {"role": "user", "content": "go"}


class TestOpenAIRules:
    def test_a_valid_body_has_no_problems(self) -> None:
        body = {
            "messages": [
                USER,
                {"role": "assistant", "content": None, "tool_calls": [fn_call("a"), fn_call("b")]},
                tool_msg("b"),
                tool_msg("a"),
                {"role": "assistant", "content": "done"},
            ]
        }
        assert validate(body, "openai") == []

    def test_a_duplicate_result_and_an_orphan_result_are_reported(self) -> None:
        body = {
            "messages": [
                USER,
                {"role": "assistant", "content": None, "tool_calls": [fn_call("a")]},
                tool_msg("a"),
                tool_msg("a"),
                tool_msg("zz"),
            ]
        }
        assert validate(body, "openai") == [
            "messages[3]: duplicate result for 'a'",
            "messages[4]: orphan result for 'zz' (no such call in messages[1])",
        ]

    def test_an_unanswered_call_before_a_user_message_and_at_the_end_is_reported(self) -> None:
        body = {
            "messages": [
                USER,
                {"role": "assistant", "content": None, "tool_calls": [fn_call("a"), fn_call("b")]},
                tool_msg("a"),
                USER,
                {"role": "assistant", "content": None, "tool_calls": [fn_call("c")]},
            ]
        }
        assert validate(body, "openai") == [
            "messages[1]: tool calls ['b'] not answered before messages[3] (user)",
            "messages[4]: tool calls ['c'] not answered (the request ends)",
        ]

    def test_a_result_after_a_user_message_follows_no_call(self) -> None:
        body = {"messages": [USER, tool_msg("a")]}
        assert validate(body, "openai") == [
            "messages[1]: result for 'a' does not follow an assistant message with tool_calls"
        ]

    def test_roles_arguments_and_the_missing_user_message_are_reported(self) -> None:
        body = {
            "messages": [
                {"role": "system", "content": "s"},
                {"role": "bot", "content": "x"},
                {"role": "assistant", "content": None, "tool_calls": [fn_call("a", {"x": 1})]},
                tool_msg("a"),
                {"role": "assistant", "content": None},
            ]
        }
        assert validate(body, "openai") == [
            "messages[1]: invalid role 'bot'",
            "messages[2].tool_calls[0]: function.arguments must be a string",
            "messages[4]: assistant message has neither content nor tool_calls",
            "no user message",
        ]


def thinking(signature: str | None = "sig") -> dict[str, Any]:
    block: dict[str, Any] = {"type": "thinking", "thinking": "hm"}
    if signature is not None:
        block["signature"] = signature
    return block


def use(uid: str) -> dict[str, Any]:
    return {"type": "tool_use", "id": uid, "name": "bash", "input": {}}


def res(uid: str) -> dict[str, Any]:
    return {"type": "tool_result", "tool_use_id": uid, "content": "ok"}


def text(t: str) -> dict[str, Any]:
    return {"type": "text", "text": t}


class TestAnthropicRules:
    def test_a_valid_body_has_no_problems(self) -> None:
        body = {
            "system": "s",
            "messages": [
                {"role": "user", "content": "go"},
                {"role": "assistant", "content": [thinking(), use("a"), use("b")]},
                {"role": "user", "content": [res("b"), res("a"), text("and?")]},
            ],
        }
        assert validate(body, "anthropic") == []

    def test_roles_must_alternate_start_with_user_and_a_system_message_precede_assistant(
        self,
    ) -> None:
        body = {
            "messages": [
                {"role": "assistant", "content": "hi"},
                {"role": "assistant", "content": "again"},
                {"role": "system", "content": "s"},
                {"role": "user", "content": ""},
                {"role": "tool", "content": "x"},
            ]
        }
        assert validate(body, "anthropic") == [
            "messages[0]: the first message must be a user message",
            "messages[1]: two assistant messages in a row (roles must alternate)",
            "messages[2]: a system message must precede an assistant message or end the request",
            "messages[3]: empty content",
            "messages[4]: invalid role 'tool' (system goes in the top-level field)",
        ]

    def test_mid_conversation_system_messages(self) -> None:
        ok = {
            "messages": [
                {"role": "user", "content": "go"},
                {"role": "system", "content": [text("rules")]},
                {"role": "system", "content": "pins"},
                {"role": "assistant", "content": "ok"},
                {"role": "user", "content": "next"},
                {"role": "system", "content": "state"},
            ]
        }
        assert validate(ok, "anthropic") == []
        bad = {
            "messages": [
                {"role": "system", "content": "first"},
                {"role": "user", "content": "go"},
                {"role": "system", "content": [res("a")]},
                {"role": "assistant", "content": "ok"},
                {"role": "system", "content": "s"},
                {"role": "assistant", "content": "again"},
            ]
        }
        assert validate(bad, "anthropic") == [
            "messages[0]: a system message before the first user or assistant message (the "
            "initial system prompt goes in the top-level field)",
            "messages[2].content[0]: tool_result block not allowed in a system message",
            "messages[5]: two assistant messages in a row (roles must alternate)",
        ]

    def test_at_most_four_cache_control_markers(self) -> None:
        mark = {"type": "ephemeral"}
        body = {
            "system": [{"type": "text", "text": "s", "cache_control": mark}],
            "tools": [{"name": "t", "input_schema": {"type": "object"}, "cache_control": mark}],
            "messages": [
                {"role": "user", "content": [{"type": "text", "text": "a", "cache_control": mark}]},
                {"role": "assistant", "content": [use("a")]},
                {
                    "role": "user",
                    "content": [
                        {
                            **res("a"),
                            "content": [{"type": "text", "text": "r", "cache_control": mark}],
                        },
                        {"type": "text", "text": "b", "cache_control": mark},
                    ],
                },
            ],
        }
        assert validate(body, "anthropic") == [
            "5 cache_control markers (at most 4): tools[0], system[0], messages[0].content[0], "
            "messages[2].content[0].content[0], messages[2].content[1]"
        ]

    def test_every_tool_use_needs_a_result_in_the_next_message_with_results_first(self) -> None:
        body = {
            "messages": [
                {"role": "user", "content": "go"},
                {"role": "assistant", "content": [use("a"), use("b")]},
                {"role": "user", "content": [text("wait"), res("a"), res("a"), res("x")]},
                {"role": "assistant", "content": [use("a")]},
            ]
        }
        assert validate(body, "anthropic") == [
            "messages[2].content[1]: tool_result blocks must come before every other block",
            "messages[2].content[2]: tool_result blocks must come before every other block",
            "messages[2].content[3]: tool_result blocks must come before every other block",
            "messages[2].content[2]: duplicate tool_result for 'a'",
            "messages[2].content[3]: orphan tool_result for 'x'",
            "messages[2]: tool_use ['b'] of the previous message not answered",
            "messages[3]: tool_use id 'a' used twice in the request",
            "messages[3]: tool_use ['a'] not answered",
        ]

    def test_thinking_needs_a_signature_leads_the_reply_and_never_appears_in_user_turns(
        self,
    ) -> None:
        body = {
            "messages": [
                {"role": "user", "content": [thinking()]},
                {"role": "assistant", "content": [text("x"), thinking(None)]},
                {"role": "user", "content": [text("")]},
            ]
        }
        assert validate(body, "anthropic") == [
            "messages[0].content[0]: thinking block not allowed in a user message",
            "messages[1].content[1]: thinking blocks must come before every other block",
            "messages[1].content[1]: thinking block without a signature",
            "messages[2].content[0]: empty text block",
        ]

    def test_an_unanswered_tool_use_before_an_assistant_turn_is_reported(self) -> None:
        body = {
            "messages": [
                {"role": "user", "content": "go"},
                {"role": "assistant", "content": [use("a")]},
                {"role": "assistant", "content": "done"},
            ]
        }
        assert validate(body, "anthropic") == [
            "messages[2]: two assistant messages in a row (roles must alternate)",
            "messages[1]: tool_use ['a'] not answered",
        ]


class TestEntryPoints:
    def test_validate_is_public_and_refuses_an_unknown_provider(self) -> None:
        assert ctxengine.validate is validate
        with pytest.raises(ValueError, match="unknown provider 'gemini'"):
            validate({}, "gemini")

    def test_ensure_valid_raises_with_every_problem(self) -> None:
        with pytest.raises(InvalidRequest) as info:
            ensure_valid({"messages": []}, "anthropic")
        assert info.value.problems == ["messages must be a non-empty list"]
        assert info.value.provider == "anthropic"
        ensure_valid({"messages": [USER]}, "openai")


LONG = "fc_68a1b2c3d4e5f60718293a4b5c6d7e8f90a1b2c3d4e5f607"
NAME_RULE = "must match ^[a-zA-Z0-9_-]{1,64}$"


class TestIdsAndNames:
    def test_anthropic_ids_and_names_must_match_the_patterns(self) -> None:
        body = {
            "max_tokens": 0,
            "messages": [
                {"role": "user", "content": "go"},
                {
                    "role": "assistant",
                    "content": [
                        {"type": "tool_use", "id": "t.1:x", "name": "my.tool", "input": {}}
                    ],
                },
                {"role": "user", "content": [res("t.1:x")]},
            ],
            "tools": [
                {"name": "my.tool", "input_schema": {"type": "object"}},
                {"name": "my.tool", "input_schema": {"type": "object"}},
            ],
        }
        assert validate(body, "anthropic") == [
            "messages[1].content[0]: tool_use id 't.1:x' must match ^[a-zA-Z0-9_-]+$",
            f"messages[1].content[0]: tool name 'my.tool' {NAME_RULE}",
            "messages[2].content[0]: tool_use_id 't.1:x' must match ^[a-zA-Z0-9_-]+$",
            f"tools[0]: name 'my.tool' {NAME_RULE}",
            f"tools[1]: name 'my.tool' {NAME_RULE}",
            "tools[1]: tool name 'my.tool' declared twice",
            "max_tokens must be a positive integer",
        ]

    def test_openai_ids_are_at_most_40_characters_and_names_match_the_pattern(self) -> None:
        call = {"id": LONG, "type": "function", "function": {"name": "a" * 65, "arguments": "{}"}}
        tools = [{"type": "function", "function": {"name": "x/y"}}]
        body = {
            "messages": [
                USER,
                {"role": "assistant", "content": None, "tool_calls": [call]},
                tool_msg(LONG),
            ],
            "tools": tools,
        }
        assert validate(body, "openai") == [
            "messages[1].tool_calls[0]: id "
            "'fc_68a1b2c3d4e5f60718293a4b5c6d7e8f90a1b2c3d4e5f607' is 51 characters long "
            "(at most 40)",
            f"messages[1].tool_calls[0]: function.name '{'a' * 65}' {NAME_RULE}",
            "messages[2]: tool_call_id "
            "'fc_68a1b2c3d4e5f60718293a4b5c6d7e8f90a1b2c3d4e5f607' is 51 characters long "
            "(at most 40)",
            f"tools[0]: function.name 'x/y' {NAME_RULE}",
        ]


def schema(name: str) -> dict[str, Any]:
    return {"name": name, "input_schema": {"type": "object"}}


TOOL_TURNS = [
    {"role": "user", "content": "go"},
    {"role": "assistant", "content": [use("a"), use("b")]},
    {"role": "user", "content": [res("a"), res("b")]},
]


class TestStrict:
    def test_anthropic_needs_model_max_tokens_and_tools_when_tool_blocks_are_present(
        self,
    ) -> None:
        body = {"messages": TOOL_TURNS}
        assert validate(body, "anthropic") == []
        assert validate(body, "anthropic", strict=True) == [
            "max_tokens is missing (required)",
            "model must be a non-empty string (required)",
            "tools must be a non-empty list when messages hold tool_use or tool_result blocks",
        ]

    def test_anthropic_needs_every_used_tool_declared_once_reported_at_first_use(self) -> None:
        body = {
            "model": "claude-sonnet-4-5",
            "max_tokens": 1024,
            "messages": TOOL_TURNS,
            "tools": [schema("read")],
        }
        assert validate(body, "anthropic", strict=True) == [
            "messages[1].content[0]: tool 'bash' is not declared in tools"
        ]
        body["tools"] = [schema("read"), schema("bash")]
        assert validate(body, "anthropic", strict=True) == []
        plain = {"model": "m", "max_tokens": 1, "messages": [{"role": "user", "content": "x"}]}
        assert validate(plain, "anthropic", strict=True) == []

    def test_openai_needs_model_and_every_called_function_declared(self) -> None:
        body: dict[str, Any] = {
            "messages": [
                USER,
                {"role": "assistant", "content": None, "tool_calls": [fn_call("a")]},
                tool_msg("a"),
            ]
        }
        assert validate(body, "openai") == []
        assert validate(body, "openai", strict=True) == [
            "model must be a non-empty string (required)",
            "tools must be a non-empty list when messages hold tool_calls",
        ]
        body["model"] = "gpt-4.1"
        body["tools"] = [{"type": "function", "function": {"name": "read"}}]
        assert validate(body, "openai", strict=True) == [
            "messages[1].tool_calls[0]: tool 'bash' is not declared in tools"
        ]
        body["tools"].append({"type": "function", "function": {"name": "bash"}})
        assert validate(body, "openai", strict=True) == []
        assert validate({"model": "gpt-4.1", "messages": [USER]}, "openai", strict=True) == []

    def test_ensure_valid_passes_strict_on(self) -> None:
        with pytest.raises(InvalidRequest) as info:
            ensure_valid({"messages": [USER]}, "openai", strict=True)
        assert info.value.problems == ["model must be a non-empty string (required)"]


def test_a_strict_anthropic_body_may_not_end_with_the_assistant_turn() -> None:
    from ctxengine.projection.validate import validate as check

    body = {
        "model": "claude-x",
        "max_tokens": 100,
        "messages": [
            {"role": "user", "content": [{"type": "text", "text": "hi"}]},
            {"role": "assistant", "content": [{"type": "text", "text": "hello"}]},
        ],
    }
    assert check(body, "anthropic") == []
    assert check(body, "anthropic", strict=True) == [
        "messages[1]: the request ends with an assistant turn (prefill); "
        "append the next user message"
    ]
