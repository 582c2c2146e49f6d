"""The dominant language of a conversation, and the per-language wording of the state."""

from __future__ import annotations

import dataclasses

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from ctxengine.projection.language import (
    LANGUAGES,
    detect_language,
    prose,
    text_language,
    word_counts,
)
from ctxengine.projection.wording import WORDINGS, Headings, state_language, wording

SAMPLES: dict[str, str] = {
    "en": "Fix the failing parser tests in src/parser.py. Never push to main.",
    "zh": "请修复 src/parser.py 中失败的解析器测试，不要推送到 main 分支。",
    "ja": "src/parser.py のテストを修正してください。main にはプッシュしないでください。",
    "ko": "src/parser.py 의 테스트를 고쳐 주세요. main 에 푸시하지 마세요.",
    "es": "Arregla los tests del parser en src/parser.py y no hagas push a main, por favor.",
    "fr": "Corrige les tests du parseur dans src/parser.py et ne pousse pas sur main.",
    "de": "Bitte repariere die Tests in src/parser.py und pushe nicht auf main.",
    "pt": "Corrija os testes do parser em src/parser.py e não faça push para a main.",
    "ru": "Исправь тесты парсера в src/parser.py и не пушь в main.",
}


class TestDetect:
    @pytest.mark.parametrize("lang", LANGUAGES)
    def test_one_request_in_each_language(self, lang: str) -> None:
        assert detect_language([SAMPLES[lang]]) == lang

    def test_exact_word_counts(self) -> None:
        # 19 Han characters (half a word each) against one Latin word outside code ("main").
        assert word_counts(SAMPLES["zh"]) == {"zh": 19 / 2, "en": 1.0}
        assert text_language(SAMPLES["zh"]) == ("zh", 10.5)
        # "los", "del", "y", "por", "favor" are Spanish stop words; 14 Latin words.
        assert text_language(SAMPLES["es"]) == ("es", 14.0)
        assert text_language(SAMPLES["en"]) == ("en", 10.0)

    def test_code_is_set_aside(self) -> None:
        text = (
            "修复这个错误\n```python\nraise ValueError('the value is not valid here')\n```\n`x = 1`"
        )
        assert prose(text) == "修复这个错误"
        assert detect_language([text]) == "zh"
        assert prose("see https://example.com/a_b and src/a.py then run(x)") == "see and then"

    def test_a_name_in_another_script_does_not_flip_english(self) -> None:
        assert detect_language(["Ask 王伟 about the release notes today"]) == "en"

    def test_one_long_paste_does_not_outvote_the_conversation(self) -> None:
        english = " ".join(["the parser fails when the input is empty"] * 30)
        chinese = "解析器在输入为空时失败" * 30
        zh = ["请修复解析器的测试", "好的，然后运行全部测试", "谢谢，提交吧"]
        en = ["please fix the parser tests", "then run all the tests", "thanks, commit it"]
        # Votes: zh 4.5 + 5 + 2.5 = 12 against the paste's min(240, 12) = 12: a tie goes to
        # the language listed first (English); one more message decides.
        assert detect_language([*zh, english]) == "en"
        assert detect_language([*zh, english, "继续"]) == "zh"
        assert detect_language([*en, chinese]) == "en"

    def test_nothing_to_go_on_is_english(self) -> None:
        assert detect_language([]) == "en"
        assert detect_language(["src/a.py", "`ls -la`", "42"]) == "en"

    def test_kana_makes_japanese_han_alone_chinese(self) -> None:
        assert text_language("日本語の文章です") == ("ja", 4.0)
        assert text_language("中文文章") == ("zh", 2.0)


class TestWording:
    def test_every_language_has_a_complete_distinct_table(self) -> None:
        assert tuple(WORDINGS) == LANGUAGES
        for lang, words in WORDINGS.items():
            values = dataclasses.astuple(words.headings)
            assert len(values) == len(dataclasses.fields(Headings)) == 18
            assert all(values) and len(set(values)) == 18, lang
            assert "{next_step}" in words.turn_answers and "{steps}" in words.turn_done
            assert words.ledger_intro.startswith("---\n")

    def test_unknown_codes_are_english(self) -> None:
        assert wording("it") is WORDINGS["en"]

    def test_state_language_reads_headings_then_prose(self) -> None:
        assert state_language("## Objetivo\nx\n\n## Siguiente paso\ny") == "es"
        assert state_language("## Objetivo\nx\n\n## Próximo passo\ny") == "pt"
        assert state_language("## Goal\nfix it\n## Next step\nrun the tests") == "en"
        assert state_language("## Goal\nИсправь тесты парсера\n## Next step\nзапусти") == "ru"
        assert state_language("") == "en"


def _word_counts_one_word_at_a_time(text: str) -> dict[str, float]:
    """:func:`word_counts` written as a test of one word at a time: the definition the
    one-pass searches must agree with."""
    import re

    from ctxengine.projection.language import KANA_SHARE, _latin_language

    if not text or text.isspace():
        return {}
    clean = prose(text)
    cjk_run = re.compile(
        r"[\u1100-\u11FF\u3040-\u30FF\u3130-\u318F\u31F0-\u31FF\u3400-\u4DBF"
        r"\u4E00-\u9FFF\uAC00-\uD7AF\uF900-\uFAFF\uFF66-\uFF9F]"
    )
    counts: dict[str, float] = {}
    if cjk_run.search(clean):
        han = len(re.findall(r"[\u3400-\u4DBF\u4E00-\u9FFF\uF900-\uFAFF]", clean))
        kana = len(re.findall(r"[\u3040-\u30FF\u31F0-\u31FF\uFF66-\uFF9F]", clean))
        hangul = len(re.findall(r"[\uAC00-\uD7AF\u1100-\u11FF\u3130-\u318F]", clean))
        if hangul:
            counts["ko"] = hangul / 2
        if kana and kana >= KANA_SHARE * (kana + han):
            counts["ja"] = (kana + han) / 2
        elif han:
            counts["zh"] = han / 2
    latin: list[str] = []
    cyrillic = 0
    for token in clean.split():
        if cjk_run.search(token):
            continue
        word = token.strip("\"'“”‘’«»„¡¿!?.,;:()[]{}…—–-*").lower().replace("’", "'")
        if re.match(r"^[A-Za-z\u00C0-\u024F']+$", word):
            latin.append(word)
        elif re.match(r"^[\u0400-\u04FF\-]+$", word):
            cyrillic += 1
    if cyrillic:
        counts["ru"] = float(cyrillic)
    if latin:
        counts[_latin_language(latin)] = float(len(latin))
    return counts


_WORDS_ALPHABET = (
    "abcdeXYZ ßéÀÿŁ ΣσςΑ Привет-мир 你好世界 カタカナ ひら 한국어 0123 "
    "\"'“”‘’«»„¡¿!?.,;:()[]{}…—–-* `/\\_=<>@#$ \n\t https:// ``` the le der os el"
)


class TestWordCountsOnePass:
    @given(
        st.lists(
            st.one_of(
                st.sampled_from(
                    ["the", "le", "der", "não", "Привет", "ΣΟΦΟΣ", "l’été", "‘quoted’", "C'EST"]
                ),
                st.text(alphabet=_WORDS_ALPHABET, max_size=12),
            ),
            max_size=40,
        ).map(" ".join)
    )
    @settings(max_examples=400, deadline=None)
    def test_the_same_counts_as_one_word_at_a_time(self, text: str) -> None:
        assert word_counts(text) == _word_counts_one_word_at_a_time(text)

    def test_exact_counts_of_a_mixed_text(self) -> None:
        text = "Привет мир, l’été est là: “the end” 你好 ΣΟΦΟΣ `code` x=1"
        # Latin words: l'été est là the end (5; one French and one English stop word, and
        # French needs two, so English); Cyrillic: 2; 你好: 2 characters, half a word each
        assert word_counts(text) == {"zh": 1.0, "ru": 2.0, "en": 5.0}
        assert word_counts(text) == _word_counts_one_word_at_a_time(text)
