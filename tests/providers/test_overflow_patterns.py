"""The overflow pattern table: one real-looking message per provider, with the numbers each
message states; messages that are not overflows; usage-based overflow signals."""

from __future__ import annotations

import pytest

from ctxengine.model import Usage
from ctxengine.providers.overflow import (
    OVERFLOW_PATTERNS,
    is_length_stop_on_full_window,
    is_overflow_status,
    is_silent_overflow,
    match_overflow,
)

# (provider, message as the provider words it, expected tokens, expected limit)
OVERFLOW_MESSAGES: list[tuple[str, str, int | None, int | None]] = [
    ("Anthropic", "prompt is too long: 213462 tokens > 200000 maximum", 213462, 200000),
    (
        "Anthropic input + max_tokens",
        "input length and `max_tokens` exceed context limit: 199759 + 8192 > 200000, decrease "
        "input length or `max_tokens` and try again",
        207951,
        200000,
    ),
    (
        "Anthropic max_tokens above the room left",
        "max_tokens: 63000 > 64000 - 11012",
        74012,
        64000,
    ),
    (
        "Anthropic 413",
        '413 {"type":"error","error":{"type":"invalid_request_error","message":"Request size '
        'exceeds model context window"}}',
        None,
        None,
    ),
    (
        "OpenAI Chat Completions",
        "This model's maximum context length is 128000 tokens. However, your messages resulted "
        "in 204308 tokens. Please reduce the length of the messages.",
        204308,
        128000,
    ),
    (
        "OpenAI legacy completions",
        "This model's maximum context length is 4097 tokens, however you requested 4231 tokens "
        "(3975 in your prompt; 256 for the completion). Please reduce your prompt; or "
        "completion length.",
        4231,
        4097,
    ),
    (
        "OpenAI configured input limit",
        "Input tokens exceed the configured limit of 272000 tokens. Your messages resulted in "
        "301122 tokens. Please reduce the length of the messages.",
        301122,
        272000,
    ),
    (
        "OpenAI Responses",
        "Your input exceeds the context window of this model. Please adjust your input and try "
        "again.",
        None,
        None,
    ),
    (
        "Azure OpenAI",
        "This model's maximum context length is 32768 tokens. However, you requested 35969 "
        "tokens (9969 in the messages, 26000 in the completion). Please reduce the length of "
        "the messages or completion.",
        35969,
        32768,
    ),
    (
        "Bedrock",
        "The model returned the following errors: Input is too long for requested model.",
        None,
        None,
    ),
    (
        "Bedrock (Claude)",
        "The model returned the following errors: prompt is too long: 200049 tokens > 200000 "
        "maximum",
        200049,
        200000,
    ),
    (
        "Gemini",
        "The input token count (1196265) exceeds the maximum number of tokens allowed (1048576).",
        1196265,
        1048576,
    ),
    (
        "Vertex AI",
        "The input token count exceeds the maximum number of tokens allowed 1048576.",
        None,
        1048576,
    ),
    (
        "OpenRouter",
        "This endpoint's maximum context length is 131072 tokens. However, you requested about "
        "150213 tokens (140213 of text input, 10000 in the output). Please reduce the length "
        'of either one, or use the "middle-out" transform to compress your prompt '
        "automatically.",
        150213,
        131072,
    ),
    (
        "Mistral",
        "Prompt contains 40313 tokens and 0 draft tokens, too large for model with 32768 "
        "maximum context length",
        40313,
        32768,
    ),
    (
        "DeepSeek",
        "This model's maximum context length is 65536 tokens. However, you requested 69648 "
        "tokens (69648 in the messages, 0 in the completion). Please reduce the length of the "
        "messages or completion.",
        69648,
        65536,
    ),
    (
        "xAI",
        "This model's maximum prompt length is 131072 but the request contains 136973 tokens.",
        136973,
        131072,
    ),
    (
        "Groq",
        "Please reduce the length of the messages or completion.",
        None,
        None,
    ),
    (
        "Groq 413 per-minute cap",
        "Request too large for model `llama-3.3-70b-versatile` in organization `org_01abc` "
        "service tier `on_demand` on tokens per minute (TPM): Limit 12000, Requested 14137, "
        "please reduce your message size and try again.",
        14137,
        12000,
    ),
    (
        "Cerebras",
        "Please reduce the length of the messages or completion. Current length is 42328 while "
        "limit is 40000",
        42328,
        40000,
    ),
    (
        "vLLM",
        "This model's maximum context length is 16384 tokens. However, you requested 122946 "
        "tokens (112946 in the messages, 10000 in the completion). Please reduce the length of "
        "the messages or completion.",
        122946,
        16384,
    ),
    (
        "vLLM (input only)",
        "This model's maximum context length is 32768 tokens. However, your request has 40960 "
        "input tokens. Please reduce the length of the input messages.",
        40960,
        32768,
    ),
    (
        "vLLM (max_tokens too large)",
        "'max_tokens' or 'max_completion_tokens' is too large: 4096. This model's maximum "
        "context length is 8192 tokens and your request has 5000 input tokens (4096 > 8192 - "
        "5000).",
        5000,
        8192,
    ),
    ("Ollama", "the input length exceeds the context length", None, None),
    (
        "llama.cpp server",
        "the request exceeds the available context size. try increasing the context size or "
        "enable context shift",
        None,
        None,
    ),
    ("llama-cpp-python", "Requested tokens (2285) exceed context window of 2048", 2285, 2048),
    (
        "LM Studio",
        "tokens to keep from the initial prompt is greater than the context length",
        None,
        None,
    ),
    ("OpenAI error code only", "context_length_exceeded", None, None),
    ("Claude Code wording", "Prompt is too long", None, None),
    ("OpenAI-compatible server", "Error: maximum context length is 2048 tokens", None, None),
    ("MiniMax", "invalid params, context window exceeds limit (2013)", None, None),
    (
        "Kimi",
        "Your request exceeded model token limit: 262144 (requested: 270123)",
        270123,
        262144,
    ),
    (
        "Hugging Face TGI",
        "Input validation error: `inputs` tokens + `max_new_tokens` must be <= 8192. Given: "
        "6204 `inputs` tokens and 2047 `max_new_tokens`",
        8251,
        8192,
    ),
    ("Anthropic 413 body", "request_too_large: Request exceeds the maximum size", None, None),
    ("HTTP 413 text", "413 Request Entity Too Large", None, None),
]

NOT_OVERFLOW = [
    "Rate limit reached for gpt-4o in organization org-abc on requests per min (RPM): Limit 500",
    "Overloaded",
    "Invalid API key provided: sk-abc",
    "max_tokens: 300000 > 128000, which is the maximum allowed number of output tokens",
    "messages.1: `tool_use` ids were found without `tool_result` blocks immediately after",
    "The server had an error while processing your request. Sorry about that!",
]


class TestOverflowMessages:
    @pytest.mark.parametrize(("provider", "message", "tokens", "limit"), OVERFLOW_MESSAGES)
    def test_each_provider_message_is_an_overflow_with_its_numbers(
        self, provider: str, message: str, tokens: int | None, limit: int | None
    ) -> None:
        found = match_overflow(message)
        assert found is not None, provider
        assert (found.tokens, found.limit) == (tokens, limit), provider

    @pytest.mark.parametrize("message", NOT_OVERFLOW)
    def test_other_errors_are_not_overflows(self, message: str) -> None:
        assert match_overflow(message) is None

    def test_matching_ignores_case(self) -> None:
        found = match_overflow("PROMPT IS TOO LONG: 300000 TOKENS > 200000 MAXIMUM")
        assert found is not None
        assert (found.tokens, found.limit) == (300000, 200000)

    def test_every_pattern_is_exercised_by_a_message(self) -> None:
        used = set()
        for _, message, _, _ in OVERFLOW_MESSAGES:
            for pattern in OVERFLOW_PATTERNS:
                if pattern.regex.search(message):
                    used.add(pattern.regex.pattern)
                    break
        unused = [p.source for p in OVERFLOW_PATTERNS if p.regex.pattern not in used]
        assert unused == []

    def test_the_first_matching_pattern_names_its_source(self) -> None:
        found = match_overflow("Current length is 42328 while limit is 40000")
        assert found is not None
        assert found.source == "Cerebras"


class TestOverflowStatus:
    def test_413_is_an_overflow_whatever_the_body(self) -> None:
        assert is_overflow_status(413, '{"error": "anything"}') is True

    def test_bodiless_400_is_an_overflow(self) -> None:
        assert is_overflow_status(400, "") is True
        assert is_overflow_status(400, "  ") is True

    def test_400_with_a_body_and_other_statuses_are_not(self) -> None:
        assert is_overflow_status(400, '{"error": "bad tool schema"}') is False
        assert is_overflow_status(429, "") is False
        assert is_overflow_status(None, "") is False


class TestSilentOverflow:
    def test_reported_prompt_above_the_window_is_an_overflow(self) -> None:
        usage = Usage(input_tokens=120_000, output_tokens=50, cache_read_tokens=10_000)
        assert is_silent_overflow(usage, 128_000) is True

    def test_prompt_at_the_window_is_not(self) -> None:
        usage = Usage(input_tokens=118_000, cache_read_tokens=10_000)
        assert is_silent_overflow(usage, 128_000) is False

    def test_unknown_window_disables_the_check(self) -> None:
        assert is_silent_overflow(Usage(input_tokens=10**9), 0) is False


class TestLengthStopOnFullWindow:
    def test_length_stop_with_no_output_on_a_full_window(self) -> None:
        assert is_length_stop_on_full_window("length", 0, 8_000, 8_192) is True

    def test_needs_zero_output(self) -> None:
        assert is_length_stop_on_full_window("length", 1, 8_000, 8_192) is False

    def test_needs_a_length_stop(self) -> None:
        assert is_length_stop_on_full_window("stop", 0, 8_192, 8_192) is False

    def test_needs_a_full_window(self) -> None:
        # 7,000 of 8,192 is 85 %, under the 90 % line.
        assert is_length_stop_on_full_window("length", 0, 7_000, 8_192) is False
        assert is_length_stop_on_full_window("length", 0, 7_373, 8_192) is True

    def test_unknown_window_counts_any_zero_output_length_stop(self) -> None:
        assert is_length_stop_on_full_window("length", 0, 100, 0) is True
