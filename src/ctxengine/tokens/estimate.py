"""``HeuristicEstimator``: a fast, dependency-free token estimate fitted to BPE tokenizers.

Not ``chars / 4``. BPE tokenizers (``o200k_base``, ``cl100k_base``, and most others) first
split text into pieces where the kind of character changes (words, digit groups, punctuation
runs, line breaks), then merge within each piece. The estimate follows that shape, with
constants fitted on the transcript corpus (``tokens/constants.py`` says how; the per-class
accuracy is what ``benchmarks/estimator_accuracy.py`` prints):

- **Text model.** Each character gets the bit code of its class (lower-case letter, upper-case
  letter, digit, punctuation, blank, line break; Latin-1 letters count as letters; every
  character beyond Latin-1, and ``?`` which stands for it, is a letter of another script).
  A character costs
  :data:`~ctxengine.tokens.constants.TOKENS_PER_CODE_BIT` per bit of its code, plus
  :data:`~ctxengine.tokens.constants.TOKENS_PER_NEW_BIT` per bit its code has that the
  previous character's code lacks (a new piece), plus
  :data:`~ctxengine.tokens.constants.TOKENS_PER_DIGIT` per digit. The codes make entering a
  word after a blank cost about one token with its first letters, a digit group after a blank
  more than one after a letter, a step from a digit to punctuation or a line break (``2.31.0``)
  two bits, and a change of case inside a word (``camelCase``) one bit.
  Computed in C: one ``bytes.translate`` to codes, then ``bit_count`` of ``x`` and of
  ``x & (x >> 8)`` on the codes read as integers (64 KB at a time). Prose, code, JSON, file
  lists and ``ls -l`` output differ in how often classes change, which is what the model
  counts: no text is sorted into a class first.
- **Long letter runs.** Where the model gives fewer than one token per six characters, each
  block of :data:`~ctxengine.tokens.constants.LONG_RUN_CHARS` same-case letters costs
  :data:`~ctxengine.tokens.constants.LONG_RUN_TOKENS_PER_CHAR` per letter on top (BPE splits
  an unbroken random run every two or three letters); blocks of lower-case letters only in
  prose in another language or where the share of vowels among the ASCII letters is not
  that of words (:data:`~ctxengine.tokens.constants.LONG_RUN_WORD_VOWELS`: English words as
  long, ``internationalization``, are two or three tokens).
- **Words in capitals.** The codes make a capital cost one bit where a lower-case letter
  costs two (so that ``camelCase`` costs nothing at its capital), which prices a word in
  capitals at half a lower-case word; BPE has fewer merges for capitals and splits such a
  word into more pieces (``REFUSED``: ``REF`` ``USED``). Each word of at least two capitals
  after a blank or a line break (or at the start) costs
  :data:`~ctxengine.tokens.constants.UPPER_WORD_TOKENS` on top, and each block of
  :data:`~ctxengine.tokens.constants.UPPER_BLOCK_CHARS` capitals in a row
  :data:`~ctxengine.tokens.constants.UPPER_BLOCK_TOKENS`. Searched only in texts holding two
  capitals in a row.
- **Prose in another language.** A text whose first
  :data:`~ctxengine.tokens.constants.FOREIGN_SAMPLE_CHARS` characters read as prose (enough
  words, few symbols per word, few characters beyond Latin-1) but hold almost none of the
  commonest English function words is prose in another language written in Latin letters:
  BPE splits its words into more pieces than English ones, so each of its Latin letters
  costs ``foreign_letter`` (:data:`~ctxengine.tokens.constants.FOREIGN_LETTER_TOKENS`) on
  top, and each accented Latin-1 letter ``foreign_accented`` instead of ``accented``. The
  test is a few ``bytes.translate``/``bytes.count`` passes over the sample, stopping at
  the first English function words that rule it out.
- **Blank runs and escapes.** A run of at least two blanks inside a line costs
  :data:`~ctxengine.tokens.constants.BLANK_RUN_TOKENS` (BPE pre-tokenizers make it a piece of
  its own; the text model charges blanks nothing), plus one token per block of
  :data:`~ctxengine.tokens.constants.LONG_SPACE_RUN_CHARS` spaces or
  :data:`~ctxengine.tokens.constants.LONG_TAB_RUN_CHARS` tabs; each ESC character (an ANSI
  colour sequence) costs :data:`~ctxengine.tokens.constants.ESC_TOKENS` on top
  (``cl100k_base``: :data:`~ctxengine.tokens.constants.CL100K_ESC_TOKENS`). Two
  ``bytes.translate``/``bytes.count`` passes, only over texts holding two spaces in a row or
  a tab.
- **Beyond ASCII**, on top of the text model, by UTF-8 length: accented Latin-1 letters
  (``é``, ``ß``: text in French, German, Spanish … splits into more pieces than English),
  Cyrillic, other characters of 2 bytes (Greek, Hebrew, Arabic, Latin Extended), of 3 bytes
  in ``U+2000–U+2FFF`` (punctuation, arrows, box drawing, symbols), other 3-byte characters
  (CJK, kana, hangul, Thai, Indic) and characters beyond the BMP (emoji) each at their own
  rate. These rates, the base64 rate and the ESC rate are the ones that differ between
  tokenizers: an estimator made for an encoding (``encoding="o200k_base"`` or
  ``"cl100k_base"``) uses that encoding's
  (:data:`~ctxengine.tokens.constants.TOKENIZER_SCRIPT_RATES`); the default
  (``None``, for a model whose tokenizer is unknown) uses rates fitted to the larger of the
  two counts.
- **Base64 and keys**: a maximal run of at least 64 base64 characters
  (``A–Z a–z 0–9 + / - _ =``) with case changes as frequent as random base64 has them, a
  run of at least :data:`~ctxengine.tokens.constants.KEY_MIN_CHARS` such characters with
  :data:`~ctxengine.tokens.constants.KEY_MIN_DIGITS` digits, both cases and a change of
  class (lower, upper, digit) about every other letter or digit (an API key, a nanoid, a
  JWT segment), or any run right after ``;base64,`` (a ``data:`` URL
  payload), costs :data:`~ctxengine.tokens.constants.BASE64_TOKENS_PER_CHAR` per character
  (by default; ``o200k_base`` has its own rate): a request sends it as text. Identifiers,
  paths and hex digests stay text. Strings shorter than 20 characters are not searched.

Parts: images from pixel size (:func:`~ctxengine.tokens.images.estimate_tokens_for_image`,
Anthropic's rule; an estimator made for an OpenAI encoding:
:func:`~ctxengine.tokens.images.openai_image_tokens`), else the fixed ``image_tokens``;
documents by text, else PDFs by byte size
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
from collections import Counter
from collections.abc import Mapping, Sequence
from typing import Any

from ctxengine.errors import ConfigError
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
    BASE64_LETTERS_PER_CASE_PAIR,
    BASE64_MIN_CHARS,
    BLANK_RUN_TOKENS,
    CODE_BLANK,
    CODE_DIGIT,
    CODE_LOWER,
    CODE_NEWLINE,
    CODE_OTHER_SCRIPT,
    CODE_PUNCT,
    CODE_UPPER,
    DEFAULT_DOCUMENT_TOKENS,
    DEFAULT_SCRIPT_RATES,
    ENCRYPTED_CHARS_PER_TOKEN,
    ENGLISH_FUNCTION_WORDS,
    FOREIGN_FUNCTION_WORDS,
    FOREIGN_MAX_CAPITALIZED,
    FOREIGN_MAX_OTHER_SCRIPT,
    FOREIGN_MAX_SYMBOLS_PER_WORD,
    FOREIGN_MAX_WORD_SHARE,
    FOREIGN_MIN_WORDS,
    FOREIGN_MIN_WORDS_PER_LINE,
    FOREIGN_SAMPLE_CHARS,
    KEY_MIN_CHANGES_PER_CHAR,
    KEY_MIN_CHARS,
    KEY_MIN_DIGITS,
    LONG_RUN_CHARS,
    LONG_RUN_CHECK_TOKENS_PER_CHAR,
    LONG_RUN_TOKENS_PER_CHAR,
    LONG_RUN_WORD_VOWELS,
    LONG_SPACE_RUN_CHARS,
    LONG_TAB_RUN_CHARS,
    LONG_WORD_TOKENS_PER_CHAR,
    MAX_IMAGE_TOKENS,
    MESSAGE_OVERHEAD_TOKENS,
    PART_OVERHEAD_TOKENS,
    PDF_BYTES_PER_TOKEN,
    REASONING_SIGNATURE_TOKENS,
    TEXT_BYTES_PER_TOKEN,
    TOKENIZER_SCRIPT_RATES,
    TOKENS_PER_CODE_BIT,
    TOKENS_PER_DIGIT,
    TOKENS_PER_NEW_BIT,
    TOOL_CALL_OVERHEAD_TOKENS,
    TOOL_RESULT_OVERHEAD_TOKENS,
    TOOL_SCHEMA_OVERHEAD_TOKENS,
    TOOLS_PREAMBLE_TOKENS,
    UPPER_BLOCK_CHARS,
    UPPER_BLOCK_TOKENS,
    UPPER_WORD_TOKENS,
    ScriptRates,
)
from ctxengine.tokens.images import (
    estimate_tokens_for_image,
    image_size_from_base64,
    openai_image_tokens,
)


def _code_of(byte: int) -> int:
    """The bit code of a Latin-1 byte's class (see the module doc)."""
    if byte == 0x3F:  # "?": also every character beyond Latin-1 (see _latin1)
        return CODE_OTHER_SCRIPT
    if byte in b"\n\r":
        return CODE_NEWLINE
    if byte in b" \t\x0b\x0c":
        return CODE_BLANK
    if 0x30 <= byte <= 0x39:
        return CODE_DIGIT
    if 0x61 <= byte <= 0x7A or (0xDF <= byte <= 0xFF and byte != 0xF7):
        return CODE_LOWER
    if 0x41 <= byte <= 0x5A or (0xC0 <= byte <= 0xDE and byte != 0xD7):
        return CODE_UPPER
    return CODE_PUNCT


#: Each Latin-1 byte mapped to its class's bit code.
_CODES = bytes(_code_of(b) for b in range(256))
_DIGIT = bytes([CODE_DIGIT])
#: Each Latin-1 byte as ``" "`` (space, tab), ``"n"`` (line break) or ``"x"`` (anything else):
#: ``"x  "`` in the result starts a run of at least two blanks inside a line.
_BLANK_MASK = bytes(0x20 if b in b" \t" else 0x6E if b in b"\n\r" else 0x78 for b in range(256))
#: Searched with ``re`` (a literal search, 2-3 times faster here than ``bytes.count``).
_RUN_START = re.compile(b"x  ")
_LONG_SPACES = b" " * LONG_SPACE_RUN_CHARS
_LONG_TABS = b"\t" * LONG_TAB_RUN_CHARS
_POPCOUNT = [b.bit_count() for b in range(256)]
#: Bytes of codes read as one integer at a time (fits the CPU cache; 1 MB at once is slower).
_CHUNK = 65_536
_LONG_LOWER = bytes([CODE_LOWER]) * LONG_RUN_CHARS
_LONG_UPPER = bytes([CODE_UPPER]) * LONG_RUN_CHARS
#: Codes of a word in capitals starting after a blank or a line break (two capitals in a
#: row there), and of a block of capitals (:data:`UPPER_BLOCK_CHARS` in a row).
_UPPER_PAIR = bytes([CODE_UPPER]) * 2
_BLANK_UPPER = bytes([CODE_BLANK]) + _UPPER_PAIR
_NEWLINE_UPPER = bytes([CODE_NEWLINE]) + _UPPER_PAIR
_UPPER_BLOCK = bytes([CODE_UPPER]) * UPPER_BLOCK_CHARS
_ALL_CODES = (CODE_LOWER, CODE_UPPER, CODE_DIGIT, CODE_PUNCT, CODE_BLANK, CODE_NEWLINE)
if len({*_ALL_CODES, CODE_OTHER_SCRIPT}) != 7:
    raise ImportError("tokens.constants: the seven class codes must differ")  # pragma: no cover
_B64_ALPHABET = frozenset(b"ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/_-=")
_B64_MASK = bytes(0x61 if b in _B64_ALPHABET else 0x20 for b in range(256))
_KEY_NEEDLE = b"a" * KEY_MIN_CHARS
_DIGITS = b"0123456789"
#: A run of one class of characters: lower case, upper case or digits.
_CLASS_RUN = re.compile(rb"[a-z]+|[A-Z]+|[0-9]+")
_DATA_URL = b";base64,"
_LETTERS = b"ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz"
_VOWELS = b"AEIOUaeiou"
#: UTF-8 bytes that do not start a character beyond ASCII (ASCII and continuation bytes).
_NOT_LEADS = bytes(range(0xC0))


def _prose_class(byte: int) -> int:
    """``A`` a capital, ``a`` another letter (``?`` too: a character beyond Latin-1, mostly
    letters), `` `` a blank, ``.`` a full stop, ``,`` other prose punctuation
    (``, ; : ! ' " -``), ``#`` anything else (digits, brackets, operators)."""
    if _code_of(byte) == CODE_UPPER:
        return 0x41
    if _code_of(byte) in (CODE_LOWER, CODE_OTHER_SCRIPT):
        return 0x61
    if _code_of(byte) in (CODE_BLANK, CODE_NEWLINE):
        return 0x20
    if byte == 0x2E:
        return 0x2E
    return 0x2C if byte in b",;:!'\"-" else 0x23


#: Each Latin-1 byte as its prose class (:func:`_prose_class`).
_PROSE_CLASSES = bytes(_prose_class(b) for b in range(256))
#: Each Latin-1 byte as itself when an ASCII letter (lower-cased) and as a space otherwise,
#: so that `` the `` in the result is the word "the" wherever it stands.
_ASCII_WORDS = bytes(
    b | 0x20 if chr(b).isascii() and chr(b).isalpha() else 0x20 for b in range(256)
)
_FUNCTION_WORDS = frozenset(w.encode() for w in ENGLISH_FUNCTION_WORDS)
_LATIN_LETTERS = bytes(b for b in range(256) if _code_of(b) in (CODE_LOWER, CODE_UPPER))


def _foreign_share(raw: bytes) -> float:
    """How much ``raw`` (a text as :func:`_latin1` gives it) reads as prose in a language
    other than English, by its first :data:`FOREIGN_SAMPLE_CHARS` characters: 1.0 where it
    holds at most the first share of :data:`FOREIGN_FUNCTION_WORDS` English function words,
    0.0 where it holds the second or more or is not prose, linearly between
    (:data:`~ctxengine.tokens.constants.FOREIGN_LETTER_TOKENS` says how)."""
    sample = raw[:FOREIGN_SAMPLE_CHARS]
    classes = sample.translate(_PROSE_CLASSES)
    low, high = FOREIGN_FUNCTION_WORDS
    # A word needs a blank before it (but the first): the blanks bound the words, so that
    # one-byte counts and the commonest English word rule out most texts first.
    most = classes.count(b" ") + 1
    symbols = classes.count(b"#")
    if most < FOREIGN_MIN_WORDS or symbols > most * FOREIGN_MAX_SYMBOLS_PER_WORD:
        return 0.0
    plain = sample.translate(_ASCII_WORDS)
    if plain.count(b" the ") >= most * high:
        return 0.0
    capitalized = classes.count(b" A") + classes.startswith(b"A")
    words = classes.count(b" a") + classes.startswith(b"a") + capitalized
    # A full stop with a letter right after it joins names (``kotlinx.coroutines.flow``,
    # ``README.md``) rather than ending a sentence: a symbol too.
    symbols += classes.count(b".a") + classes.count(b".A")
    if words < FOREIGN_MIN_WORDS or symbols > words * FOREIGN_MAX_SYMBOLS_PER_WORD:
        return 0.0
    # Lists, headings and names (short lines, every word capitalized) are not prose.
    lines = sample.count(b"\n") + 1
    if words < lines * FOREIGN_MIN_WORDS_PER_LINE or capitalized > words * FOREIGN_MAX_CAPITALIZED:
        return 0.0
    other = sample.count(b"?")  # classed as letters
    if other > (classes.count(b"a") + classes.count(b"A") - other) * FOREIGN_MAX_OTHER_SCRIPT:
        return 0.0
    # Filler (a word or a short phrase repeated, with a note or two): one word is a large
    # share of the words, where in prose the commonest is a few per cent.
    ((_, top),) = Counter(sample.lower().split()).most_common(1)
    if top >= words * FOREIGN_MAX_WORD_SHARE:
        return 0.0
    # The ASCII letter runs of the sample, lower-cased: its words, as far as English's go.
    share = sum(map(_FUNCTION_WORDS.__contains__, plain.split())) / words
    return min(1.0, max(0.0, (high - share) / (high - low)))


def _foreign_prose(raw: bytes) -> bool:
    """True when ``raw`` reads as prose in another language at all (:func:`_foreign_share`
    above 0)."""
    return _foreign_share(raw) > 0.0


def _lead_kind(byte: int) -> int:
    """The kind of character a UTF-8 lead byte starts: ``a`` Latin-1 letter
    (``U+00C0–U+00FF``), ``c`` Cyrillic (``U+0400–U+052F``), ``n`` other 2-byte character,
    ``s`` symbol (``U+2000–U+2FFF``),
    ``w`` other 3-byte character, ``e`` beyond the BMP."""
    if byte == 0xC3:
        return ord("a")
    if 0xD0 <= byte <= 0xD4:
        return ord("c")
    if byte < 0xE0:
        return ord("n")
    if byte == 0xE2:
        return ord("s")
    return ord("w") if byte < 0xF0 else ord("e")


_LEAD_KINDS = bytes(_lead_kind(b) for b in range(256))
_B64_SAMPLE = 256
_LOWER_UPPER = re.compile(rb"[a-z](?=[A-Z])")
_UPPER_UPPER = re.compile(rb"[A-Z](?=[A-Z])")


def _latin1(text: str) -> bytes:
    """``text`` one byte per character: Latin-1, other characters as ``?``."""
    return text.encode("ascii") if text.isascii() else text.encode("latin-1", "replace")


def _is_base64(run: bytes) -> bool:
    """True when ``run`` (base64 alphabet only) has lower→upper and upper→upper letter
    pairs at least once per :data:`BASE64_LETTERS_PER_CASE_PAIR` letters each, in its first
    :data:`_B64_SAMPLE` characters (base64 is alike throughout)."""
    run = run[:_B64_SAMPLE]
    letters = len(run) - len(run.translate(None, _LETTERS))
    if letters == 0:
        return False
    pairs = min(len(_LOWER_UPPER.findall(run)), len(_UPPER_UPPER.findall(run)))
    return pairs * BASE64_LETTERS_PER_CASE_PAIR >= letters


def _blob_spans(raw: bytes) -> list[tuple[int, int]]:
    """Spans of the base64 blobs of ``raw`` (a text as :func:`_latin1` gives it): ``data:``
    URL payloads and long base64 runs.

    Runs are found on ``raw`` mapped to ``a`` (base64 alphabet) or space, so the search is
    ``bytes.find`` rather than a regex over every position."""
    mask = raw.translate(_B64_MASK)
    n = len(mask)
    spans: list[tuple[int, int]] = []
    starts: set[int] = set()
    pos = raw.find(_DATA_URL)
    while pos >= 0:
        start = pos + len(_DATA_URL)
        end = mask.find(b" ", start)
        end = n if end < 0 else end
        if end > start:
            spans.append((start, end))
            starts.add(start)
        pos = raw.find(_DATA_URL, end)
    pos = mask.find(_KEY_NEEDLE)
    while pos >= 0:
        end = mask.find(b" ", pos)
        end = n if end < 0 else end
        if pos not in starts and _is_blob(raw[pos:end]):
            spans.append((pos, end))
        pos = mask.find(_KEY_NEEDLE, end)
    return sorted(spans)


def _is_blob(run: bytes) -> bool:
    """True for a run of the base64 alphabet that is opaque: base64 (:func:`_is_base64`)
    from :data:`BASE64_MIN_CHARS` characters on, a key (:func:`_is_key`) below."""
    return _is_base64(run) if len(run) >= BASE64_MIN_CHARS else _is_key(run)


def _is_key(run: bytes) -> bool:
    """True when ``run`` (base64 alphabet only, at least :data:`KEY_MIN_CHARS` characters)
    holds :data:`KEY_MIN_DIGITS` digits and lower- and upper-case letters, and either its
    letters and digits change between lower case, upper case and digits at least every
    1 / :data:`KEY_MIN_CHANGES_PER_CHAR` characters (random letters and digits change at
    about 0.6 per character; camelCase names, ``MyClass2Test3Handler``: 0.5, names joined
    by ``_`` or ``-`` and paths less) or it has base64's case pairs (:func:`_is_base64`)."""
    digits = len(run) - len(run.translate(None, _DIGITS))
    if digits < KEY_MIN_DIGITS or run.isupper() or run.islower():
        return False
    segments = _CLASS_RUN.findall(run)
    changes = len(segments) >= KEY_MIN_CHANGES_PER_CHAR * sum(map(len, segments))
    return changes or _is_base64(run)


def _strip_blobs(raw: bytes) -> tuple[bytes, int]:
    """``raw`` without its base64 blobs, and the number of characters removed."""
    spans = _blob_spans(raw)
    if not spans:
        return raw, 0
    pieces, pos = [], 0
    for s, e in spans:
        pieces.append(raw[pos:s])
        pos = e
    pieces.append(raw[pos:])
    rest = b"".join(pieces)
    return rest, len(raw) - len(rest)


def _bits(codes: bytes, chunk: int = _CHUNK) -> tuple[int, int]:
    """``(new bits, bits)`` of ``codes``: the bits each code has that the code before it
    lacks (the first code's all), and all bits. Read as integers ``chunk`` bytes at a time
    (each chunk with the last byte of the one before), which keeps them in the CPU cache."""
    x = int.from_bytes(codes[:chunk], "big")
    bits = x.bit_count()
    shared = (x & (x >> 8)).bit_count()
    for start in range(chunk, len(codes), chunk):
        x = int.from_bytes(codes[start - 1 : start + chunk], "big")
        bits += x.bit_count() - _POPCOUNT[codes[start - 1]]
        shared += (x & (x >> 8)).bit_count()
    return bits - shared, bits


def _letters_of_words(raw: bytes) -> bool:
    """True when the share of vowels among the ASCII letters of ``raw`` is that of words
    (:data:`LONG_RUN_WORD_VOWELS`), not of random letters or one letter repeated."""
    letters = len(raw) - len(raw.translate(None, _LETTERS))
    vowels = len(raw) - len(raw.translate(None, _VOWELS))
    low, high = LONG_RUN_WORD_VOWELS
    return letters * low <= vowels <= letters * high


def _model_tokens(raw: bytes, *, foreign: float = 0.0) -> float:
    """Tokens of ``raw`` by the text model and the long-run rule (module doc); ``foreign``:
    how much ``raw`` is prose in a language other than English (:func:`_foreign_share`)."""
    codes = raw.translate(_CODES)
    fresh, bits = _bits(codes)
    tokens = (
        fresh * TOKENS_PER_NEW_BIT
        + bits * TOKENS_PER_CODE_BIT
        + codes.count(_DIGIT) * TOKENS_PER_DIGIT
    )
    if tokens < len(raw) * LONG_RUN_CHECK_TOKENS_PER_CHAR:
        rate = LONG_RUN_TOKENS_PER_CHAR
        lower = codes.count(_LONG_LOWER)
        if lower and _letters_of_words(raw):
            rate = LONG_WORD_TOKENS_PER_CHAR + foreign * (rate - LONG_WORD_TOKENS_PER_CHAR)
        tokens += LONG_RUN_CHARS * (
            codes.count(_LONG_UPPER) * LONG_RUN_TOKENS_PER_CHAR + lower * rate
        )
    if _UPPER_PAIR in codes:
        words = codes.count(_BLANK_UPPER) + codes.count(_NEWLINE_UPPER)
        words += codes.startswith(_UPPER_PAIR)
        tokens += words * UPPER_WORD_TOKENS + codes.count(_UPPER_BLOCK) * UPPER_BLOCK_TOKENS
    return tokens


def _blank_run_tokens(raw: bytes) -> float:
    """Tokens of ``raw``'s blank runs on top of the text model: one piece per run of at
    least two blanks after a character other than a line break, one more per block of
    :data:`LONG_SPACE_RUN_CHARS` spaces or :data:`LONG_TAB_RUN_CHARS` tabs (module doc)."""
    if b"  " not in raw and b"\t" not in raw:
        return 0.0
    runs = len(_RUN_START.findall(raw.translate(_BLANK_MASK)))
    blocks = raw.count(_LONG_SPACES) + raw.count(_LONG_TABS)
    return runs * BLANK_RUN_TOKENS + blocks


def _text_tokens(text: str, rates: ScriptRates = DEFAULT_SCRIPT_RATES) -> float:
    raw = _latin1(text)
    # Blank runs and escapes are counted on the whole text: taking a blob out of "a BLOB b"
    # must not make its two blanks a run.
    tokens = _blank_run_tokens(raw)
    if b"\x1b" in raw:
        tokens += raw.count(b"\x1b") * rates.esc
    blob_chars = 0
    if len(raw) >= KEY_MIN_CHARS:
        raw, blob_chars = _strip_blobs(raw)
    foreign = _foreign_share(raw) if len(raw) >= FOREIGN_MIN_WORDS * 2 else 0.0
    tokens += _model_tokens(raw, foreign=foreign) + blob_chars * rates.base64
    if foreign:
        letters = len(raw) - len(raw.translate(None, _LATIN_LETTERS))
        tokens += letters * foreign * rates.foreign_letter
    if text.isascii():
        return tokens
    # One lead byte per character beyond ASCII, in order: its UTF-8 length and range.
    leads = text.encode("utf-8", "surrogatepass").translate(None, _NOT_LEADS)
    kinds = leads.translate(_LEAD_KINDS)
    return (
        tokens
        + kinds.count(b"a") * (rates.accented + foreign * (rates.foreign_accented - rates.accented))
        + kinds.count(b"c") * rates.cyrillic
        + kinds.count(b"n") * rates.narrow
        + kinds.count(b"s") * rates.symbol
        + kinds.count(b"w") * rates.wide
        + kinds.count(b"e") * rates.astral
    )


def script_rates(encoding: str | None) -> ScriptRates:
    """The rates an estimator calibrated for ``encoding`` uses
    (:data:`~ctxengine.tokens.constants.TOKENIZER_SCRIPT_RATES`); ``None``: the default ones.

    Raises:
        ConfigError: ``encoding`` is not one the estimator is calibrated for.
    """
    if encoding is None:
        return DEFAULT_SCRIPT_RATES
    found = TOKENIZER_SCRIPT_RATES.get(encoding)
    if found is None:
        raise ConfigError(
            f"no token estimate is calibrated for the tokenizer {encoding!r} "
            f"(calibrated: {', '.join(TOKENIZER_SCRIPT_RATES)}; None for an unknown one)"
        )
    return found


class HeuristicEstimator:
    """The default :class:`~ctxengine.tokens.base.Estimator` (see the module doc for rules).

    Args:
        image_tokens: tokens of an image whose pixel size is unknown. Callers with a policy
            pass ``policy.defaults.DEFAULT_IMAGE_TOKENS`` (3,000, Gemini CLI's flat cost);
            the default here is :data:`~ctxengine.tokens.constants.MAX_IMAGE_TOKENS`
            (1,534), the most any image costs under the Anthropic rule.
        encoding: the tokenizer family to be calibrated for: ``"o200k_base"`` (GPT-4o,
            GPT-4.1, GPT-5, o-series) or ``"cl100k_base"`` (GPT-4, GPT-3.5): the rates of
            characters beyond ASCII and of base64 blobs that differ between the two
            (:data:`~ctxengine.tokens.constants.TOKENIZER_SCRIPT_RATES`), and OpenAI's image
            rule (:func:`~ctxengine.tokens.images.openai_image_tokens`, with the part's
            ``meta["detail"]``); ``None`` (the default, for a model whose tokenizer is
            unknown, e.g. Claude): rates fitted to the larger of the two encodings' counts,
            and Anthropic's image rule.

    Raises:
        ConfigError: ``encoding`` is not one of those.

    Every method returns tokens (an int ≥ 0), at least 1 for non-empty content, and never
    raises: anything unexpected is priced from its ``str()`` as text.
    """

    __slots__ = ("_rates", "encoding", "image_tokens")

    def __init__(
        self, *, image_tokens: int = MAX_IMAGE_TOKENS, encoding: str | None = None
    ) -> None:
        self._rates = script_rates(encoding)
        self.encoding = encoding
        self.image_tokens = max(1, image_tokens)

    def __repr__(self) -> str:
        return f"HeuristicEstimator(encoding={self.encoding!r}, image_tokens={self.image_tokens})"

    def text(self, text: str) -> int:
        """Tokens of a plain string; 0 only for ``""``."""
        try:
            if not text:
                return 0
            return max(1, math.ceil(_text_tokens(text, self._rates)))
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
        if self.encoding is not None:
            detail = part.meta.get("detail")
            return openai_image_tokens(
                width,
                height,
                detail=detail if isinstance(detail, str) else None,
                default=self.image_tokens,
            )
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
