"""Reading request bodies into messages and writing the compacted body back."""

from __future__ import annotations

from typing import Any

import pytest

from ctxengine.engine.stateless import PrefixCache
from ctxengine.model import Usage
from ctxengine.projection.validate import validate
from ctxengine.proxy.wire import (
    PROVIDERS,
    TOP_LEVEL,
    Api,
    BadRequest,
    ConversationReader,
    forwarded_body,
    full_body,
    stable_key,
)

OUTPUT = "\n".join(f"line {n}: value = {n * 7}" for n in range(40))


def _chat(turns: int) -> dict[str, Any]:
    messages: list[dict[str, Any]] = [{"role": "system", "content": "You are terse."}]
    for t in range(turns):
        messages.append({"role": "user", "content": f"Turn {t}: read file_{t}.py please."})
        call = {
            "id": f"c{t}",
            "type": "function",
            "function": {"name": "read", "arguments": f'{{"path": "file_{t}.py"}}'},
        }
        messages.append({"role": "assistant", "content": None, "tool_calls": [call]})
        messages.append({"role": "tool", "tool_call_id": f"c{t}", "content": OUTPUT})
        messages.append({"role": "assistant", "content": f"file_{t}.py is fine."})
    messages.append({"role": "user", "content": "Now summarise."})
    return {"model": "gpt-4o", "temperature": 0.2, "messages": messages}


def _responses(turns: int) -> dict[str, Any]:
    items: list[dict[str, Any]] = []
    for t in range(turns):
        items.append({"type": "message", "role": "user", "content": f"Turn {t}: read it."})
        items.append(
            {"type": "reasoning", "id": f"rs_{t}", "summary": [], "encrypted_content": f"enc{t}"}
        )
        items.append(
            {
                "type": "custom_tool_call",
                "call_id": f"c{t}",
                "name": "apply_patch",
                "input": f"*** Begin Patch\n*** Add File: f{t}\n+x\n*** End Patch",
            }
        )
        items.append({"type": "custom_tool_call_output", "call_id": f"c{t}", "output": OUTPUT})
        items.append(
            {
                "type": "message",
                "role": "assistant",
                "content": [{"type": "output_text", "text": f"patched f{t}"}],
            }
        )
    items.append({"type": "message", "role": "user", "content": "Next."})
    return {"model": "gpt-5.5", "instructions": "Be a coding agent.", "input": items}


def _anthropic(turns: int) -> dict[str, Any]:
    messages: list[dict[str, Any]] = []
    for t in range(turns):
        messages.append({"role": "user", "content": [{"type": "text", "text": f"Turn {t}."}]})
        messages.append(
            {
                "role": "assistant",
                "content": [
                    {"type": "text", "text": "Reading."},
                    {"type": "tool_use", "id": f"toolu_{t}", "name": "Read", "input": {"p": t}},
                ],
            }
        )
        messages.append(
            {
                "role": "user",
                "content": [
                    {"type": "tool_result", "tool_use_id": f"toolu_{t}", "content": OUTPUT},
                    {"type": "text", "text": f"note {t}", "cache_control": {"type": "ephemeral"}},
                ],
            }
        )
        messages.append({"role": "assistant", "content": [{"type": "text", "text": "Done."}]})
    messages.append({"role": "user", "content": "Go on."})
    system = [{"type": "text", "text": "You are Claude.", "cache_control": {"type": "ephemeral"}}]
    return {"model": "claude-sonnet-4-5", "max_tokens": 512, "system": system, "messages": messages}


BODIES = {"chat": _chat, "responses": _responses, "anthropic": _anthropic}


def test_chat_messages_keep_their_item_ranges() -> None:
    conv = ConversationReader("chat").read(_chat(2))
    assert [m.role for m in conv.messages] == [
        "system",
        "user",
        "assistant",
        "tool",
        "assistant",
        "user",
        "assistant",
        "tool",
        "assistant",
        "user",
    ]
    assert conv.spans == tuple((i, i + 1) for i in range(10))
    assert conv.tools == () and conv.model == "gpt-4o" and conv.stream is False


def test_responses_items_group_into_assistant_messages() -> None:
    conv = ConversationReader("responses").read(_responses(2))
    assert [m.role for m in conv.messages] == [
        "system",
        "user",
        "assistant",
        "tool",
        "assistant",
        "user",
        "assistant",
        "tool",
        "assistant",
        "user",
    ]
    assert conv.spans[0] == TOP_LEVEL
    assert conv.spans[1:4] == ((0, 1), (1, 3), (3, 4))
    call = conv.messages[2].tool_calls[0]
    assert (call.id, call.name) == ("c0", "apply_patch")
    assert conv.messages[2].reasoning[0].signature == "enc0"


def test_anthropic_user_items_with_results_give_two_messages_of_one_range() -> None:
    conv = ConversationReader("anthropic").read(_anthropic(1))
    assert [m.role for m in conv.messages] == [
        "system",
        "user",
        "assistant",
        "tool",
        "user",
        "assistant",
        "user",
    ]
    assert conv.spans == (TOP_LEVEL, (0, 1), (1, 2), (2, 3), (2, 3), (3, 4), (4, 5))


def test_a_longer_request_reuses_the_messages_read_before() -> None:
    reader = ConversationReader("chat", usage_of=lambda m: Usage(100, 5) if m.text else None)
    body = _chat(1)
    first = reader.read(body)
    body["messages"] += [{"role": "assistant", "content": "ok"}, {"role": "user", "content": "x"}]
    second = reader.read(body)
    assert all(a is b for a, b in zip(first.messages, second.messages, strict=False))
    # Usage is attached to assistant messages read for the first time: the one with text.
    assert [m.usage for m in second.messages[len(first.messages) :]] == [Usage(100, 5), None]
    body["messages"][1] = {"role": "user", "content": "edited"}
    third = reader.read(body)
    assert third.messages[1].text == "edited" and third.messages[0] is not first.messages[0]


def test_stable_key_ignores_cache_markers_and_later_items() -> None:
    body = _anthropic(2)
    key = stable_key("anthropic", body)
    body["messages"][0]["content"][0]["cache_control"] = {"type": "ephemeral"}
    body["messages"].append({"role": "assistant", "content": "more"})
    assert stable_key("anthropic", body) == key
    body["messages"][0]["content"][0]["text"] = "another task"
    assert stable_key("anthropic", body) != key
    assert stable_key("chat", _chat(1)) != stable_key("chat", {**_chat(1), "messages": []})


def test_bad_items_name_their_field() -> None:
    with pytest.raises(BadRequest) as caught:
        ConversationReader("chat").read({"messages": [{"role": "assistant", "tool_calls": 3}]})
    assert (str(caught.value), caught.value.param) == (
        "expected `tool_calls` to be a list",
        "$.messages[0].tool_calls",
    )
    with pytest.raises(BadRequest, match="expected `instructions` to be a string"):
        ConversationReader("responses").read({"input": [], "instructions": 5})


#: Per API: items rendered before the client's own items, and the client's own items sent.
#: Chat: the system prompt and the continuation state, then 9 items as sent. Responses: the
#: projection drops the encrypted reasoning of finished turns, so only the last turn's
#: answer and the new user message are the client's items; the rest is rendered (freeform
#: calls as custom_tool_call). Anthropic: the continuation state merged with the first kept
#: user text (roles alternate), then 10 items as sent.
SPLICES = {"chat": (2, 9), "responses": (8, 2), "anthropic": (1, 10)}


@pytest.mark.parametrize("api", ["chat", "responses", "anthropic"])
def test_a_compacted_body_keeps_the_clients_tail_items_and_fields(api: Api) -> None:
    body = BODIES[api](60)
    conv = ConversationReader(api).read(body)
    ctx = PrefixCache().serve(conv.messages, window=6_000).context
    assert ctx.epoch == 1
    out = forwarded_body(body, conv, ctx)
    assert validate(out, PROVIDERS[api]) == []
    key = "input" if api == "responses" else "messages"
    items, sent = body[key], out[key]
    rendered, kept = SPLICES[api]
    assert len(sent) == rendered + kept
    assert all(sent[-k] is items[-k] for k in range(1, kept + 1))
    assert not any(any(s is i for i in items) for s in sent[:rendered])
    # Everything but the history is the client's.
    assert {k: v for k, v in out.items() if k != key} == {k: v for k, v in body.items() if k != key}
    if api == "anthropic":
        assert out["system"] is body["system"]  # with its cache marker
        # The cut fell after turn 57's tool result: its note opens the kept history, sent
        # in the rendered turn with the continuation state (without its cache marker).
        first = sent[0]["content"]
        assert [b["type"] for b in first] == ["text", "text"]
        assert first[0]["text"].startswith("The earlier part of this session was compacted.")
        assert first[1] == {"type": "text", "text": "note 57"}
    full = full_body(body, conv, ctx)
    assert validate(full, PROVIDERS[api]) == []


def test_a_compacted_responses_body_keeps_freeform_calls_as_sent() -> None:
    body = _responses(60)
    conv = ConversationReader("responses").read(body)
    ctx = PrefixCache().serve(conv.messages, window=6_000).context
    out = forwarded_body(body, conv, ctx)
    kinds = {item.get("type") for item in out["input"]}
    assert "custom_tool_call" in kinds and "function_call" not in kinds
    assert out["instructions"] == "Be a coding agent."


def test_the_responses_validator_pairs_calls_and_outputs() -> None:
    def check(items: list[dict[str, Any]]) -> list[str]:
        return validate({"model": "m", "input": items}, "openai-responses")

    call = {"type": "function_call", "call_id": "a", "name": "f", "arguments": "{}"}
    out = {"type": "function_call_output", "call_id": "a", "output": "x"}
    assert check([{"role": "user", "content": "hi"}, call, out]) == []
    assert check([call]) == ["input[0]: call 'a' has no output"]
    assert check([out]) == ["input[0]: function_call_output answers no function_call before it"]
    assert check([call, out, out]) == ["input[2]: call 'a' is answered twice"]
    assert check([{"type": "reasoning", "summary": []}]) == [
        "input[0]: a reasoning item must be followed by another item"
    ]
    assert check([{**call, "name": "bad name"}, out]) == [
        "input[0]: name 'bad name' must match ^[a-zA-Z0-9_-]{1,64}$"
    ]


def test_a_pruned_body_sends_placeholders_and_every_other_item_as_sent() -> None:
    body = _chat(24)
    conv = ConversationReader("chat").read(body)
    ctx = PrefixCache().serve(conv.messages, window=6_000).context
    assert (ctx.epoch, len(ctx.pruned)) == (0, 19)
    out = forwarded_body(body, conv, ctx)
    assert validate(out, "openai") == []
    sent, items = out["messages"], body["messages"]
    assert len(sent) == len(items)
    changed = [i for i, (a, b) in enumerate(zip(sent, items, strict=True)) if a != b]
    # The 19 oldest tool results, and nothing else.
    assert changed == [4 * t + 3 for t in range(19)]
    assert all(sent[i]["tool_call_id"] == items[i]["tool_call_id"] for i in changed)
    assert all(len(sent[i]["content"]) < len(OUTPUT) / 4 for i in changed)
