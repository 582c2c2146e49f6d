"""Decisions: the sentences in which the user or the agent chooses (``we'll use X instead of Y
because Z``, ``decided to …``, ``going with …``, ``let's use X rather than Y``), kept verbatim
with their reason.

A sentence of a real user message or of the agent's text (not its reasoning, not code) is a
decision when it is not a question nor a conditional (``if …``, ``should we …?``) and either

- says it decides (``decided``, ``decision:``, ``going with``, ``settled on``, ``opted for``,
  ``chose`` …), or
- states a first-person choice (``I'll``, ``we'll``, ``let's``, ``I'm going to`` …) against an
  alternative (``instead of``, ``rather than``, ``in place of``) at most
  :data:`CHOICE_SPAN_CHARS` characters away;

with the equivalents in the languages of :mod:`ctxengine.projection.wording` (Chinese,
Japanese, Korean, Spanish, French, German, Portuguese, Russian; :data:`_LANGUAGES`). A choice
without an alternative (``I'll use that.``, ``I'll run the tests``) is a plan, not a decision.

Its reason is kept with it: when the sentence gives none (``because``, ``since``, ``so
that`` …) and the next sentence opens with one (``Because …``, ``That way …``), that sentence
is appended. The text is capped at :data:`DECISION_MAX_CHARS` characters; at most
:data:`DECISIONS_MAX` decisions are read from one range (the newest).
"""

from __future__ import annotations

import re
from collections.abc import Iterator, Sequence
from functools import lru_cache

from ctxengine.model import DecisionFact, Message, TextPart
from ctxengine.model.facts import DecisionOrigin
from ctxengine.model.roles import is_real_user_message, user_text

#: Longest decision kept, in characters (longer ones are cut, ending with ``…``).
DECISION_MAX_CHARS = 400
#: Most decisions read from one range of messages (the newest are kept).
DECISIONS_MAX = 12

#: Per language: (says it decides, first-person choice, against an alternative).
_LANGUAGES: tuple[tuple[str, str, str], ...] = (
    (  # English
        r"\b(?:decided|decision:|(?:I|we)(?:'ll| will) go with|let's go with|going with|"
        r"settled on|opt(?:ed|ing) for|(?:I|we) chose|(?:I|we) picked)",
        r"\b(?:I'll|I will|I'm going to|I am going to|we'll|we will|we're going to|"
        r"we are going to|let's|let us|we should keep|I'd rather|we'd rather)\b",
        r"\b(?:instead of|rather than|in place of)\b",
    ),
    (
        "我们决定|我决定|已决定|决定了|决定用|决定使用|决定采用|决定改用|定下来|就这么定|"
        "我(?:们)?(?:采用|选择|改用)",
        "我们用|我来用|我会用|我用|就用|咱们用",
        "而不是|而非|代替|取代",
    ),
    (
        "ことにしました|ことにします|に決めました|に決定",
        "使います|にします|しましょう",
        "ではなく|代わりに",
    ),
    ("하기로 했|하기로 결정|로 결정", "쓰겠|사용하겠|합시다|하자", "대신|말고"),
    (
        r"\b(?:decidimos|he decidido|hemos decidido|decidí|optamos por|nos quedamos con)",
        r"\b(?:vamos a usar|usaremos|usaré|usemos|voy a usar)\b",
        r"\b(?:en lugar de|en vez de)\b",
    ),
    (
        r"\b(?:nous avons décidé|j'ai décidé|on a décidé|on part sur|nous optons pour)",
        r"\b(?:j'utiliserai|nous utiliserons|on va utiliser|utilisons|je vais utiliser)\b",
        r"\b(?:au lieu de|plutôt que)\b",
    ),
    (
        r"\b(?:wir haben (?:uns )?entschieden|ich habe (?:mich )?entschieden|entschieden:)",
        r"\b(?:wir verwenden|ich verwende|verwenden wir|lass uns|lasst uns|wir nehmen|ich nehme)\b",
        r"\b(?:statt|anstatt|anstelle von)\b",
    ),
    (
        r"\b(?:decidimos|decidi|optamos por)\b",
        r"\b(?:vamos usar|usaremos|vou usar|usemos)\b",
        r"\b(?:em vez de|ao invés de|no lugar de)\b",
    ),
    (
        r"(?:решили|решено|выбрали)",
        r"(?:будем использовать|используем|давайте)",
        r"(?:вместо|а не)",
    ),
)
_DECIDES = re.compile("|".join(f"(?:{d})" for d, _, _ in _LANGUAGES), re.IGNORECASE)
_CHOICE = [(re.compile(c, re.IGNORECASE), re.compile(a, re.IGNORECASE)) for _, c, a in _LANGUAGES]
#: The ASCII words one of which, in lower case, every ASCII text that :data:`_DECIDES`
#: matches holds (``(?:I|we) chose`` holds ``chose``; the patterns' non-ASCII letters, such
#: as the ``í`` of ``decidí``, match no ASCII letter, even ignoring case).
_DECIDES_ASCII = (
    "decided", "decision:", "go with", "going with", "settled on", "opted for", "opting for",
    "chose", "picked", "decidi", "optamos por", "nos quedamos con", "on part sur",
    "nous optons pour", "entschieden",
)  # fmt: skip
#: The same for the alternatives of :data:`_CHOICE` (``instead of`` …).
_AGAINST_ASCII = (
    "instead of", "rather than", "in place of", "en lugar de", "en vez de", "au lieu de",
    "statt", "anstelle von", "em vez de", "no lugar de",
)  # fmt: skip
_DECIDES_ASCII_WORD = re.compile("|".join(re.escape(word) for word in _DECIDES_ASCII))
_AGAINST_ASCII_WORD = re.compile("|".join(re.escape(word) for word in _AGAINST_ASCII))
_REASON = re.compile(
    r"\b(?:because|since|as it|as the|so that|given that|due to|which means|that way)\b|"
    r"因为|由于|ので|から|때문|porque|parce que|weil|потому что|так как",
    re.IGNORECASE,
)
_REASON_OPENER = re.compile(
    r"^(?:because|since|that way|this way|the reason|this (?:avoids|keeps|means)|"
    r"that (?:avoids|keeps|means)|it (?:avoids|keeps))\b",
    re.IGNORECASE,
)
_QUESTION = re.compile(r"[?？]\s*$")
_CONDITIONAL = re.compile(
    r"^(?:if|unless|when|whether|should (?:we|i)|shall (?:we|i)|do you want|would you like)\b",
    re.IGNORECASE,
)
_LEAD = re.compile(r"^(?:(?:ok(?:ay)?|so|well|alright|also|and|but|then|now|right)\b[,.!]?\s*)+",
                   re.IGNORECASE)  # fmt: skip
_FENCE = re.compile(r"^\s*(?:```|~~~)")
_NOT_PROSE = re.compile(r"^\s*(?:>|\||    |\t|#|//|\$ )")
_SENTENCE = re.compile(
    r"(?<=[.!?])\s+(?=[\"'`(\[]?[A-Z\u00c0-\u024f\u0400-\u04ff])|(?<=[。！？])|"
    r"(?<=[a-z)`'\"’][.!?])(?=[A-Z])"
)
#: Farthest apart a first-person choice and its alternative may be, in characters.
CHOICE_SPAN_CHARS = 160


def _prose_lines(text: str) -> Iterator[str]:
    """The lines of ``text`` outside fenced code, quotes, tables and indented code."""
    fenced = False
    for line in text.splitlines():
        if _FENCE.match(line):
            fenced = not fenced
            continue
        if fenced or not line.strip() or _NOT_PROSE.match(line):
            continue
        yield line.strip().lstrip("-*• ").strip()


def sentences(text: str) -> list[str]:
    """The prose sentences of ``text``, in order (code blocks, quoted and indented lines
    left out); a sentence end without a space before a capital (``call!Instead``) splits
    too."""
    out: list[str] = []
    for line in _prose_lines(text):
        out.extend(s.strip() for s in _SENTENCE.split(line) if s.strip())
    return out


def is_decision(sentence: str) -> bool:
    """True when ``sentence`` states a decision (see the module docstring)."""
    if _QUESTION.search(sentence):
        return False
    body = _LEAD.sub("", sentence)
    if _CONDITIONAL.match(body):
        return False
    lowered = body.lower() if body.isascii() else None
    if (lowered is None or _holds_any(lowered, _DECIDES_ASCII_WORD)) and _DECIDES.search(body):
        return True
    if lowered is not None and not _holds_any(lowered, _AGAINST_ASCII_WORD):
        return False
    for choice, against in _CHOICE:
        alternatives = [m.start() for m in against.finditer(body)]
        if not alternatives:
            continue
        chosen = [m.start() for m in choice.finditer(body)]
        if any(abs(c - a) <= CHOICE_SPAN_CHARS for c in chosen for a in alternatives):
            return True
    return False


def _holds_any(text: str, words: re.Pattern[str]) -> bool:
    return words.search(text) is not None


def _may_decide(text: str) -> bool:
    """False only when no sentence of ``text`` can be a decision: an ASCII text that holds,
    in lower case, none of the words every decision holds (:data:`_DECIDES_ASCII`,
    :data:`_AGAINST_ASCII`); each sentence is a part of the text."""
    if not text.isascii():
        return True
    lowered = text.lower()
    return _holds_any(lowered, _DECIDES_ASCII_WORD) or _holds_any(lowered, _AGAINST_ASCII_WORD)


def _cap(text: str) -> str:
    return text if len(text) <= DECISION_MAX_CHARS else text[: DECISION_MAX_CHARS - 1] + "…"


#: Texts whose decisions :func:`decisions_in` remembers (each compaction reads its range's
#: messages, a replay comparing policies reads the same messages once per policy).
DECISIONS_CACHE = 8192


@lru_cache(maxsize=DECISIONS_CACHE)
def decisions_in(text: str) -> tuple[str, ...]:
    """The decisions ``text`` states, each with the next sentence when that one gives the
    reason the decision does not give (capped at :data:`DECISION_MAX_CHARS`)."""
    if not _may_decide(text):
        return ()
    found: list[str] = []
    said = sentences(text)
    for i, sentence in enumerate(said):
        if not is_decision(sentence):
            continue
        following = said[i + 1] if i + 1 < len(said) else ""
        if not _REASON.search(sentence) and _REASON_OPENER.match(following):
            sentence = f"{sentence} {following}"
        found.append(_cap(sentence))
    return tuple(found)


def decision_facts(messages: Sequence[Message], start: int = 0) -> tuple[DecisionFact, ...]:
    """Decisions stated in real user messages and in the agent's text, one per text (the
    newest source), first-seen order, the newest :data:`DECISIONS_MAX` of them.

    Args:
        messages: a range of history, in order.
        start: index of ``messages[0]`` in the session (added to each ``source``).
    """
    found: dict[str, DecisionFact] = {}
    for index, message in enumerate(messages):
        origin: DecisionOrigin
        if is_real_user_message(message):
            origin = "user"
            text = user_text(message)
        elif message.role == "assistant":
            origin = "assistant"
            text = "\n".join(p.text for p in message.parts if isinstance(p, TextPart))
        else:
            continue
        for decision in decisions_in(text):
            found[decision] = DecisionFact(decision, start + index, origin)
    newest = sorted(found.values(), key=lambda d: d.source)[-DECISIONS_MAX:]
    keep = {d.text for d in newest}
    return tuple(d for d in found.values() if d.text in keep)
