"""Signed reasoning of the newest reply outlives a compaction only while its turn is in
progress (a tool loop Anthropic needs the thinking back for); a finished turn's thinking is
dropped like any older one."""

from __future__ import annotations

from engine_helpers import EST, BloatedSummarizer, call, filler, result

from ctxengine.engine import Session
from ctxengine.model import Message, ReasoningPart, TextPart, system, user
from ctxengine.policy import DEFAULT_POLICY
from ctxengine.projection.project import continuation_message
from ctxengine.projection.render import render_anthropic
from ctxengine.projection.validate import validate

#: A 90,000-character signed thinking block: 22,501 + 4 tokens under the hand estimator.
THINKING = ReasoningPart("think " * 15_000, signature="EqQBCkgIARAB")
#: Keep the whole newest turn verbatim (it is larger than the default 20,000 budget) and
#: summarize the first one.
POLICY = DEFAULT_POLICY.model_copy(update={"keep_recent_tokens": 25_000})
SUMMARY_TOKENS = 50


def session(*last_turn: Message) -> Session:
    s = Session(128_000, policy=POLICY, estimator=EST, summarizer=BloatedSummarizer(SUMMARY_TOKENS))
    s.append(system("sys"))
    s.append(user(filler("first", 2_000)))
    s.append(Message("assistant", (TextPart(filler("answer", 2_000)),)))
    for message in last_turn:
        s.append(message)
    return s


def continuation_tokens() -> int:
    """The continuation message holding the :data:`SUMMARY_TOKENS`-token summary."""
    return EST.message(continuation_message(filler("summary", SUMMARY_TOKENS)))


def test_a_final_answers_thinking_is_dropped_by_the_compaction() -> None:
    answer = Message("assistant", (THINKING, TextPart("The design is layered.")))
    s = session(user("Explain the design."), answer)
    assert EST.part(THINKING) == 22_501 + 4
    # sys 4 + 1; the first turn 2 × (4 + 2,000); the question 4 + 5; the answer
    # 4 + 22,505 + 6.
    assert s.project().tokens == 5 + 4_008 + 9 + 22_515 == 26_537
    ctx = s.compact().context
    assert ctx.messages[2:] == (
        user("Explain the design."),
        Message("assistant", (TextPart("The design is layered."),)),
    )
    assert not any(m.reasoning for m in ctx.messages)
    assert ctx.sanitize.dropped_reasoning == 1
    assert continuation_tokens() == 4 + 97
    # Kept with its thinking, the answer alone would be 22,515 tokens (22,630 in all).
    assert ctx.tokens == 5 + 101 + 9 + (4 + 6) == 125


def test_a_tool_loop_in_progress_keeps_its_thinking_byte_exact() -> None:
    reply = Message("assistant", (THINKING, call("c1", path="src/app.py")))
    s = session(user("Refactor src/app.py."), reply, result("c1", "def main(): ..."))
    # The request 4 + 6; the reply 4 + 22,505 + bash 2 + arguments 6; the result
    # 4 + 1 + 4.
    assert s.project().tokens == 5 + 4_008 + 10 + 22_517 + 9 == 26_549
    ctx = s.compact().context
    assert ctx.messages[2:] == (
        user("Refactor src/app.py."),
        reply,
        result("c1", "def main(): ..."),
    )
    assert ctx.messages[3].parts[0] is THINKING
    assert ctx.sanitize.dropped_reasoning == 0
    assert ctx.tokens == 5 + 101 + 10 + 22_517 + 9 == 22_642
    body = render_anthropic(ctx, model="m", max_tokens=1_000, declare_tools=True)
    assert body["messages"][-2]["content"][0] == {
        "type": "thinking",
        "thinking": THINKING.text,
        "signature": "EqQBCkgIARAB",
    }
    assert validate(body, "anthropic", strict=True) == []


def test_a_new_user_message_after_the_calls_ends_the_turn() -> None:
    reply = Message("assistant", (THINKING, call("c1", path="src/app.py")))
    s = session(user("Refactor src/app.py."), reply, result("c1", "def main(): ..."), user("Stop."))
    ctx = s.compact().context
    assert ctx.messages[2:] == (
        user("Refactor src/app.py."),
        Message("assistant", (call("c1", path="src/app.py"),)),
        result("c1", "def main(): ..."),
        user("Stop."),
    )
    assert ctx.sanitize.dropped_reasoning == 1
    assert ctx.tokens == 5 + 101 + 10 + (4 + 2 + 6) + 9 + 6 == 143
    body = render_anthropic(ctx, model="m", max_tokens=1_000, declare_tools=True)
    assert validate(body, "anthropic", strict=True) == []
