"""The dominant language of a conversation, from the text its user wrote.

Deterministic and cheap, no model and no dictionary beyond a few stop words:

1. Code is set aside first: fenced blocks, inline code spans, URLs, and every
   whitespace-separated token holding a digit or one of ``/ \\ _ . = ( ) [ ] { } < > : @ # $``
   inside it (paths, identifiers, commands), so a Chinese request about ``src/parser.py``
   is not counted as English.
2. Script: Hangul syllables → Korean; kana → Japanese when they are at least
   :data:`KANA_SHARE` of the kana and Han characters, else Han → Chinese; Cyrillic words →
   Russian. Two CJK characters count as one word.
3. Latin words: English unless the stop words of Spanish, French, German or Portuguese
   (:data:`STOP_WORDS`) outnumber the English ones, with at least :data:`MIN_STOP_WORDS` hits.
4. Each text votes for its language with weight ``min(words, VOTE_CAP)``; a text of fewer
   than :data:`MIN_WORDS` word does not vote (only code, or one CJK character). The language
   with the most weight wins; ties and no votes give English.

Pure functions; no I/O.
"""

from __future__ import annotations

import re
from collections import Counter
from collections.abc import Iterable
from functools import cache, lru_cache
from typing import Literal, TypeAlias

Language: TypeAlias = Literal["en", "zh", "ja", "ko", "es", "fr", "de", "pt", "ru"]
#: Every language :func:`detect_language` can return, English first.
LANGUAGES: tuple[Language, ...] = ("en", "zh", "ja", "ko", "es", "fr", "de", "pt", "ru")
#: Names used when asking a model to write in a language (English name, then the native one).
LANGUAGE_NAMES: dict[Language, str] = {
    "en": "English",
    "zh": "Chinese (中文)",
    "ja": "Japanese (日本語)",
    "ko": "Korean (한국어)",
    "es": "Spanish (español)",
    "fr": "French (français)",
    "de": "German (Deutsch)",
    "pt": "Portuguese (português)",
    "ru": "Russian (русский)",
}
#: Smallest share of kana among kana + Han characters that makes CJK text Japanese (Japanese
#: prose runs at 40-70 % kana; Chinese has none).
KANA_SHARE = 0.15
#: Fewest stop-word hits that make Latin-script text other than English.
MIN_STOP_WORDS = 2
#: Fewest words a text needs to vote (two CJK characters make one: ``继续`` votes).
MIN_WORDS = 1
#: Largest vote of one text, in words: about one sentence, so that the language the user
#: writes most messages in wins and one long paste does not outvote the conversation.
VOTE_CAP = 12


def _words(text: str) -> frozenset[str]:
    return frozenset(text.split())


#: Frequent words that tell the Latin-script languages apart (each listed in one language
#: only: ``de``, ``que``, ``la`` are shared and left out).
STOP_WORDS: dict[Language, frozenset[str]] = {
    "en": _words(
        "the and is are to of it this that for with you not please be can should we i "
        "what how why my me do does don't it's there"
    ),
    "es": _words(
        "el los las y del por pero es una muy hay cuando porque ahora usa usar quiero "
        "necesito eso esto hacer gracias favor puedes estás también sí lo más qué cómo "
        "nuestro archivo"
    ),
    "fr": _words(
        "le les des est et une du pas pour dans avec je vous nous ce cette qui sur mais "
        "ne fichier merci faire aussi très où il elle sont peux veux c'est n'est"
    ),
    "de": _words(
        "der die und ist nicht ein eine mit für auf den dem ich wir bitte auch aber oder "
        "wenn noch nur datei zu von sie soll kann"
    ),
    "pt": _words(
        "os não nao uma um da dos das é você voce mas isso também tambem agora quero "
        "preciso arquivo obrigado fazer com em ao são pode"
    ),
}

_EDGE = "\"'“”‘’«»„¡¿!?.,;:()[]{}…—–-*"


class _Patterns:
    """The patterns of :func:`prose` and :func:`word_counts` (:func:`_patterns` compiles
    them once, on first use: the CJK ranges cost more to compile than the rest of this
    module)."""

    def __init__(self) -> None:
        self.fence = re.compile(r"```.*?(?:```|$)", re.DOTALL)
        self.inline_code = re.compile(r"`[^`\n]*`")
        self.url = re.compile(r"\b(?:https?|ftp|file)://\S+", re.IGNORECASE)
        self.code_chars = re.compile(r"[\d/\\_.=()\[\]{}<>:@#$]")
        # the words of a :func:`prose` text (words joined by single spaces) that are all
        # Latin letters, or all Cyrillic: found in one pass instead of one match a word
        self.latin_words = re.compile(r"(?<![^ ])[A-Za-z\u00C0-\u024F']+(?![^ ])")
        self.cyrillic_words = re.compile(r"(?<![^ ])[\u0400-\u04FF\-]+(?![^ ])")
        self.han = re.compile(r"[\u3400-\u4DBF\u4E00-\u9FFF\uF900-\uFAFF]")
        self.kana = re.compile(r"[\u3040-\u30FF\u31F0-\u31FF\uFF66-\uFF9F]")
        self.hangul = re.compile(r"[\uAC00-\uD7AF\u1100-\u11FF\u3130-\u318F]")
        self.cjk_run = re.compile(
            r"[\u1100-\u11FF\u3040-\u30FF\u3130-\u318F\u31F0-\u31FF\u3400-\u4DBF"
            r"\u4E00-\u9FFF\uAC00-\uD7AF\uF900-\uFAFF\uFF66-\uFF9F]"
        )


@cache
def _patterns() -> _Patterns:
    return _Patterns()


def prose(text: str) -> str:
    """``text`` with code set aside (step 1 of the module docstring): fenced blocks, inline
    code, URLs and code-like tokens removed; CJK characters are kept wherever they are."""
    p = _patterns()
    # each pattern holds its literal: a text without it has nothing to replace
    if "```" in text:
        text = p.fence.sub(" ", text)
    if "`" in text:
        text = p.inline_code.sub(" ", text)
    if "://" in text:
        text = p.url.sub(" ", text)
    code = p.code_chars.search
    if p.cjk_run.search(text) is None:  # no token needs the CJK search
        return " ".join([w for t in text.split() if (w := t.strip(_EDGE)) and not code(w)])
    kept: list[str] = []
    for token in text.split():
        if p.cjk_run.search(token):
            kept.append(token)
            continue
        word = token.strip(_EDGE)
        if word and not code(word):
            kept.append(word)
    return " ".join(kept)


def word_counts(text: str) -> dict[Language, float]:
    """Words of ``text`` per language (steps 1-3 of the module docstring): CJK characters
    count half a word each, Cyrillic words go to Russian, Latin words to one Latin-script
    language."""
    if not text or text.isspace():
        return {}  # no words (and no pattern compiled for none)
    clean = prose(text)
    p = _patterns()
    counts: dict[Language, float] = {}
    cjk = p.cjk_run.search(clean) is not None  # else no token needs the searches
    if cjk:
        han = len(p.han.findall(clean))
        kana = len(p.kana.findall(clean))
        hangul = len(p.hangul.findall(clean))
        if hangul:
            counts["ko"] = hangul / 2
        if kana and kana >= KANA_SHARE * (kana + han):
            counts["ja"] = (kana + han) / 2
        elif han:
            counts["zh"] = han / 2
    # ``clean`` is words joined by single spaces, each already stripped of _EDGE; a word
    # holding a CJK character is neither all Latin nor all Cyrillic
    words = clean.lower().replace("’", "'")
    latin = p.latin_words.findall(words)
    cyrillic = len(p.cyrillic_words.findall(words))
    if cyrillic:
        counts["ru"] = float(cyrillic)
    if latin:
        counts[_latin_language(latin)] = float(len(latin))
    return counts


def _latin_language(words: list[str]) -> Language:
    seen = Counter(words)
    hits = {
        lang: sum(n for w, n in seen.items() if w in stops) for lang, stops in STOP_WORDS.items()
    }
    latin: tuple[Language, ...] = ("es", "fr", "de", "pt")
    best = max(latin, key=lambda lang: (hits[lang], -LANGUAGES.index(lang)))
    if hits[best] >= MIN_STOP_WORDS and hits[best] > hits["en"]:
        return best
    return "en"


#: Texts whose language :func:`text_language` remembers.
TEXT_LANGUAGE_CACHE = 8192


@lru_cache(maxsize=TEXT_LANGUAGE_CACHE)
def text_language(text: str) -> tuple[Language, float] | None:
    """The language of one text and its word count, or ``None`` when it has fewer than
    :data:`MIN_WORDS` words. Ties go to the language listed first in :data:`LANGUAGES`.
    Remembered for the :data:`TEXT_LANGUAGE_CACHE` texts asked most recently: every
    compaction votes over all the user's messages so far."""
    counts = word_counts(text)
    total = sum(counts.values())
    if total < MIN_WORDS:
        return None
    lang = max(counts, key=lambda k: (counts[k], -LANGUAGES.index(k)))
    return lang, total


def detect_language(texts: Iterable[str]) -> Language:
    """The dominant language of ``texts`` (a conversation's real user messages, oldest
    first): each text votes for :func:`text_language` with weight ``min(words,
    VOTE_CAP)``; the heaviest language wins, English on a tie or when no text votes."""
    weights: dict[Language, float] = {}
    for text in texts:
        found = text_language(text)
        if found is not None:
            lang, words = found
            weights[lang] = weights.get(lang, 0.0) + min(words, VOTE_CAP)
    if not weights:
        return "en"
    return max(weights, key=lambda k: (weights[k], -LANGUAGES.index(k)))


__all__ = [
    "LANGUAGES",
    "LANGUAGE_NAMES",
    "STOP_WORDS",
    "Language",
    "detect_language",
    "prose",
    "text_language",
    "word_counts",
]
