"""Recognising a context overflow in what a provider returns.

Three signals, cheapest first:

1. **An error message** that says the request is larger than the window. Every provider
   words it differently; :data:`OVERFLOW_PATTERNS` holds one regex per known wording, each
   labelled with where it is seen. Named groups ``tokens`` / ``limit`` (and ``output`` where
   the provider counts input and requested output separately) carry the numbers when the
   message has them.
2. **A status code**: 413 (payload too large: many images or documents push the HTTP body
   over the provider's byte limit even when the token estimate is small) and Cerebras' 400/413
   with no body at all.
3. **The usage of a reply that did not fail**: a provider that accepts an oversized request
   silently (z.ai) reports more input than the window holds (:func:`is_silent_overflow`); one
   that truncates the prompt (Ollama's default) stops on ``length`` with no output on a full
   window (:func:`is_length_stop_on_full_window`).

Pure functions: no I/O.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

from ctxengine.model import Usage
from ctxengine.policy.defaults import OVERFLOW_FULL_WINDOW_RATIO

_I = re.IGNORECASE


@dataclass(frozen=True, slots=True)
class OverflowPattern:
    """One known overflow wording.

    Attributes:
        source: providers or servers known to send it.
        regex: compiled pattern; optional groups ``tokens``, ``limit``, ``output``.
    """

    source: str
    regex: re.Pattern[str]


def _p(source: str, pattern: str) -> OverflowPattern:
    return OverflowPattern(source, re.compile(pattern, _I | re.DOTALL))


#: Ordered most specific first: the first match supplies the numbers.
OVERFLOW_PATTERNS: tuple[OverflowPattern, ...] = (
    _p(
        "Anthropic, Bedrock (Claude)",
        r"prompt is too long:\s*(?P<tokens>\d+)\s*tokens\s*>\s*(?P<limit>\d+)",
    ),
    _p(
        "Anthropic (input + max_tokens)",
        r"input length and `?max_tokens`? exceed context limit:\s*(?P<tokens>\d+)\s*\+\s*"
        r"(?P<output>\d+)\s*>\s*(?P<limit>\d+)",
    ),
    _p(
        "Anthropic (max_tokens above the room left)",
        r"`?max_tokens`?:\s*(?P<output>\d+)\s*>\s*(?P<limit>\d+)\s*-\s*(?P<tokens>\d+)",
    ),
    _p("Anthropic", r"prompt is too long"),
    _p("Anthropic 413", r"request size exceeds model context window"),
    _p(
        "OpenAI, Azure, DeepSeek, vLLM, OpenRouter",
        r"maximum context length is (?P<limit>\d+) tokens[.,]?\s*however,? (?:your messages "
        r"resulted in|you requested(?: about)?|your request has) (?P<tokens>\d+)",
    ),
    _p(
        "vLLM (max_tokens too large)",
        r"maximum context length is (?P<limit>\d+) tokens and your request has "
        r"(?P<tokens>\d+) input tokens",
    ),
    _p(
        "OpenAI (configured input limit)",
        r"input tokens exceed the configured limit of (?P<limit>\d+) tokens\.?\s*your "
        r"messages resulted in (?P<tokens>\d+)",
    ),
    _p("OpenAI Responses, Azure", r"exceeds the context window"),
    _p(
        "Gemini, Vertex AI",
        r"input token count \(?(?P<tokens>\d+)?\)?\s*exceeds the maximum number of tokens "
        r"allowed \(?(?P<limit>\d+)?\)?",
    ),
    _p(
        "xAI",
        r"maximum prompt length is (?P<limit>\d+) but (?:the )?request contains "
        r"(?P<tokens>\d+) tokens",
    ),
    _p(
        "Mistral",
        r"prompt contains (?P<tokens>\d+) tokens.*?too large for model with (?P<limit>\d+) "
        r"maximum context length",
    ),
    _p("Cerebras", r"current length is (?P<tokens>\d+) while limit is (?P<limit>\d+)"),
    _p(
        "Groq (413, tokens per minute)",
        r"request too large for model.*?limit (?P<limit>\d+),\s*requested (?P<tokens>\d+)",
    ),
    _p("Bedrock", r"input is too long for requested model"),
    _p("llama.cpp server", r"exceeds the available context size"),
    _p(
        "llama-cpp-python",
        r"requested tokens \((?P<tokens>\d+)\) exceed context window of (?P<limit>\d+)",
    ),
    _p("Ollama", r"input (?:length )?exceeds (?:the )?(?:maximum )?context length"),
    _p("LM Studio", r"greater than the context length"),
    _p("OpenAI-compatible (generic)", r"maximum context length is \d+"),
    _p("Groq, Cerebras, DeepSeek", r"reduce the length of the messages"),
    _p("OpenAI (code)", r"context[_ ]length[_ ]exceeded"),
    _p("Anthropic 413", r"request_too_large"),
    _p("HTTP 413", r"request (?:entity |body )?too large|payload too large"),
    _p("MiniMax", r"context window exceeds limit"),
    _p(
        "Kimi",
        r"exceeded model token limit(?::\s*(?P<limit>\d+)\s*\(requested:\s*(?P<tokens>\d+)\))?",
    ),
    _p(
        "Hugging Face TGI",
        r"`inputs` tokens \+ `max_new_tokens` must be <= (?P<limit>\d+)\. Given: "
        r"(?P<tokens>\d+) `inputs` tokens and (?P<output>\d+) `max_new_tokens`",
    ),
)


@dataclass(frozen=True, slots=True)
class OverflowMatch:
    """An overflow recognised in an error message.

    Attributes:
        source: which provider's wording matched.
        tokens: the request size in tokens when the message states it (input plus requested
            output when the provider counts both), else ``None``.
        limit: the window in tokens when stated, else ``None``.
    """

    source: str
    tokens: int | None = None
    limit: int | None = None


def _group(m: re.Match[str], name: str) -> int | None:
    if name not in m.re.groupindex:
        return None
    value = m.group(name)
    return int(value) if value is not None else None


def match_overflow(message: str) -> OverflowMatch | None:
    """The first overflow pattern matching ``message`` (case-insensitive), with its numbers.

    Returns ``None`` when no known wording matches. Never raises.
    """
    for pattern in OVERFLOW_PATTERNS:
        m = pattern.regex.search(message)
        if m is None:
            continue
        tokens, limit, output = _group(m, "tokens"), _group(m, "limit"), _group(m, "output")
        if tokens is not None and output is not None:
            tokens += output
        return OverflowMatch(pattern.source, tokens, limit)
    return None


def is_overflow_status(status: int | None, body_text: str) -> bool:
    """True for a status that means "request too large" whatever the message says: 413
    (payload too large, Groq's per-minute token cap, Anthropic's 32 MB body limit), and a
    400 with an empty body (Cerebras answers an overflow that way)."""
    if status == 413:
        return True
    return status == 400 and not body_text.strip()


def is_silent_overflow(usage: Usage, window: int) -> bool:
    """True when a reply that did not fail reports a prompt larger than the window (the
    provider accepted an oversized request and truncated it or ignored part of it: z.ai;
    pi checks ``input + cacheRead > contextWindow``).

    Args:
        usage: the reply's usage; its prompt is input + cache read + cache write tokens.
        window: the model's context window in tokens; ``<= 0`` disables the check.
    """
    return window > 0 and usage.prompt_tokens > window


def is_length_stop_on_full_window(
    finish_reason: str | None,
    output_tokens: int,
    input_tokens: int,
    window: int,
    *,
    full_ratio: float = OVERFLOW_FULL_WINDOW_RATIO,
) -> bool:
    """True for a reply cut by the output limit before writing anything while its input
    filled the window: the prompt left no room to answer (a server that truncates instead of
    failing, such as Ollama with a small ``num_ctx``, ends this way).

    Args:
        finish_reason: normalised finish reason (``"length"`` is the one that counts).
        output_tokens: tokens generated (0 for this signal).
        input_tokens: whole prompt in tokens as reported.
        window: context window in tokens; ``<= 0`` means unknown (then any zero-output length
            stop counts).
        full_ratio: share of the window the input must reach.
    """
    if finish_reason != "length" or output_tokens != 0:
        return False
    return window <= 0 or input_tokens >= full_ratio * window
