"""The ``Estimator`` protocol: token estimates for text, parts, messages and tool schemas."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any, Protocol, runtime_checkable

from ctxengine.model import Message, Part


@runtime_checkable
class Estimator(Protocol):
    """Estimates token counts. Implementations never raise and never return 0 for
    non-empty content that a request carries (reasoning and native compaction parts that no
    rendered request carries, :func:`~ctxengine.model.carriage.carried_anywhere`, may cost
    0). All results are tokens (ints ≥ 0)."""

    def text(self, text: str) -> int:
        """Tokens of a plain string."""
        ...

    def part(self, part: Part) -> int:
        """Tokens of one part (images from pixel size, never from base64 length)."""
        ...

    def message(self, message: Message) -> int:
        """Tokens of one message, including per-message framing overhead."""
        ...

    def tools(self, schemas: Sequence[Mapping[str, Any]]) -> int:
        """Tokens of the tool schemas sent with a request."""
        ...
