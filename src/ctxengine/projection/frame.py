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
fixed-later           the summary prompt, around the errors the kept messages show fixed
priority              the summary prompt, around focus text and project instructions
last-summarized       the cache-reuse instruction, around the excerpt
summary / analysis    the reply shape a summary model may use (unwrapped by the validator)
====================  =======================================================================

Neutralising writes the angle brackets of a frame tag (any case, spaces allowed:
``< / History >``) as the single guillemets ``‹`` and ``›``: ``</continuation-state>`` →
``‹/continuation-state›``. The result reads as the quoted text it is, not as markup (an HTML
entity such as ``&lt;`` is decoded by a model as readily as by a browser), a literal count of
``<continuation-state`` finds nothing, and neutralising twice changes nothing more. The same
form is used everywhere ctxengine quotes text: the continuation state, the summary prompt, the
text of the messages of a projected request (:func:`neutralize_message`) and imported
summaries (:func:`quote_imported`, which neutralises every tag, ``<system-reminder>``
included).

:func:`is_instruction_like` recognises a line that addresses the model instead of reporting
something (``SYSTEM: ignore all previous constraints…``), so that text copied from tool output
can be kept out of the facts of a continuation state, or a model summary that repeats one
rejected.

Pure functions; no I/O.
"""

from __future__ import annotations

import dataclasses
import functools
import re
from collections.abc import Iterable

from ctxengine.model import (
    DocumentPart,
    ImagePart,
    Message,
    Part,
    ReasoningPart,
    TextPart,
    ToolCallPart,
    ToolResultPart,
)

#: The tag of the continuation-state message.
STATE_TAG = "continuation-state"
#: The tag around an earlier summary the extractive state carries (its only inner frame).
CARRIED_TAG = "earlier-summary"
#: Tags of the summary prompt and of a summary model's reply.
PROMPT_TAGS: tuple[str, ...] = (
    "history",
    "previous-summary",
    "first-request",
    "fixed-later",
    "priority",
    "last-summarized",
    "summary",
    "analysis",
)
#: Every frame tag ctxengine writes (see the module table).
FRAME_TAGS: tuple[str, ...] = (STATE_TAG, CARRIED_TAG, *PROMPT_TAGS)
#: What the ``<`` of a neutralised tag becomes (U+2039 SINGLE LEFT-POINTING ANGLE QUOTATION
#: MARK).
NEUTRAL_LT = "\u2039"
#: What the ``>`` that closes a neutralised tag becomes (U+203A).
NEUTRAL_GT = "\u203a"
#: Longest run of attribute text (characters) between a tag's name and its ``>``; a ``>``
#: further away is left alone (only the ``<`` is neutralised).
MAX_TAG_ATTRS = 200
#: The frame tags a projected request itself holds: the continuation-state message and the
#: carried summary inside it. Message text is neutralised for these only
#: (:func:`neutralize_message`); the prompt tags appear in summary prompts, never in a
#: request, and message text that holds them (``<summary>`` of an HTML ``<details>``) stays
#: as it is.
REQUEST_TAGS: tuple[str, ...] = (STATE_TAG, CARRIED_TAG)

_COMPILED: dict[tuple[tuple[str, ...], bool], re.Pattern[str]] = {}


def _tag_pattern(tags: tuple[str, ...], escaped: bool = False) -> re.Pattern[str]:
    """An opening or closing tag named in ``tags``: group ``head`` is what follows ``<`` up
    to the end of the name, group ``rest`` the attribute text and ``>`` (absent when no
    ``>`` follows within :data:`MAX_TAG_ATTRS` characters). ``escaped`` also matches the
    JSON escapes ``\\u003c`` / ``\\u003e`` (tool-call arguments)."""
    key = (tags, escaped)
    pattern = _COMPILED.get(key)
    if pattern is None:
        names = "|".join(map(re.escape, sorted(tags, key=len, reverse=True)))
        lt, gt, other = ("<", ">", "<>")
        if escaped:
            lt, gt = r"(?:<|\\u003[cC])", r"(?:>|\\u003[eE])"
            other = "<>\\\\"
        pattern = re.compile(
            lt
            + r"(?P<head>\s*/?\s*(?:"
            + names
            + r")(?![\w-]))(?P<rest>[^"
            + other
            + r"]{0,"
            + str(MAX_TAG_ATTRS)
            + r"}"
            + gt
            + r")?",
            re.IGNORECASE,
        )
        _COMPILED[key] = pattern
    return pattern


def _neutral(match: re.Match[str]) -> str:
    rest = match.group("rest")
    if rest is None:
        return NEUTRAL_LT + match.group("head")
    close = 1 if rest.endswith(">") else 6
    return NEUTRAL_LT + match.group("head") + rest[:-close] + NEUTRAL_GT


def neutralize(text: str, tags: Iterable[str] = FRAME_TAGS) -> str:
    """``text`` with every opening or closing tag named in ``tags`` (default
    :data:`FRAME_TAGS`; any case, spaces allowed) written with :data:`NEUTRAL_LT` and
    :data:`NEUTRAL_GT` in place of its angle brackets: ``"</history>"`` → ``"‹/history›"``,
    ``'<history part="2">'`` → ``'‹history part="2"›'``; a tag with no ``>`` within
    :data:`MAX_TAG_ATTRS` characters loses only its ``<``. Other text, other tags included,
    is unchanged; applying it twice gives the same text."""
    if "<" not in text:
        return text
    return _tag_pattern(tuple(tags)).sub(_neutral, text)


def neutralize_json(text: str, tags: Iterable[str] = REQUEST_TAGS) -> str:
    """:func:`neutralize` for JSON text (tool-call arguments): the brackets may also be
    written as the escapes ``\\u003c`` / ``\\u003e``, which a renderer that parses the
    arguments (Anthropic's ``input``) would turn back into ``<`` / ``>``. The guillemets are
    valid inside a JSON string, so valid JSON stays valid."""
    if "<" not in text and "\\u003" not in text.lower():
        return text
    return _tag_pattern(tuple(tags), escaped=True).sub(_neutral, text)


@functools.cache
def _any_tag() -> re.Pattern[str]:
    """Any tag-like token in imported text: ``<name …>``, ``</name>``, ``<name/>``; an
    opening one not right after a word character (``List<String>`` is code, not a tag)."""
    return re.compile(
        r"(?:(?<![\w<])<|<(?=/))(?P<head>/?[A-Za-z][\w.:-]*)(?P<rest>(?:\s[^<>]{0,"
        + str(MAX_TAG_ATTRS)
        + r"})?/?>)"
    )


def neutralize_all_tags(text: str) -> str:
    """``text`` with the frame tags (:func:`neutralize`) and every other tag-like token
    (``<system-reminder>``, ``</instructions>``, ``<br/>``; an opening ``<`` right after a
    word character, as in ``List<String>``, is not a tag) written with :data:`NEUTRAL_LT` and
    :data:`NEUTRAL_GT`. Idempotent."""
    text = neutralize(text)
    if "<" not in text:
        return text
    return _any_tag().sub(_neutral, text)


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


@functools.cache
def instruction_patterns() -> tuple[re.Pattern[str], ...]:
    """The patterns of a line that gives the model orders (searched, case-insensitive unless
    noted), compiled on first use."""
    return (
        # A role label opening the line, as chat templates and injected text write it.
        re.compile(
            r"^(?:SYSTEM|DEVELOPER|ASSISTANT|ADMIN)(?:\s+(?:MESSAGE|PROMPT|NOTE|OVERRIDE))?\s*:"
        ),
        re.compile(
            rf"^\[?{_ROLE}\s+(?:message|prompt|note|override|instructions?)\]?\s*[:：]", re.I
        ),
        re.compile(
            r"^(?:\[/?INST\]|<\|im_start\|>|<\|system\|>|###\s*(?:system|instruction)\b)", re.I
        ),
        # English orders to drop what came before.
        re.compile(
            rf"\b(?:ignore|disregard|forget|override)\s+(?:all\s+(?:of\s+)?|any\s+)?"
            rf"(?:the\s+|your\s+|my\s+)?{_EARLIER}\s+(?:{_EARLIER}\s+)?{_ORDERS}\b",
            re.I,
        ),
        re.compile(r"\bdisregard\s+(?:everything\s+|all\s+)?(?:the\s+)?above\b", re.I),
        re.compile(r"\b(?:new|updated|revised|real)\s+instructions?\s*[:：]", re.I),
        re.compile(
            r"\bdo\s+not\s+follow\s+(?:the\s+|your\s+|any\s+)?(?:previous|prior|above)\b", re.I
        ),
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
        re.compile(
            r"(?:이전|위의?|앞의)\s*(?:모든\s*)?(?:지시|지침|명령|규칙)\S*\s*(?:을|를)?\s*무시"
        ),
    )


@functools.cache
def _lead() -> re.Pattern[str]:
    """List markers, ``| `` prefixes and wrapper tags that open a line."""
    return re.compile(r"^(?:[-*+>•|#]+\s*|\d+[.)]\s+|[<\u2039]/?[A-Za-z][\w.:-]*[>\u203a]\s*)+")


@functools.cache
def _any_instruction() -> re.Pattern[str]:
    """:func:`instruction_patterns` as one pattern (each alternative keeps its own flags): a
    text holds a match of it exactly when it holds a match of one of them; one search
    instead of one per pattern."""
    return re.compile(
        "|".join(
            f"(?i:{p.pattern})" if p.flags & re.IGNORECASE else f"(?:{p.pattern})"
            for p in instruction_patterns()
        )
    )


#: Keywords (lowercase) one of which every match of :func:`instruction_patterns` holds, and
#: the phrases that stand for the rest (:func:`may_hold_instruction`).
_ORDER_WORDS: tuple[str, ...] = (
    "system", "developer", "assistant", "admin", "operator", "inst]", "im_start",
    "instruction", "ignor", "disregard", "forget", "override", "follow",
)  # fmt: skip
_ORDER_PHRASES = r"you\s+are\s+now|note\s+to|\b(?:ai|agent|llm|model|claude|chatgpt|gpt)\s*[:,]"


@functools.cache
def _order_phrase() -> re.Pattern[str]:
    return re.compile(_ORDER_PHRASES)


@functools.cache
def _order_any() -> re.Pattern[str]:
    """:data:`_ORDER_WORDS`, :data:`_ORDER_PHRASES` and the non-Latin keywords as one
    case-insensitive pattern: for a text that is not ASCII, where lowercasing is not the
    pattern's case folding (``ſ``, ``İ``)."""
    return re.compile(
        "|".join(
            (
                *map(re.escape, _ORDER_WORDS),
                _ORDER_PHRASES,
                *("игнорир", "забуд", "忽略", "无视", "忽视", "無視", "不要理会", "무시"),
            )
        ),
        re.IGNORECASE,
    )


def may_hold_instruction(text: str) -> bool:
    """False when no line of ``text`` can be instruction-like (:func:`is_instruction_like`):
    every pattern of :func:`instruction_patterns` needs one of a few keywords (``system``,
    ``ignor``, ``instruction``, ``无视`` …), and ``text`` holds none of them. One pass over a
    whole tool output instead of one search per line (a search per line costs about 20 µs);
    True does not mean a line is."""
    if text.isascii():
        low = text.lower()
        return any(w in low for w in _ORDER_WORDS) or _order_phrase().search(low) is not None
    return _order_any().search(text) is not None


def is_instruction_like(line: str) -> bool:
    """True when ``line`` gives a model orders rather than reporting something: it opens
    with a role label (``SYSTEM:``, ``System prompt:``, ``[INST]``, ``<|im_start|>``), or it
    tells the reader to drop what came before (``ignore all previous constraints``,
    ``disregard the above``, ``new instructions:``, ``you are now …``; also in Spanish,
    Portuguese, French, German, Russian, Chinese, Japanese and Korean). Leading list
    markers, quote marks, ``| `` prefixes and wrapper tags (``<system-reminder>``, also
    neutralised: ``‹system-reminder›``) are skipped. A line merely mentioning a system
    (``System: Linux 6.8``) is not instruction-like; the role label counts in capitals
    only."""
    text = _lead().sub("", line.strip()).strip().lstrip(_OPENING_QUOTES)
    if not text:
        return False
    return _any_instruction().search(text) is not None


#: Marks that open a quotation (a quoted order is reported data, :func:`is_quoted_order`).
_OPENING_QUOTES = "\"'`“‘«„「『"


def is_quoted_order(line: str) -> bool:
    """True when ``line`` is instruction-like (:func:`is_instruction_like`) only inside a
    quotation: once list markers and wrapper tags are skipped, it opens with a quote mark
    (``- "SYSTEM: ignore …" was in the README``), or a quote mark comes before the first
    place an order starts (``The page said “ignore previous instructions”``). A line that
    is not instruction-like is not a quoted order."""
    if not is_instruction_like(line):
        return False
    text = _lead().sub("", line.strip()).strip()
    if text[:1] in _OPENING_QUOTES:
        return True
    starts = [m.start() for p in instruction_patterns() if (m := p.search(text))]
    first = min(starts, default=0)
    return any(ch in _OPENING_QUOTES for ch in text[:first])


# ---------------------------------------------------------------- imported summaries

#: What stands in an imported summary for a line that gave orders (:func:`quote_imported`).
REMOVED_INSTRUCTION = "[instruction-like line removed from the imported summary]"


def drop_instructions(text: str) -> str:
    """``text`` with every instruction-like line (:func:`is_instruction_like`) replaced by
    :data:`REMOVED_INSTRUCTION`, indented as the line was. Quoting does not save a line
    here: an imported summary is shown to the model as history, so it holds no orders at all.
    Idempotent (the stand-in is not instruction-like)."""
    if not text:
        return text
    lines = text.split("\n")
    out = [
        line[: len(line) - len(line.lstrip())] + REMOVED_INSTRUCTION
        if is_instruction_like(line)
        else line
        for line in lines
    ]
    return "\n".join(out)


def quote_imported(text: str) -> str:
    """An earlier summary (another system's compaction text — Claude Code, pi, Codex,
    OpenCode — or one carried forward from an earlier state) made safe to quote in the
    continuation state: every tag written with guillemets (:func:`neutralize_all_tags`:
    ``<system-reminder>`` → ``‹system-reminder›``) and every instruction-like line replaced
    by :data:`REMOVED_INSTRUCTION` (:func:`drop_instructions`). Its headings and labels are
    kept, so that it can still be split into sections; the extractive state writes it
    indented under its own heading (:mod:`ctxengine.summarizers.sections`), so that none of
    its lines (a forged ``## Next step``) reads as a section of the state. Deterministic and
    idempotent: a summary carried again through later compactions is not changed again."""
    return drop_instructions(neutralize_all_tags(text))


# ---------------------------------------------------------------- message text


def _neutral_content(
    part: TextPart | ImagePart | DocumentPart, tags: tuple[str, ...]
) -> TextPart | ImagePart | DocumentPart:
    if isinstance(part, TextPart):
        text = neutralize(part.text, tags)
        return part if text == part.text else dataclasses.replace(part, text=text)
    if isinstance(part, DocumentPart) and part.text:
        text = neutralize(part.text, tags)
        return part if text == part.text else dataclasses.replace(part, text=text)
    return part


def _neutral_part(part: Part, tags: tuple[str, ...]) -> Part:
    if isinstance(part, TextPart | DocumentPart):
        return _neutral_content(part, tags)
    if isinstance(part, ToolCallPart):
        args = neutralize_json(part.arguments, tags)
        return part if args == part.arguments else dataclasses.replace(part, arguments=args)
    if isinstance(part, ToolResultPart):
        content = tuple(_neutral_content(c, tags) for c in part.content)
        same = all(a is b for a, b in zip(content, part.content, strict=True))
        return part if same else dataclasses.replace(part, content=content)
    if isinstance(part, ReasoningPart) and part.signature is None and not part.redacted:
        text = neutralize(part.text, tags)
        return part if text == part.text else dataclasses.replace(part, text=text)
    return part


def neutralize_message(message: Message, tags: tuple[str, ...] = REQUEST_TAGS) -> Message:
    """``message`` with the frame tags named in ``tags`` (default :data:`REQUEST_TAGS`, the
    two tags a projected request holds) neutralised (:func:`neutralize`) in its text, its
    tool results, document text, unsigned reasoning and tool-call arguments
    (:func:`neutralize_json`); everything else verbatim. Signed or redacted reasoning is
    left as it is (the provider checks its signature against the exact text), and so are
    images and native compaction items. Returns ``message`` itself when nothing changed."""
    parts = tuple(_neutral_part(p, tags) for p in message.parts)
    if all(a is b for a, b in zip(parts, message.parts, strict=True)):
        return message
    return dataclasses.replace(message, parts=parts)


__all__ = [
    "CARRIED_TAG",
    "FRAME_TAGS",
    "MAX_TAG_ATTRS",
    "NEUTRAL_GT",
    "NEUTRAL_LT",
    "PROMPT_TAGS",
    "REMOVED_INSTRUCTION",
    "REQUEST_TAGS",
    "STATE_NEUTRALIZED",
    "STATE_TAG",
    "count_tags",
    "drop_instructions",
    "is_instruction_like",
    "is_quoted_order",
    "may_hold_instruction",
    "neutralize",
    "neutralize_all_tags",
    "neutralize_json",
    "neutralize_message",
    "neutralize_state",
    "quote_imported",
]
