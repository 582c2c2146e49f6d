"""Constants of the heuristic token estimator. Units: tokens unless the name says otherwise.

The fixed cost of an image whose pixel size is unknown is a *policy* default
(``policy.defaults.DEFAULT_IMAGE_TOKENS``, 3,000); the engine passes it to the estimator.
Used alone, the estimator charges :data:`MAX_IMAGE_TOKENS`, the most any image costs under
the Anthropic rule.
"""

from __future__ import annotations

# ---------------------------------------------------------------------------------------
# Fitted text constants. Source: the samples of ``benchmarks/estimator_accuracy.py``: every
# text of at least 64 characters that a request of the shared transcript corpus carries
# (5,947 distinct texts from 41 transcript files, 192 of them the corpus's opaque base64
# payloads), counted with ``o200k_base`` and ``cl100k_base`` (tiktoken 0.14.0) on 2026-12-01.
# Each text's target is the larger of its two counts. The class codes come from a local
# search over bit patterns, the three text weights from least squares on the relative error
# over the ASCII texts, each class of the benchmark weighted alike, then scaled up until no
# class has more than 3 % of its texts under by more than 10 % (the benchmark's limit is
# 5 %: the margin is for texts unlike the corpus's). Fitted on either half of the corpus's
# files, the same codes keep the other half's class medians within +3 to +10 %. The
# benchmark prints the result per class and encoding; constants not fitted this way say
# where they come from.
# ---------------------------------------------------------------------------------------

#: Bit code of each byte class of the text model (``estimate.py``): lower-case letters
#: (``a–z``, Latin-1 ``ß–ÿ``), upper case (``A–Z``, ``À–Þ``; the lower-case code plus one bit,
#: so a lower→upper change inside a word costs one bit and upper→lower none), digits,
#: punctuation and every other character, blanks (space, tab), line breaks, and letters of
#: other scripts (every character beyond Latin-1, read as ``?``, and ``?`` itself: the
#: lower-case code plus a bit no other class has, so a run of them is a word of its own).
CODE_LOWER = 0b0010_0010
CODE_UPPER = CODE_LOWER | 0b1000_0000
CODE_DIGIT = 0b0111_0101
CODE_PUNCT = 0b0110_0101
CODE_BLANK = 0b0000_0000
CODE_NEWLINE = 0b0000_0101
CODE_OTHER_SCRIPT = CODE_LOWER | 0b0000_1000
#: Tokens per bit that a character's code has and the previous character's code lacks: the
#: cost of starting a piece where the class changes (BPE pre-tokenizers split text into
#: words, digit groups, punctuation runs and line breaks before merging).
TOKENS_PER_NEW_BIT = 0.3646
#: Tokens per bit of every character's code: the cost of length within a piece.
TOKENS_PER_CODE_BIT = 0.02376
#: Tokens per ASCII digit on top (``o200k_base`` and ``cl100k_base`` split digit runs into
#: groups of at most three).
TOKENS_PER_DIGIT = 0.4553
#: A run of this many letters of one case (no class change inside) is long: where the model
#: gives fewer than :data:`LONG_RUN_CHECK_TOKENS_PER_CHAR` tokens per character, each block
#: of this many same-case letters costs :data:`LONG_RUN_TOKENS_PER_CHAR` per letter on top.
#: BPE splits an unbroken random letter run (a gene sequence, an opaque lower-case id) every
#: two letters or so, a cost the piece model misses: 10,000 random lower-case letters count
#: 0.52 (``o200k_base``) and 0.54 (``cl100k_base``) tokens per letter, upper-case ones 0.57
#: and 0.59; the model gives them 0.05–0.07.
LONG_RUN_CHARS = 12
LONG_RUN_CHECK_TOKENS_PER_CHAR = 1 / 6
LONG_RUN_TOKENS_PER_CHAR = 0.53

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
#: A candidate run is base64 when it has at least one lower→upper and one upper→upper letter
#: pair per this many letters (random base64 has about one per four; identifiers, paths and
#: hex digests have few of one or the other).
BASE64_LETTERS_PER_CASE_PAIR = 12
#: Tokens per character of a base64 blob (or ``data:`` URL payload) inside text: a request
#: sends it as text, and BPE has no merges for random base64 (1.41 characters per token with
#: ``cl100k_base``, 1.48 with ``o200k_base`` on the corpus's 193 opaque payloads).
BASE64_TOKENS_PER_CHAR = 0.73

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
