"""Bare acknowledgements: user messages that only say "go on" to what the agent proposed.

``continue``, ``yes please``, ``OK, continue``, ``yes to all``, ``继续``, ``可以，开始实施``,
``はい``, ``네``, ``sí, sigue``, ``oui``, ``weiter``, ``да, продолжай`` carry no task of their
own: what they mean is what the agent said just before them. Such a message is never the
session's goal, is not repeated among the user messages of a continuation state, and as the
latest request resolves to the agent's plan or question it answered
(:mod:`ctxengine.summarizers.next_step`).

A text is an acknowledgement when, without a speaker prefix (``System:``, ``User:``,
``Human:``: :data:`SPEAKER_PREFIX`, as some harnesses write an automatic "Please continue."),
lower-cased and with punctuation, emoji and surrounding whitespace removed, it consists only
of the phrases of :data:`PHRASES` (in any order, any number of times, separated by spaces or
not) and is at most :data:`MAX_CHARS` characters long. A message with any other word (``yes,
add the --json flag``, ``continue with the tests``) states something of its own and is not
one.
"""

from __future__ import annotations

import re
import unicodedata
from functools import lru_cache

from ctxengine.model.roles import is_goal_text

#: Longest text, in characters (after stripping), that may still be an acknowledgement.
MAX_CHARS = 80

#: Phrases that only acknowledge or ask to go on, per language (lower case; ``'`` and
#: spaces as written). Longer phrases are matched first.
PHRASES: tuple[str, ...] = (
    # English
    "yes", "yeah", "yep", "yup", "ya", "y", "ok", "okay", "k", "kk", "okey", "sure",
    "please", "pls", "plz", "go", "go on", "go ahead", "continue", "proceed", "do it",
    "do that", "do so", "do all", "all", "to all", "with all", "of them", "all of them",
    "all of it", "until all are done", "until done", "until it is done", "till done",
    "sounds good", "looks good", "lgtm", "great", "good", "perfect", "fine", "alright",
    "all right", "right", "cool", "nice", "thanks", "thank you", "ty", "let's go",
    "lets go", "let's do it", "lets do it", "keep going", "keep it up", "keep up the good work",
    "carry on", "go for it",
    "sure thing", "approved", "agreed", "confirm", "confirmed", "next", "and", "then",
    "now", "again", "resume", "can we", "can you", "could you", "from where we left off",
    "where we left off", "from where you left off", "where you left off",
    # Chinese
    "继续", "继续吧", "好", "好的", "好吧", "是", "是的", "可以", "行", "嗯", "对",
    "没问题", "开始", "开始吧", "开始实施", "请继续", "请", "谢谢", "全部", "都可以",
    # Japanese
    "はい", "続けて", "続けてください", "お願いします", "お願い", "進めて", "進めてください",
    "ええ", "うん", "了解", "大丈夫",
    # Korean
    "네", "예", "계속", "계속해", "계속해요", "계속해주세요", "좋아", "좋아요", "진행해",
    "진행해주세요", "응",
    # Spanish
    "sí", "si", "sigue", "continúa", "continua", "continuar", "vale", "dale", "adelante",
    "claro", "por favor", "de acuerdo", "hazlo",
    # French
    "oui", "vas-y", "vas y", "allez", "allez-y", "d'accord", "daccord", "continuez",
    "s'il te plaît", "s'il vous plaît", "merci", "bien",
    # German
    "ja", "weiter", "mach weiter", "weitermachen", "los", "gut", "bitte", "genau",
    "in ordnung", "passt",
    # Portuguese
    "sim", "pode", "pode continuar", "continuar", "vai", "beleza", "certo", "isso",
    "por favor", "obrigado",
    # Russian
    "да", "продолжай", "продолжи", "продолжайте", "давай", "хорошо", "ок", "ладно",
    "пожалуйста", "дальше", "вперёд", "вперед",
)  # fmt: skip

#: A speaker label opening a text (``System: Please continue.``): not part of what it says.
SPEAKER_PREFIX = re.compile(
    r"^\s*\[?(?:system|user|human|developer|operator|me)\]?\s*[:：]\s*", re.IGNORECASE
)

_PHRASE = re.compile(
    "|".join(re.escape(p) for p in sorted(set(PHRASES), key=len, reverse=True)),
)
_CJK = re.compile(r"[\u3040-\u30ff\u3400-\u9fff\uac00-\ud7af]")


#: Every ASCII character that is neither a letter, a digit, ``'`` nor ``-``, to a space.
_ASCII_SPACES = {c: " " for c in range(128) if not chr(c).isalnum() and chr(c) not in "'-"}


def _normalise(text: str, limit: int | None = None) -> str | None:
    """Lower case; every character that is neither a letter, a digit, ``'`` nor ``-`` becomes
    a space (punctuation of any script, emoji); spaces collapsed. ``None`` as soon as more
    than ``limit`` characters are kept (the result would be longer than ``limit``: no kept
    character is a space)."""
    lowered = text.strip().lower()
    if lowered.isascii():  # NFC changes nothing; a letter or digit is alphanumeric
        norm = " ".join(lowered.translate(_ASCII_SPACES).split())
        kept = len(norm) - norm.count(" ")
        return None if limit is not None and kept > limit else norm
    out = []
    kept = 0
    for ch in unicodedata.normalize("NFC", lowered).replace("\u2019", "'"):
        category = unicodedata.category(ch)
        if category[0] in "LN" or ch in "'-":
            out.append(ch)
            kept += 1
            if limit is not None and kept > limit:
                return None
        else:
            out.append(" ")
    return " ".join("".join(out).split())


#: Texts :func:`is_acknowledgement` remembers (every user message is asked at each
#: compaction whose range holds it).
ACKNOWLEDGEMENT_CACHE = 8192


@lru_cache(maxsize=ACKNOWLEDGEMENT_CACHE)
def is_acknowledgement(text: str) -> bool:
    """True when ``text`` only acknowledges or asks to go on (see the module docstring):
    ``"continue"``, ``"Yes please!"``, ``"OK, continue"``, ``"yes to all."``, ``"继续"``,
    ``"可以，开始实施"``, ``"Can we continue from where we left off?"``, ``"System: Please
    continue."``; not ``""``, not ``"yes, add the flag"``, not ``"continue with the
    tests"``."""
    norm = _normalise(SPEAKER_PREFIX.sub("", text, count=1), MAX_CHARS)
    if not norm or len(norm) > MAX_CHARS:
        return False
    pos = 0
    matched = False
    while pos < len(norm):
        if norm[pos] == " ":
            pos += 1
            continue
        found = _PHRASE.match(norm, pos)
        if found is None:
            return False
        end = found.end()
        # a Latin phrase must end at a word boundary (``go`` is not the start of ``good``);
        # CJK phrases need none (no spaces between words)
        if end < len(norm) and norm[end] != " " and not _CJK.match(norm[end - 1]):
            longer = _longest_word_match(norm, pos)
            if longer is None:
                return False
            end = longer
        pos = end
        matched = True
    return matched


def _longest_word_match(norm: str, pos: int) -> int | None:
    """End of the longest phrase of :data:`PHRASES` that starts at ``pos`` and ends at a word
    boundary, or ``None``."""
    best = None
    for phrase in PHRASES:
        end = pos + len(phrase)
        if norm.startswith(phrase, pos) and (end == len(norm) or norm[end] == " "):
            best = end if best is None or end > best else best
    return best


def is_substantive(text: str) -> bool:
    """True for a user text that may be the goal: a goal text (neither injected nor a bare
    slash command, :func:`~ctxengine.model.roles.is_goal_text`) that is not a
    bare acknowledgement (:func:`is_acknowledgement`)."""
    return is_goal_text(text) and not is_acknowledgement(text)


__all__ = ["MAX_CHARS", "PHRASES", "SPEAKER_PREFIX", "is_acknowledgement", "is_substantive"]
