"""A model summarizer follows its policy's template (the known systems' headings, validated)
and, with ``overflow="drop_oldest"``, drops the oldest messages of a summary request the
model rejected as too long."""

from __future__ import annotations

from llm_helpers import QuarterEstimator, history_text, openai_summarizer, user_prompt
from servers import ScriptedServer, SleepRecorder, Step, chat_reply, openai_error

from ctxengine.errors import ConfigError
from ctxengine.model import Message, user
from ctxengine.policy.policy import TemplateName
from ctxengine.summarizers.base import SummaryRequest
from ctxengine.summarizers.templates import (
    CODEX_TEMPLATE,
    OPENCODE_TEMPLATE,
    TEMPLATES,
    template_named,
)

EST = QuarterEstimator()
TASK = "Task A: migrate module X."


def request(*messages: Message, budget: int = 1_000) -> SummaryRequest:
    return SummaryRequest(messages, None, TASK, budget)


def opencode_summary(**missing: bool) -> str:
    lines: list[str] = []
    for heading in OPENCODE_TEMPLATE.headings:
        if missing.get(heading.replace(" ", "_")):
            continue
        level = "###" if heading in ("Completed", "Active", "Blocked") else "##"
        lines += [f"{level} {heading}", f"- about {heading.lower()}"]
    return "\n".join(lines)


def test_every_policy_template_name_has_a_template() -> None:
    from typing import get_args

    assert tuple(TEMPLATES) == get_args(TemplateName)
    assert template_named("pi").headings[:2] == ("Goal", "Constraints & Preferences")
    try:
        template_named("cursor")
    except ConfigError as exc:
        assert "unknown summary template 'cursor'" in str(exc)
    else:  # pragma: no cover
        raise AssertionError("no ConfigError")


def test_the_prompt_asks_for_the_template_and_its_headings_are_validated(
    server: ScriptedServer, sleeps: SleepRecorder
) -> None:
    # The first reply lacks "Next Move": one nudge naming it, then an accepted reply.
    server.push(
        Step(body=chat_reply(opencode_summary(Next_Move=True))),
        Step(body=chat_reply(opencode_summary())),
    )
    s = openai_summarizer(server, sleeps, template=OPENCODE_TEMPLATE)
    out = s.summarize(request(user(TASK + " details" * 100), user("and add tests")), EST)
    assert out.text == opencode_summary()
    first, second = (user_prompt(r.body) for r in server.received)
    assert first.endswith("Use exactly this template:\n\n" + OPENCODE_TEMPLATE.text)
    assert "lacked these required sections: Next Move." in second
    assert [c.purpose for c in s.calls] == ["summary", "nudge"]


def test_a_free_form_template_requires_no_heading(
    server: ScriptedServer, sleeps: SleepRecorder
) -> None:
    handoff = "The user wants module X migrated; src/x.py is half done. Next: finish load()."
    server.push(Step(body=chat_reply(handoff)))
    s = openai_summarizer(server, sleeps, template=CODEX_TEMPLATE)
    out = s.summarize(request(user(TASK + " details" * 100), user("go on")), EST)
    assert out.text == handoff
    assert len(server.received) == 1
    assert user_prompt(server.received[0].body).endswith(CODEX_TEMPLATE.text)


def test_drop_oldest_resends_the_newest_messages_whole(
    server: ScriptedServer, sleeps: SleepRecorder
) -> None:
    handoff = "Module X: the newest requests were about tests."
    server.push(
        Step(
            400,
            openai_error(
                "This model's maximum context length is 8192 tokens. However, your "
                "messages resulted in 9500 tokens. Please reduce the length of the messages.",
                code="context_length_exceeded",
            ),
        ),
        Step(body=chat_reply(handoff)),
    )
    messages = tuple(user(f"request {k}: " + "detail " * 200) for k in range(8))
    s = openai_summarizer(
        server, sleeps, window=12_000, template=CODEX_TEMPLATE, overflow="drop_oldest"
    )
    out = s.summarize(request(*messages), EST)
    assert out.text == handoff
    first, second = (history_text(r.body) for r in server.received)
    # Each message is 4 + 353 = 357 tokens; the rejected transcript held all 8; the next one
    # aims at 0.78 of it and keeps the newest messages whole, none degraded.
    assert first.count("[user wrote]") == 8
    kept = second.count("[user wrote]")
    assert second.startswith(f"[user wrote]\n| request {8 - kept}: detail")
    assert "omitted" not in second
    assert out.notes[:2] == ("shrink:0.78", f"dropped_oldest:{8 - kept}")
    assert kept == 6
