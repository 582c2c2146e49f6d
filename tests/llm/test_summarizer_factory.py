"""Building summarizers by name; the model profile sizes the summary call."""

from __future__ import annotations

import asyncio
import time

import pytest
from llm_helpers import GOOD, QuarterEstimator, openai_summarizer, work_history
from servers import ScriptedServer, SleepRecorder, Step, chat_stream

from ctxengine.errors import ConfigError
from ctxengine.providers import OpenAIProvider, model_profile
from ctxengine.providers.profiles import UnknownModelWarning
from ctxengine.summarizers import (
    ExtractiveSummarizer,
    HybridSummarizer,
    LLMSummarizer,
    make_summarizer,
)
from ctxengine.summarizers.base import SummaryRequest
from ctxengine.summarizers.drop import DropSummarizer
from ctxengine.summarizers.factory import summary_output_tokens


def provider() -> OpenAIProvider:
    return OpenAIProvider("gpt-4o-mini", base_url="http://127.0.0.1:9/v1")


def test_the_profile_gives_the_window_and_the_output_budget() -> None:
    summarizer = make_summarizer(
        "llm", user_messages_budget=4_000, provider=provider(), profile=model_profile("gpt-4o-mini")
    )
    assert isinstance(summarizer, LLMSummarizer)
    assert (summarizer.window, summarizer.max_output_tokens, summarizer.margin_tokens) == (
        128_000,
        12_000,
        6_400,
    )


def test_an_unknown_model_gets_the_conservative_default_with_a_warning() -> None:
    with pytest.warns(UnknownModelWarning):
        profile = model_profile("my-local-model")
    assert (profile.context_window, summary_output_tokens(profile)) == (32_768, 4_096)


def test_hybrid_wraps_an_llm_summarizer_and_extractive_needs_no_model() -> None:
    hybrid = make_summarizer(
        "hybrid", user_messages_budget=4_000, provider=provider(), profile=model_profile("gpt-4o")
    )
    assert isinstance(hybrid, HybridSummarizer) and hybrid.name == "hybrid"
    assert isinstance(hybrid.llm, LLMSummarizer) and hybrid.provider is hybrid.llm.provider
    assert make_summarizer("extractive", user_messages_budget=123) == ExtractiveSummarizer(123)
    assert make_summarizer("none", user_messages_budget=123) == DropSummarizer()
    with pytest.raises(ConfigError, match="needs a summary model"):
        make_summarizer("llm", user_messages_budget=4_000)
    with pytest.raises(ConfigError) as info:
        make_summarizer("abstractive", user_messages_budget=4_000)
    assert str(info.value) == (
        "unknown summarizer 'abstractive'; expected one of ('extractive', 'llm', 'hybrid', 'none')"
    )


def test_cancelling_the_awaiting_task_cancels_the_summary_stream(
    server: ScriptedServer, sleeps: SleepRecorder
) -> None:
    pieces = [GOOD[i : i + 10] for i in range(0, len(GOOD), 10)]
    server.push(Step(events=chat_stream(pieces), delay_s=0.2))
    summarizer = openai_summarizer(server, sleeps)
    request = SummaryRequest(tuple(work_history("Task A", 3)), None, "Task A", 1_000)

    async def run() -> float:
        task = asyncio.create_task(summarizer.asummarize(request, QuarterEstimator()))
        await asyncio.sleep(0.5)
        started = time.monotonic()
        task.cancel()
        with pytest.raises(asyncio.CancelledError):
            await task
        return time.monotonic() - started

    assert asyncio.run(run()) < 1.0
    deadline = time.monotonic() + 3
    while not server.disconnects and time.monotonic() < deadline:
        time.sleep(0.05)
    assert len(server.disconnects) == 1
    assert [c.outcome for c in summarizer.calls] == ["Cancelled"]
