"""User rules: the sentences of real user messages that state a rule, without a harness's
boilerplate and without noise, each with its topic, and which later rule replaces which.

A sentence is a rule when it has a rule word (:func:`constraint_sentences`: must, never,
don't, always, only, make sure, 不要, 必须 …) or, without one, when it is a short imperative
whose verb states a standing preference (``Use tabs.``, ``Target Python 3.11.``,
``Prefer composition over inheritance.``). Not rules:

- questions (``does it …?``, ``… right?``, ``… no?``, after an interjection such as
  ``wait,``) and first-person narrative or opinion (``I never saw the gui open.``, ``I was
  always passing a big dataframe``, ``i don't think …``, ``i think …``);
- a sentence longer than :data:`WEAK_RULE_MAX_CHARS` whose only rule words also describe
  (only, always, ensure, make sure, avoid, should);
- code comments (``# don't change``, ``// never``), lines of encoded data or request ids;
- a harness's task-prompt boilerplate: text inside ``<instructions>``/``<IMPORTANT>`` blocks
  or after an ``INSTRUCTIONS:`` line that follows an ``ISSUE:`` (SWE-agent, mini-swe-agent
  and SWE-bench style templates), and any sentence shared verbatim by two messages (system,
  developer or user, demonstrations included) that share at least
  :data:`BOILERPLATE_MIN_SHARED` sentences;
- the same rule twice (compared case- and punctuation-insensitively; the first is kept).

A rule supersedes an earlier one (:func:`ctxengine.model.facts.supersedes`) when both have the
same topic (content words without rule words, values and numbers) or when it says it
replaces earlier rules (``from now on``, ``instead``, ``no longer`` …) and shares most of the
earlier rule's topic words: ``Always target Python 3.8.`` is superseded by ``from now on you
must target Python 3.11``.
"""

from __future__ import annotations

import re
from collections.abc import Sequence

from ctxengine.model import Message, RuleFact, TextPart
from ctxengine.model.facts import merge_rules
from ctxengine.model.roles import is_real_user_message
from ctxengine.summarizers.constraints import constraint_sentences

#: Sentences two messages must share verbatim before their shared sentences count as a
#: template's boilerplate rather than a user repeating a rule.
BOILERPLATE_MIN_SHARED = 3
#: Longest keyword-less imperative taken as a rule, in characters.
IMPERATIVE_MAX_CHARS = 120

_BLOCKS = re.compile(
    r"<(instructions|IMPORTANT|example_response)>.*?</\1>", re.IGNORECASE | re.DOTALL
)
_SWE_INSTRUCTIONS = re.compile(r"^INSTRUCTIONS:\s*$", re.MULTILINE)
_SENTENCE_END = re.compile(r"(?<=[.!?])\s+|(?<=[。！？；])|\n+")
_LEAD = re.compile(
    r"^(?:(?:wait|ok(?:ay)?|hm+|so|well|alright|also|and|but|then|now|oh|ah|yes|no)\b[,.!]?\s*)+",
    re.IGNORECASE,
)
_QUESTION_START = re.compile(
    r"^(?:what|why|how|when|where|which|who|does|do|did|is|are|was|were|can|could|would|will|"
    r"should|have|has|shall|may|might|isn't|aren't|doesn't|don't you)\b",
    re.IGNORECASE,
)
#: First-person narrative: "I was …", "we had …", "I never saw …", "I selected …".
_NARRATIVE = re.compile(
    r"\b(?:i|we)\s+(?:(?:was|were|had|did|used to|have been|'ve been)\b|"
    r"(?:\w+\s+)?(?:saw|got|tried|noticed|selected|ran|found|thought|wanted|passed|used)\b)",
    re.IGNORECASE,
)
_OPINION = re.compile(
    r"\b(?:i|we)\s+(?:don'?t|do not|didn'?t)\s+(?:think|tink|know|understand|see|get|remember|"
    r"believe|care|mind)\b|\bi\s+(?:think|guess|believe|suppose|wonder)\b|\bit seems\b",
    re.IGNORECASE,
)
#: Rule words that also describe (``with only one row``, ``it always fails``): a sentence
#: with no other rule word counts only when short.
_WEAK = re.compile(r"\b(?:only|always|ensure|make sure|avoid|should)\b", re.IGNORECASE)
_STRONG = re.compile(
    r"\b(?:must|mustn'?t|never|don'?t|do not|shall not|should ?n[o']t|required to|no need to)\b|"
    r"不要|必须|禁止|务必|不能|只能|不许|不准|不得|切勿|请勿|一定要|不可以|别再",
    re.IGNORECASE,
)
#: Longest sentence taken on a weak rule word alone, in characters.
WEAK_RULE_MAX_CHARS = 160
_COMMENT = re.compile(r"^\s*(?:#|//|/\*|--\s|\*\s|<!--)")
_ENCODED = re.compile(r"[A-Za-z0-9+/=_-]{32,}|\breq(?:uest)?[_-]?id\b", re.IGNORECASE)
_IMPERATIVE = re.compile(
    r"^(?:please\s+)?(?:use|target|prefer|keep|stick to|follow|indent with|support|pin|"
    r"limit|stay on|stay within|leave|name|format with|write (?:tests|docs|comments|code) in)"
    r"\s+[\w`'\"]",
    re.IGNORECASE,
)
_REPLACES = re.compile(
    r"\b(?:from now on|instead|no longer|any ?more|actually|switch(?:ing)? to|change of plans?|"
    r"rather than|going forward|henceforth|scratch that|forget (?:that|what i said)|"
    r"not anymore|from here on)\b|^update:",
    re.IGNORECASE,
)
#: Words that say nothing about what a rule is about.
_STOP = frozenset(
    {
        "a", "an", "the", "to", "of", "in", "on", "at", "for", "with", "and", "or", "but", "is",
        "are", "be", "been", "it", "its", "this", "that", "these", "those", "all", "any", "each",
        "every", "you", "your", "we", "our", "i", "me", "my", "please", "from", "now", "going",
        "forward", "instead", "rather", "than", "no", "not", "longer", "anymore", "more",
        "actually", "switch", "switching", "change", "plan", "plans", "here", "so", "also",
        "just", "then", "there", "them", "they", "must", "mustn't", "never", "don't", "dont",
        "do", "does", "did", "always", "only", "should", "shouldn't", "shall", "make", "sure",
        "ensure", "avoid", "need", "needs", "required", "require", "want", "would", "like", "use",
        "uses", "using", "keep", "write", "run", "have", "has", "get", "put", "go", "stay",
        "stick", "follow", "prefer", "let", "let's", "it's", "via", "by", "as", "into", "over",
        "under", "up", "again", "down", "out", "off", "too", "very", "one", "can", "could", "will",
    }
)  # fmt: skip
_TOPIC_WORD = re.compile(r"[^\W\d_][\w.+#'’-]*", re.UNICODE)


def _strip_harness(text: str) -> str:
    """``text`` without template instruction blocks (see the module docstring)."""
    text = _BLOCKS.sub("\n", text)
    if re.search(r"^ISSUE:\s*$", text, re.MULTILINE):
        m = _SWE_INSTRUCTIONS.search(text)
        if m is not None:
            text = text[: m.start()]
    return text


def _key(sentence: str) -> str:
    return " ".join(re.findall(r"\w+", sentence.casefold()))


def _sentences(text: str) -> set[str]:
    """Keys (:func:`_key`) of the sentences of ``text`` longer than 20 characters."""
    out = set()
    for raw in _SENTENCE_END.split(text):
        sentence = re.sub(r"^\s*(?:[-*•]|\d+[.)])\s+", "", raw).strip()
        if len(sentence) > 20:
            out.add(_key(sentence))
    return out


def boilerplate(messages: Sequence[Message]) -> frozenset[str]:
    """Keys (case- and punctuation-insensitive) of the sentences longer than 20 characters
    shared by two system, developer or user messages that share at least
    :data:`BOILERPLATE_MIN_SHARED` of them."""
    texts = [
        "\n".join(p.text for p in m.parts if isinstance(p, TextPart))
        for m in messages
        if m.role in ("system", "developer", "user")
    ]
    sets = [_sentences(t) for t in texts if len(t) > 200]
    out: set[str] = set()
    for i, a in enumerate(sets):
        for b in sets[i + 1 :]:
            shared = a & b
            if len(shared) >= BOILERPLATE_MIN_SHARED:
                out |= shared
    return frozenset(out)


def _is_noise(sentence: str) -> bool:
    stripped = sentence.strip()
    if _COMMENT.match(stripped) or _ENCODED.search(stripped):
        return True
    body = _LEAD.sub("", stripped)
    question = stripped.endswith("?") and (
        _QUESTION_START.match(body) or re.search(r"\b(?:right|no|ok|yes)\?$", stripped, re.I)
    )
    weak_only = not _STRONG.search(stripped) and _WEAK.search(stripped) is not None
    too_long = weak_only and len(stripped) > WEAK_RULE_MAX_CHARS
    return bool(question or too_long or _NARRATIVE.search(body) or _OPINION.search(body))


def _imperatives(text: str) -> list[str]:
    out = []
    for line in text.splitlines():
        if re.match(r"^\s*(```|~~~)", line):
            continue
        for raw in _SENTENCE_END.split(line):
            sentence = re.sub(r"^\s*(?:[-*•]|\d+[.)])\s+", "", raw).strip()
            if (
                sentence
                and len(sentence) <= IMPERATIVE_MAX_CHARS
                and _IMPERATIVE.match(sentence)
                and not sentence.endswith("?")
            ):
                out.append(sentence)
    return out


def rule_sentences(text: str, skip: frozenset[str] = frozenset()) -> tuple[str, ...]:
    """The rules stated in one user text, in order, deduplicated (see the module
    docstring); sentences whose key is in ``skip`` (:func:`boilerplate`) are left out."""
    body = _strip_harness(text)
    found = [*constraint_sentences(body), *_imperatives(body)]
    order = {s: body.find(s) for s in found}
    out: list[str] = []
    seen: set[str] = set()
    for sentence in sorted(dict.fromkeys(found), key=lambda s: order[s]):
        key = _key(sentence)
        if not key or key in seen or key in skip or _is_noise(sentence):
            continue
        seen.add(key)
        out.append(sentence)
    return tuple(out)


def topic(sentence: str) -> str:
    """The rule's content words: lower case, sorted, space-separated, without stop words,
    rule words, numbers and versions (``"Always target Python 3.8."`` → ``"python
    target"``)."""
    words = {w.casefold().rstrip(".") for w in _TOPIC_WORD.findall(sentence)}
    return " ".join(sorted(w for w in words if w and w not in _STOP and not w[:1].isdigit()))


def says_it_replaces(sentence: str) -> bool:
    """True when the sentence says it replaces earlier rules (``from now on``, ``instead``,
    ``no longer``, ``actually`` …)."""
    return _REPLACES.search(sentence) is not None


def rule_facts(messages: Sequence[Message], start: int = 0) -> tuple[RuleFact, ...]:
    """Rules of the real user messages among ``messages`` (``source``: the message's index
    plus ``start``), deduplicated, later rules superseding earlier ones on the same topic."""
    skip = boilerplate(messages)
    out: tuple[RuleFact, ...] = ()
    seen: set[str] = set()
    for index, message in enumerate(messages):
        if not is_real_user_message(message):
            continue
        text = "\n".join(p.text for p in message.parts if isinstance(p, TextPart))
        new = []
        for sentence in rule_sentences(text, skip):
            if _key(sentence) in seen:
                continue
            seen.add(_key(sentence))
            new.append(
                RuleFact(
                    sentence, "active", start + index, topic(sentence), says_it_replaces(sentence)
                )
            )
        out = merge_rules(out, new)
    return out
