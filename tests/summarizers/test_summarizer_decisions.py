"""Decisions of the user and the agent, verbatim with their reason; plans and questions are not
decisions."""

from __future__ import annotations

from ctxengine.model import DecisionFact, Ledgers, Message, ReasoningPart, TextPart
from ctxengine.model.facts import merge_decisions
from ctxengine.summarizers.decisions import (
    DECISION_MAX_CHARS,
    DECISIONS_MAX,
    decision_facts,
    decisions_in,
    is_decision,
)
from ctxengine.summarizers.ledgers import extract_ledgers


def test_choices_against_an_alternative_and_stated_decisions() -> None:
    text = (
        "Found the lock. I'll use a Postgres advisory lock rather than a Redis lock, because "
        "the job already holds a DB connection. Running the tests next.\n"
        "Decision: keep the session in an httpOnly cookie instead of localStorage.\n"
        "We decided to vendor the parser.\n"
        "Going with option B."
    )
    assert list(decisions_in(text)) == [
        "I'll use a Postgres advisory lock rather than a Redis lock, because the job already "
        "holds a DB connection.",
        "Decision: keep the session in an httpOnly cookie instead of localStorage.",
        "We decided to vendor the parser.",
        "Going with option B.",
    ]


def test_plans_questions_conditionals_and_code_are_not_decisions() -> None:
    assert not is_decision("Thanks, I'll use that.")
    assert not is_decision("I'll run the whole suite next.")
    assert not is_decision("Should we use Redis instead of Postgres?")
    assert not is_decision("If that fails, I'll use the slow path instead of the cache.")
    text = (
        "```\n# let's use a dict instead of a list\n```\n"
        "    we decided to inline it\n> Going with A"
    )
    assert list(decisions_in(text)) == []


def test_the_next_sentence_gives_the_reason_when_the_decision_does_not() -> None:
    text = "Let's use SQLite instead of Postgres. That way the tests need no server. Done."
    assert list(decisions_in(text)) == [
        "Let's use SQLite instead of Postgres. That way the tests need no server."
    ]
    # a decision that states its own reason takes nothing more
    text = "Let's use SQLite instead of Postgres since tests need no server. Because x."
    assert list(decisions_in(text)) == [
        "Let's use SQLite instead of Postgres since tests need no server."
    ]


def test_other_languages() -> None:
    assert list(decisions_in("我们决定用 SQLite 而不是 Postgres，因为测试不需要服务器。")) == [
        "我们决定用 SQLite 而不是 Postgres，因为测试不需要服务器。"
    ]
    assert list(decisions_in("Vamos a usar SQLite en lugar de Postgres.")) == [
        "Vamos a usar SQLite en lugar de Postgres."
    ]
    assert list(decisions_in("Wir verwenden SQLite statt Postgres.")) == [
        "Wir verwenden SQLite statt Postgres."
    ]
    assert list(decisions_in("On va utiliser SQLite plutôt que Postgres.")) == [
        "On va utiliser SQLite plutôt que Postgres."
    ]


def test_a_long_decision_is_capped() -> None:
    text = "We decided to " + "x" * 600 + "."
    (found,) = decisions_in(text)
    assert len(found) == DECISION_MAX_CHARS
    assert found == text[: DECISION_MAX_CHARS - 1] + "…"


def test_decision_facts_from_users_and_the_agent_not_from_reasoning_or_tools() -> None:
    messages = (
        Message("user", (TextPart("Let's compute totals in SQL rather than in Python."),)),
        Message(
            "assistant",
            (
                ReasoningPart("I'll use a list instead of a set."),
                TextPart(
                    "I'll debounce the input instead of throttling it, because only the "
                    "final query matters."
                ),
            ),
        ),
        Message("tool", ()),
        Message("user", (TextPart("Let's compute totals in SQL rather than in Python."),)),
    )
    assert decision_facts(messages, start=10) == (
        DecisionFact("Let's compute totals in SQL rather than in Python.", 13, "user"),
        DecisionFact(
            "I'll debounce the input instead of throttling it, because only the final query "
            "matters.",
            11,
            "assistant",
        ),
    )
    assert extract_ledgers(messages).decisions == decision_facts(messages)


def test_only_the_newest_decisions_of_a_range() -> None:
    messages = tuple(
        Message("user", (TextPart(f"We decided to ship part {i}."),)) for i in range(20)
    )
    found = decision_facts(messages)
    assert len(found) == DECISIONS_MAX
    assert found[0].text == f"We decided to ship part {20 - DECISIONS_MAX}."
    assert found[-1] == DecisionFact("We decided to ship part 19.", 19, "user")


def test_decisions_merge_by_text_and_survive_the_round_trip() -> None:
    a = DecisionFact("Going with A.", 1, "user")
    b = DecisionFact("Going with B.", 2, "assistant")
    assert merge_decisions((a, b), (DecisionFact("Going with A.", 9, "assistant"),)) == (
        DecisionFact("Going with A.", 9, "assistant"),
        b,
    )
    merged = Ledgers(decisions=(a,)).merge(Ledgers(decisions=(b,)))
    assert merged.decisions == (a, b)
    plain = {"decisions": [{"text": "Going with A.", "source": 1, "origin": "user"}]}
    assert Ledgers.from_plain(plain).decisions == (a,)


def test_a_choice_and_an_alternative_far_apart_or_in_run_on_sentences_are_no_decision() -> None:
    run_on = (
        "It loops over the values in an `open()` call!Instead of the upload it shows any "
        "file.We will check this with curl."
    )
    assert list(decisions_in(run_on)) == []
    far = "We will " + "look at every caller of the helper, " * 5 + "instead of guessing."
    assert list(decisions_in(far)) == []
    # a verb that describes what code decides is no decision; a first-person adoption is
    assert list(decisions_in("根据密码可用性决定在线或离线模式。")) == []
    assert list(decisions_in("因此我采用在 docstring 中说明参数的方案。")) == [
        "因此我采用在 docstring 中说明参数的方案。"
    ]


def test_ascii_decisions_of_every_language_in_any_case() -> None:
    # an ASCII text is read only when it holds one of the words every decision holds: each
    # ASCII form of the patterns still counts, in upper case too
    said = [
        "I'll GO WITH the queue.",
        "We picked SQLite.",
        "Settled on tabs.",
        "Opting for the cache.",
        "Hemos decidido usar Go.",
        "Nos quedamos con Redis.",
        "On part sur Postgres.",
        "Nous optons pour Redis.",
        "Wir haben uns entschieden: Go.",
        "Decidi usar Redis.",
        "Optamos por Go.",
        "Vamos a usar Redis en lugar de Memcached.",
        "Usaremos Go en vez de Rust.",
        "Wir verwenden Go statt Rust.",
        "Ich nehme Go anstelle von Rust.",
        "Vamos usar Go em vez de Rust.",
        "Usaremos Go no lugar de Rust.",
        "Let's use Go IN PLACE OF Rust.",
    ]
    assert [is_decision(s) for s in said] == [True] * len(said)
    assert [decisions_in(s) for s in said] == [(s,) for s in said]
    assert decisions_in("I'll use Go. It is fast.") == ()
