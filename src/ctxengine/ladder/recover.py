"""Ladder step 4, recover: the pure decisions behind overflow recovery and the summarizer's
circuit breaker. The engine holds the state and does the calls.

* :class:`SummarizerBreaker`: consecutive failures of a model summarizer; at the threshold
  (Claude Code ``MAX_CONSECUTIVE_AUTOCOMPACT_FAILURES=3``) it opens, and compactions use the
  extractive summarizer until a manual compaction or a successful model call closes it
  (Gemini CLI's ``hasFailedCompressionAttempt`` latch works the same way).
* :class:`OverflowLatch`: pi's one-shot recovery. The first overflow compacts and retries;
  a second one before a good reply is final.
* :func:`check_room`: a reserve (or output budget) so large that no history fits next to the
  fixed part of the request is a configuration error, not something compaction can fix.

The fitting of a summary request's own input (degrade, shrink 85/70/50/35 %, chunk) lives
with the summarizers: :mod:`ctxengine.summarizers.fit`.
"""

from __future__ import annotations

from dataclasses import dataclass

from ctxengine.errors import ConfigError
from ctxengine.summarizers.fit import SHRINK_RATIOS

#: Tokens of history that must fit beside the fixed part and the reserve for a request to be
#: worth making.
MIN_HISTORY_TOKENS = 1


@dataclass(slots=True)
class SummarizerBreaker:
    """Consecutive model-summarizer failures.

    Attributes:
        threshold: failures in a row that open the breaker (≥ 1).
        failures: the current run of failures.
        open: while True, compactions do not call the model.
        last_error: text of the latest failure.
    """

    threshold: int
    failures: int = 0
    open: bool = False
    last_error: str = ""

    def failure(self, detail: str) -> bool:
        """Count a failure; returns True when this one opened the breaker."""
        self.failures += 1
        self.last_error = detail
        if not self.open and self.failures >= self.threshold:
            self.open = True
            return True
        return False

    def success(self) -> None:
        """A model summary was accepted: close the breaker and forget the failures."""
        self.failures = 0
        self.open = False
        self.last_error = ""

    def reset(self) -> None:
        """A manual compaction: try the model again."""
        self.success()


@dataclass(slots=True)
class OverflowLatch:
    """One overflow recovery per request (pi ``_overflowRecoveryAttempted``).

    Attributes:
        used: a recovery ran and no good reply has arrived since.
    """

    used: bool = False

    def try_recover(self) -> bool:
        """True (and latch) for the first overflow; False for a second one."""
        if self.used:
            return False
        self.used = True
        return True

    def clear(self) -> None:
        """A good reply arrived: the next overflow may be recovered again."""
        self.used = False


def check_room(window: int, fixed_tokens: int, reserve_tokens: int) -> None:
    """Raise :class:`ConfigError` when the fixed part of every request (system prompt, tool
    schemas) plus the reserve (output budget) leaves no room for history in ``window``.
    All arguments are tokens."""
    if fixed_tokens + reserve_tokens + MIN_HISTORY_TOKENS > window:
        raise ConfigError(
            f"the system prompt and tools ({fixed_tokens} tokens) plus the output reserve "
            f"({reserve_tokens} tokens) fill the {window}-token window: no history fits; "
            "lower the reserve or the output budget, or use a model with a larger window"
        )


__all__ = ["SHRINK_RATIOS", "OverflowLatch", "SummarizerBreaker", "check_room"]
