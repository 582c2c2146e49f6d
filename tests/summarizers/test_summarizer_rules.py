"""User rules: with or without a rule word, no boilerplate or noise, superseded ones marked."""

from __future__ import annotations

import pytest

from ctxengine.model import Ledgers, Message, RuleFact, TextPart, assistant, system, user
from ctxengine.summarizers.rules import (
    boilerplate,
    is_rule,
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


def test_template_blocks_and_pasted_issues_are_not_rules() -> None:
    mini = (
        "<pr_description>\nThe parser must accept tabs.\n</pr_description>\n"
        "<instructions>\n- DO NOT MODIFY: Tests, configuration files\n"
        "- Always use non-interactive flags (-y, -f) for commands\n</instructions>\n"
        "Never touch setup.py."
    )
    swe = (
        "ISSUE:\nTimeDelta must round, never truncate.\n\nINSTRUCTIONS:\n"
        "Remember, YOU CAN ONLY ENTER ONE COMMAND AT A TIME.\n"
    )
    openhands = (
        "Keep the change small.\n<issue_description>\nCommandParser ignores parent defaults\n"
        '```pony\nuse "cli"\n```\n'
        "don't return from parsing a sub command, but keep track of it\n</issue_description>"
    )
    assert rule_sentences(mini) == ("Never touch setup.py.",)
    assert rule_sentences(swe) == ()
    assert rule_sentences(openhands) == ("Keep the change small.",)


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
            head="python target",
        ),
        RuleFact(
            "Use tabs.", "superseded", 10, "tabs", False, "Use spaces instead of tabs.", head="tabs"
        ),
        RuleFact("Don't touch the tests.", "active", 10, "tests touch", False, head="tests touch"),
        RuleFact(
            "from now on you must target Python 3.11",
            "active",
            12,
            "python target",
            True,
            head="python target",
        ),
        RuleFact(
            "Actually, don't touch the database schema.",
            "active",
            13,
            "database schema touch",
            True,
            head="database schema touch",
        ),
        RuleFact(
            "Use spaces instead of tabs.",
            "active",
            13,
            "spaces tabs",
            True,
            revokes="tabs",
            head="spaces tabs",
        ),
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


def _statuses(first: str, later: str) -> list[tuple[str, str]]:
    rules = rule_facts([user(first), assistant("ok"), user(later)])
    return [(r.text, r.status) for r in rules]


def test_every_general_form_of_a_replacing_rule_supersedes_the_earlier() -> None:
    assert _statuses("Build it. Use port 8000.", "from now on use port 9000") == [
        ("Use port 8000.", "superseded"),
        ("from now on use port 9000", "active"),
    ]
    assert _statuses("Use port 8000.", "Actually, use port 9000 instead of 8000.") == [
        ("Use port 8000.", "superseded"),
        ("Actually, use port 9000 instead of 8000.", "active"),
    ]
    assert _statuses("Always target Python 3.8.", "Switch to Python 3.11 from here on.") == [
        ("Always target Python 3.8.", "superseded"),
        ("Switch to Python 3.11 from here on.", "active"),
    ]
    assert _statuses(
        "Don't add new dependencies without asking me first.", "You can add new dependencies now"
    ) == [
        ("Don't add new dependencies without asking me first.", "superseded"),
        ("You can add new dependencies now", "active"),
    ]
    assert _statuses("Use tabs for indentation.", "Forget the tabs rule, use 4 spaces.") == [
        ("Use tabs for indentation.", "superseded"),
        ("Forget the tabs rule, use 4 spaces.", "active"),
    ]
    assert _statuses("Always support Python 2.", "You no longer need to support Python 2.") == [
        ("Always support Python 2.", "superseded"),
        ("You no longer need to support Python 2.", "active"),
    ]
    assert _statuses("Never call the billing API.", "The billing API is down again.") == [
        ("Never call the billing API.", "active"),
    ]  # a statement, not a rule: nothing replaced
    # a number named as replaced does not touch a rule on another topic
    assert _statuses("Keep responses under 8000 ms.", "Use port 9000 instead of 8000.") == [
        ("Keep responses under 8000 ms.", "active"),
        ("Use port 9000 instead of 8000.", "active"),
    ]


def test_replacing_rules_in_the_other_languages_of_the_state() -> None:
    pairs = [
        ("Siempre usa Python 3.8.", "A partir de ahora usa Python 3.11."),
        ("Utilise toujours Python 3.8.", "Désormais, utilise Python 3.11."),
        ("Verwende immer Python 3.8.", "Ab jetzt verwende Python 3.11."),
        ("Sempre use Python 3.8.", "A partir de agora use Python 3.11."),
        ("Всегда используй Python 3.8.", "Теперь используй Python 3.11."),
        ("常に Python 3.8 を使ってください。", "これからは Python 3.11 を使ってください。"),
        ("항상 Python 3.8을 사용하세요.", "이제부터 Python 3.11을 사용하세요."),
        ("使用端口 8000。", "从现在开始改用端口 9000，8000 被另一个服务占用了。"),
        ("不要添加新的依赖。", "现在可以添加新的依赖了。"),
    ]
    for first, later in pairs:
        assert _statuses(first, later) == [(first, "superseded"), (later, "active")], first


def test_rules_in_every_language_of_the_state() -> None:
    text = (
        "Nunca modifiques nada dentro de vendor/. Ne modifiez jamais rien dans vendor/. "
        "Ändere niemals etwas unter vendor/. Nunca modifique nada em vendor/. "
        "Никогда не меняй ничего в vendor/. vendor/ の中は絶対に変更しないでください。"
        "vendor/ 아래는 절대 수정하지 마세요. 不要修改 vendor/ 目录。 "
        "Debes ejecutar los tests. Il faut lancer les tests. Du musst die Tests starten. "
        "Você deve rodar os testes. Нужно запускать тесты. Usa el puerto 8000."
    )
    assert rule_sentences(text) == (
        "Nunca modifiques nada dentro de vendor/.",
        "Ne modifiez jamais rien dans vendor/.",
        "Ändere niemals etwas unter vendor/.",
        "Nunca modifique nada em vendor/.",
        "Никогда не меняй ничего в vendor/.",
        "vendor/ の中は絶対に変更しないでください。",
        "vendor/ 아래는 절대 수정하지 마세요.",
        "不要修改 vendor/ 目录。",
        "Debes ejecutar los tests.",
        "Il faut lancer les tests.",
        "Du musst die Tests starten.",
        "Você deve rodar os testes.",
        "Нужно запускать тесты.",
        "Usa el puerto 8000.",
    )


def test_words_that_read_as_english_count_only_in_their_language() -> None:
    assert rule_sentences("No uses tabs.", language="es") == ("No uses tabs.",)
    assert rule_sentences("No matches found.", language="en") == ()
    assert rule_sentences("Füge keine neuen Abhängigkeiten hinzu.", language="de") == (
        "Füge keine neuen Abhängigkeiten hinzu.",
    )
    spanish = [user("Arregla el build, por favor. No uses tabs en el código, usa espacios.")]
    assert [r.text for r in rule_facts(spanish)] == [
        "No uses tabs en el código, usa espacios.",
    ]


def test_a_sentence_is_not_cut_at_an_abbreviation() -> None:
    text = (
        "Then let's make sure our cli, gui, validators, rules, etc. all support all our new "
        "features. Always prefer small modules, e.g. one class per file. Never mix tabs vs. "
        "spaces. Keep it short, i.e. under 40 lines."
    )
    assert rule_sentences(text) == (
        "Then let's make sure our cli, gui, validators, rules, etc. all support all our new "
        "features.",
        "Always prefer small modules, e.g. one class per file.",
        "Never mix tabs vs. spaces.",
        "Keep it short, i.e. under 40 lines.",
    )


def test_descriptions_code_and_hedged_suggestions_are_not_rules() -> None:
    text = (
        "Splitting a bill is broken: `tallyho split 100 3` prints 33.33 three times, so a cent "
        "disappears and the shares only add up to 99.99. Please fix `split_evenly` so the shares "
        "always add up to the total.\n"
        "This could help to avoid confusion.\n"
        "If you have any suggestions on where to begin in the code, it's always appreciated.\n"
        "As expected, it works when you don't use the tuple syntax.\n"
        "Filling in of default options would occur later, but we never get that far.\n"
        'use "cli"\n'
        "import os\n"
        "aider/coders/base_coder.py:1245:9: F841 local variable 'x' is assigned to but never used\n"
        "newline and only displays the first line.\n"
        "that was smart, only using other_files.\n"
        "ok, let me try the light theme real quick, then we should be good to go for a new "
        "release\n"
        "Two rules for this repo: never touch the migrations folder. And don't push anything."
    )
    assert rule_sentences(text) == (
        "Two rules for this repo: never touch the migrations folder.",
        "And don't push anything.",
    )


def test_a_superseded_rule_marks_the_identifier_it_named_as_earlier() -> None:
    from ctxengine.summarizers.ledgers import extract_ledgers

    msgs = [
        user("Build the server. Use port 8000."),
        assistant("ok"),
        user("From now on use port 9000 instead, 8000 is taken by another service."),
    ]
    ledgers = extract_ledgers(msgs)
    assert [(i.text, i.status) for i in ledgers.identifiers] == [
        ("port 8000", "earlier"),
        ("port 9000", "current"),
    ]
    # across compactions: the rule of the later range replaces the one carried
    first = extract_ledgers(msgs[:1])
    second = extract_ledgers(msgs[2:], start=2)
    merged = first.merge(second)
    assert [(i.text, i.status) for i in merged.identifiers] == [
        ("port 8000", "earlier"),
        ("port 9000", "current"),
    ]


def test_a_reason_after_the_rule_does_not_hide_what_it_replaces() -> None:
    assert _statuses(
        "Always target Python 3.8, the prod image still runs it.",
        "Switch to Python 3.11 from here on: prod moved to the new image this morning.",
    ) == [
        ("Always target Python 3.8, the prod image still runs it.", "superseded"),
        ("Switch to Python 3.11 from here on: prod moved to the new image this morning.", "active"),
    ]
    assert _statuses(
        "Use axios for every HTTP call in the client.",
        "Actually, use fetch instead of axios for the HTTP calls.",
    ) == [
        ("Use axios for every HTTP call in the client.", "superseded"),
        ("Actually, use fetch instead of axios for the HTTP calls.", "active"),
    ]


def test_an_acknowledgement_is_not_a_rule() -> None:
    assert rule_sentences("ok, keep going") == ()
    assert rule_sentences("Great, keep it up!") == ()
    assert rule_sentences("Keep it up to date with main.") == ("Keep it up to date with main.",)
    assert rule_sentences("ok, keep the tests green.") == ("ok, keep the tests green.",)


@pytest.mark.parametrize(
    "later",
    [
        "从现在开始请使用 Python 3.11，而不是 3.8。",
        "改为使用 Python 3.11。",
        "以后不要再用 Python 3.8 了，改用 Python 3.11。",
        "从现在起必须使用 Python 3.11（不再使用 3.8）。",
    ],
)
def test_a_chinese_rule_that_replaces_an_earlier_one_supersedes_it(later: str) -> None:
    messages = [
        user("始终使用 Python 3.8。不要修改 vendor/ 目录下的任何文件。"),
        user("好的，谢谢。"),
        user(later),
    ]
    assert [(r.text, r.status) for r in rule_facts(messages)] == [
        ("始终使用 Python 3.8。", "superseded"),
        ("不要修改 vendor/ 目录下的任何文件。", "active"),
        (later, "active"),
    ]


def test_ascii_rule_words_of_every_language_in_any_case() -> None:
    # an ASCII sentence is searched for modals, adverbs and lifted rules only when it holds
    # one of their words: each ASCII form still counts, in upper case too
    said = [
        "You MUST run the linter.",
        "Tests are FORBIDDEN to hit the network.",
        "Hay que usar tabs.",
        "Il faut garder les tests.",
        "Vous devez utiliser tabs.",
        "Du darfst nicht pushen.",
        "Auf keinen Fall pushen.",
        "Tem de usar tabs.",
        "NEVER push to main.",
        "Siempre usa tabs.",
        "Toujours utiliser tabs.",
        "Stelle sicher, dass die Tests laufen.",
        "Certifique-se de rodar os testes.",
        "You no longer need to run the linter.",
    ]
    assert [is_rule(s) for s in said] == [True] * len(said)
