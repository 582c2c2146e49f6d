"""Provider-reported token usage of one assistant reply."""

from __future__ import annotations

from dataclasses import dataclass

from ctxengine.model._fast_init import fast_eq, fast_init


@fast_eq
@fast_init
@dataclass(frozen=True, slots=True)
class Usage:
    """Token usage reported by the provider for one reply. All counts are tokens.

    Attributes:
        input_tokens: uncached prompt tokens. **Excludes** cache reads and writes (Anthropic
            convention). Importers of OpenAI-style usage, where ``prompt_tokens`` includes
            cached tokens, subtract ``cached_tokens`` first.
        output_tokens: generated tokens, reasoning included.
        cache_read_tokens: prompt tokens served from the prefix cache.
        cache_write_tokens: prompt tokens written to the prefix cache.
    """

    input_tokens: int = 0
    output_tokens: int = 0
    cache_read_tokens: int = 0
    cache_write_tokens: int = 0

    @property
    def prompt_tokens(self) -> int:
        """Whole prompt size in tokens: input + cache read + cache write."""
        return self.input_tokens + self.cache_read_tokens + self.cache_write_tokens

    @property
    def context_tokens(self) -> int:
        """Context occupied after this reply: prompt + output (pi ``calculateContextTokens``)."""
        return self.prompt_tokens + self.output_tokens

    @property
    def is_zero(self) -> bool:
        """True when every count is 0 (such usage is never a usage anchor)."""
        return self.context_tokens == 0
