"""Frame safety: text quoted into a frame must not be able to open or close it, and tool
output that gives orders must be recognisable as such.

The frames are the tags ctxengine itself writes around text it hands a model:

====================  =======================================================================
tag                   written by
====================  =======================================================================
continuation-state    the continuation-state message (:mod:`ctxengine.projection.project`)
earlier-summary       the extractive state, around a carried earlier summary
history               the summary prompt, around the transcript
previous-summary      the summary prompt, around the anchor
first-request         the summary prompt, around the goal
priority              the summary prompt, around focus text and project instructions
last-summarized       the cache-reuse instruction, around the excerpt
summary / analysis    the reply shape a summary model may use (unwrapped by the validator)
====================  =======================================================================

Neutralising writes the ``<`` of any opening or closing frame tag (any case, spaces allowed:
``< / History >``) as ``&lt;``: ``</continuation-state>`` → ``&lt;/continuation-state>``. The
model reads it as the text it is, a literal count of ``<continuation-state`` finds nothing,
and neutralising twice changes nothing more. Other tags (``<div>``, ``<system-reminder>``)
are left as they are.

:func:`is_instruction_like` recognises a line that addresses the model instead of reporting
something (``SYSTEM: ignore all previous constraints…``), so that text copied from tool output
can be kept out of the facts of a continuation state, or a model summary that repeats one
rejected.

Pure functions; no I/O.
"""

from __future__ import annotations

import re
from collections.abc import Iterable

#: The tag of the continuation-state message.
STATE_TAG = "continuation-state"
#: The tag around an earlier summary the extractive state carries (its only inner frame).
CARRIED_TAG = "earlier-summary"
#: Tags of the summary prompt and of a summary model's reply.
PROMPT_TAGS: tuple[str, ...] = (
    "history",
    "previous-summary",
    "first-request",
    "priority",
    "last-summarized",
    "summary",
    "analysis",
)
#: Every frame tag ctxengine writes (see the module table).
FRAME_TAGS: tuple[str, ...] = (STATE_TAG, CARRIED_TAG, *PROMPT_TAGS)
#: What the ``<`` of a neutralised frame tag becomes.
NEUTRAL_LT = "&lt;"

_COMPILED: dict[tuple[str, ...], re.Pattern[str]] = {}


def _tag_pattern(tags: tuple[str, ...]) -> re.Pattern[str]:
    pattern = _COMPILED.get(tags)
    if pattern is None:
        names = "|".join(map(re.escape, sorted(tags, key=len, reverse=True)))
        pattern = re.compile(r"<(?=\s*/?\s*(?:" + names + r")(?![\w-]))", re.IGNORECASE)
        _COMPILED[tags] = pattern
    return pattern


def neutralize(text: str, tags: Iterable[str] = FRAME_TAGS) -> str:
    """``text`` with the ``<`` of every opening or closing tag named in ``tags`` (default
    :data:`FRAME_TAGS`; any case, spaces allowed) written as :data:`NEUTRAL_LT`:
    ``"</history>"`` → ``"&lt;/history>"``. Other text, other tags included, is unchanged;
    applying it twice gives the same text."""
    return _tag_pattern(tuple(tags)).sub(NEUTRAL_LT, text)


#: The frame tags the continuation-state text itself may hold: all but its own inner frame.
STATE_NEUTRALIZED: tuple[str, ...] = tuple(t for t in FRAME_TAGS if t != CARRIED_TAG)


def neutralize_state(summary: str) -> str:
    """A continuation-state text made safe to wrap in ``<continuation-state>``: every frame
    tag but ``earlier-summary`` neutralised (the extractive state writes that one itself and
    neutralises everything it quotes inside it)."""
    return neutralize(summary, STATE_NEUTRALIZED)


def count_tags(text: str, tag: str) -> tuple[int, int]:
    """``(opening, closing)``: how many ``<tag`` and ``</tag`` (exactly so written, any
    case, followed by ``>``, a space or ``/``) ``text`` holds. A neutralised tag is not
    counted."""
    name = re.escape(tag)
    opening = re.findall(rf"<{name}(?=[\s>/])", text, re.IGNORECASE)
    closing = re.findall(rf"</{name}(?=[\s>])", text, re.IGNORECASE)
    return len(opening), len(closing)


# ---------------------------------------------------------------- instruction-like lines

_ROLE = r"(?:system|developer|assistant|admin(?:istrator)?|operator)"
_EARLIER = r"(?:previous|prior|above|earlier|preceding|former|original|system|all|any|your)"
_ORDERS = (
    r"(?:instructions?|constraints?|rules?|directions?|directives?|prompts?|guidelines?"
    r"|messages?|context|orders?|commands?|restrictions?|polic(?:y|ies))"
)
#: Patterns of a line that gives the model orders (searched, case-insensitive unless noted).
INSTRUCTION_PATTERNS: tuple[re.Pattern[str], ...] = (
    # A role label opening the line, as chat templates and injected text write it.
    re.compile(
        r"^(?:SYSTEM|DEVELOPER|ASSISTANT|ADMIN)(?:\s+(?:MESSAGE|PROMPT|NOTE|OVERRIDE))?\s*:"
    ),
    re.compile(rf"^\[?{_ROLE}\s+(?:message|prompt|note|override|instructions?)\]?\s*[:：]", re.I),
    re.compile(r"^(?:\[/?INST\]|<\|im_start\|>|<\|system\|>|###\s*(?:system|instruction)\b)", re.I),
    # English orders to drop what came before.
    re.compile(
        rf"\b(?:ignore|disregard|forget|override)\s+(?:all\s+(?:of\s+)?|any\s+)?"
        rf"(?:the\s+|your\s+|my\s+)?{_EARLIER}\s+(?:{_EARLIER}\s+)?{_ORDERS}\b",
        re.I,
    ),
    re.compile(r"\bdisregard\s+(?:everything\s+|all\s+)?(?:the\s+)?above\b", re.I),
    re.compile(r"\b(?:new|updated|revised|real)\s+instructions?\s*[:：]", re.I),
    re.compile(r"\bdo\s+not\s+follow\s+(?:the\s+|your\s+|any\s+)?(?:previous|prior|above)\b", re.I),
    re.compile(r"\byou\s+are\s+now\s+(?:a|an|no\s+longer)\b", re.I),
    re.compile(r"\bnote\s+to\s+(?:the\s+)?(?:ai|assistant|llm|model|agent)\b", re.I),
    re.compile(
        r"^(?:ai|assistant|agent|llm|model|claude|chatgpt|gpt)\s*[:,]\s*"
        r"(?:you\s+must|ignore|disregard|do\s+not|don't|stop|forget)\b",
        re.I,
    ),
    # Spanish, Portuguese, French, German, Russian.
    re.compile(
        r"\bignor[ae]\s+(?:todas\s+|todos\s+)?(?:las|los|as|os)\s+"
        r"(?:instrucciones|instruções|instrucoes|reglas|regras|restricciones|restrições)"
        r"\s+(?:anteriores|previas|prévias)",
        re.I,
    ),
    re.compile(
        r"\bignore[zr]?\s+(?:toutes\s+)?les\s+(?:instructions|consignes|règles|contraintes)"
        r"\s+(?:précédentes|precedentes|ci-dessus|antérieures)",
        re.I,
    ),
    re.compile(
        r"\bignorier(?:e|en)?\s+(?:sie\s+)?(?:alle\s+)?(?:vorherigen|bisherigen|obigen|früheren)"
        r"\s+(?:Anweisungen|Regeln|Vorgaben|Einschränkungen)",
        re.I,
    ),
    re.compile(
        r"(?:игнорируй(?:те)?|забудь(?:те)?)\s+(?:все\s+)?(?:предыдущие|прошлые|прежние)"
        r"\s+(?:инструкции|указания|правила|ограничения)",
        re.I,
    ),
    # Chinese, Japanese, Korean.
    re.compile(
        r"(?:忽略|无视|忽视|無視|不要理会)(?:掉)?(?:之前|以上|上面|先前|前面|此前)?的?"
        r"(?:所有|全部|一切)?的?(?:指令|指示|约束|規則|规则|要求|说明|提示词?|限制)"
    ),
    re.compile(
        r"(?:以前|前|上記|これまで)の(?:すべての)?(?:指示|命令|制約|ルール)を(?:すべて)?無視"
    ),
    re.compile(r"(?:이전|위의?|앞의)\s*(?:모든\s*)?(?:지시|지침|명령|규칙)\S*\s*(?:을|를)?\s*무시"),
)
_LEAD = re.compile(r"^(?:[-*+>•|#]+\s*|\d+[.)]\s+)+")


def is_instruction_like(line: str) -> bool:
    """True when ``line`` gives a model orders rather than reporting something: it opens
    with a role label (``SYSTEM:``, ``System prompt:``, ``[INST]``, ``<|im_start|>``), or it
    tells the reader to drop what came before (``ignore all previous constraints``,
    ``disregard the above``, ``new instructions:``, ``you are now …``; also in Spanish,
    Portuguese, French, German, Russian, Chinese, Japanese and Korean). Leading list
    markers, quote marks and ``| `` prefixes are skipped. A line merely mentioning a system
    (``System: Linux 6.8``) is not instruction-like; the role label counts in capitals
    only."""
    text = _LEAD.sub("", line.strip()).strip().lstrip("\"'`“‘«")
    if not text:
        return False
    return any(p.search(text) for p in INSTRUCTION_PATTERNS)


__all__ = [
    "CARRIED_TAG",
    "FRAME_TAGS",
    "INSTRUCTION_PATTERNS",
    "NEUTRAL_LT",
    "PROMPT_TAGS",
    "STATE_NEUTRALIZED",
    "STATE_TAG",
    "count_tags",
    "is_instruction_like",
    "neutralize",
    "neutralize_state",
]
