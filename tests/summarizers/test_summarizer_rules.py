"""User rules: with or without a rule word, no boilerplate or noise, superseded ones marked."""

from __future__ import annotations

from ctxengine.model import Ledgers, Message, RuleFact, TextPart, assistant, system, user
from ctxengine.summarizers.rules import (
    boilerplate,
    rule_facts,
    rule_sentences,
    says_it_replaces,
    topic,
)


def test_rules_with_and_without_a_rule_word() -> None:
    text = (
        "Refactor the parser. Use tabs. Target Python 3.11.\n"
        "- don't touch the tests\n"
        "Please stick to the standard library. Use the new endpoint to fetch users?\n"
        "Add a --verbose flag."
    )
    assert rule_sentences(text) == (
        "Use tabs.",
        "Target Python 3.11.",
        "don't touch the tests",
        "Please stick to the standard library.",
    )


def test_noise_is_not_a_rule() -> None:
    text = (
        "# don't change this line\n"
        "// never call this twice\n"
        "I never saw the gui open.\n"
        "I was always passing a big dataframe containing readings.\n"
        "i don't think the component invalidate works.\n"
        "alright, i think there's only one file left to fix up.\n"
        "wait, do we only have a single link color?\n"
        "that is what happens if we don't stream, right?\n"
        "must not fail: request_id=req_011CY4RR8t5DiSNcujeLfT74\n"
        "Because of some changes in our software architecture the code now only receives a "
        "single reading per call, and with only one row the output is always wrong for it.\n"
        "Never push to main. never push to main!"
    )
    assert rule_sentences(text) == ("Never push to main.",)


def test_template_blocks_are_boilerplate() -> None:
    mini = (
        "<pr_description>\nThe parser must accept tabs.\n</pr_description>\n"
        "<instructions>\n- DO NOT MODIFY: Tests, configuration files\n"
        "- Always use non-interactive flags (-y, -f) for commands\n</instructions>"
    )
    swe = (
        "ISSUE:\nTimeDelta must round, never truncate.\n\nINSTRUCTIONS:\n"
        "Remember, YOU CAN ONLY ENTER ONE COMMAND AT A TIME.\n"
    )
    assert rule_sentences(mini) == ("The parser must accept tabs.",)
    assert rule_sentences(swe) == ("TimeDelta must round, never truncate.",)


def test_sentences_shared_by_a_demonstration_and_the_task_are_boilerplate() -> None:
    shared = (
        "Always start by trying to replicate the bug first. "
        "You must never run interactive commands here. "
        "Make sure to check the code after every edit you make. "
    )
    demo = Message(
        "user", (TextPart("DEMO\n" + shared + "x" * 150),), meta={"synthetic": "is_demo"}
    )
    task = user("The API must stay stable. " + shared + "y" * 150)
    msgs = [system("You are a helper."), demo, task]
    assert boilerplate(msgs) == frozenset(
        {
            "always start by trying to replicate the bug first",
            "you must never run interactive commands here",
            "make sure to check the code after every edit you make",
        }
    )
    assert [r.text for r in rule_facts(msgs)] == ["The API must stay stable."]


def test_a_user_repeating_one_rule_is_kept_once() -> None:
    msgs = [user("Never push to main."), assistant("ok"), user("OK. never push to main!")]
    assert [r.text for r in rule_facts(msgs)] == ["Never push to main."]


def test_topics_and_replacement_words() -> None:
    assert topic("Always target Python 3.8.") == "python target"
    assert topic("from now on you must target Python 3.11") == "python target"
    assert topic("Don't touch the tests.") == "tests touch"
    assert says_it_replaces("from now on you must target Python 3.11") is True
    assert says_it_replaces("Use spaces instead of tabs.") is True
    assert says_it_replaces("Always target Python 3.8.") is False


def test_a_later_rule_on_the_same_topic_supersedes_the_earlier() -> None:
    msgs = [
        user("Always target Python 3.8. Use tabs. Don't touch the tests."),
        assistant("ok"),
        user("from now on you must target Python 3.11"),
        user("Actually, don't touch the database schema. Use spaces instead of tabs."),
    ]
    assert rule_facts(msgs, start=10) == (
        RuleFact(
            "Always target Python 3.8.",
            "superseded",
            10,
            "python target",
            False,
            "from now on you must target Python 3.11",
        ),
        RuleFact("Use tabs.", "superseded", 10, "tabs", False, "Use spaces instead of tabs."),
        RuleFact("Don't touch the tests.", "active", 10, "tests touch", False),
        RuleFact("from now on you must target Python 3.11", "active", 12, "python target", True),
        RuleFact(
            "Actually, don't touch the database schema.",
            "active",
            13,
            "database schema touch",
            True,
        ),
        RuleFact("Use spaces instead of tabs.", "active", 13, "spaces tabs", True),
    )


def test_supersession_carries_across_compactions() -> None:
    first = Ledgers(rules=rule_facts([user("Always target Python 3.8.")]))
    second = Ledgers(rules=rule_facts([user("from now on you must target Python 3.11")], 40))
    merged = first.merge(second)
    assert [(r.text, r.status, r.source, r.superseded_by) for r in merged.rules] == [
        (
            "Always target Python 3.8.",
            "superseded",
            0,
            "from now on you must target Python 3.11",
        ),
        ("from now on you must target Python 3.11", "active", 40, ""),
    ]
