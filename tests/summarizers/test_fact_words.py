"""The words around the facts of a continuation state follow its language: an error's status
and location, a done step's verb, how a file changed and a succeeded run, the superseded
and earlier marks, who stated a decision; paths, commands and error lines stay verbatim."""

from __future__ import annotations

import pytest
from summarizer_helpers import QuarterEstimator, call, calls, results

from ctxengine.model import DecisionFact, ErrorFact, IdentifierFact, Ledgers, RuleFact, user
from ctxengine.projection.language import LANGUAGES
from ctxengine.projection.wording import ENGLISH_FACTS, WORDINGS
from ctxengine.summarizers import ExtractiveSummarizer, SummaryRequest
from ctxengine.summarizers.fact_items import (
    decision_line,
    done_line,
    error_line,
    identifier_line,
    rule_line,
)
from ctxengine.summarizers.items import done_items

STEPS = (
    "edited src/a.py",
    "created tests/test_a.py",
    "wrote src/b.py (script fix.py)",
    "edited src/c.py (patched)",
    "wrote src/d.py (inline python)",
    "moved src/old.py to src/new.py",
    "copied a b.py to c d.py",
    "ran `pytest -q` (succeeded)",
    "declined by the user: `git push --force` (not run)",
)


def test_english_words_are_the_stored_steps_unchanged() -> None:
    assert [done_line(s) for s in STEPS] == list(STEPS)
    assert done_line("something else entirely") == "something else entirely"


def test_chinese_and_german_words_keep_paths_and_commands_verbatim() -> None:
    zh = WORDINGS["zh"].facts
    assert [done_line(s, zh) for s in STEPS] == [
        "编辑 src/a.py",
        "创建 tests/test_a.py",
        "写入 src/b.py（脚本 fix.py）",
        "编辑 src/c.py（打补丁）",
        "写入 src/d.py（内联 python）",
        "移动 src/old.py 到 src/new.py",
        "复制 a b.py 到 c d.py",
        "运行 `pytest -q`（成功）",
        "用户拒绝了 `git push --force`（未执行）",
    ]
    de = WORDINGS["de"].facts
    assert [done_line(s, de) for s in STEPS[:1] + STEPS[5:6] + STEPS[7:]] == [
        "bearbeitet: src/a.py",
        "verschoben: src/old.py nach src/new.py",
        "`pytest -q` ausgeführt (erfolgreich)",
        "vom Benutzer abgelehnt: `git push --force` (nicht ausgeführt)",
    ]
    error = ErrorFact("KeyError: 'x'", "open", 3, "pytest -q", where='File "a.py", line 3')
    assert (
        error_line(error, zh) == "未解决: KeyError: 'x' — 位置 File \"a.py\", line 3 — `pytest -q`"
    )
    fixed = ErrorFact("KeyError: 'x'", "fixed", 3, "pytest -q")
    assert error_line(fixed, de) == "behoben: KeyError: 'x' — `pytest -q`"
    rule = RuleFact("Use tabs.", "superseded", 1, "tabs")
    assert rule_line(rule, zh) == "（已替换） Use tabs."
    port = IdentifierFact("port 8000", "port", "8000", 2, status="earlier")
    assert identifier_line(port, de) == "port: port 8000 (früher)"
    decision = DecisionFact("Use SQLite.", 4, "assistant")
    assert decision_line(decision, zh) == "助手: Use SQLite."


@pytest.mark.parametrize("language", LANGUAGES[1:])
def test_every_language_translates_every_fact_word(language: str) -> None:
    words = WORDINGS[language].facts  # type: ignore[index]
    english = ENGLISH_FACTS
    for field in words.__slots__:
        assert getattr(words, field) != getattr(english, field) or field in (
            "step",
            "step_how",
            "agent",
        ), (language, field)
    # a failed-again run names the language's own errors heading
    assert WORDINGS[language].headings.errors in words.failed_later  # type: ignore[index]
    ledgers = Ledgers(
        done=("ran `make` (succeeded)",), error_facts=(ErrorFact("boom", "open", 5, "make"),)
    )
    (item,) = done_items(ledgers, words)
    assert item.text == words.failed_later.format(command="make")


def test_a_french_state_writes_its_fact_words_in_french() -> None:
    messages = (
        user(
            "Corrige le test qui échoue dans src/parser.py, s'il te plaît, et ne touche pas à main."
        ),
        calls(call("a", "Edit", file_path="src/parser.py", old_string="a", new_string="b")),
        results(("a", "ok")),
        calls(call("b", "Bash", command="pytest -q")),
        results(("b", "E   AssertionError: expected 3 tokens\nExit code 1", True)),
        user("Merci, continue avec la fonction split."),
    )
    request = SummaryRequest(messages, None, "", 2_000)
    text = (
        ExtractiveSummarizer(user_messages_budget=200).summarize(request, QuarterEstimator()).text
    )
    assert "## Fait\n- modifié src/parser.py\n\n" in text
    assert "## Erreurs\n- ouvert: E   AssertionError: expected 3 tokens — `pytest -q`\n\n" in text
