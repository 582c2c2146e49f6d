"""``Session.complete`` with the agent model's profile: a model that takes mid-conversation
system messages gets the state as system messages; another gets it as a user turn."""

from __future__ import annotations

from dataclasses import replace
from typing import Any

from llm_helpers import anthropic_provider
from servers import ScriptedServer, SleepRecorder, Step, anthropic_reply

from ctxengine import Session
from ctxengine.model import CompactionRecord, Entry, Message, PinRecord, TextPart
from ctxengine.providers.profiles import ModelProfile
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
