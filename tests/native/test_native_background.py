"""Anthropic's background compaction, wire side (:mod:`ctxengine.engine.native_background`):
the compaction request goes out in a thread while the conversation goes on over the full
history; when the block arrives exactly the prefix that was sent is swapped for it, and the
turns appended meanwhile (their thinking included) follow it."""

from __future__ import annotations

import json
import threading

import orjson
import pytest
from native_helpers import ANTHROPIC_BLOCK, anthropic_compaction_stream_step
from servers import Received, ScriptedServer, Step, anthropic_reply

from ctxengine.engine import Session
from ctxengine.engine.native_background import begin, run, swap
from ctxengine.errors import StaleCompaction
from ctxengine.model import CompactionRecord, assistant, system, user
from ctxengine.policy import Policy
from ctxengine.projection.validate import validate
from ctxengine.providers import AnthropicProvider, RetrySettings
from ctxengine.providers.base import Completion

ONE = RetrySettings(max_attempts=1)
THINKING = {"type": "thinking", "thinking": "check the lexer first", "signature": "sig-bg-1"}


def provider(server: ScriptedServer) -> AnthropicProvider:
    return AnthropicProvider("claude-sonnet-4-6", api_key="k", base_url=server.url, retry=ONE)


SMALL_TAIL = Policy(
    compaction_backend="native", keep_recent_tokens=5, keep_recent_min_tokens=0, split_turn=False
)


def session(policy: Policy = SMALL_TAIL) -> Session:
    s = Session(200_000, policy=policy)
    s.append(system("You are a coding agent."))
    s.append(user("first: write the lexer"))
    s.append(assistant("Lexer written."))
    s.append(user("second: write the parser"))
    s.append(assistant("Parser written."))
    return s


def test_the_sent_prefix_is_swapped_and_the_turns_since_follow(server: ScriptedServer) -> None:
    s = session()
    arrived = threading.Event()

    def respond(req: Received) -> Step:
        if "compaction" in req.body:
            arrived.wait(10)  # the compaction finishes after the turn below
            return anthropic_compaction_stream_step(ANTHROPIC_BLOCK)
        reply = anthropic_reply("Tests written.")
        reply["content"].insert(0, THINKING)
        return Step(body=reply)

    server.responder = respond
    ticket = begin(s, provider(server))
    assert len(ticket.sent_ids) == 4
    result: list[Completion | BaseException] = []

    def work() -> None:
        try:
            result.append(run(ticket, cancel=threading.Event()))
        except BaseException as exc:  # shown by the assertion below
            result.append(exc)

    worker = threading.Thread(target=work)
    worker.start()
    # The conversation goes on over the full history while the summary is written.
    s.append(user("third: write the tests"))
    s.complete(provider(server))
    arrived.set()
    worker.join(10)
    compaction = next(r for r in server.received if "compaction" in r.body)
    assert compaction.headers["anthropic-beta"] == "compact-2026-09-04"
    assert compaction.body["compaction"] == {"type": "summarize"}
    assert [m["role"] for m in compaction.body["messages"]] == ["user", "assistant"] * 2
    meanwhile = next(r for r in server.received if "compaction" not in r.body)
    assert len(meanwhile.body["messages"]) == 5
    third = s.entries[5]
    reply = result[0]
    assert isinstance(reply, Completion), reply
    outcome = swap(s, ticket, reply)
    record = outcome.record
    assert record.native == "anthropic"
    assert record.first_kept_id == third.id
    assert record.lead_ids == (s.entries[-1].id,)
    assert "first: write the lexer" in record.summary
    assert "third: write the tests" not in record.summary
    # The next request: the block, then exactly the turns appended since, thinking kept.
    s.append(user("fourth: run them"))
    server.responder = None
    server.push(Step(body=anthropic_reply("All green.")))
    s.complete(provider(server))
    body = server.received[-1].body
    assert [m["role"] for m in body["messages"]] == ["assistant", "user", "assistant", "user"]
    assert [orjson.dumps(b).decode() for b in body["messages"][0]["content"]] == [ANTHROPIC_BLOCK]
    assert body["messages"][1]["content"][0]["text"] == "third: write the tests"
    assert body["messages"][2]["content"][0] == THINKING
    assert body["messages"][3]["content"][0]["text"] == "fourth: run them"
    assert "write the lexer" not in json.dumps(body)
    assert validate(body, "anthropic", strict=True) == []


def test_a_session_that_compacted_meanwhile_refuses_the_swap(server: ScriptedServer) -> None:
    s = session()
    for n in range(3):
        s.append(user(f"more work {n}: " + "detail " * 80))
        s.append(assistant(f"done {n}: " + "result " * 80))
    server.push(anthropic_compaction_stream_step(ANTHROPIC_BLOCK))
    ticket = begin(s, provider(server))
    reply = run(ticket, cancel=threading.Event())
    s.append(user("third"))
    s.compact()  # a local compaction in the meantime
    before = s.entries
    with pytest.raises(StaleCompaction, match="compacted after the request was built"):
        swap(s, ticket, reply)
    assert s.entries == before
    assert sum(isinstance(e.body, CompactionRecord) for e in s.entries) == 1
