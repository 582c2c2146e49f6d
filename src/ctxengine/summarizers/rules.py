"""User rules: the sentences of real user messages that tell the agent how to work, without a
harness's boilerplate, pasted issues, code or descriptions, each with its topic, and which later
rule replaces which.

A rule is an imperative addressed to the agent (the word tables of every language are
:mod:`ctxengine.summarizers.rule_words`). A sentence is one when

- it has a normative word anywhere (``must``, ``must not``, ``shall not``, ``should not``,
  ``required to``, ``I don't want you to``; ``debes``, ``il faut``, ``muss``, ``deve``,
  ``должен``, ``必须``, ``不要``, ``なければならない``, ``해야 합니다`` …);
- or a rule word that also describes (``never``, ``always``, ``only``, ``don't``, ``make
  sure``, ``ensure``, ``avoid``, ``should``; ``nunca``, ``jamais``, ``niemals``, ``никогда``
  …) or a prohibition (``no modifiques``, ``ne modifiez pas``, ``não modifique``, ``не
  трогай``) stands at the start of a clause: after nothing but words such as ``please``,
  ``also``, ``and``, ``you should`` (:data:`~ctxengine.summarizers.rule_words.LEAD_WORDS`),
  or after ``,`` ``;`` ``:`` ``(`` or a dash; in German also after the verb that opens the
  sentence (``Ändere niemals …``). ``Splitting a bill is broken: … the shares only add up to
  99.99``, ``it always fails``, ``we never get that far``, ``This could help to avoid
  confusion.``, ``If you have any suggestions …, it's always appreciated.`` describe and are
  not rules;
- or, without a rule word, a clause of at most :data:`IMPERATIVE_MAX_CHARS` characters opens
  with a verb that states a standing preference (``Use tabs.``, ``Target Python 3.11.``,
  ``From now on use port 9000.``, ``Switch to Python 3.11 from here on.``, ``Usa el puerto
  8000.``, ``使用端口 8000。``);
- or it grants a permission that lifts an earlier prohibition (``You can add new
  dependencies now``, ``feel free to …``, ``ya puedes …``, ``现在可以 …``), lifts an earlier
  rule (``You no longer need to support Python 2.``, ``不再需要 …``), or drops one by name
  (``Forget the tabs rule, use 4 spaces.``).

Not rules, whatever their words:

- questions (``does it …?``, ``… right?``) and first-person narrative or opinion (``I never
  saw the gui open.``, ``i don't think …``);
- a sentence longer than :data:`WEAK_RULE_MAX_CHARS` whose only rule words also describe;
- code and logs: fenced blocks, code comments (``# don't change``), lines that read as code
  (``use "cli"``, ``import x``, a line ending with ``;`` or ``{``), a compiler's or linter's
  ``path:line:col:`` message, lines of encoded data or request ids;
- a harness's task-prompt boilerplate and pasted issues: text inside ``<instructions>``,
  ``<IMPORTANT>``, ``<issue>``, ``<issue_description>``, ``<pr_description>`` blocks, the
  ``ISSUE:`` and ``INSTRUCTIONS:`` parts of SWE-agent prompts, and any sentence shared
  verbatim by two messages (system, developer or user, demonstrations included) that share at
  least :data:`BOILERPLATE_MIN_SHARED` sentences;
- a bare acknowledgement (``ok, keep going``);
- the same rule twice (compared case- and punctuation-insensitively; the first is kept).

Words that read as English too (Spanish ``no uses …``, German ``nicht``, ``nur``) count only
in a conversation whose dominant language is theirs
(:func:`~ctxengine.projection.language.detect_language`).

A rule supersedes an earlier one (:func:`ctxengine.model.facts.supersedes`) when both have the
same topic (content words without rule words, values and numbers; character pairs of CJK
text), when it says it replaces earlier rules (``from now on``, ``instead``, ``no longer``,
``switch to``, a permission …) and shares most of the topic of either, in the whole sentences
or in the clauses that state them (:func:`instruction`), or when it names what
it replaces (``instead of 8000``, ``forget the tabs rule``: :func:`revoked_words`) and the
earlier rule holds it.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from functools import lru_cache

from ctxengine.model import Message, RuleFact, TextPart, user
from ctxengine.model.facts import merge_rules
from ctxengine.model.roles import is_real_user_message, user_text
from ctxengine.projection.language import Language, detect_language
from ctxengine.summarizers.acknowledge import is_acknowledgement
from ctxengine.summarizers.constraints import CONSTRAINT_MAX_CHARS, prose_lines, split_sentences
from ctxengine.summarizers.rule_words import (
    ADVERB,
    GATED_PATTERNS,
    IMPERATIVE,
    LEAD,
    LEAD_START,
    LIFTS,
    MODAL,
    NEGATIVE,
    PERMITS,
    REPLACES,
    REVOKES,
)

#: Sentences two messages must share verbatim before their shared sentences count as a
#: template's boilerplate rather than a user repeating a rule.
BOILERPLATE_MIN_SHARED = 3
#: Longest keyword-less imperative clause taken as a rule, in characters.
IMPERATIVE_MAX_CHARS = 120
#: Longest sentence taken on a weak rule word alone, in characters.
WEAK_RULE_MAX_CHARS = 160

_BLOCKS = re.compile(
    r"<(instructions|IMPORTANT|example_response|issue|issue_description|pr_description|"
    r"problem_statement)>.*?</\1>",
    re.IGNORECASE | re.DOTALL,
)
_SWE_ISSUE = re.compile(r"^ISSUE:\s*$", re.MULTILINE)
_SWE_INSTRUCTIONS = re.compile(r"^INSTRUCTIONS:\s*$", re.MULTILINE)
_LIST_MARKER = re.compile(r"^\s*(?:[-*•]|\d+[.)])\s+")
_INTERJECTION = re.compile(
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
#: The agent is told what the user wants (normative, first person).
_WANTS = re.compile(
    r"^i (?:don'?t|do not) want (?:you )?to\b|^i want you to\b|^i'?d (?:like|prefer) you to\b|"
    r"^i'?d prefer\b",
    re.IGNORECASE,
)
_COMMENT = re.compile(r"^\s*(?:#|//|/\*|--\s|\*\s|<!--)")
_ENCODED = re.compile(r"[A-Za-z0-9+/=_-]{32,}|\breq(?:uest)?[_-]?id\b", re.IGNORECASE)
#: A line that reads as code or as a tool's message rather than prose.
_CODE_LINE = re.compile(
    r"^\s*(?:use\s+[\"'][^\"']+[\"']\s*;?|import\s+[\w.{*]|from\s+[\w.]+\s+import\b|#include\b|"
    r"package\s+[\w.]+;?|(?:pub\s+)?(?:def|fn|func|class|struct|impl|actor|trait)\s+\w+.*[:({]|"
    r"(?:let|const|var)\s+\w+\s*(?::\s*\w+\s*)?=)"
    r"|[;{}]\s*$|^\s*[\w.]+\([^)]*\)(?:\.\w+\([^)]*\))+"
    r"|^\s*\S+\.\w{1,5}:\d+(?::\d+)?:\s",
)
#: Words before a rule word that join it to the clause before (an imperative clause after
#: ``and``).
_CONJUNCTION = re.compile(
    r"(?:^|\s)(?:and|but|or|then|so|please|y|pero|et|mais|und|aber|e|mas|и|но|а)$",
    re.IGNORECASE,
)
#: After ``and``/``but`` …, a rule word followed by a verb in the third person, a participle
#: or a gerund describes (``… and only displays the first line``).
_DESCRIBING_VERB = re.compile(r"\s+(?:\w+(?:[^s\W]s|ies|ches|shes|sses|xes)|\w+ing|\w+ed)\b")
_EMPHASIS = " \t*_`\"'“”«»"
_BOUNDARY = ",;:([—–-"
_PROPOSAL = re.compile(r"^(?:let'?s|let us|we could|maybe|perhaps)\b", re.IGNORECASE)
#: A clause opening: a rule's clauses split at ``,`` ``;`` ``:`` (not ``e.g.,``).
_CLAUSE = re.compile(r"[,;:，；：]\s*")
#: A German word that may open a sentence as its verb before the rule word (``Ändere
#: niemals …``).
_GERMAN_VERB_FIRST = re.compile(r"^[A-ZÄÖÜ][a-zäöüß]+$")
_GERMAN_ADVERB = re.compile(
    r"\b(?:niemals|immer|nie|nur|keine?[nmrs]?|nichts|nicht)\b", re.IGNORECASE
)
_CJK = re.compile(r"[\u3040-\u30ff\u3400-\u9fff\uac00-\ud7af]")
_CJK_RUN = re.compile(r"[\u3040-\u30ff\u3400-\u9fff\uac00-\ud7af]+")

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
        "may", "feel", "free", "fine", "ok", "okay", "allowed", "forget", "ignore", "drop", "rule",
        "rules", "stop", "henceforth", "onwards", "move", "back",
        # Spanish
        "el", "la", "los", "las", "un", "una", "de", "del", "en", "y", "o", "que", "por",
        "para", "con", "sin", "nunca", "jamás", "siempre", "debes", "debe", "usa", "usar",
        "utiliza", "ahora", "partir", "adelante", "lugar", "vez", "ya", "puedes", "nada",
        "lo", "le", "se", "mantén", "favor", "solo", "sólo", "dentro", "olvida", "regla",
        # French
        "les", "des", "du", "et", "ou", "pour", "avec", "sans", "dans", "ne", "pas",
        "jamais", "toujours", "doit", "dois", "devez", "faut", "il", "utilise", "utilisez",
        "maintenant", "désormais", "dorénavant", "au", "lieu", "plutôt", "rien", "tu", "vous",
        "peux", "pouvez", "règle", "oublie", "sous",
        # German
        "der", "die", "das", "den", "dem", "ein", "eine", "und", "oder", "mit", "ohne", "im",
        "für", "nie", "niemals", "immer", "nur", "muss", "musst", "müssen", "nicht", "kein",
        "keine", "nichts", "verwende", "benutze", "ab", "jetzt", "statt", "anstatt", "kannst",
        "darfst", "bitte", "etwas", "unter", "vergiss", "regel", "zu", "von",
        # Portuguese
        "os", "um", "uma", "da", "dos", "em", "na", "com", "sem",
        "não", "nao", "sempre", "deve", "agora", "pode", "você", "apenas", "mais",
        "esqueça", "regra",
        # Russian
        "и", "в", "на", "с", "не", "по", "для", "без", "никогда", "всегда", "только", "должен",
        "нужно", "надо", "нельзя", "используй", "используйте", "теперь", "вместо", "больше",
        "можно", "ничего", "внутри", "забудь", "правило", "про",
    }
)  # fmt: skip
#: Character pairs of CJK text that say nothing about what a rule is about.
_CJK_STOP = frozenset(
    {"不要", "必须", "禁止", "务必", "不能", "只能", "使用", "现在", "开始", "以后", "今后", "改用",
     "不再", "可以", "永远", "一律", "请勿", "切勿", "任何", "东西", "而不", "不是",
     "ない", "ださ", "くだ", "さい", "して", "って", "ては", "いけ", "けま", "ませ", "せん",
     "これ", "れか", "から", "らは", "今後", "後は", "使っ", "必ず", "絶対",
     "하지", "마세", "세요", "해야", "합니", "니다", "반드", "드시", "이제", "제부", "부터",
     "사용", "용해", "절대", "항상"}
)  # fmt: skip
_TOPIC_WORD = re.compile(r"[^\W\d_][\w.+#'’-]*", re.UNICODE)


def _strip_harness(text: str) -> str:
    """``text`` without template instruction blocks and pasted issues (see the module
    docstring)."""
    text = _BLOCKS.sub("\n", text)
    issue = _SWE_ISSUE.search(text)
    if issue is not None:
        text = text[: issue.start()]
    return text


def _key(sentence: str) -> str:
    return " ".join(re.findall(r"\w+", sentence.casefold()))


#: Shortest message text :func:`boilerplate` compares, in characters (exclusive).
BOILERPLATE_MIN_CHARS = 200
#: Texts whose sentence keys :func:`sentence_keys` remembers (each compaction compares those
#: of the system, developer and user messages of its range).
BOILERPLATE_CACHE = 1024


@lru_cache(maxsize=BOILERPLATE_CACHE)
def sentence_keys(text: str) -> frozenset[str]:
    """Keys (case- and punctuation-insensitive) of the sentences of ``text`` longer than 20
    characters: what :func:`boilerplate` compares of a message's text."""
    out = set()
    for line in text.splitlines():
        for raw in split_sentences(line):
            sentence = _LIST_MARKER.sub("", raw).strip()
            if len(sentence) > 20:
                out.add(_key(sentence))
    return frozenset(out)


def boilerplate(messages: Sequence[Message]) -> frozenset[str]:
    """Keys (case- and punctuation-insensitive) of the sentences longer than 20 characters
    shared by two system, developer or user messages that share at least
    :data:`BOILERPLATE_MIN_SHARED` of them."""
    texts = [
        "\n".join(p.text for p in m.parts if isinstance(p, TextPart))
        for m in messages
        if m.role in ("system", "developer", "user")
    ]
    sets = [sentence_keys(t) for t in texts if len(t) > BOILERPLATE_MIN_CHARS]
    out: set[str] = set()
    for i, a in enumerate(sets):
        for b in sets[i + 1 :]:
            shared = a & b
            if len(shared) >= BOILERPLATE_MIN_SHARED:
                out |= shared
    return frozenset(out)


def _looks_coded(stripped: str) -> bool:
    """A comment, encoded data or a line of code (noise whatever its words)."""
    found = _COMMENT.match(stripped) or _ENCODED.search(stripped) or _CODE_LINE.search(stripped)
    return found is not None


def _is_noise(stripped: str, body: str, strong: bool) -> bool:
    """``stripped`` (a sentence without its surrounding white space; ``body``: without its
    interjections, :data:`_INTERJECTION`; ``strong``: it holds a modal, :data:`MODAL`, or
    ``body`` opens with a want, :data:`_WANTS`) is a question, a weak rule too long,
    narrative or opinion; :func:`_looks_coded` is asked first."""
    question = stripped.endswith(("?", "？")) and (
        _QUESTION_START.match(body)
        or re.search(r"\b(?:right|no|ok|yes)\?$", stripped, re.I)
        or _CJK.search(stripped)
        or re.match(r"^[¿]", stripped)
    )
    weak_only = not strong and _WEAK.search(stripped) is not None
    too_long = weak_only and len(stripped) > WEAK_RULE_MAX_CHARS
    return bool(question or too_long or _NARRATIVE.search(body) or _OPINION.search(body))


def _lead_stripped(prefix: str) -> tuple[str, bool]:
    """``prefix`` without trailing emphasis and lead words (:data:`LEAD`), and whether a
    conjunction was among the words stripped."""
    joined = False
    while True:
        prefix = prefix.rstrip(_EMPHASIS)
        if _CONJUNCTION.search(prefix):
            joined = True
        found = LEAD.search(prefix)
        if found is None or found.start() == found.end():
            return prefix, joined
        prefix = prefix[: found.start()]


def at_clause_start(sentence: str, start: int, end: int, german: bool = False) -> bool:
    """True when the rule word at ``start:end`` of ``sentence`` opens a clause: only lead
    words (``please``, ``and``, ``you should`` …) stand between it and the start of the
    sentence, a ``,`` ``;`` ``:`` ``(`` or a dash, or a conjunction (then not followed by a
    verb that describes, :data:`_DESCRIBING_VERB`); for a German word (``german``), also one
    capitalised verb opening the sentence (``Ändere niemals …``)."""
    prefix, joined = _lead_stripped(sentence[:start])
    prefix = _LIST_MARKER.sub("", prefix)
    if not prefix.strip() or prefix.rstrip()[-1:] in _BOUNDARY:
        return True
    if joined:
        return _DESCRIBING_VERB.match(sentence, end) is None
    return german and _GERMAN_VERB_FIRST.match(prefix.strip()) is not None


#: The ASCII words one of which, in lower case, every ASCII text that :data:`MODAL`,
#: :data:`ADVERB` or :data:`LIFTS` matches holds (``must``, ``should``, ``debe`` …; their
#: other words are not ASCII and match no ASCII letter, even ignoring case), each set as
#: one pattern.
_MODAL_ASCII = (
    "must", "shall not", "should", "required to", "not allowed to", "forbidden",
    "under no circumstances", "no need to", "debe", "tienes que", "hay que", "es obligatorio",
    "il faut", "il ne faut", "tu dois", "vous devez", "doit", "doivent", "interdit",
    "obligatoire", "muss", "darf nicht", "darfst nicht", "verboten", "auf keinen fall", "deve",
    "tem que", "tem de",
)  # fmt: skip
_ADVERB_ASCII = (
    "never", "always", "only", "don", "do not", "make sure", "ensure", "avoid", "nunca",
    "siempre", "evita", "evite", "jamais", "toujours", "uniquement", "seulement", "assure",
    "niemals", "immer", "sicher", "vermeide", "achte darauf", "sempre", "apenas", "somente",
    "certifique-se", "garanta",
)  # fmt: skip
_LIFTS_ASCII = (
    "no longer", "not needed any", "not required any", "not necessary any", "need to",
    "have to", "ya no", "plus obligatoire", "plus besoin", "nicht mehr",
)  # fmt: skip
_MAY_MODAL, _MAY_ADVERB, _MAY_LIFT = (
    re.compile("|".join(re.escape(word) for word in words))
    for words in (_MODAL_ASCII, _ADVERB_ASCII, _LIFTS_ASCII)
)


def _may(lowered: str | None, words: re.Pattern[str]) -> bool:
    """False only when ``lowered`` (an ASCII text in lower case; ``None`` for a text that
    is not ASCII) holds none of ``words``."""
    return lowered is None or words.search(lowered) is not None


def _positional(sentence: str, language: Language, lowered: str | None = None) -> bool:
    """A rule word that also describes, or a prohibition, at the start of a clause
    (``lowered``: ``sentence`` in lower case when it is ASCII, see :func:`_may`)."""
    adverbs = ADVERB.finditer(sentence) if _may(lowered, _MAY_ADVERB) else ()
    found = [*adverbs, *NEGATIVE.finditer(sentence)]
    gated = GATED_PATTERNS.get(language)
    if gated is not None:
        found += list(gated.finditer(sentence))
    for m in found:
        if re.match(r"\s+\w+ing\b", sentence[m.end() : m.end() + 30]):
            continue  # "only using …", "always running …": a description
        german = _GERMAN_ADVERB.fullmatch(m.group(0)) is not None
        if at_clause_start(sentence, m.start(), m.end(), german):
            return True
    return False


_DROPS_RULE = re.compile(
    r"^(?:forget|ignore|drop|scrap|disregard)\b.*\b(?:rule|requirement|constraint|instruction|"
    r"restriction|policy)s?\b",
    re.IGNORECASE,
)


def _first_clause(sentence: str) -> str:
    """The first clause of ``sentence`` (split at ``,`` ``;`` ``:``) that holds more than
    lead words, without them; ``""`` when there is none or it is a proposal (``let's use X
    rather than Y`` proposes or decides: a decision, not a rule)."""
    for clause in _CLAUSE.split(sentence):
        clause = clause.strip().strip(_EMPHASIS)
        if _PROPOSAL.match(clause):
            return ""
        while (m := LEAD_START.match(clause)) is not None and m.group(0):
            clause = clause[m.end() :]
        if clause:
            return clause
    return ""


def _imperative(sentence: str) -> bool:
    """A clause of at most :data:`IMPERATIVE_MAX_CHARS` characters opens with a verb of
    standing preference, a permission or an order to drop an earlier rule."""
    if sentence.endswith(("?", "？")):
        return False
    clause = _first_clause(sentence)
    if not clause or len(clause) > IMPERATIVE_MAX_CHARS:
        return False
    if IMPERATIVE.search(clause) or PERMITS.search(clause):
        return True
    return _DROPS_RULE.match(clause) is not None


def _trigger(sentence: str, language: Language) -> int | None:
    """Where the rule of ``sentence`` is stated: the first normative word, or rule word at
    the start of a clause; ``None`` when neither (a keyword-less imperative)."""
    found = [m.start() for m in (*MODAL.finditer(sentence), *LIFTS.finditer(sentence))]
    candidates = [*ADVERB.finditer(sentence), *NEGATIVE.finditer(sentence)]
    gated = GATED_PATTERNS.get(language)
    if gated is not None:
        candidates += list(gated.finditer(sentence))
    for m in candidates:
        german = _GERMAN_ADVERB.fullmatch(m.group(0)) is not None
        if at_clause_start(sentence, m.start(), m.end(), german):
            found.append(m.start())
    return min(found, default=None)


def instruction(sentence: str, language: Language = "en") -> str:
    """The clause of ``sentence`` that states its rule (clauses split at ``,`` ``;`` ``:``):
    the one holding its first normative word or clause-opening rule word, else its first
    clause of more than lead words (``"Switch to Python 3.11 from here on"`` for ``Switch to
    Python 3.11 from here on: prod moved to the new image.``)."""
    at = _trigger(sentence, language)
    if at is None:
        return _first_clause(sentence) or sentence
    starts = [m.end() for m in _CLAUSE.finditer(sentence) if m.end() <= at]
    ends = [m.start() for m in _CLAUSE.finditer(sentence) if m.start() > at]
    return sentence[max(starts, default=0) : min(ends, default=len(sentence))].strip()


def is_rule(sentence: str, language: Language = "en") -> bool:
    """True when ``sentence`` states a rule for the agent (see the module docstring);
    ``language``: the conversation's dominant language (gates the words that read as English
    too)."""
    stripped = sentence.strip()
    if _looks_coded(stripped):
        return False
    # each pattern is searched once: the noise test and the rule test ask the same
    body = _INTERJECTION.sub("", stripped)
    # an ASCII sentence without any of a pattern's words is not searched (``stripped`` is
    # a part of ``sentence``)
    lowered = sentence.lower() if sentence.isascii() else None
    may_modal = _may(lowered, _MAY_MODAL)
    modal = may_modal and MODAL.search(stripped) is not None
    wants = _WANTS.match(body) is not None
    if _is_noise(stripped, body, modal or wants) or is_acknowledgement(sentence):
        return False
    if stripped != sentence:
        modal = may_modal and MODAL.search(sentence) is not None
    if modal or wants or (_may(lowered, _MAY_LIFT) and LIFTS.search(sentence)):
        return True
    return _positional(sentence, language, lowered) or _imperative(sentence)


def _cap(sentence: str) -> str:
    if len(sentence) <= CONSTRAINT_MAX_CHARS:
        return sentence
    return sentence[: CONSTRAINT_MAX_CHARS - 1] + "…"


#: User texts whose rules :func:`rule_sentences` remembers (per skip set and language).
RULE_SENTENCES_CACHE = 4096


@lru_cache(maxsize=RULE_SENTENCES_CACHE)
def rule_sentences(
    text: str, skip: frozenset[str] = frozenset(), language: Language = "en"
) -> tuple[str, ...]:
    """The rules stated in one user text, in order, deduplicated (see the module
    docstring), each capped at :data:`~ctxengine.summarizers.constraints.CONSTRAINT_MAX_CHARS`
    characters; sentences whose key is in ``skip`` (:func:`boilerplate`) are left out;
    ``language``: the conversation's dominant language."""
    out: list[str] = []
    seen: set[str] = set()
    for line in prose_lines(_strip_harness(text)):
        if _CODE_LINE.search(line):
            continue
        for raw in split_sentences(line):
            sentence = _LIST_MARKER.sub("", raw).strip()
            key = _key(sentence)
            if not key or key in seen or key in skip or not is_rule(sentence, language):
                continue
            seen.add(key)
            out.append(_cap(sentence))
    return tuple(out)


#: Chinese rule, time and verb words taken out before a rule's character pairs are formed, so
#: that ``始终使用 Python 3.8`` and ``从现在开始请使用 Python 3.11`` share their topic (Python)
#: instead of differing in pairs such as ``终使`` and ``请使`` that straddle rule words.
_ZH_RULE_WORDS = re.compile(
    "从现在开始|从现在起|接下来|今后|以后|永远不要|绝对不要|不要再使用|不要再用|不要|必须|禁止|务必|"
    "不能|只能|不许|不准|不得|切勿|请勿|一定要|不可以|别再|始终|一律|改为使用|改为|改用|换用|换成|"
    "统一使用|统一用|不再使用|不再用|不再|而不是|使用|请"
)


def _cjk_pairs(text: str) -> set[str]:
    text = _ZH_RULE_WORDS.sub(" ", text)
    return {
        run[i : i + 2]
        for run in _CJK_RUN.findall(text)
        for i in range(len(run) - 1)
        if run[i : i + 2] not in _CJK_STOP
    }


def topic(sentence: str) -> str:
    """The rule's content words: lower case, sorted, space-separated, without stop words,
    rule words, numbers and versions, and the character pairs of its CJK text (``"Always
    target Python 3.8."`` → ``"python target"``; ``"使用端口 8000。"`` → ``"端口"``)."""
    latin = _CJK_RUN.sub(" ", sentence)
    words = {w.casefold().rstrip(".") for w in _TOPIC_WORD.findall(latin)}
    words = {w for w in words if w and w not in _STOP and not w[:1].isdigit()}
    return " ".join(sorted(words | _cjk_pairs(sentence)))


def revoked_words(sentence: str) -> str:
    """The words of what ``sentence`` names as replaced (lower case, sorted, space-separated,
    numbers kept, stop words left out): ``"8000"`` for ``use port 9000 instead of 8000``,
    ``"tabs"`` for ``Forget the tabs rule, use 4 spaces.``; ``""`` when it names nothing."""
    for pattern in REVOKES:
        m = pattern.search(sentence)
        if m is None:
            continue
        what = next((g for g in m.groups() if g), "")
        latin = _CJK_RUN.sub(" ", what)
        words = {w.casefold().strip(".-/") for w in re.findall(r"[\w.+#/-]+", latin)}
        words = {w for w in words if w and w not in _STOP}
        words |= _cjk_pairs(what)
        if words:
            return " ".join(sorted(words))
    return ""


def says_it_replaces(sentence: str) -> bool:
    """True when the sentence says it replaces earlier rules (``from now on``, ``instead``,
    ``no longer``, ``actually``, ``switch to``, ``a partir de ahora``, ``从现在开始`` …) or
    grants a permission (``you can … now``)."""
    if REPLACES.search(sentence) is not None or LIFTS.search(sentence) is not None:
        return True
    return PERMITS.search(_first_clause(sentence)) is not None


def superseded_later(rules: Sequence[RuleFact], later: Sequence[str]) -> tuple[RuleFact, ...]:
    """``rules`` with those that a rule of the ``later`` user texts (oldest first) replaces
    marked superseded (:func:`~ctxengine.model.facts.supersedes`); the later rules themselves
    are not added (they are shown where they were said)."""
    newer = tuple(r for r in rule_facts([user(text) for text in later]) if r.status == "active")
    return merge_rules(rules, newer)[: len(rules)]


def rule_facts(messages: Sequence[Message], start: int = 0) -> tuple[RuleFact, ...]:
    """Rules of the real user messages among ``messages`` (``source``: the message's index
    plus ``start``), deduplicated, later rules superseding earlier ones
    (:func:`~ctxengine.model.facts.supersedes`)."""
    skip = boilerplate(messages)
    users = [(i, user_text(m)) for i, m in enumerate(messages) if is_real_user_message(m)]
    language = detect_language(text for _, text in users)
    out: tuple[RuleFact, ...] = ()
    seen: set[str] = set()
    for index, text in users:
        new = []
        for sentence in rule_sentences(text, skip, language):
            if _key(sentence) in seen:
                continue
            seen.add(_key(sentence))
            new.append(
                RuleFact(
                    sentence,
                    "active",
                    start + index,
                    topic(sentence),
                    says_it_replaces(sentence),
                    revokes=revoked_words(sentence),
                    head=topic(instruction(sentence, language)),
                )
            )
        out = merge_rules(out, new)
    return out
