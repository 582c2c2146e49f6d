"""The default thrash guard runs when a model summarizer writes the compactions: three model
summaries that each bought 4 calls, then one thrash error and no fourth summary call."""

from __future__ import annotations

import json

import pytest
from llm_helpers import GOOD, openai_summarizer, stream
from servers import ScriptedServer, SleepRecorder

from ctxengine import Session
from ctxengine.errors import ThrashError
from ctxengine.model import Message, TextPart, ToolCallPart, ToolResultPart
from hand_estimator import HandEstimator

EST = HandEstimator()


def filler(tokens: int) -> str:
    """A text of ``tokens`` tokens under :class:`HandEstimator`."""
    return ("lorem ipsum dolor sit amet " * tokens)[: 4 * (tokens - 1)]


def test_model_summaries_that_each_buy_four_calls_stop_after_three(
    server: ScriptedServer, sleeps: SleepRecorder
) -> None:
    server.push(stream(GOOD), stream(GOOD), stream(GOOD))
    summarizer = openai_summarizer(server, sleeps, window=200_000)
    s = Session(200_000, estimator=EST, summarizer=summarizer)
    s.append(Message("system", (TextPart("You are a coding agent."),)))
    s.append(Message("user", (TextPart("Read the whole codebase and port it."),)))
    with pytest.raises(ThrashError) as err:
        for n in range(60):
            s.prepare()
            calls = tuple(
                ToolCallPart(f"c{n}_{k}", "read_file", json.dumps({"path": f"m{n}_{k}.py"}))
                for k in range(5)
            )
            s.record(Message("assistant", calls))
            results = tuple(ToolResultPart(c.id, (TextPart(filler(7_900)),)) for c in calls)
            s.append(Message("tool", results))
    assert [e.step for e in s.events] == ["compaction"] * 3 + ["thrash"]
    assert len(server.received) == 3  # no fourth summary bought
    assert err.value.calls == (4, 4, 4)
    assert err.value.contributors[0][0] == "tool results of read_file (25 results)"
