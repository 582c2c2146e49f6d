"""``Session.complete`` with the agent model's profile: a model that takes mid-conversation
system messages gets the state as system messages; another gets it as a user turn."""

from __future__ import annotations

import json
from dataclasses import replace
from pathlib import Path
from typing import Any

import pytest
from llm_helpers import ONE_ATTEMPT, anthropic_provider
from pytest import MonkeyPatch
from servers import ScriptedServer, SleepRecorder, Step, anthropic_error, anthropic_reply

from ctxengine import Session
from ctxengine.errors import ProviderRequestError
from ctxengine.model import CompactionRecord, Entry, Message, PinRecord, TextPart
from ctxengine.providers import create_provider
from ctxengine.providers.profiles import PROFILES_ENV, ModelProfile
from hand_estimator import HandEstimator

SONNET = ModelProfile("claude-sonnet-4-5", "claude-sonnet-4-5", "anthropic", 200_000, 64_000)
ACCEPTS = replace(SONNET, model="claude-opus-4-8", mid_conversation_system=True)


def compacted_log() -> list[Entry]:
    """A log compacted with a kept tail that starts with the assistant's reply, and a pin
    logged before the compaction."""
    bodies: list[Any] = [
        Message("system", (TextPart("Be careful."),)),
        Message("user", (TextPart("Port the parser."),)),
        PinRecord("Never add a co-author trailer."),
        Message("assistant", (TextPart("Reading the grammar."),)),
        Message("user", (TextPart("Go on."),)),
        Message("assistant", (TextPart("Grammar read."),)),
        CompactionRecord("## Goal\nPort the parser.", "e5", 500, 100, "default", "extractive"),
        Message("user", (TextPart("Next: the lexer."),)),
    ]
    return [Entry(f"e{i}", "s", i, b) for i, b in enumerate(bodies)]


def sent_roles(profile: ModelProfile, server: ScriptedServer, sleeps: SleepRecorder) -> Any:
    server.push(Step(body=anthropic_reply("ok")))
    s = Session(200_000, estimator=HandEstimator(), entries=compacted_log())
    s.complete(anthropic_provider(server, sleeps), profile=profile)
    return server.received[-1].body["messages"]


def test_a_model_that_takes_system_messages_gets_the_state_there(
    server: ScriptedServer, sleeps: SleepRecorder
) -> None:
    messages = sent_roles(ACCEPTS, server, sleeps)
    assert [m["role"] for m in messages] == ["user", "system", "assistant", "user"]
    assert messages[1]["content"][0]["text"] == (
        "Pinned by the user: standing instructions that hold for the whole session, through "
        "every compaction, until the user changes them.\n\n[1]\nNever add a co-author trailer."
    )


def test_an_older_model_gets_a_user_turn(server: ScriptedServer, sleeps: SleepRecorder) -> None:
    messages = sent_roles(SONNET, server, sleeps)
    assert [m["role"] for m in messages] == ["user", "assistant", "user"]
    assert len(messages[0]["content"]) == 2  # the state and the pinned items, one user turn


def profiles_file(tmp_path: Path, model: str) -> Path:
    """An override file giving ``model`` mid-conversation system messages."""
    path = tmp_path / "profiles.json"
    fields = {"provider": "anthropic", "context_window": 200_000, "max_output_tokens": 8192}
    doc = {"models": {model: fields | {"mid_conversation_system": True}}}
    path.write_text(json.dumps(doc), encoding="utf-8")
    return path


def sent_by_default(model: str, server: ScriptedServer, sleeps: SleepRecorder) -> Any:
    """The messages ``Session.complete`` sends through ``create_provider("anthropic:MODEL")``
    when no profile is passed."""
    server.push(Step(body=anthropic_reply("ok")))
    s = Session(200_000, estimator=HandEstimator(), entries=compacted_log())
    provider = create_provider(
        f"anthropic:{model}",
        api_key="test-key",
        base_url=server.url,
        retry=ONE_ATTEMPT,
        sleep=sleeps,
    )
    s.complete(provider)
    assert server.received[-1].body["model"] == model
    return server.received[-1].body["messages"]


def test_the_profile_of_the_provider_model_is_looked_up(
    server: ScriptedServer, sleeps: SleepRecorder, tmp_path: Path, monkeypatch: MonkeyPatch
) -> None:
    monkeypatch.setenv(PROFILES_ENV, str(profiles_file(tmp_path, "claude-x")))
    messages = sent_by_default("claude-x", server, sleeps)
    assert [m["role"] for m in messages] == ["user", "system", "assistant", "user"]
    assert messages[1]["content"][0]["text"].endswith("[1]\nNever add a co-author trailer.")


def test_a_model_the_override_does_not_name_gets_user_turns(
    server: ScriptedServer, sleeps: SleepRecorder, tmp_path: Path, monkeypatch: MonkeyPatch
) -> None:
    monkeypatch.setenv(PROFILES_ENV, str(profiles_file(tmp_path, "claude-x")))
    messages = sent_by_default("claude-sonnet-4-5-20250929", server, sleeps)
    assert [m["role"] for m in messages] == ["user", "assistant", "user"]


def test_without_an_override_a_shipped_model_gets_user_turns(
    server: ScriptedServer, sleeps: SleepRecorder
) -> None:
    messages = sent_by_default("claude-haiku-4-5", server, sleeps)
    assert [m["role"] for m in messages] == ["user", "assistant", "user"]


def test_a_shipped_newer_model_gets_system_messages_without_an_override(
    server: ScriptedServer, sleeps: SleepRecorder
) -> None:
    messages = sent_by_default("claude-opus-5-5-20261015", server, sleeps)
    assert [m["role"] for m in messages] == ["user", "system", "assistant", "user"]


def test_a_model_that_refuses_system_messages_is_answered_with_user_turns_from_then_on(
    server: ScriptedServer, sleeps: SleepRecorder
) -> None:
    refusal = anthropic_error("messages.1: role 'system' is not supported on this model")
    server.push(Step(status=400, body=refusal))
    server.push(Step(body=anthropic_reply("ok")))
    server.push(Step(body=anthropic_reply("done")))
    s = Session(200_000, estimator=HandEstimator(), entries=compacted_log())
    provider = anthropic_provider(server, sleeps)
    assert s.complete(provider, profile=ACCEPTS).text == "ok"
    s.append(Message("user", (TextPart("And the tests."),)))
    assert s.complete(provider, profile=ACCEPTS).text == "done"
    roles = [[m["role"] for m in r.body["messages"]] for r in server.received]
    assert roles == [
        ["user", "system", "assistant", "user"],
        ["user", "assistant", "user"],
        ["user", "assistant", "user", "assistant", "user"],
    ]


def test_another_bad_request_is_not_taken_for_a_refusal(
    server: ScriptedServer, sleeps: SleepRecorder
) -> None:
    server.push(Step(status=400, body=anthropic_error("max_tokens: must be positive")))
    s = Session(200_000, estimator=HandEstimator(), entries=compacted_log())
    with pytest.raises(ProviderRequestError, match="max_tokens: must be positive"):
        s.complete(anthropic_provider(server, sleeps), profile=ACCEPTS)
    assert len(server.received) == 1
