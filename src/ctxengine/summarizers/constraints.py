"""The rule-stating sentences of real user messages (the constraints ledger).

Which messages count as a person's is defined once, in :mod:`ctxengine.model.roles`
(:func:`~ctxengine.model.roles.is_real_user_message`): tool results, assistant text and
text the harness injects in the user role never state the user's rules.
"""

from __future__ import annotations

import re
from collections.abc import Iterable

from ctxengine.model import Message
from ctxengine.model.roles import is_real_user_message

#: Longest constraint sentence kept, in characters (longer ones are cut and end with "…").
CONSTRAINT_MAX_CHARS = 300


def real_user_texts(messages: Iterable[Message]) -> tuple[str, ...]:
    """Texts of the real user messages among ``messages`` (text parts joined by newlines),
    oldest first, verbatim."""
    return tuple(m.text for m in messages if is_real_user_message(m))


_RULE = re.compile(
    r"\b(?:must|mustn't|never|don'?t|do not|always|only|should ?n[o']t|shall not|make sure|"
    r"ensure|avoid|no need to|required to|please do not)\b|"
    r"不要|必须|禁止|务必|不能|只能|不许|不准|不得|切勿|请勿|一定要|不可以|别再",
    re.IGNORECASE,
)
#: A sentence ends after . ! ? (followed by space), after 。！？；, or at a line break.
_SENTENCE_END = re.compile(r"(?<=[.!?])\s+|(?<=[。！？；])|\n+")
_FENCE = re.compile(r"^\s*(```|~~~)")


def _prose_lines(text: str) -> list[str]:
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
    """Sentences of ``text`` that state a rule (must, must not, never, don't, always, only,
    should not, make sure, ensure, avoid, 不要, 必须, 禁止, 务必, 不能, 只能 …), matched
    case-insensitively, verbatim apart from surrounding whitespace and a leading list marker,
    capped at :data:`CONSTRAINT_MAX_CHARS`, deduplicated, in order. Text inside fenced code
    blocks is ignored."""
    out: list[str] = []
    seen: set[str] = set()
    for line in _prose_lines(text):
        for raw in _SENTENCE_END.split(line):
            sentence = re.sub(r"^\s*(?:[-*•]|\d+[.)])\s+", "", raw).strip()
            if sentence and _RULE.search(sentence):
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
