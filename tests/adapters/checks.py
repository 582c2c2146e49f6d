"""What every adapter test records of each model call: validity and size."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from ctxengine.projection.validate import validate
from ctxengine.proxy.wire import Api, ConversationReader
from ctxengine.tokens.estimate import HeuristicEstimator

WINDOW = 16_000
TURNS = 200


@dataclass
class Calls:
    """Model calls seen: per call its problems (``validate``) and size (tokens: messages
    and tools, by ctxengine's estimator)."""

    api: Api = "chat"
    problems: list[list[str]] = field(default_factory=list)
    tokens: list[int] = field(default_factory=list)

    def see(self, body: dict[str, Any]) -> None:
        """Record one call's request, as a Chat Completions or Responses body."""
        provider = "openai" if self.api == "chat" else "openai-responses"
        self.problems.append(validate(body, provider))
        conv = ConversationReader(self.api).read(body)
        est = HeuristicEstimator()
        self.tokens.append(sum(est.message(m) for m in conv.messages) + est.tools(conv.tools))

    @property
    def invalid(self) -> list[tuple[int, list[str]]]:
        """``(call index, problems)`` of the calls that broke the protocol."""
        return [(n, p) for n, p in enumerate(self.problems) if p]
