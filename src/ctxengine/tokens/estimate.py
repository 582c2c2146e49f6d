"""``HeuristicEstimator``: a fast, dependency-free token estimate that errs on the high side.

Not plain ``chars / 4``. One pass of C-level string operations classifies the characters:

- **ASCII** runs at 4 chars/token for prose and 3 for code and JSON; the rate is interpolated
  on the share of punctuation among non-space characters (≤ 5 % → prose, ≥ 15 % → code).
  Path-like text runs at 2.5: the rate moves on toward it as the share of path separators
  (``/ . _ -``) among non-space characters grows from 5 % to 12 % (file lists, continuation
  states listing paths, dotted and snake_case identifiers, URLs).
- **Digits** cost ½ token each, whatever the rate of the text around them (BPE vocabularies
  split a digit run into groups of two or three, and a short number costs a whole token).
- **Non-ASCII** is counted from the UTF-8 and UTF-16 lengths of the text: characters of 3-byte
  scripts (CJK, kana, hangul, Thai, Indic …) cost 1 token each, 2-byte scripts (Latin accents,
  Greek, Cyrillic, Hebrew, Arabic) ½ token, characters beyond the BMP (emoji) 2 tokens.
- **Base64**: a maximal run of at least 64 base64 characters (``A–Z a–z 0–9 + / - _ =``)
  that mixes upper case, lower case and digits, or any run right after ``;base64,`` (a
  ``data:`` URL payload), is never priced as text: it costs :data:`BASE64_BLOB_TOKENS`.
  Lower-case hex digests stay text. Strings shorter than 64 characters are not searched
  (a tiny ``data:`` URL is priced as text: a few tokens).

Parts: images from pixel size (:func:`~ctxengine.tokens.images.estimate_tokens_for_image`),
else the fixed ``image_tokens``; documents by text, else PDFs by byte size
(:data:`PDF_BYTES_PER_TOKEN`); tool calls as name + arguments; tool results as their content;
reasoning as its text, with a fixed cost for a signature and, when the text is empty, the
hidden text an encrypted payload stands for (Anthropic counts thinking blocks of the current
assistant turn as input; counting every kept one errs high). Reasoning and native
compaction parts that no rendered request carries
(:func:`~ctxengine.model.carriage.carried_anywhere`: an OpenAI reasoning item with its
``encrypted_content``, unsigned reasoning text, another provider's compaction item) cost 0,
however long their payload. Every message adds :data:`MESSAGE_OVERHEAD_TOKENS`.
"""

from __future__ import annotations

import json
import math
import re
import string
from collections.abc import Mapping, Sequence
from typing import Any

from ctxengine.model import (
    DocumentPart,
    ImagePart,
    Message,
    NativeCompactionPart,
    Part,
    ReasoningPart,
    TextPart,
    ToolCallPart,
    ToolResultPart,
)
from ctxengine.model.carriage import carried_anywhere
from ctxengine.tokens.constants import (
    ASTRAL_TOKENS_PER_CHAR,
    BASE64_BLOB_TOKENS,
    BASE64_MIN_CHARS,
    CODE_CHARS_PER_TOKEN,
    CODE_PUNCT_SHARE,
    DEFAULT_DOCUMENT_TOKENS,
    DIGIT_TOKENS_PER_CHAR,
    ENCRYPTED_CHARS_PER_TOKEN,
    MAX_IMAGE_TOKENS,
    MESSAGE_OVERHEAD_TOKENS,
    NARROW_SCRIPT_TOKENS_PER_CHAR,
    PART_OVERHEAD_TOKENS,
    PATH_CHARS_PER_TOKEN,
    PATH_SEP_SHARE_HIGH,
    PATH_SEP_SHARE_LOW,
    PDF_BYTES_PER_TOKEN,
    PROSE_CHARS_PER_TOKEN,
    PROSE_PUNCT_SHARE,
    REASONING_SIGNATURE_TOKENS,
    TEXT_BYTES_PER_TOKEN,
    TOOL_CALL_OVERHEAD_TOKENS,
    TOOL_RESULT_OVERHEAD_TOKENS,
    TOOL_SCHEMA_OVERHEAD_TOKENS,
    TOOLS_PREAMBLE_TOKENS,
    WIDE_SCRIPT_TOKENS_PER_CHAR,
)
from ctxengine.tokens.images import estimate_tokens_for_image, image_size_from_base64

_UPPER = re.compile(r"[A-Z]")
_LOWER = re.compile(r"[a-z]")
_DIGIT = re.compile(r"[0-9]")
_PATH_SEPS = b"/._-"


def _class_of(byte: int) -> int:
    char = chr(byte)
    if char in string.whitespace:
        return ord(" ")
    if byte in _PATH_SEPS:
        return ord("/")
    if char in string.punctuation:
        return ord("!")
    if char in string.digits:
        return ord("0")
    return ord("a")


#: Each byte mapped to its class: `` `` whitespace, ``/`` path separator, ``!`` other
#: punctuation, ``0`` digit, ``a`` anything else; counted with ``bytes.count``.
_CLASSES = bytes(_class_of(b) for b in range(256))
_B64_ALPHABET = frozenset(b"ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/_-=")
_B64_MASK = bytes(0x61 if b in _B64_ALPHABET else 0x20 for b in range(256))
_B64_NEEDLE = b"a" * BASE64_MIN_CHARS


def _is_base64(text: str, start: int, end: int) -> bool:
    return bool(
        _UPPER.search(text, start, end)
        and _LOWER.search(text, start, end)
        and _DIGIT.search(text, start, end)
    )


def _blob_spans(text: str) -> list[tuple[int, int]]:
    """Spans of the base64 blobs of ``text``: ``data:`` URL payloads and long mixed runs.

    Runs are found on a one-byte-per-character image of the text (non-Latin-1 characters
    become ``?``, which breaks a run) mapped to ``a`` (base64 alphabet) or space, so the
    search is ``bytes.find`` rather than a regex over every position."""
    src = text.encode("ascii") if text.isascii() else text.encode("latin-1", "replace")
    mask = src.translate(_B64_MASK)
    n = len(mask)
    spans: list[tuple[int, int]] = []
    starts: set[int] = set()
    pos = src.find(b";base64,")
    while pos >= 0:
        start = pos + len(b";base64,")
        end = mask.find(b" ", start)
        end = n if end < 0 else end
        if end > start:
            spans.append((start, end))
            starts.add(start)
        pos = src.find(b";base64,", end)
    pos = mask.find(_B64_NEEDLE)
    while pos >= 0:
        end = mask.find(b" ", pos)
        end = n if end < 0 else end
        if pos not in starts and _is_base64(text, pos, end):
            spans.append((pos, end))
        pos = mask.find(_B64_NEEDLE, end)
    return sorted(spans)


def _strip_base64(text: str) -> tuple[str, int]:
    """``text`` without its base64 blobs, and the number of blobs removed."""
    spans = _blob_spans(text)
    if not spans:
        return text, 0
    pieces, pos = [], 0
    for s, e in spans:
        pieces.append(text[pos:s])
        pos = e
    pieces.append(text[pos:])
    return "".join(pieces), len(spans)


def _ramp(share: float, low: float, high: float) -> float:
    """0 at or below ``low``, 1 at or above ``high``, linear in between."""
    return min(1.0, max(0.0, (share - low) / (high - low)))


def _ascii_tokens(raw: bytes) -> float:
    n = len(raw)
    if n == 0:
        return 0.0
    classes = raw.translate(_CLASSES)
    solid = n - classes.count(b" ")
    if solid == 0:
        return n / PROSE_CHARS_PER_TOKEN
    seps = classes.count(b"/")
    digits = classes.count(b"0")
    punct = classes.count(b"!") + seps
    t = _ramp(punct / solid, PROSE_PUNCT_SHARE, CODE_PUNCT_SHARE)
    rate = PROSE_CHARS_PER_TOKEN + t * (CODE_CHARS_PER_TOKEN - PROSE_CHARS_PER_TOKEN)
    t = _ramp(seps / solid, PATH_SEP_SHARE_LOW, PATH_SEP_SHARE_HIGH)
    rate += t * (PATH_CHARS_PER_TOKEN - rate)
    return (n - digits) / rate + digits * DIGIT_TOKENS_PER_CHAR


def _ascii_of(text: str) -> bytes:
    return text.encode("ascii") if text.isascii() else text.encode("ascii", "ignore")


def _text_tokens(text: str) -> float:
    raw = _ascii_of(text)
    blobs = 0
    if len(raw) >= BASE64_MIN_CHARS:
        text, blobs = _strip_base64(text)
        raw = _ascii_of(text)
    tokens = _ascii_tokens(raw) + blobs * BASE64_BLOB_TOKENS
    n = len(text)
    non_ascii = n - len(raw)
    if non_ascii == 0:
        return tokens
    utf8 = len(text.encode("utf-8", "surrogatepass"))
    astral = len(text.encode("utf-16-le", "surrogatepass")) // 2 - n
    wide = utf8 - n - non_ascii - 2 * astral
    narrow = non_ascii - wide - astral
    return (
        tokens
        + narrow * NARROW_SCRIPT_TOKENS_PER_CHAR
        + wide * WIDE_SCRIPT_TOKENS_PER_CHAR
        + astral * ASTRAL_TOKENS_PER_CHAR
    )


class HeuristicEstimator:
    """The default :class:`~ctxengine.tokens.base.Estimator` (see the module doc for rules).

    Args:
        image_tokens: tokens of an image whose pixel size is unknown. Callers with a policy
            pass ``policy.defaults.DEFAULT_IMAGE_TOKENS`` (3,000, Gemini CLI's flat cost);
            the default here is :data:`~ctxengine.tokens.constants.MAX_IMAGE_TOKENS`
            (1,534), the most any image costs under the Anthropic rule.

    Every method returns tokens (an int ≥ 0), at least 1 for non-empty content, and never
    raises: anything unexpected is priced from its ``str()`` as text.
    """

    __slots__ = ("image_tokens",)

    def __init__(self, *, image_tokens: int = MAX_IMAGE_TOKENS) -> None:
        self.image_tokens = max(1, image_tokens)

    def text(self, text: str) -> int:
        """Tokens of a plain string; 0 only for ``""``."""
        try:
            if not text:
                return 0
            return max(1, math.ceil(_text_tokens(text)))
        except Exception:
            return max(1, len(str(text)) // 2)

    def part(self, part: Part) -> int:
        """Tokens of one part; 0 only for an empty :class:`TextPart` and for reasoning or
        native compaction that no rendered request carries."""
        try:
            return self._part(part)
        except Exception:
            return max(1, self.text(str(part)))

    def message(self, message: Message) -> int:
        """Tokens of one message: :data:`MESSAGE_OVERHEAD_TOKENS` plus its parts."""
        try:
            return MESSAGE_OVERHEAD_TOKENS + sum(self.part(p) for p in message.parts)
        except Exception:
            return MESSAGE_OVERHEAD_TOKENS + self.text(str(message))

    def tools(self, schemas: Sequence[Mapping[str, Any]]) -> int:
        """Tokens of tool schemas: :data:`TOOLS_PREAMBLE_TOKENS` when any is given, plus
        per schema its compact JSON as text and :data:`TOOL_SCHEMA_OVERHEAD_TOKENS`."""
        try:
            if not schemas:
                return 0
            total = TOOLS_PREAMBLE_TOKENS
            for schema in schemas:
                total += TOOL_SCHEMA_OVERHEAD_TOKENS + self.text(_json(schema))
            return total
        except Exception:
            return TOOLS_PREAMBLE_TOKENS + self.text(str(schemas))

    def _part(self, part: Part) -> int:
        if isinstance(part, TextPart):
            return self.text(part.text)
        if isinstance(part, ToolCallPart):
            return TOOL_CALL_OVERHEAD_TOKENS + self.text(part.name) + self.text(part.arguments)
        if isinstance(part, ToolResultPart):
            return TOOL_RESULT_OVERHEAD_TOKENS + sum(self._part(p) for p in part.content)
        if isinstance(part, ImagePart):
            return PART_OVERHEAD_TOKENS + self._image(part)
        if isinstance(part, DocumentPart):
            return PART_OVERHEAD_TOKENS + self._document(part)
        if isinstance(part, ReasoningPart | NativeCompactionPart) and not carried_anywhere(part):
            return 0
        if isinstance(part, ReasoningPart):
            return PART_OVERHEAD_TOKENS + _reasoning(self, part)
        if isinstance(part, NativeCompactionPart):
            return PART_OVERHEAD_TOKENS + _encrypted(part.payload)
        return max(1, self.text(str(part)))

    def _image(self, part: ImagePart) -> int:
        width, height = part.width, part.height
        if (not width or not height) and part.data:
            size = image_size_from_base64(part.data)
            if size is not None:
                width, height = size
        return estimate_tokens_for_image(width, height, default=self.image_tokens)

    def _document(self, part: DocumentPart) -> int:
        title = self.text(part.title) if part.title else 0
        if part.text:
            return title + self.text(part.text)
        size = part.byte_size
        if size is None and part.data:
            size = len(part.data) * 3 // 4
        if not size:
            return title + DEFAULT_DOCUMENT_TOKENS
        per_token = PDF_BYTES_PER_TOKEN if "pdf" in part.media_type else TEXT_BYTES_PER_TOKEN
        return title + max(1, math.ceil(size / per_token))


def _reasoning(estimator: HeuristicEstimator, part: ReasoningPart) -> int:
    if part.text:
        signed = REASONING_SIGNATURE_TOKENS if part.signature else 0
        return estimator.text(part.text) + signed
    if part.signature:
        return max(REASONING_SIGNATURE_TOKENS, _encrypted(part.signature))
    return 0


def _encrypted(payload: str) -> int:
    return max(1, math.ceil(len(payload) / ENCRYPTED_CHARS_PER_TOKEN))


def _json(value: Any) -> str:
    try:
        return json.dumps(value, ensure_ascii=False, separators=(",", ":"), default=str)
    except (TypeError, ValueError):
        return str(value)
