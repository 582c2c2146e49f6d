"""Overflow recovery sized by the numbers: an overflow right after an automatic compaction is
recovered by a forced compaction aimed at the provider's reported limit; a failed model summary
on a context that does not fit falls back to the extractive summarizer at once; a request we
estimate over the window is never sent; an output budget that leaves no room for history is a
configuration error, before any summary call or against the limit the provider reports."""

from __future__ import annotations

import math

import pytest
from llm_helpers import (
    GOOD,
    ONE_ATTEMPT,
    anthropic_provider,
    new_session,
    openai_summarizer,
    stream,
    work_history,
)
from servers import (
    ScriptedServer,
    SleepRecorder,
    Step,
    anthropic_error,
    chat_reply,
    openai_error,
)

from corpus import require_corpus
from ctxengine.engine import Session
from ctxengine.errors import ConfigError, ContextOverflow
from ctxengine.importers.registry import read_transcript
from ctxengine.model import CompactionRecord, Message, TextPart
from ctxengine.providers import OpenAIProvider
from ctxengine.summarizers.llm import LLMSummarizer

TASK = "Task A: migrate module X."
#: The provider's window is smaller than the session's: 1300 tokens with 500 for the output.
SMALL_LIMIT = openai_error(
    "This model's maximum context length is 1300 tokens. However, you requested 1412 tokens "
    "(912 in the messages, 500 in the completion). Please reduce the length of the messages.",
    code="context_length_exceeded",
)

#: 64000 reported, 63000 for the output, 5 % margin: no room for any history.
REPORTED_NO_ROOM = (
    "the system prompt and tools (0 tokens) plus the output reserve (63000 tokens) and a "
    "3200-token margin leave -2200 tokens of the provider's reported 64000-token window for "
    "history (at least 256 needed): no history fits; lower the reserve or the output budget, "
    "or use a model with a larger window"
)


def agent(server: ScriptedServer, sleeps: SleepRecorder) -> OpenAIProvider:
    return OpenAIProvider("gpt-test", base_url=server.url + "/v1", retry=ONE_ATTEMPT, sleep=sleeps)


def records(s: Session) -> list[CompactionRecord]:
    return [e.body for e in s.entries if isinstance(e.body, CompactionRecord)]


def sizes(s: Session) -> list[tuple[str, str, int, int, int | None]]:
    return [
        (r.reason, r.summarizer, r.tokens_before, r.tokens_after, r.truncate_tokens)
        for r in records(s)
    ]


class TestOverflowRightAfterACompaction:
    def test_the_recovery_compacts_again_to_the_reported_limit_and_retries(
        self, server: ScriptedServer, sleeps: SleepRecorder
    ) -> None:
        s = new_session(
            openai_summarizer(server, sleeps),
            messages=work_history(TASK, 12),
            keep_recent_tokens=1_500,
        )
        server.push(
            stream(GOOD),
            Step(400, SMALL_LIMIT),
            stream(GOOD),
            Step(body=chat_reply("Done.", prompt_tokens=400)),
        )
        assert s.complete(agent(server, sleeps)).text == "Done."
        # target: min(trigger 3500, 1300 - 500 output - 65 margin) = 735
        assert sizes(s) == [
            ("threshold", "llm", 3_911, 882, None),
            ("overflow", "llm", 882, 379, 168),
        ]
        assert [len(r.body["messages"]) for r in server.received] == [2, 5, 2, 3]
        assert [e.step for e in s.events] == ["compaction", "compaction"]
        assert s.entries[-1].body.text == "Done."  # type: ignore[union-attr]

    def test_a_second_overflow_after_the_forced_recovery_is_final_with_the_numbers(
        self, server: ScriptedServer, sleeps: SleepRecorder
    ) -> None:
        s = new_session(
            openai_summarizer(server, sleeps),
            messages=work_history(TASK, 12),
            keep_recent_tokens=1_500,
        )
        server.push(stream(GOOD), Step(400, SMALL_LIMIT), stream(GOOD), Step(400, SMALL_LIMIT))
        with pytest.raises(ContextOverflow) as info:
            s.complete(agent(server, sleeps))
        assert (info.value.tokens, info.value.limit) == (1_412, 1_300)
        assert str(info.value).startswith(
            "context overflow: 1412 tokens > limit 1300 (still too large after one compaction"
        )
        assert [r.reason for r in records(s)] == ["threshold", "overflow"]
        assert len(server.received) == 4

    def test_with_no_reported_limit_the_recovery_aims_below_the_size_that_overflowed(
        self, server: ScriptedServer, sleeps: SleepRecorder
    ) -> None:
        s = new_session(messages=work_history(TASK, 12), keep_recent_tokens=1_500)
        server.push(
            Step(413, openai_error("Request Entity Too Large", type_="request_too_large")),
            Step(body=chat_reply("Done.", prompt_tokens=400)),
        )
        assert s.complete(agent(server, sleeps)).text == "Done."
        # target: min(trigger 3500, 4000 - 500 output - 200 margin, 70 % of 885) = 619
        assert sizes(s) == [
            ("threshold", "extractive", 3_911, 885, None),
            ("overflow", "extractive", 885, 347, 141),
        ]


class TestTheCorpusSession:
    def test_a_subagent_log_compacted_for_64k_is_recovered_for_an_8k_server(
        self, server: ScriptedServer, sleeps: SleepRecorder
    ) -> None:
        path = require_corpus("claude-code", "spotter-long-dov-subagent-a2898e3.jsonl")
        provider = agent(server, sleeps)
        summarizer = LLMSummarizer(provider, max_output_tokens=2_000, window=128_000)
        s = Session(64_000, entries=read_transcript(path).entries, summarizer=summarizer)
        too_long = openai_error(
            "This model's maximum context length is 8192 tokens. However, your messages "
            "resulted in 14210 tokens. Please reduce the length of the messages.",
            code="context_length_exceeded",
        )
        server.push(
            stream(GOOD),
            Step(400, too_long),
            stream(GOOD),
            Step(body=chat_reply("Carrying on.", prompt_tokens=3_000)),
        )
        # Sized by the usage anchor: the transcript's newest reply reports the context it
        # was sent (71,258 tokens), against 60,603 by our estimate of the log alone.
        assert (s.context_tokens(s.project()), s.project().tokens) == (71_258, 60_603)
        assert s.complete(provider).text == "Carrying on."
        # target: min(trigger 51200, 8192 - 4096 output - 409 margin) = 3687. The overflow
        # compaction measures the compacted context (9,261 estimated tokens, no usage anchor
        # yet) through the usage correction the transcript's replies taught: x1.035.
        assert [(r.reason, r.tokens_before, r.tokens_after) for r in records(s)] == [
            ("threshold", 71_258, 9_261),
            ("overflow", 9_584, 1_150),
        ]
        assert s.usage_correction is not None
        assert math.ceil(9_261 * s.usage_correction.ratio) == 9_584
        assert [r.body["max_tokens"] for r in server.received] == [2_000, 4_096, 2_000, 4_096]


class TestAFailedSummaryOnAContextThatDoesNotFit:
    def test_the_extractive_summarizer_writes_the_compaction_at_once(
        self, server: ScriptedServer, sleeps: SleepRecorder
    ) -> None:
        s = new_session(openai_summarizer(server, sleeps), messages=work_history(TASK, 12))
        assert s.context_tokens(s.project()) == 3_911  # > 4000 - 500 output
        server.push(
            Step(500, openai_error("upstream failure", type_="server_error")),
            Step(body=chat_reply("Done.", prompt_tokens=400)),
        )
        assert s.complete(agent(server, sleeps)).text == "Done."
        assert [e.step for e in s.events] == ["fallback", "compaction"]
        assert s.events[0].detail == (
            "llm summarizer failed (provider call failed after 1 attempt(s) (HTTP 500): upstream "
            "failure); the context does not fit the window, so the extractive summarizer writes "
            "this compaction"
        )
        assert sizes(s) == [("threshold", "extractive", 3_911, 529, None)]
        assert (s.breaker.open, s.breaker.failures, s.failures) == (False, 1, 0)
        assert len(server.received) == 2


class TestNeverSentOverTheWindow:
    def test_a_context_we_estimate_over_the_window_is_not_sent(
        self, server: ScriptedServer, sleeps: SleepRecorder
    ) -> None:
        # One user turn and no split turns: no cut point, so nothing can be compacted.
        s = new_session(messages=work_history(TASK, 12), split_turn=False)
        with pytest.raises(ContextOverflow) as info:
            s.complete(agent(server, sleeps))
        assert (info.value.tokens, info.value.limit) == (4_411, 4_000)
        assert str(info.value) == (
            "context overflow: 4411 tokens > limit 4000 (compaction failed: no valid cut point "
            "leaves anything to summarize; detected: context overflow: 4411 tokens > limit 4000 "
            "(estimated before sending: 3911 tokens of context plus an output budget of 500; "
            "not sent))"
        )
        assert server.received == [] and records(s) == []
        assert [(e.step, e.detail) for e in s.events] == [
            ("failure", "no valid cut point leaves anything to summarize")
        ]


class TestAnOutputBudgetWithNoRoomForHistory:
    def test_filling_the_window_is_a_config_error_before_any_summary_call(
        self, server: ScriptedServer, sleeps: SleepRecorder
    ) -> None:
        path = require_corpus("claude-code", "spotter-long-dov-subagent-a2898e3.jsonl")
        provider = agent(server, sleeps)
        summarizer = LLMSummarizer(provider, max_output_tokens=2_000, window=128_000)
        s = Session(64_000, entries=read_transcript(path).entries, summarizer=summarizer)
        before = s.entries
        with pytest.raises(ConfigError) as info:
            s.complete(provider, max_output_tokens=64_000)
        assert str(info.value).startswith(
            "the system prompt and tools (0 tokens) plus the output reserve (64000 tokens) and a "
            "3200-token margin leave -3200 tokens of the 64000-token window for history"
        )
        assert server.received == [] and s.entries == before and s.events == []

    def test_63000_of_64000_is_a_config_error_before_anything_is_sent(
        self, server: ScriptedServer, sleeps: SleepRecorder
    ) -> None:
        s = Session(64_000, entries=[])
        s.append(Message("user", (TextPart(TASK),)))
        with pytest.raises(ConfigError) as info:
            s.complete(agent(server, sleeps), max_output_tokens=63_000)
        assert str(info.value) == (
            "the system prompt and tools (0 tokens) plus the output reserve (63000 tokens) and a "
            "3200-token margin leave -2200 tokens of the 64000-token window for history (at "
            "least 256 needed): no history fits; lower the reserve or the output budget, or use "
            "a model with a larger window"
        )
        assert server.received == []

    def test_the_openai_limit_reported_with_the_output_budget_is_a_config_error(
        self, server: ScriptedServer, sleeps: SleepRecorder
    ) -> None:
        s = new_session(messages=work_history(TASK, 2), window=128_000)
        server.push(
            Step(
                400,
                openai_error(
                    "This model's maximum context length is 64000 tokens. However, you "
                    "requested 74012 tokens (11012 in the messages, 63000 in the completion). "
                    "Please reduce the length of the messages or completion.",
                    code="context_length_exceeded",
                ),
            )
        )
        with pytest.raises(ConfigError) as info:
            s.complete(agent(server, sleeps), max_output_tokens=63_000)
        assert str(info.value) == REPORTED_NO_ROOM
        assert len(server.received) == 1 and records(s) == []

    def test_the_anthropic_max_tokens_message_is_a_config_error(
        self, server: ScriptedServer, sleeps: SleepRecorder
    ) -> None:
        s = new_session(messages=work_history(TASK, 2), window=128_000)
        server.push(Step(400, anthropic_error("max_tokens: 63000 > 64000 - 11012")))
        with pytest.raises(ConfigError) as info:
            s.complete(anthropic_provider(server, sleeps), max_output_tokens=63_000)
        assert str(info.value) == REPORTED_NO_ROOM
        assert len(server.received) == 1 and records(s) == []
