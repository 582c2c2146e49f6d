"""The texts of real user messages and the constraints ledger (the predicate itself:
``tests/test_roles.py``)."""

from __future__ import annotations

from ctxengine.model import assistant, tool_result, user
from ctxengine.summarizers.constraints import (
    constraint_sentences,
    constraints_of,
    real_user_texts,
)


class TestRealUserTexts:
    def test_real_user_texts_keep_order_and_text(self) -> None:
        msgs = [
            user("one"),
            assistant("x"),
            user("<system-reminder>x</system-reminder>"),
            user("two"),
        ]
        assert real_user_texts(msgs) == ("one", "two")


class TestConstraintSentences:
    def test_english_rules_are_whole_sentences(self) -> None:
        text = (
            "Refactor the parser. Don't touch the public API! You must keep Python 3.11 support.\n"
            "- Always run ruff before committing\n"
            "Use only the standard library? Thanks."
        )
        assert constraint_sentences(text) == (
            "Don't touch the public API!",
            "You must keep Python 3.11 support.",
            "Always run ruff before committing",
            "Use only the standard library?",
        )

    def test_chinese_rules_split_on_chinese_punctuation(self) -> None:
        text = "检查目前项目的设计。不要修改数据库结构！测试必须全部通过；注释只能用英文。好的"
        assert constraint_sentences(text) == (
            "不要修改数据库结构！",
            "测试必须全部通过；",
            "注释只能用英文。",
        )

    def test_more_keywords_and_case(self) -> None:
        text = (
            "NEVER push to main. Make sure the CI is green. 禁止使用 eval. 务必保留日志. "
            "It should not log secrets."
        )
        assert constraint_sentences(text) == (
            "NEVER push to main.",
            "Make sure the CI is green.",
            "禁止使用 eval.",
            "务必保留日志.",
            "It should not log secrets.",
        )

    def test_code_fences_are_ignored_and_long_sentences_capped(self) -> None:
        text = "```\nassert x, 'must be set'\n```\nYou must " + "keep " * 100 + "it."
        (only,) = constraint_sentences(text)
        assert only.startswith("You must keep keep")
        assert len(only) == 300
        assert only.endswith("…")

    def test_constraints_come_only_from_real_user_messages(self) -> None:
        msgs = [
            user("Never delete tests."),
            assistant("I must read the file first."),
            tool_result("c1", "error: you must provide a path"),
            user("<environment_context>never</environment_context>"),
            user("Never delete tests. 不要改配置。"),
        ]
        assert constraints_of(msgs) == ("Never delete tests.", "不要改配置。")
