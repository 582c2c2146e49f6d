"""Constants of the heuristic token estimator. Units: tokens unless the name says otherwise.

The fixed cost of an image whose pixel size is unknown is a *policy* default
(``policy.defaults.DEFAULT_IMAGE_TOKENS``, 3,000); the engine passes it to the estimator.
Used alone, the estimator charges :data:`MAX_IMAGE_TOKENS`, the most any image costs under
the Anthropic rule.
"""

from __future__ import annotations

from typing import NamedTuple

# ---------------------------------------------------------------------------------------
# Fitted text constants. Source: the samples of ``benchmarks/estimator_accuracy.py``: every
# text of at least 64 characters that a request of the shared transcript corpus carries
# (5,947 distinct texts from 41 transcript files, 192 of them the corpus's opaque base64
# payloads), counted with ``o200k_base`` and ``cl100k_base`` (tiktoken 0.14.0) on 2026-12-02,
# and, at half the weight of a corpus class, the synthesized shell outputs of
# ``benchmarks/_tool_outputs.py`` (seed ``FIT_SEED``, 12 kinds of 12 texts). Each text's
# target is the larger of its two counts. The class codes come from a local search over bit
# patterns (one bit of one code flipped at a time, from the codes fitted on 2026-12-01), the
# three text weights, for each candidate, from minimising the benchmark's own figures: per
# corpus class, the median error beyond ±5 % and the share of texts under by more than
# 10 % beyond 3 % (the benchmark's limit is 5 %: the margin is for texts unlike the
# corpus's); per shell-output kind, the median beyond ±8 % and the share beyond 5 %. The
# codes of 2026-12-01 made a digit→punctuation step (``2.31.0``: five tokens) and a
# digit→line-break step free, as both codes' bits were a subset of the digit code's:
# ``pip list``, ``/proc/cpuinfo`` and ``mount`` outputs came out 15–25 % under, the
# corpus's ``mixed`` class had 8.8 % of its texts under by more than 10 %, and a long digit
# run (``free -m``) cost 0.57 tokens per digit against BPE's 1/3. Fitted on either half of
# the corpus's files (codes kept), the weights keep the other half's class medians within
# +1 to +9 % for code, prose, JSON and blobs and within 0 to +14 % for the classes of under
# 60 texts there (paths, mixed, scripts), with at most 4 % of a class's texts under by more
# than 10 %. The benchmark prints the result per class and encoding, and checks on shell
# outputs of another seed and of the machine it runs on; constants not fitted this way say
# where they come from.
# ---------------------------------------------------------------------------------------

#: Bit code of each byte class of the text model (``estimate.py``): lower-case letters
#: (``a–z``, Latin-1 ``ß–ÿ``), upper case (``A–Z``, ``À–Þ``; one bit of the lower-case
#: code, so a lower→upper change inside a word costs nothing and upper→lower one bit),
#: digits, punctuation and every other character, blanks (space, tab), line breaks, and
#: letters of other scripts (every character beyond Latin-1, read as ``?``, and ``?``
#: itself: three bits, one shared with the lower-case code and two with no letter code, so
#: a run of them is a word of its own). A digit→punctuation and a digit→line-break step cost
#: two bits (BPE ends a digit group there and starts a piece); a letter→digit step four
#: bits, a punctuation→digit step two.
CODE_LOWER = 0b0010_0010
CODE_UPPER = 0b0010_0000
CODE_DIGIT = 0b1101_0100
CODE_PUNCT = 0b0110_0101
CODE_BLANK = 0b0000_0000
CODE_NEWLINE = 0b0100_1101
CODE_OTHER_SCRIPT = 0b0011_1000
#: Tokens per bit that a character's code has and the previous character's code lacks: the
#: cost of starting a piece where the class changes (BPE pre-tokenizers split text into
#: words, digit groups, punctuation runs and line breaks before merging).
TOKENS_PER_NEW_BIT = 0.3977
#: Tokens per bit of every character's code: the cost of length within a piece.
TOKENS_PER_CODE_BIT = 0.01445
#: Tokens per ASCII digit on top (``o200k_base`` and ``cl100k_base`` split digit runs into
#: groups of at most three).
TOKENS_PER_DIGIT = 0.2834
#: A run of this many letters of one case (no class change inside) is long: where the model
#: gives fewer than :data:`LONG_RUN_CHECK_TOKENS_PER_CHAR` tokens per character, each block
#: of this many same-case letters costs :data:`LONG_RUN_TOKENS_PER_CHAR` per letter on top.
#: BPE splits an unbroken random letter run (a gene sequence, an opaque lower-case id) every
#: two letters or so, a cost the piece model misses: 10,000 random lower-case letters count
#: 0.52 (``o200k_base``) and 0.54 (``cl100k_base``) tokens per letter, upper-case ones 0.57
#: and 0.59; the model gives them 0.01–0.03.
LONG_RUN_CHARS = 12
LONG_RUN_CHECK_TOKENS_PER_CHAR = 1 / 6
LONG_RUN_TOKENS_PER_CHAR = 0.53
#: Blocks of lower-case letters count as long runs only where the share of vowels among the
#: text's ASCII letters lies outside this range (random letters: 5 of 26, 19 %; one letter
#: repeated: 0 or 100 %; the corpus's prose: 37 %, 34 % or more in 95 % of its texts), or
#: in prose in another language (:data:`FOREIGN_LETTER_TOKENS`; the foreign rates were
#: chosen with the rule applied there). English prose dense with long words
#: (``internationalization``, ``containerization``: two or three tokens each) came out
#: 36–69 % over both encodings with every 12 letters of such a word charged at the random
#: rate (the four technical texts of ``benchmarks/check_texts.json``: now −6 to +2 %).
LONG_RUN_WORD_VOWELS = (0.3, 0.6)
#: Where the vowels are those of words, each 12 lower-case letters in a row cost this much per
#: letter instead (prose in another language: up to :data:`LONG_RUN_TOKENS_PER_CHAR`, as much
#: as it reads as such): the long words of English prose are rare words as often as not
#: (``hypergammaglobulinemia``: 8 tokens; ``internationalization``: 2 or 3), and an
#: under-count costs more than an over-count.
LONG_WORD_TOKENS_PER_CHAR = 0.25

#: Words in capitals (on top of the text model, whose codes price a capital at one bit, half
#: a lower-case letter, so that a case change inside ``camelCase`` costs nothing): each word
#: of at least two capitals after a blank or a line break costs :data:`UPPER_WORD_TOKENS`,
#: each block of :data:`UPPER_BLOCK_CHARS` capitals in a row :data:`UPPER_BLOCK_TOKENS`.
#: Without them, a log written in capitals came out 50 % under both encodings, SQL with
#: upper-case keywords and names 15–31 % under, prose with acronyms 27 % under. Fitted on the
#: synthesized ``log in capitals``, ``SQL in capitals`` and ``licence in capitals`` outputs
#: of ``benchmarks/_tool_outputs.py`` (seed ``FIT_SEED``; the benchmark checks on the other
#: seed), with the corpus classes checked to move by under one point (their median errors
#: went up 0.2 to 1.2 points; fewer of their texts are under by more than 10 %). BPE merges
#: common words in capitals into one token (``THE SOFTWARE IS PROVIDED``: one each; a licence
#: comes out about 40 % over) and splits rarer ones (``IMMEDIATELY``: five tokens; a log of
#: them stays 9–14 % under): the rates sit between, as no text model can tell which words a
#: tokenizer has learned.
UPPER_WORD_TOKENS = 0.6
UPPER_BLOCK_CHARS = 4
UPPER_BLOCK_TOKENS = 0.2
#: Blank runs and terminal escapes. The text model gives blanks a code of 0 bits, so a run of
#: blanks costs nothing, while the pre-tokenizers of ``o200k_base`` and ``cl100k_base``
#: (``\s+(?!\S)``) make a run of k ≥ 2 blanks a piece of its own (k − 1 blanks; the last
#: one joins the next word), and BPE merges at most about 128 spaces or 16 tabs into one
#: token. Column-aligned tables (``pip list``, ``dpkg -l``, ``df -h``) have such runs inside
#: every line. Each run of at least two blanks (spaces or tabs) after a character other than
#: a line break costs :data:`BLANK_RUN_TOKENS` (the one piece, by that rule; not fitted), and
#: each block of :data:`LONG_SPACE_RUN_CHARS` spaces or :data:`LONG_TAB_RUN_CHARS` tabs one
#: token more: 50,000 spaces count 392 tokens with either encoding (one per 127.6), 1,000
#: tabs 63 (one per 15.9). Leading indentation (a run right after a line break) costs
#: nothing extra: the code class's fit on the corpus absorbed it (charged a piece, the
#: corpus's code texts went from +4.4 to +9.3 % over with the codes of 2026-12-01, at the edge
#: of the benchmark's ±10 %).
BLANK_RUN_TOKENS = 1.0
LONG_SPACE_RUN_CHARS = 128
LONG_TAB_RUN_CHARS = 16
#: Tokens per ESC character (``\x1b``, which starts an ANSI colour sequence such as
#: ``\x1b[01;31m``) on top of the text model, which prices the sequence as punctuation and
#: digits: ``o200k_base`` splits ``\x1b`` and ``[`` into two tokens, ``cl100k_base`` has
#: ``\x1b[`` as one, so each encoding has its rate (:class:`ScriptRates` ``esc``). Fitted on
#: the synthesized ``ls --color``, ``grep --color`` and ``git diff --color`` outputs of
#: ``benchmarks/_tool_outputs.py`` (seed ``FIT_SEED``, 36 texts; the benchmark checks on the
#: other seed) under the text model above: the tokens per ESC the count lacks after the
#: blank-run rule have medians 0.84 (ls), 1.33 (grep) and 1.35 (git diff) with
#: ``o200k_base``, −0.16, 0.33 and 0.40 with ``cl100k_base`` (one token fewer). 1.3 keeps
#: the three kinds' medians within −1 to +7 % of the ``o200k_base`` count, 0.3 within −1 to
#: +7 % of the ``cl100k_base`` count. The default (the larger count) is ``o200k_base``'s.
ESC_TOKENS = 1.3
CL100K_ESC_TOKENS = 0.3

#: Tokens per character beyond ASCII, on top of the text model, by the character's UTF-8 lead
#: byte (the larger of the two encodings' counts, so ``o200k_base`` is overestimated where
#: ``cl100k_base`` splits a script into more tokens):
#:
#: - accented Latin-1 letters (``U+00C0–U+00FF``): the corpus's French texts run about 17 %
#:   over the model without it (French words split into more pieces than English ones);
#: - Cyrillic (``U+0400–U+052F``) and the other 2-byte characters (Greek, Hebrew, Arabic,
#:   Latin Extended …): the corpus holds almost none, so these two come from the check texts
#:   of ``tests/tokens/test_token_estimate.py`` (``SCRIPTS``: ``cl100k_base`` counts
#:   0.9–1.0 tokens per character of Greek or Hebrew text, 0.4 of Russian);
#: - symbols of 3 bytes in ``U+2000–U+2FFF`` (dashes, quotes, arrows, box drawing): the
#:   corpus's 289 texts that hold them (numbered file reads, trees, tables);
#: - other 3-byte characters (CJK, kana, hangul, Thai, Indic): the corpus's Chinese texts and
#:   the check texts (``cl100k_base`` 0.6–1.0 per character, ``o200k_base`` 0.3–0.7);
#: - characters beyond the BMP (emoji): ``cl100k_base`` splits most emoji into 2–3 tokens.
ACCENTED_LETTER_TOKENS_PER_CHAR = 2.4
CYRILLIC_TOKENS_PER_CHAR = 0.25
NARROW_SCRIPT_TOKENS_PER_CHAR = 0.85
SYMBOL_TOKENS_PER_CHAR = 0.5
WIDE_SCRIPT_TOKENS_PER_CHAR = 1.0
ASTRAL_TOKENS_PER_CHAR = 2.5

#: A base64 run counts as a blob from this many characters on.
BASE64_MIN_CHARS = 64
#: A shorter run of letters and digits (an API key, a nanoid, a signed URL's signature, a
#: JWT segment) counts as a blob from this many characters on when it also holds
#: :data:`KEY_MIN_DIGITS` digits: random letters and digits cost 0.69–0.74 tokens per
#: character with both encodings (20 to 63 characters), the text model gives them 0.46–0.51.
KEY_MIN_CHARS = 20
#: Digits a short run needs to count as a blob (camelCase names and paths have none or
#: one; a random run of 20 letters and digits lacks two in about 1 % of cases).
KEY_MIN_DIGITS = 2
#: Runs of one class (lower case, upper case, digits) per letter or digit a short run needs
#: to count as a blob (unless it has base64's case pairs): about 0.6 in random letters and
#: digits, 0.4–0.5 in camelCase names with numbers (``MyClass2Test3Handler``), fewer in
#: names joined by ``_`` (``Trina_Solar_TSM_300DEG5C_07``: 0.41) and paths.
KEY_MIN_CHANGES_PER_CHAR = 0.52
#: A candidate run is base64 when it has at least one lower→upper and one upper→upper letter
#: pair per this many letters (random base64 has about one per four; identifiers, paths and
#: hex digests have few of one or the other).
BASE64_LETTERS_PER_CASE_PAIR = 12
#: Tokens per character of a base64 blob (or ``data:`` URL payload) inside text: a request
#: sends it as text, and BPE has no merges for random base64 (1.41 characters per token with
#: ``cl100k_base``, 1.48 with ``o200k_base`` on the corpus's 193 opaque payloads).
BASE64_TOKENS_PER_CHAR = 0.73


#: Prose in a language other than English. BPE vocabularies are learned mostly from English text
#: and code, so the words of other languages written in Latin letters split into more pieces
#: than English words of the same length, which the text model (fitted on a corpus that is
#: almost all English) prices as English: Indonesian, Malay, Tagalog and Swahili prose came out
#: 37–56 % under ``cl100k_base`` (medians per language), Italian and Dutch 26 %, Finnish 17 %
#: (``benchmarks/check_texts.json``). Such a text is told by what it lacks. Its first
#: :data:`FOREIGN_SAMPLE_CHARS` characters hold at least :data:`FOREIGN_MIN_WORDS` words (a
#: letter after a blank or at the start); at most :data:`FOREIGN_MAX_SYMBOLS_PER_WORD`
#: characters per word that are neither letters, blanks nor prose punctuation (``. , ; : ! ' "
#: -``; a full stop with a letter right after it, as in ``kotlinx.coroutines`` or ``README.md``,
#: counts as a symbol; the check texts' prose: at most 0.22; code, JSON, paths and listings have
#: more); at most :data:`FOREIGN_MAX_OTHER_SCRIPT` characters beyond Latin-1 per Latin letter
#: (other scripts have rates of their own); and no word that makes up
#: :data:`FOREIGN_MAX_WORD_SHARE` of its words or more (filler, a word or a short phrase
#: repeated with a note or two, such as ``lorem ipsum dolor sit amet`` or a truncation marker;
#: in prose the commonest word is a few per cent, however often a paragraph is repeated). Each
#: Latin letter of such a text then costs :class:`ScriptRates` ``foreign_letter`` on top, and
#: each accented Latin-1 letter ``foreign_accented`` instead of ``accented`` (the accented rate
#: was fitted on English texts quoting French words; in running French, Spanish or German the
#: letter rate holds most of it): in full where at most the first share of
#: :data:`FOREIGN_FUNCTION_WORDS` of its words are :data:`ENGLISH_FUNCTION_WORDS` (the check
#: texts in 19 other languages: at most 1.7 %), not at all from the second share on (the
#: corpus's English prose: median 22 %, 95 % of it above 11.5 %), in proportion between, so that
#: a message quoting a few English words is read as partly English, with no step.
FOREIGN_SAMPLE_CHARS = 4_096
FOREIGN_MIN_WORDS = 24
FOREIGN_MAX_SYMBOLS_PER_WORD = 0.25
FOREIGN_MAX_OTHER_SCRIPT = 0.1
FOREIGN_FUNCTION_WORDS = (0.03, 0.09)
FOREIGN_MAX_WORD_SHARE = 0.2
#: Lists, headings and names are not prose, whatever their language: a sample with fewer than
#: this many words per line (an English to-do list: 6.5; headings: 2; the check texts'
#: prose: 7.6 or more), or with more than :data:`FOREIGN_MAX_CAPITALIZED` of its words
#: capitalized (a list of names, title case: all; German prose: 38 % at most), is not judged.
FOREIGN_MIN_WORDS_PER_LINE = 7
FOREIGN_MAX_CAPITALIZED = 0.5
#: The two rates (default; ``o200k_base`` has its own, below), chosen on the check texts of
#: 15 of those languages (3 each; Czech, Estonian and Romanian held out) against the larger
#: of the two counts to bring each language's median error above −15 % where one pair of
#: rates can, with the fewest over-counts. A letter rate cannot tell a language whose words
#: BPE has learned (French, Spanish, Portuguese, German: now 20–28 % over ``cl100k_base``)
#: from one whose words it splits (Swahili: 56 % under before, 30 % under now).
FOREIGN_LETTER_TOKENS = 0.12
FOREIGN_ACCENTED_TOKENS = 0.8
#: Common English words that are rare as words in the other languages written in Latin
#: letters (``is``, ``in``, ``to``, ``a``, ``die``, ``was`` are common words elsewhere too).
# fmt: off
ENGLISH_FUNCTION_WORDS = (
    "the", "and", "that", "this", "with", "for", "are", "it", "not", "have", "you", "from",
    "which", "will", "can", "if", "should", "when", "there", "your", "what", "but", "has", "by",
)
# fmt: on


class ScriptRates(NamedTuple):
    """Tokens per character, on top of the text model, of each kind of character beyond
    ASCII (by UTF-8 lead byte, as listed above), of a base64 blob's characters, of an ESC
    (:data:`ESC_TOKENS`) and of a Latin letter of prose in a language other than English
    (``foreign_letter``; ``foreign_accented`` replaces ``accented`` there;
    :data:`FOREIGN_LETTER_TOKENS`): the rates one tokenizer family is calibrated with."""

    accented: float
    cyrillic: float
    narrow: float
    symbol: float
    wide: float
    astral: float
    base64: float
    esc: float
    foreign_letter: float
    foreign_accented: float


#: The rates of an estimator whose tokenizer is unknown (Claude, Gemini, open-weight models):
#: the constants above, fitted to the larger of the two encodings' counts.
DEFAULT_SCRIPT_RATES = ScriptRates(
    accented=ACCENTED_LETTER_TOKENS_PER_CHAR,
    cyrillic=CYRILLIC_TOKENS_PER_CHAR,
    narrow=NARROW_SCRIPT_TOKENS_PER_CHAR,
    symbol=SYMBOL_TOKENS_PER_CHAR,
    wide=WIDE_SCRIPT_TOKENS_PER_CHAR,
    astral=ASTRAL_TOKENS_PER_CHAR,
    base64=BASE64_TOKENS_PER_CHAR,
    esc=ESC_TOKENS,
    foreign_letter=FOREIGN_LETTER_TOKENS,
    foreign_accented=FOREIGN_ACCENTED_TOKENS,
)

# ---------------------------------------------------------------------------------------
# Per-tokenizer rates (``HeuristicEstimator(encoding=...)``). Only the rates whose counts
# differ between the encodings have values of their own; the text model (the codes and
# weights above) and the symbol rate are shared: on the corpus's ASCII texts the two
# encodings' class medians lie within 1.5 points of each other, and on the texts where
# symbols carry at least 5 / 10 / 20 % of the estimate the rate fitted below is higher for
# one encoding at one threshold and for the other at the next (no consistent difference).
#
# Rule, for each rate and encoding: the rate at which the texts where that kind of
# character carries at least 10 % of the default estimate get the same median error
# against that encoding as the default rate gives them against the larger of the two
# counts (the default's margin is kept, not refitted). Texts: the corpus's samples
# (``benchmarks/estimator_accuracy.py``, 2026-12-01) for accented letters (22 texts, the
# French ones), wide scripts (27 texts, Chinese) and base64 blobs (192 payloads); the check
# texts of ``tests/tokens/test_token_estimate.py`` (``SCRIPTS``) for Cyrillic (1) and the
# other 2-byte scripts (Greek, Arabic, Hebrew), which the corpus lacks; for characters
# beyond the BMP, the corpus's 60 distinct emoji each counted alone (its texts that hold
# them have them at under 6 % of the estimate). ``cl100k_base`` counts at least as many
# tokens as ``o200k_base`` for every one of these texts, so the rule gives it the default
# rates exactly; ``o200k_base`` encodes them more tightly (Chinese about 0.55 tokens per
# character on top of the text model against 0.85; Greek 57 tokens against 149; base64 1.48
# characters per token against 1.41; an emoji 2.2 tokens against 2.9).
# ---------------------------------------------------------------------------------------

#: ``o200k_base`` (GPT-4o, GPT-4.1, GPT-5, o-series): the rule above gives accented 1.2246,
#: Cyrillic 0.0445, other 2-byte 0.1467, wide 0.6925, astral 1.2783, base64 0.6928. The
#: foreign-prose rates are chosen as the default ones are, against ``o200k_base``'s count,
#: which splits the words of other languages less than ``cl100k_base`` does.
O200K_SCRIPT_RATES = DEFAULT_SCRIPT_RATES._replace(
    accented=1.22,
    cyrillic=0.04,
    narrow=0.15,
    wide=0.69,
    astral=1.28,
    base64=0.69,
    foreign_letter=0.06,
    foreign_accented=0.6,
)
#: ``cl100k_base`` (GPT-4, GPT-3.5): the default rates (see the rule above) but for the
#: ESC rate, :data:`CL100K_ESC_TOKENS` (``\x1b[`` is one token there).
CL100K_SCRIPT_RATES = DEFAULT_SCRIPT_RATES._replace(esc=CL100K_ESC_TOKENS)
#: The rates by tokenizer family (an encoding name).
TOKENIZER_SCRIPT_RATES: dict[str, ScriptRates] = {
    "o200k_base": O200K_SCRIPT_RATES,
    "cl100k_base": CL100K_SCRIPT_RATES,
}

#: Framing of every message (role, separators): about 4 tokens (OpenAI cookbook counts 3–4).
MESSAGE_OVERHEAD_TOKENS = 4
#: Framing of one tool call (id, type, name/arguments fields) on top of name + arguments.
TOOL_CALL_OVERHEAD_TOKENS = 8
#: Framing of one tool result (call id, type) on top of its content.
TOOL_RESULT_OVERHEAD_TOKENS = 4
#: Framing of one image, document or reasoning part.
PART_OVERHEAD_TOKENS = 2

#: A reasoning signature (Anthropic ``signature``) is not read by the model as tokens; it costs
#: this fixed amount.
REASONING_SIGNATURE_TOKENS = 16
#: Characters of an encrypted payload (redacted thinking, OpenAI ``encrypted_content``,
#: native compaction items) per token of the hidden text it stands for: base64 of the
#: ciphertext is about 4/3 of the plain bytes, and plain text runs at about 4 bytes per token.
ENCRYPTED_CHARS_PER_TOKEN = 6

#: Anthropic image rule: the long side is scaled to at most 1,568 px and the area to at most
#: 1.15 megapixels (aspect ratio kept), then tokens = width × height / 750.
IMAGE_MAX_LONG_SIDE_PX = 1_568
IMAGE_MAX_PIXELS = 1_150_000
IMAGE_PIXELS_PER_TOKEN = 750
#: The most an image costs under that rule (1,534): an image of unknown size costs this much
#: when the caller gives no other fixed cost.
MAX_IMAGE_TOKENS = -(-IMAGE_MAX_PIXELS // IMAGE_PIXELS_PER_TOKEN)

#: OpenAI image rule (GPT-4o, GPT-4.1, GPT-5, o-series: the models whose text the
#: ``o200k_base`` / ``cl100k_base`` tokenizers count), ``detail`` ``"high"`` or ``"auto"``:
#: the image is scaled down to fit a 2,048 px square, then down until its shortest side is at
#: most 768 px (aspect ratio kept; a smaller image is not scaled up), and costs 85 tokens plus
#: 170 per 512 px tile it covers; ``detail: "low"`` costs the 85 alone. A small or narrow image
#: costs more under this rule than under Anthropic's (200 × 200 px: 255 against 54;
#: 100 × 4,000 px: 765 against 82), a large one less (1,920 × 1,080: 1,105 against 1,532).
OPENAI_IMAGE_MAX_SIDE_PX = 2_048
OPENAI_IMAGE_SHORT_SIDE_PX = 768
OPENAI_IMAGE_TILE_PX = 512
OPENAI_IMAGE_BASE_TOKENS = 85
OPENAI_IMAGE_TILE_TOKENS = 170

#: PDF bytes per token: Anthropic prices a page at 1,500–3,000 text tokens plus its page
#: image, about 3,500 tokens for a typical 50 KB page. (Gemini CLI's flat 25,800 per PDF
#: is far too high for a one-page file.)
PDF_BYTES_PER_TOKEN = 16
#: Cost of a document whose size is unknown (a PDF by URL): one page.
DEFAULT_DOCUMENT_TOKENS = 3_000
#: Bytes per token of a text document known only by its byte size.
TEXT_BYTES_PER_TOKEN = 4

#: Tokens the provider adds when any tool is offered (Anthropic's tool-use system prompt is
#: 313–346 tokens), and per tool definition on top of its JSON.
TOOLS_PREAMBLE_TOKENS = 300
TOOL_SCHEMA_OVERHEAD_TOKENS = 8
