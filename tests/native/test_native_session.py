"""A session with provider-native compaction, against local servers through the official
SDKs: what a compacting reply leaves in the log (byte-exact, also through SQLite), the next
request to the same provider (the item first, the covered messages dropped), the request to
another provider (valid, with the continuation state written locally), the backend per
profile, on-demand compaction through the plan, pausing and context editing."""

from __future__ import annotations

import json
import threading
from pathlib import Path

import orjson
import pytest
from native_helpers import (
    ANTHROPIC_BLOCK,
    ANTHROPIC_STREAMED_BLOCK,
    OPENAI_ITEM,
    anthropic_compaction_stream_step,
    anthropic_reply_step,
    anthropic_stream_step,
    anthropic_text,
    compacted_body,
    responses_message,
    responses_reply_step,
    responses_stream_step,
)
from servers import Received, ScriptedServer, Step, anthropic_reply, chat_reply, responses_reply

from ctxengine.engine import Session
from ctxengine.errors import ConfigError
from ctxengine.model import (
    CompactionRecord,
    NativeCompactionPart,
    assistant,
    system,
    user,
)
from ctxengine.policy import Policy
from ctxengine.projection.validate import validate
from ctxengine.providers import AnthropicProvider, OpenAIProvider, RetrySettings
from ctxengine.stores.sqlite import SQLiteStore

ONE = RetrySettings(max_attempts=1)
NATIVE = Policy(compaction_backend="native")
SYSTEM = "You are a coding agent."


def anthropic(server: ScriptedServer, model: str = "claude-sonnet-4-6") -> AnthropicProvider:
    return AnthropicProvider(model, api_key="k", base_url=server.url, retry=ONE)


def responses(server: ScriptedServer, model: str = "gpt-5.2") -> OpenAIProvider:
    return OpenAIProvider(
        model, api="responses", api_key="k", base_url=server.url + "/v1", retry=ONE
    )


def chat(server: ScriptedServer) -> OpenAIProvider:
    return OpenAIProvider("gpt-4o", api_key="k", base_url=server.url + "/v1", retry=ONE)


def started(policy: Policy = NATIVE, window: int = 200_000, **kwargs: object) -> Session:
    session = Session(window, policy=policy, **kwargs)  # type: ignore[arg-type]
    session.append(system(SYSTEM))
    session.append(user("build a parser"))
    session.append(assistant("Parser skeleton written."))
    session.append(user("now the tests"))
    return session


def record_of(session: Session) -> CompactionRecord:
    found = [e.body for e in session.entries if isinstance(e.body, CompactionRecord)]
    assert len(found) == 1
    return found[0]


class TestAnthropicThreshold:
    @pytest.mark.parametrize("stream", [False, True])
    def test_the_block_is_stored_byte_exact_and_sent_first(
        self, server: ScriptedServer, tmp_path: Path, stream: bool
    ) -> None:
        store = SQLiteStore(tmp_path / "s.db")
        session = started(store=store, session_id="s1")
        session.usage_correction = None
        assert session.budget.trigger == 167_000
        if stream:
            server.push(anthropic_stream_step("tests written"))
        else:
            server.push(anthropic_reply_step([ANTHROPIC_BLOCK, anthropic_text("tests written")]))
        block = ANTHROPIC_STREAMED_BLOCK if stream else ANTHROPIC_BLOCK
        reply = session.complete(anthropic(server), cancel=threading.Event() if stream else None)
        assert reply.text == "tests written"
        first = server.received[0]
        assert first.headers["anthropic-beta"] == "compact-2026-01-12"
        assert first.body["context_management"] == {
            "edits": [
                {"type": "compact_20260112", "trigger": {"type": "input_tokens", "value": 167_000}}
            ]
        }
        # The log: four messages, the native record, the reply exactly as returned.
        kinds = [e.kind for e in session.entries]
        assert kinds == ["message"] * 4 + ["compaction", "message"]
        record, lead = session.entries[4].body, session.entries[5]
        assert isinstance(record, CompactionRecord)
        assert (record.native, record.first_kept_id, record.reason) == (
            "anthropic",
            None,
            "threshold",
        )
        assert record.lead_ids == (lead.id,)
        assert record.summary.startswith("## Goal\nbuild a parser\n")
        assert lead.message is not None
        assert lead.message.parts[0] == NativeCompactionPart("anthropic", block)
        assert lead.message.meta["native_compaction"] == "anthropic"
        # Through SQLite: the same bytes.
        reopened = Session(
            200_000, policy=NATIVE, store=SQLiteStore(tmp_path / "s.db"), session_id="s1"
        )
        stored = reopened.entries[5].message
        assert stored is not None and stored.parts[0].payload == block  # type: ignore[union-attr]
        # The usage anchor is the reply's message iteration, not the compaction's.
        nxt = user("and the docs")
        session.append(nxt)
        anchor = (800 + 30) if stream else (900 + 40)
        assert session.context_tokens(session.project()) == anchor + session.estimator.message(nxt)
        # The next request: the block first, the covered messages dropped.
        server.push(Step(body=anthropic_reply("docs written")))
        session.complete(anthropic(server))
        body = server.received[1].body
        assert len(body["messages"]) == 2
        assert orjson.dumps(body["messages"][0]["content"][0]).decode() == block
        assert body["messages"][0]["role"] == "assistant"
        assert [b["type"] for b in body["messages"][0]["content"]] == ["compaction", "text"]
        assert body["messages"][1] == {
            "role": "user",
            "content": [{"type": "text", "text": "and the docs"}],
        }
        assert body["system"] == [
            {"type": "text", "text": SYSTEM, "cache_control": {"type": "ephemeral"}}
        ]
        assert "build a parser" not in json.dumps(body)
        assert validate(body, "anthropic", strict=True) == []

    def test_moving_to_chat_completions_sends_the_local_continuation_state(
        self, server: ScriptedServer
    ) -> None:
        session = started()
        server.push(anthropic_reply_step([ANTHROPIC_BLOCK, anthropic_text("tests written")]))
        session.complete(anthropic(server))
        session.append(user("switch models"))
        server.push(Step(body=chat_reply("from the other model")))
        session.complete(chat(server))
        body = server.received[1].body
        assert validate(body, "openai", strict=True) == []
        roles = [m["role"] for m in body["messages"]]
        assert roles == ["system", "user", "assistant", "user"]
        state = body["messages"][1]["content"]
        assert "<continuation-state>\n## Goal\nbuild a parser\n" in state
        assert record_of(session).summary in state
        assert body["messages"][2] == {"role": "assistant", "content": "tests written"}
        assert "Résumé" not in json.dumps(body) and "compaction" not in json.dumps(body)
        assert "context_management" not in body

    def test_a_paused_compaction_is_stored_and_the_turn_asked_again(
        self, server: ScriptedServer
    ) -> None:
        policy = Policy(compaction_backend="native", native_pause_after_compaction=True)
        session = started(policy)
        server.push(
            anthropic_reply_step([ANTHROPIC_BLOCK], stop_reason="compaction"),
            Step(body=anthropic_reply("tests written")),
        )
        reply = session.complete(anthropic(server))
        assert reply.text == "tests written"
        edit = server.received[0].body["context_management"]["edits"][0]
        assert edit["pause_after_compaction"] is True
        resumed = server.received[1].body["messages"]
        assert len(resumed) == 1
        assert resumed[0]["role"] == "assistant"
        assert [orjson.dumps(b).decode() for b in resumed[0]["content"]] == [ANTHROPIC_BLOCK]
        kinds = [e.kind for e in session.entries]
        assert kinds == ["message"] * 4 + ["compaction", "message", "message"]
        paused = session.entries[5].message
        assert paused is not None and paused.usage is None and paused.stop_reason == "compaction"

    def test_context_editing_passes_through_under_the_local_backend(
        self, server: ScriptedServer
    ) -> None:
        policy = Policy(
            native_clear_tool_uses={"keep_tool_uses": 3, "exclude_tools": ["read"]},
            native_clear_thinking={"keep_turns": "all"},
        )
        session = started(policy)
        server.push(Step(body=anthropic_reply("ok")))
        session.complete(anthropic(server, "claude-sonnet-4-5"))
        sent = server.received[0]
        assert sent.headers["anthropic-beta"] == "context-management-2025-06-27"
        assert sent.body["context_management"] == {
            "edits": [
                {"type": "clear_thinking_20251015", "keep": "all"},
                {
                    "type": "clear_tool_uses_20250919",
                    "keep": {"type": "tool_uses", "value": 3},
                    "exclude_tools": ["read"],
                },
            ]
        }


class TestOpenAIThreshold:
    @pytest.mark.parametrize("stream", [False, True])
    def test_the_item_round_trips_byte_exact_and_first(
        self, server: ScriptedServer, stream: bool
    ) -> None:
        session = started(window=400_000)
        assert session.budget.trigger == 360_000
        items = [OPENAI_ITEM, responses_message("tests written")]
        server.push(responses_stream_step(items) if stream else responses_reply_step(items))
        session.complete(responses(server), cancel=threading.Event() if stream else None)
        assert server.received[0].body["context_management"] == [
            {"type": "compaction", "compact_threshold": 360_000}
        ]
        record = record_of(session)
        assert record.native == "openai"
        lead = session.entries[-1].message
        assert lead is not None
        assert lead.parts[0] == NativeCompactionPart("openai", OPENAI_ITEM)
        session.append(user("and the docs"))
        server.push(Step(body=responses_reply("docs written")))
        session.complete(responses(server))
        body = server.received[1].body
        assert body["instructions"] == SYSTEM
        assert len(body["input"]) == 3
        assert orjson.dumps(body["input"][0]).decode() == OPENAI_ITEM
        assert body["input"][1] == {
            "type": "message",
            "role": "assistant",
            "content": [{"type": "output_text", "text": "tests written"}],
        }
        assert body["input"][2] == {
            "type": "message",
            "role": "user",
            "content": [{"type": "input_text", "text": "and the docs"}],
        }
        assert validate(body, "openai-responses", strict=True) == []

    def test_moving_to_anthropic_sends_the_local_continuation_state(
        self, server: ScriptedServer
    ) -> None:
        session = started(window=400_000)
        server.push(responses_reply_step([OPENAI_ITEM, responses_message("tests written")]))
        session.complete(responses(server))
        session.append(user("switch models"))
        server.push(Step(body=anthropic_reply("from Claude")))
        session.complete(anthropic(server))
        body = server.received[1].body
        assert validate(body, "anthropic", strict=True) == []
        assert [m["role"] for m in body["messages"]] == ["user", "assistant", "user"]
        state = body["messages"][0]["content"][0]["text"]
        assert record_of(session).summary in state
        assert "gAAAAABo" not in json.dumps(body)


class TestBackendPerProfile:
    @pytest.mark.parametrize(
        ("model", "native"), [("claude-sonnet-4-6", True), ("claude-sonnet-4-5", False)]
    )
    def test_auto_on_anthropic(self, server: ScriptedServer, model: str, native: bool) -> None:
        session = started(Policy(compaction_backend="auto"))
        server.push(Step(body=anthropic_reply("ok")))
        session.complete(anthropic(server, model))
        sent = server.received[0]
        assert ("context_management" in sent.body) is native
        assert sent.headers.get("anthropic-beta") == ("compact-2026-01-12" if native else None)

    @pytest.mark.parametrize(("model", "native"), [("gpt-5.2", True), ("gpt-5", False)])
    def test_auto_on_responses(self, server: ScriptedServer, model: str, native: bool) -> None:
        session = started(Policy(compaction_backend="auto"), window=400_000)
        server.push(Step(body=responses_reply("ok")))
        session.complete(responses(server, model))
        assert ("context_management" in server.received[0].body) is native

    def test_native_with_a_model_without_it_is_a_clear_error(self, server: ScriptedServer) -> None:
        session = started()
        with pytest.raises(ConfigError, match="the model's profile has no native compaction"):
            session.complete(anthropic(server, "claude-sonnet-4-5"))
        assert server.received == []

    def test_chat_completions_compacts_locally_under_native(self, server: ScriptedServer) -> None:
        session = started()
        server.push(Step(body=chat_reply("ok")))
        session.complete(chat(server))
        assert "context_management" not in server.received[0].body


def long_session(policy: Policy) -> Session:
    """Five turns of about 60 tokens each; the policy keeps about the newest 70 verbatim."""
    session = Session(200_000, policy=policy)
    session.append(system(SYSTEM))
    for n in range(5):
        session.append(user(f"request {n}: " + "word " * 50))
        session.append(assistant(f"answer {n}: " + "done " * 50))
    return session


ON_DEMAND = Policy(
    compaction_backend="native", keep_recent_tokens=70, keep_recent_min_tokens=0, split_turn=False
)


class TestOnDemand:
    def test_anthropic_compacts_the_prefix_and_the_tail_follows_the_block(
        self, server: ScriptedServer
    ) -> None:
        session = long_session(ON_DEMAND)
        plan = session.plan()
        assert plan is not None and plan.cut is not None
        kept = plan.cut.index
        assert kept == 8  # the newest turn (user 4, answer 4) is kept verbatim
        server.push(anthropic_compaction_stream_step(ANTHROPIC_BLOCK))
        outcome = session.compact(provider=anthropic(server), focus=None)
        sent = server.received[0]
        assert sent.headers["anthropic-beta"] == "compact-2026-09-04"
        assert sent.body["compaction"] == {"type": "summarize"}
        assert len(sent.body["messages"]) == 8
        assert sent.body["messages"][-1]["content"][0]["text"].startswith("answer 3:")
        assert outcome.record.native == "anthropic"
        assert outcome.record.first_kept_id == session.entries[9].id
        assert outcome.plan is not None and outcome.plan.backend == "native"
        assert session.events[-1].step == "compaction"
        assert session.events[-1].notes[:2] == ("native:anthropic", "stand-in:extractive")
        session.append(user("next"))
        server.push(Step(body=anthropic_reply("ok")))
        session.complete(anthropic(server))
        body = server.received[1].body
        assert [m["role"] for m in body["messages"]] == ["assistant", "user", "assistant", "user"]
        assert [orjson.dumps(b).decode() for b in body["messages"][0]["content"]] == [
            ANTHROPIC_BLOCK
        ]
        assert body["messages"][1]["content"][0]["text"].startswith("request 4:")
        assert validate(body, "anthropic", strict=True) == []

    def test_openai_compact_endpoint_keeps_its_window_first(self, server: ScriptedServer) -> None:
        session = long_session(ON_DEMAND)
        server.push(
            Step(
                body=compacted_body(["request 0", "request 3"]),
                headers={"content-type": "application/json"},
            )
        )
        session.compact(provider=responses(server))
        sent = server.received[0]
        assert sent.path == "/v1/responses/compact"
        assert len(sent.body["input"]) == 9  # the system message and four turns
        session.append(user("next"))
        server.push(Step(body=responses_reply("ok")))
        session.complete(responses(server))
        items = server.received[1].body["input"]
        assert [i["type"] for i in items[:3]] == ["message", "message", "compaction"]
        assert orjson.dumps(items[2]).decode() == OPENAI_ITEM
        assert items[3]["content"][0]["text"].startswith("request 4:")
        assert validate(server.received[1].body, "openai-responses", strict=True) == []

    def test_a_failed_native_compaction_leaves_history_unchanged(
        self, server: ScriptedServer
    ) -> None:
        session = long_session(ON_DEMAND)
        before = session.entries
        failed = '{"type":"compaction","content":null}'
        server.push(anthropic_compaction_stream_step(failed))
        with pytest.raises(Exception, match="summary rejected: empty"):
            session.compact(provider=anthropic(server))
        assert session.entries == before


def test_the_sessions_own_trigger_runs_its_plan_on_the_provider(server: ScriptedServer) -> None:
    session = Session(4_000, policy=ON_DEMAND)
    session.append(system(SYSTEM))
    for n in range(6):
        session.append(user(f"request {n}: " + "word " * 300))
        session.append(assistant(f"answer {n}: " + "done " * 300))
    session.append(user("request 6: go on"))
    assert session.budget.trigger == 3_200
    assert session.context_tokens(session.project()) > 3_200

    def respond(req: Received) -> Step:
        if "compaction" in req.body:
            return anthropic_compaction_stream_step(ANTHROPIC_BLOCK)
        return Step(body=anthropic_reply("going on"))

    server.responder = respond
    reply = session.complete(anthropic(server), max_output_tokens=200)
    assert reply.text == "going on"
    compaction, call = server.received
    assert compaction.body["compaction"] == {"type": "summarize"}
    assert len(compaction.body["messages"]) == 12  # the six turns before the newest request
    # The call itself: the block first, then the request the cut kept; the server may still
    # compact at its threshold, raised to Anthropic's minimum.
    assert [orjson.dumps(b).decode() for b in call.body["messages"][0]["content"]] == [
        ANTHROPIC_BLOCK
    ]
    assert call.body["messages"][1]["content"][0]["text"] == "request 6: go on"
    assert len(call.body["messages"]) == 2
    edit = call.body["context_management"]["edits"][0]
    assert edit["trigger"] == {"type": "input_tokens", "value": 50_000}
    steps = [(e.step, e.notes[:1]) for e in session.events]
    assert steps == [("compaction", ("native:anthropic",))]
