"""Session.complete() and on_overflow(): one compaction and one retry on overflow, then a clear
ContextOverflow; configuration problems reported as such; images as placeholders in the summary
input after a 413; cache-reuse mode appending to the live request."""

from __future__ import annotations

import base64

import pytest
from llm_helpers import (
    GOOD,
    ONE_ATTEMPT,
    anthropic_provider,
    calls,
    new_session,
    work_history,
)
from servers import (
    ScriptedServer,
    SleepRecorder,
    Step,
    anthropic_error,
    anthropic_reply,
    anthropic_stream,
    chat_reply,
    openai_error,
)

from ctxengine import validate
from ctxengine.errors import ConfigError, ContextOverflow, ProviderOverflow
from ctxengine.model import CompactionRecord, ImagePart, Message, TextPart, system, user
from ctxengine.providers import OpenAIProvider
from ctxengine.summarizers.llm import LLMSummarizer

TASK = "Task A: migrate module X."
CONTEXT_LENGTH = openai_error(
    "This model's maximum context length is 4000 tokens. However, your messages resulted in "
    "4600 tokens. Please reduce the length of the messages.",
    code="context_length_exceeded",
)


def agent(server: ScriptedServer, sleeps: SleepRecorder) -> OpenAIProvider:
    return OpenAIProvider("gpt-test", base_url=server.url + "/v1", retry=ONE_ATTEMPT, sleep=sleeps)


def records(s: object) -> list[CompactionRecord]:
    return [e.body for e in s.entries if isinstance(e.body, CompactionRecord)]  # type: ignore[attr-defined]


class TestComplete:
    def test_a_plain_call_is_rendered_sent_and_recorded(
        self, server: ScriptedServer, sleeps: SleepRecorder
    ) -> None:
        server.push(Step(body=chat_reply("Looking now.", prompt_tokens=1_000)))
        s = new_session(messages=work_history(TASK, 2))
        reply = s.complete(agent(server, sleeps), max_output_tokens=300)
        assert reply.text == "Looking now."
        last = s.entries[-1].body
        assert isinstance(last, Message) and (last.role, last.text) == ("assistant", "Looking now.")
        [got] = server.received
        assert validate(got.body, "openai") == []
        assert got.body["max_tokens"] == 300

    def test_overflow_compacts_once_and_retries(
        self, server: ScriptedServer, sleeps: SleepRecorder
    ) -> None:
        server.push(Step(400, CONTEXT_LENGTH), Step(body=chat_reply("Done.", prompt_tokens=900)))
        s = new_session(messages=work_history(TASK, 10))
        assert s.context_tokens(s.project()) < s.budget.trigger
        reply = s.complete(agent(server, sleeps))
        assert reply.text == "Done."
        [record] = records(s)
        assert (record.reason, record.summarizer) == ("overflow", "extractive")
        first, second = (r.body["messages"] for r in server.received)
        assert (len(first), len(second)) == (21, 3)
        assert (
            second[0]["content"].startswith("The earlier part of this session was compacted.")
            and "<continuation-state>\n## Goal\nTask A: migrate module X." in second[0]["content"]
        )
        assert [m["role"] for m in second] == ["user", "assistant", "tool"]
        assert [e.step for e in s.events] == ["compaction"]
        assert s.entries[-1].body.text == "Done."  # type: ignore[union-attr]

    def test_a_second_overflow_raises_context_overflow_with_the_numbers(
        self, server: ScriptedServer, sleeps: SleepRecorder
    ) -> None:
        server.push(Step(400, CONTEXT_LENGTH), Step(400, CONTEXT_LENGTH))
        s = new_session(messages=work_history(TASK, 10))
        with pytest.raises(ContextOverflow) as info:
            s.complete(agent(server, sleeps))
        assert (info.value.tokens, info.value.limit) == (4_600, 4_000)
        assert str(info.value).startswith(
            "context overflow: 4600 tokens > limit 4000 (still too large after one compaction"
        )
        assert len(server.received) == 2 and len(records(s)) == 1
        assert isinstance(s.entries[-1].body, CompactionRecord)

    def test_silent_overflow_in_usage_is_an_overflow(
        self, server: ScriptedServer, sleeps: SleepRecorder
    ) -> None:
        server.push(
            Step(body=chat_reply("partial answer", prompt_tokens=5_200)),
            Step(body=chat_reply("Full answer.", prompt_tokens=1_500)),
        )
        s = new_session(messages=work_history(TASK, 10))
        assert s.complete(agent(server, sleeps)).text == "Full answer."
        texts = [e.body.text for e in s.entries if isinstance(e.body, Message)]
        assert "partial answer" not in texts and texts[-1] == "Full answer."
        assert [r.reason for r in records(s)] == ["overflow"]

    def test_a_length_stop_with_no_output_on_a_full_window_is_an_overflow(
        self, server: ScriptedServer, sleeps: SleepRecorder
    ) -> None:
        server.push(
            Step(body=chat_reply("", finish="length", prompt_tokens=3_700, completion_tokens=0)),
            Step(body=chat_reply("Answer.", prompt_tokens=1_500)),
        )
        s = new_session(messages=work_history(TASK, 10))
        assert s.complete(agent(server, sleeps)).text == "Answer."
        assert [r.reason for r in records(s)] == ["overflow"]

    def test_no_room_beside_the_system_prompt_is_a_config_error_and_nothing_is_sent(
        self, server: ScriptedServer, sleeps: SleepRecorder
    ) -> None:
        s = new_session(messages=[system("rules " * 2_000), user(TASK)], window=8_000)
        with pytest.raises(ConfigError, match=r"\(3004 tokens\) plus the output reserve \(5000"):
            s.complete(agent(server, sleeps), max_output_tokens=5_000)
        assert server.received == []

    def test_on_overflow_reports_a_reserve_that_leaves_no_room_as_configuration(self) -> None:
        s = new_session(messages=[system("rules " * 2_700), user(TASK)], window=4_000)
        with pytest.raises(ConfigError, match="no history fits"):
            s.on_overflow(ProviderOverflow(None, None, status=413))
        assert records(s) == []


class TestImagesAfter413:
    def test_413_with_a_tiny_estimate_is_an_overflow_and_images_become_placeholders(
        self, server: ScriptedServer, sleeps: SleepRecorder
    ) -> None:
        png = base64.b64encode(b"\x89PNG" + bytes(60_000)).decode()
        shots: list[Message] = [user(TASK)]
        for k in range(6):
            image = ImagePart("image/png", data=png, byte_size=60_004, width=1920, height=1080)
            shots += [
                Message("user", (TextPart(f"screenshot {k}"), image)),
                calls(text=f"Noted screenshot {k}."),
            ]
        shots += work_history("", 3, first=1)
        provider = anthropic_provider(server, sleeps)
        summarizer = LLMSummarizer(provider, max_output_tokens=2_000, window=200_000)
        s = new_session(summarizer, messages=shots, window=200_000, reserve_tokens=20_000)
        assert s.context_tokens(s.project()) < 2_000
        server.push(
            Step(
                413, anthropic_error("Request exceeds the maximum size", type_="request_too_large")
            ),
            Step(events=anthropic_stream([GOOD])),
            Step(body=anthropic_reply("Carrying on.")),
        )
        assert s.complete(provider).text == "Carrying on."
        too_big, summary, retry = (r.body for r in server.received)
        assert str(too_big).count("'type': 'image'") == 6
        text = summary["messages"][0]["content"][0]["text"]
        assert "'type': 'image'" not in str(summary) and png[:100] not in str(summary)
        for k in range(6):
            assert (
                f"[user wrote]\n| screenshot {k}\n| [image: image/png, 1920×1080 px, 60,004 bytes]"
                in text
            )
        assert "'type': 'image'" not in str(retry)
        assert validate(retry, "anthropic") == []
        [record] = records(s)
        assert (record.reason, record.summarizer, record.summary) == ("overflow", "llm", GOOD)


class TestCacheReuse:
    def session(self, server: ScriptedServer, sleeps: SleepRecorder, **kw: object) -> object:
        provider = anthropic_provider(server, sleeps)
        summarizer = LLMSummarizer(
            provider, max_output_tokens=2_000, window=200_000, cache_reuse=True
        )
        return provider, new_session(summarizer, messages=work_history(TASK, 10), **kw)

    def test_the_summary_instruction_is_appended_to_the_exact_live_request(
        self, server: ScriptedServer, sleeps: SleepRecorder
    ) -> None:
        provider, s = self.session(server, sleeps, keep_recent_tokens=800)
        server.push(
            Step(body=anthropic_reply("Next file.", input_tokens=3_600)),
            Step(events=anthropic_stream([GOOD])),
            Step(body=anthropic_reply("Continuing.", input_tokens=900)),
        )
        s.complete(provider)  # type: ignore[attr-defined]
        s.append(user("keep going"))  # type: ignore[attr-defined]
        s.complete(provider)  # type: ignore[attr-defined]
        live, summary, _after = (r.body for r in server.received)
        assert summary["messages"][:-1] == live["messages"][:-1]
        assert (summary.get("system"), summary.get("tools")) == (
            live.get("system"),
            live.get("tools"),
        )
        last_live, last_sent = live["messages"][-1], summary["messages"][-1]
        assert last_sent["content"][:-1] == last_live["content"]
        instruction = last_sent["content"][-1]["text"]
        assert instruction.startswith("[Context compaction request from the agent's runtime")
        assert summary["max_tokens"] == 2_000
        [record] = records(s)
        assert record.summary == GOOD
        calls_made = s.summarizer.calls  # type: ignore[attr-defined]
        assert [(c.purpose, c.mode) for c in calls_made] == [("cache_reuse", "append")]

    def test_a_tool_call_in_cache_reuse_mode_falls_back_to_a_transcript(
        self, server: ScriptedServer, sleeps: SleepRecorder
    ) -> None:
        provider, s = self.session(server, sleeps, keep_recent_tokens=800)
        tool_use = anthropic_reply(tool_uses=[("t1", "Read", {"file_path": "x"})])
        tool_use["stop_reason"] = "tool_use"
        events = anthropic_stream([""])
        events[1] = (
            "content_block_start",
            {
                "type": "content_block_start",
                "index": 0,
                "content_block": {"type": "tool_use", "id": "t1", "name": "Read", "input": {}},
            },
        )
        events[-2] = (
            "message_delta",
            {"type": "message_delta", "delta": {"stop_reason": "tool_use"}, "usage": {}},
        )
        server.push(
            Step(body=anthropic_reply("Next file.", input_tokens=3_600)),
            Step(events=events),
            Step(events=anthropic_stream([GOOD])),
            Step(body=anthropic_reply("Continuing.")),
        )
        s.complete(provider)  # type: ignore[attr-defined]
        s.append(user("keep going"))  # type: ignore[attr-defined]
        s.complete(provider)  # type: ignore[attr-defined]
        calls_made = s.summarizer.calls  # type: ignore[attr-defined]
        assert [(c.purpose, c.outcome) for c in calls_made] == [
            ("cache_reuse", "tool_calls"),
            ("summary", "stop"),
        ]
        transcript = server.received[2].body
        assert transcript["messages"][0]["content"][0]["text"].startswith("<history>")
        assert "cache_control" not in str(transcript)
        assert records(s)[0].summary == GOOD


class TestOnOverflow:
    def test_a_caller_reports_silent_overflow_by_usage_and_a_second_one_is_final(self) -> None:
        from ctxengine.model import Usage

        s = new_session(messages=work_history(TASK, 10))
        outcome = s.on_overflow(Usage(input_tokens=4_800, output_tokens=10))
        assert outcome.entry.body.reason == "overflow"  # type: ignore[union-attr]
        s.append(user("one more thing"))
        with pytest.raises(ContextOverflow) as info:
            s.on_overflow(ProviderOverflow(4_450, 4_000, status=400))
        assert (info.value.tokens, info.value.limit) == (4_450, 4_000)
        assert len(records(s)) == 1

    def test_a_recorded_reply_rearms_the_recovery(self) -> None:
        s = new_session(messages=work_history(TASK, 10))
        s.on_overflow(ProviderOverflow(None, None, status=413))
        s.record(calls(text="Recovered."))
        for m in work_history("", 8, first=40):
            s.append(m)
        s.on_overflow(ProviderOverflow(None, None, status=413))
        assert [r.reason for r in records(s)] == ["overflow", "overflow"]

    def test_something_that_is_not_an_overflow_is_a_value_error(self) -> None:
        from ctxengine.errors import RateLimited
        from ctxengine.model import Usage

        s = new_session(messages=work_history(TASK, 2))
        with pytest.raises(ValueError, match="not a context overflow"):
            s.on_overflow(Usage(input_tokens=100))
        with pytest.raises(ValueError, match="not a context overflow"):
            s.on_overflow(RateLimited("slow down"))
        assert records(s) == []
