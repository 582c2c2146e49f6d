"""The model summarizers anchor on an imported compaction's summary (Claude Code, pi, Codex)
as they do on their own, and the hybrid ledgers list the paths it names as modified."""

from __future__ import annotations

from llm_helpers import GOOD, QuarterEstimator, call, calls, openai_summarizer, result, user_prompt
from servers import ScriptedServer, SleepRecorder, Step, chat_reply

from ctxengine.model import CompactionRecord, user
from ctxengine.summarizers import prompts
from ctxengine.summarizers.base import SummaryRequest
from ctxengine.summarizers.hybrid import HybridSummarizer

EST = QuarterEstimator()
IMPORTED = (
    "This session is being continued from a previous conversation.\n"
    "- `lib/app/registry.ex` (CREATED - task a0y.1)\n"
    "- Read lib/app/config.ex"
)


def _request(goal: str = "Work on bead a0y.") -> SummaryRequest:
    previous = CompactionRecord(IMPORTED, None, 9_000, 0, "claude-code", "imported", "imported")
    later = (
        user("/mode"),
        user("Now wire the tail worker."),
        calls(call("c1", "Edit", file_path="lib/app/tail.ex", old_string="a", new_string="b")),
        result("c1", "ok\n" * 400),
        calls(text="Wired."),
    )
    return SummaryRequest(later, previous, goal, 1_000)


def test_the_llm_prompt_carries_the_imported_summary_as_its_anchor(
    server: ScriptedServer, sleeps: SleepRecorder
) -> None:
    server.push(Step(body=chat_reply(GOOD)))
    out = openai_summarizer(server, sleeps).summarize(_request(), EST)
    prompt = user_prompt(server.received[0].body)
    assert f"<previous-summary>\n{IMPORTED}\n</previous-summary>" in prompt
    assert prompts.UPDATE_RULES in prompt
    assert out.ledgers.files_modified == ("lib/app/registry.ex", "lib/app/tail.ex")
    assert out.ledgers.files_read == ()


def test_the_hybrid_ledgers_list_the_imported_paths_and_skip_a_command_goal(
    server: ScriptedServer, sleeps: SleepRecorder
) -> None:
    server.push(Step(body=chat_reply(GOOD)))
    hybrid = HybridSummarizer(openai_summarizer(server, sleeps))
    out = hybrid.summarize(_request(goal="/mode"), EST)
    prompt = user_prompt(server.received[0].body)
    assert f"<previous-summary>\n{IMPORTED}\n</previous-summary>" in prompt
    assert "<first-request>" not in prompt  # the goal is in the transcript
    assert out.text == (
        f"{GOOD}\n\n{prompts.LEDGER_INTRO}\n\n"
        "## First user request (verbatim)\nNow wire the tail worker.\n\n"
        "## Done\n- edited lib/app/tail.ex\n\n"
        "## Files modified\n- lib/app/registry.ex\n- lib/app/tail.ex"
    )
