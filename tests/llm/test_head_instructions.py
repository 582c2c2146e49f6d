"""The compact instructions of the rules files in a session's head reach a model summarizer's
prompt (over a real local HTTP server), beside the summarizer's own."""

from __future__ import annotations

from llm_helpers import GOOD, openai_summarizer, stream, user_prompt, work_history
from servers import ScriptedServer, SleepRecorder

from ctxengine.assembly import ContextAssembler, RuleFile
from ctxengine.engine import Session
from ctxengine.policy import Policy

RULE = RuleFile("AGENTS.md", "Use tabs.", instructions="Keep every test name.")


def session(summarizer: object) -> Session:
    s = Session(
        8_000,
        policy=Policy(prune_enabled=False, keep_recent_tokens=300),
        summarizer=summarizer,  # type: ignore[arg-type]
        head=ContextAssembler(rules=[RULE]),
    )
    for m in work_history("Task: port the parser.", 6):
        s.append(m)
    return s


def test_head_instructions_are_in_the_summary_prompt(
    server: ScriptedServer, sleeps: SleepRecorder
) -> None:
    server.push(stream(GOOD))
    s = session(openai_summarizer(server, sleeps))
    assert s.compact().summarizer == "llm"
    [got] = server.received
    assert "Project compact instructions:\nKeep every test name." in user_prompt(got.body)


def test_the_summarizers_own_instructions_come_first(
    server: ScriptedServer, sleeps: SleepRecorder
) -> None:
    server.push(stream(GOOD))
    s = session(openai_summarizer(server, sleeps, instructions="Keep open errors."))
    s.compact()
    [got] = server.received
    assert (
        "Project compact instructions:\nKeep open errors.\n\nKeep every test name."
        in user_prompt(got.body)
    )
