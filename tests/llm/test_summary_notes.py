"""Summary.notes of the model summarizers over real HTTP: short machine-readable strings for
cache-reuse fallbacks, shrink retries, degraded input, chunks, cut exchanges and calls."""

from __future__ import annotations

from typing import Any

import pytest
from llm_helpers import (
    GOOD,
    QuarterEstimator,
    call,
    calls,
    history_text,
    openai_summarizer,
    result,
    summary_text,
    work_history,
)
from servers import ScriptedServer, SleepRecorder, Step, chat_reply, openai_error

from ctxengine.errors import ContextOverflow, SummaryRejected, TransientProviderError
from ctxengine.model import Message, user
from ctxengine.summarizers.base import LiveRequest, SummaryRequest
from ctxengine.summarizers.cache_reuse import NotReusable
from ctxengine.summarizers.fit import InputPlan, Piece
from ctxengine.summarizers.hybrid import HybridSummarizer
from ctxengine.summarizers.notes import (
    cache_reuse_fallback,
    plan_notes,
    shrink_note,
    snake_name,
)
from ctxengine.summarizers.transcript import TRANSCRIPT_MODES, serialize_transcript

EST = QuarterEstimator()
TASK = "Task A: migrate module X. We must never push to main."
CALL_NOTES = ("calls:1", "call_input_tokens:100", "call_output_tokens:20")


def work() -> tuple[Message, ...]:
    return (
        user(TASK),
        calls(call("c1", "Read", file_path="src/x.py"), text="Reading the module."),
        result("c1", "def load():\n    pass\n" * 30),
        calls(text="Read it; editing next."),
    )


def live(provider: str = "openai", tokens: int = 400, **extra: Any) -> LiveRequest:
    body = {"model": "gpt-test", "messages": [{"role": "user", "content": TASK}], **extra}
    return LiveRequest(provider, body, tokens)


def request(*messages: Message, budget: int = 1_000, **kwargs: Any) -> SummaryRequest:
    return SummaryRequest(messages or work(), None, TASK, budget, **kwargs)


class TestCacheReuse:
    def test_an_appended_summary_says_so(
        self, server: ScriptedServer, sleeps: SleepRecorder
    ) -> None:
        server.push(Step(body=chat_reply(GOOD)))
        s = openai_summarizer(server, sleeps, cache_reuse=True)
        out = s.summarize(request(live_request=live()), EST)
        assert out.notes == ("cache_reuse:appended", *CALL_NOTES)

    @pytest.mark.parametrize(
        ("live_request", "note"),
        [
            (None, "cache_reuse:fallback(no_live_request)"),
            (live("anthropic"), "cache_reuse:fallback(other_provider)"),
            (live(tokens=13_500), "cache_reuse:fallback(too_large)"),
            (live(tool_choice="required"), "cache_reuse:fallback(not_reusable)"),
        ],
    )
    def test_a_fallback_before_any_call_names_its_reason(
        self,
        server: ScriptedServer,
        sleeps: SleepRecorder,
        live_request: LiveRequest | None,
        note: str,
    ) -> None:
        server.push(Step(body=chat_reply(GOOD)))
        s = openai_summarizer(server, sleeps, cache_reuse=True)
        out = s.summarize(request(live_request=live_request), EST)
        assert out.notes == (note, *CALL_NOTES)
        assert [c.purpose for c in s.calls] == ["summary"]

    def test_a_tool_call_reply_falls_back_and_both_calls_are_counted(
        self, server: ScriptedServer, sleeps: SleepRecorder
    ) -> None:
        reply = chat_reply("", finish="tool_calls", tool_calls=[("c9", "Bash", '{"command":"ls"}')])
        server.push(Step(body=reply), Step(body=chat_reply(GOOD)))
        s = openai_summarizer(server, sleeps, cache_reuse=True)
        out = s.summarize(request(live_request=live()), EST)
        assert out.notes == (
            "cache_reuse:fallback(tool_calls)",
            "calls:2",
            "call_input_tokens:200",
            "call_output_tokens:40",
        )

    def test_a_provider_error_falls_back_with_its_class_name(
        self, server: ScriptedServer, sleeps: SleepRecorder
    ) -> None:
        server.push(
            Step(500, openai_error("upstream failure", type_="server_error")),
            Step(body=chat_reply(GOOD)),
        )
        s = openai_summarizer(server, sleeps, cache_reuse=True)
        out = s.summarize(request(live_request=live()), EST)
        assert out.notes == (
            "cache_reuse:fallback(transient_provider_error)",
            "calls:2",
            "call_input_tokens:100",
            "call_output_tokens:20",
        )


class TestInput:
    def test_each_shrink_retry_is_noted_in_order(
        self, server: ScriptedServer, sleeps: SleepRecorder
    ) -> None:
        too_long = Step(413, "Request Entity Too Large")
        server.push(too_long, too_long, Step(body=chat_reply(GOOD)))
        s = openai_summarizer(server, sleeps)
        out = s.summarize(request(user("word " * 8_000), budget=2_000), EST)
        assert out.notes == (
            "shrink:0.85",
            "shrink:0.70",
            "input:tool_head_tail",
            "cut_chars:18509",
            "calls:3",
            "call_input_tokens:100",
            "call_output_tokens:20",
        )
        sizes = [EST.text(history_text(r.body)) for r in server.received]
        assert sizes[1] <= int(sizes[0] * 0.85) and sizes[2] <= int(sizes[1] * 0.70)
        assert "[… 18,509 characters omitted …]" in history_text(server.received[2].body)

    def test_nudges_and_verification_are_counted(
        self, server: ScriptedServer, sleeps: SleepRecorder
    ) -> None:
        server.push(
            Step(body=chat_reply(summary_text(Blocked="-"))),
            Step(body=chat_reply(GOOD, prompt_tokens=300, completion_tokens=50)),
            Step(body=chat_reply(GOOD)),
        )
        s = openai_summarizer(server, sleeps, verify=True)
        out = s.summarize(request(), EST)
        assert out.notes == (
            "calls:3",
            "nudges:1",
            "verify:1",
            "call_input_tokens:500",
            "call_output_tokens:90",
        )
        assert [c.purpose for c in s.calls] == ["summary", "nudge", "verify"]

    def test_an_exchange_too_large_for_one_request_is_cut_and_noted(
        self, server: ScriptedServer, sleeps: SleepRecorder
    ) -> None:
        server.push(Step(body=chat_reply(GOOD)))
        s = openai_summarizer(server, sleeps, window=6_000, max_output_tokens=1_000)
        messages = (user("word " * 8_000),)
        out = s.summarize(request(*messages, budget=1_500), EST)
        assert out.notes == (
            "input:tool_head_tail",
            "cut_chars:26785",
            *CALL_NOTES,
        )
        sent = history_text(server.received[0].body)
        whole = serialize_transcript(messages, mode="tool_head_tail")
        marker = "\n[… 26,785 characters omitted …]\n| "
        assert marker in sent and len(sent) == len(whole) - 26_785 + len(marker)


class TestHybrid:
    def test_hybrid_notes_hold_the_input_notes_then_the_ledger_notes_then_the_calls(
        self, server: ScriptedServer, sleeps: SleepRecorder
    ) -> None:
        server.push(Step(body=chat_reply(GOOD)))
        hybrid = HybridSummarizer(openai_summarizer(server, sleeps), ledger_share=0.05)
        out = hybrid.summarize(request(*work_history(TASK, 40), budget=2_000), EST)
        assert out.notes == (
            "input:tool_head_tail",
            "ledgers:files_read: 33 not shown",
            *CALL_NOTES,
        )


def test_note_helpers() -> None:
    assert shrink_note(0.7) == "shrink:0.70"
    assert snake_name(ContextOverflow(9_000, 8_192)) == "context_overflow"
    assert cache_reuse_fallback(SummaryRejected("inflated", "x")) == (
        "cache_reuse:fallback(inflated)"
    )
    assert cache_reuse_fallback(NotReusable("x")) == "cache_reuse:fallback(not_reusable)"
    assert cache_reuse_fallback(TransientProviderError("x")) == (
        "cache_reuse:fallback(transient_provider_error)"
    )


def test_plan_notes_join_chunk_modes_least_degraded_first() -> None:
    pieces = (
        Piece("[user wrote]\n| a", 5, "no_tool_output", 0, 1),
        Piece("[user wrote]\n| b", 5, "tool_head_tail", 1, 2, cut_chars=40),
        Piece("[user wrote]\n| c", 5, "user_only", 2, 3, cut_chars=2),
    )
    assert plan_notes(InputPlan(pieces, 300), TRANSCRIPT_MODES) == [
        "input:tool_head_tail+no_tool_output+user_only",
        "chunks:3",
        "cut_chars:42",
    ]
    full = (Piece("[user wrote]\n| a", 5, "full", 0, 1),)
    assert plan_notes(InputPlan(full, 300), TRANSCRIPT_MODES) == []
