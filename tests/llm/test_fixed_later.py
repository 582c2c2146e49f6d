"""A model summary is told which errors of the messages it summarizes the kept tail shows
fixed (``<fixed-later>`` in its prompt), and its ledgers carry them fixed; over real HTTP."""

from __future__ import annotations

from typing import Any

from llm_helpers import (
    GOOD,
    QuarterEstimator,
    call,
    calls,
    openai_summarizer,
    result,
    user_prompt,
)
from servers import ScriptedServer, SleepRecorder, Step, chat_reply

from ctxengine.model import Message, user
from ctxengine.summarizers import prompts
from ctxengine.summarizers.base import LiveRequest, SummaryRequest
from ctxengine.summarizers.hybrid import HybridSummarizer

EST = QuarterEstimator()
TASK = "Task A: make tests/test_x.py pass."
FAILED = "FAILED tests/test_x.py::test_load - AssertionError: None != 1"
BLOCK = (
    "The messages after the part you summarize stay in the context verbatim after your "
    "summary, and they show that the agent fixed these errors of that part. Report each one "
    "as fixed under Errors and fixes; never present it as open, as blocking or as the next "
    f"step.\n<fixed-later>\n- {FAILED}\n</fixed-later>"
)


def work() -> tuple[Message, ...]:
    return (
        user(TASK),
        calls(call("c0", "Read", file_path="src/x.py"), text="Reading the module."),
        result("c0", "def load():\n    pass\n" * 30),
        calls(call("c1", "Bash", command="pytest tests/test_x.py"), text="Running the test."),
        result("c1", f"Exit code 1\n{FAILED}\n1 failed in 0.02s", is_error=True),
        calls(text="Fixing load()."),
    )


#: The tail kept after the cut: the same test passes.
KEPT = (
    calls(call("c2", "Bash", command="pytest tests/test_x.py")),
    result("c2", "1 passed in 0.01s"),
)


def request(**kwargs: Any) -> SummaryRequest:
    return SummaryRequest(work(), None, TASK, 1_000, **kwargs)


def test_the_block_quotes_each_line_with_its_tags_neutralised() -> None:
    assert prompts.fixed_later_block([FAILED]) == BLOCK
    assert prompts.fixed_later_block(["x </fixed-later>\n  y"]) == BLOCK.replace(
        f"- {FAILED}", "- x ‹/fixed-later› y"
    )
    assert prompts.fixed_later_block([]) == ""


def test_the_prompt_names_the_errors_the_kept_tail_fixed(
    server: ScriptedServer, sleeps: SleepRecorder
) -> None:
    server.push(Step(body=chat_reply(GOOD)))
    out = openai_summarizer(server, sleeps).summarize(request(kept=KEPT), EST)
    prompt = user_prompt(server.received[0].body)
    assert f"</history>\n\n{BLOCK}\n\nSummarize the history above as continuation state." in (
        prompt
    )
    assert [(e.text, e.status) for e in out.ledgers.error_facts] == [(FAILED, "fixed")]


def test_without_the_tail_nothing_is_said_fixed(
    server: ScriptedServer, sleeps: SleepRecorder
) -> None:
    server.push(Step(body=chat_reply(GOOD)))
    out = openai_summarizer(server, sleeps).summarize(request(), EST)
    assert "<fixed-later>" not in user_prompt(server.received[0].body)
    assert [(e.text, e.status) for e in out.ledgers.error_facts] == [(FAILED, "open")]


def test_the_cache_reuse_instruction_names_them_too(
    server: ScriptedServer, sleeps: SleepRecorder
) -> None:
    server.push(Step(body=chat_reply(GOOD)))
    body = {"model": "gpt-test", "messages": [{"role": "user", "content": TASK}]}
    live = LiveRequest("openai", body, 400)
    s = openai_summarizer(server, sleeps, cache_reuse=True)
    out = s.summarize(request(kept=KEPT, live_request=live), EST)
    assert out.notes[0] == "cache_reuse:appended"
    instruction = server.received[0].body["messages"][-1]["content"]
    assert f"\n\n{BLOCK}\n\nThe user writes in English" in instruction


def test_the_hybrid_narrative_is_told_and_its_ledger_block_says_fixed(
    server: ScriptedServer, sleeps: SleepRecorder
) -> None:
    server.push(Step(body=chat_reply(GOOD)))
    out = HybridSummarizer(openai_summarizer(server, sleeps)).summarize(request(kept=KEPT), EST)
    assert BLOCK in user_prompt(server.received[0].body)
    assert f"\n- fixed: {FAILED} — `pytest tests/test_x.py`\n" in out.text + "\n"
    assert "open:" not in out.text
