"""Constants of the heuristic token estimator. Units: tokens unless the name says otherwise.

The fixed cost of an image whose pixel size is unknown is a *policy* default
(``policy.defaults.DEFAULT_IMAGE_TOKENS``, 3,000); the engine passes it to the estimator.
Used alone, the estimator charges :data:`MAX_IMAGE_TOKENS`, the most any image costs under
the Anthropic rule.
"""

from __future__ import annotations

#: Characters per token of ASCII prose (English runs at 4–4.5 with current BPE vocabularies).
PROSE_CHARS_PER_TOKEN = 4.0
#: Characters per token of code and JSON: quotes, brackets and operators split words apart.
CODE_CHARS_PER_TOKEN = 3.0
#: Share of ASCII punctuation at or below which text counts as prose, and at or above which
#: it counts as code; chars/token is interpolated linearly in between.
PROSE_PUNCT_SHARE = 0.05
CODE_PUNCT_SHARE = 0.15
#: Characters per token of path-like text (file lists, grouped paths, snake_case and dotted
#: identifiers, URLs): BPE vocabularies split ``/usr/lib/python3.11/json/encoder.py`` at every
#: separator (16 tokens for 36 characters with the Claude tokenizer shipped in the Anthropic
#: SDK, 11 with ``o200k_base``).
PATH_CHARS_PER_TOKEN = 2.5
#: Share of path separators (``/ . _ -``) among non-space ASCII characters at or below which
#: the rate is left as it is, and at or above which it is :data:`PATH_CHARS_PER_TOKEN`;
#: interpolated linearly in between. English prose mostly stays under 4 %; file lists reach 13–19 %.
PATH_SEP_SHARE_LOW = 0.05
PATH_SEP_SHARE_HIGH = 0.12
#: Tokens per ASCII digit, whatever the surrounding text: ``o200k_base`` and ``cl100k_base``
#: split digit runs into groups of at most three, the Anthropic SDK's Claude tokenizer into
#: groups of about two, and a short number costs a whole token; 1 per 2 digits keeps a long run
#: within 1.2× of the highest of the three.
DIGIT_TOKENS_PER_CHAR = 0.5

#: Tokens per character of scripts encoded in 3 UTF-8 bytes (CJK, kana, hangul, Thai,
#: Devanagari …): about one each.
WIDE_SCRIPT_TOKENS_PER_CHAR = 1.0
#: Tokens per character of scripts encoded in 2 UTF-8 bytes (Latin accents, Greek, Cyrillic,
#: Hebrew, Arabic …): about two characters per token.
NARROW_SCRIPT_TOKENS_PER_CHAR = 0.5
#: Tokens per character outside the Basic Multilingual Plane (emoji, rare CJK): 2 each.
ASTRAL_TOKENS_PER_CHAR = 2.0

#: A base64 run counts as a blob from this many characters on.
BASE64_MIN_CHARS = 64
#: Fixed cost of one base64 blob (or ``data:`` URL) found inside text: the payload is never
#: priced as text; it stands for a reference, an elided payload or a separate media part.
BASE64_BLOB_TOKENS = 16

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
