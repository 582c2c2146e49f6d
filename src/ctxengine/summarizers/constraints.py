"""The rule-stating sentences of real user messages (the constraints ledger), and how a text is
split into sentences.

Which messages count as a person's is defined once, in :mod:`ctxengine.model.roles`
(:func:`~ctxengine.model.roles.is_real_user_message`): tool results, assistant text and
text the harness injects in the user role never state the user's rules.
"""

from __future__ import annotations

import re
from collections.abc import Iterable

from ctxengine.model import Message
from ctxengine.model.roles import is_real_user_message, user_text
from ctxengine.summarizers.rule_words import ANY_RULE_WORD

#: Longest constraint sentence kept, in characters (longer ones are cut and end with "…").
CONSTRAINT_MAX_CHARS = 300


def real_user_texts(messages: Iterable[Message]) -> tuple[str, ...]:
    """Texts of the real user messages among ``messages`` (their user text,
    :func:`~ctxengine.model.roles.user_text`: text parts joined by newlines, injected parts
    beside a person's text left out), oldest first, verbatim."""
    return tuple(user_text(m) for m in messages if is_real_user_message(m))


#: A sentence may end after . ! ? followed by space, and ends after 。！？；.
_BREAK = re.compile(r"(?<=[.!?])\s+|(?<=[。！？；])")
#: Abbreviations a sentence never ends with (``e.g.``, ``vs.``, ``z.B.``, ``т.е.``), lower
#: case, without their last dot.
NEVER_ENDS = frozenset(
    {"e.g", "i.e", "eg", "ie", "vs", "cf", "viz", "incl", "approx", "esp", "resp", "z.b", "d.h",
     "bzw", "ggf", "u.a", "p.ej", "ej", "c.-à-d", "т.е", "т.к", "напр", "ср"}
)  # fmt: skip
#: Abbreviations that may end a sentence (``… and so on, etc.``): the sentence ends there only
#: when the next word opens with a capital letter.
MAY_END = frozenset({"etc", "usw", "т.д", "т.п", "al"})
_LAST_WORD = re.compile(r"([^\s(\[\"'`]+)\.$")
_FENCE = re.compile(r"^\s*(```|~~~)")


def _ends_sentence(before: str, after: str) -> bool:
    """True when a ``.``/``!``/``?`` ending ``before``, followed by ``after``, ends a
    sentence: not after an abbreviation of :data:`NEVER_ENDS`, and after one of
    :data:`MAY_END` only before a capital letter."""
    found = _LAST_WORD.search(before)
    if found is None:
        return True
    word = found.group(1).lower()
    if word in NEVER_ENDS:
        return False
    if word in MAY_END:
        return after[:1].isupper()
    return True


def split_sentences(line: str) -> list[str]:
    """The sentences of one line, stripped, in order: split after ``.``/``!``/``?`` and a
    space (not after ``e.g.``, ``i.e.``, ``vs.``, ``etc.`` before a small letter …, see
    :func:`_ends_sentence`) and after ``。！？；``; empty ones left out."""
    out: list[str] = []
    start = 0
    for m in _BREAK.finditer(line):
        if m.group(0) and not _ends_sentence(line[start : m.start()], line[m.end() :]):
            continue
        out.append(line[start : m.start()])
        start = m.end()
    out.append(line[start:])
    return [s.strip() for s in out if s.strip()]


def prose_lines(text: str) -> list[str]:
    """Lines outside fenced code blocks (pasted code and logs are not the user's rules)."""
    out: list[str] = []
    fenced = False
    for line in text.splitlines():
        if _FENCE.match(line):
            fenced = not fenced
            continue
        if not fenced:
            out.append(line)
    return out


def _cap(sentence: str) -> str:
    if len(sentence) <= CONSTRAINT_MAX_CHARS:
        return sentence
    return sentence[: CONSTRAINT_MAX_CHARS - 1] + "…"


def constraint_sentences(text: str) -> tuple[str, ...]:
    """Sentences of ``text`` (:func:`split_sentences`) that hold a rule word of any language
    of :mod:`ctxengine.summarizers.rule_words` (must, never, don't, always, only, make
    sure, nunca, jamais, niemals, никогда, 不要, 必须, なければならない, 해야 합니다 …),
    matched case-insensitively, verbatim apart from surrounding whitespace and a leading
    list marker, capped at :data:`CONSTRAINT_MAX_CHARS`, deduplicated, in order. Text inside
    fenced code blocks is ignored. Whether such a sentence states a rule is
    :func:`ctxengine.summarizers.rules.rule_sentences`."""
    out: list[str] = []
    seen: set[str] = set()
    for line in prose_lines(text):
        for raw in split_sentences(line):
            sentence = re.sub(r"^\s*(?:[-*•]|\d+[.)])\s+", "", raw).strip()
            if sentence and ANY_RULE_WORD.search(sentence):
                capped = _cap(sentence)
                if capped not in seen:
                    seen.add(capped)
                    out.append(capped)
    return tuple(out)


def constraints_of(messages: Iterable[Message]) -> tuple[str, ...]:
    """Constraint sentences from the real user messages among ``messages`` (never from tool
    results or assistant text), in order, deduplicated."""
    out: list[str] = []
    seen: set[str] = set()
    for text in real_user_texts(messages):
        for sentence in constraint_sentences(text):
            if sentence not in seen:
                seen.add(sentence)
                out.append(sentence)
    return tuple(out)
