"""An estimator whose sizes a test can compute by hand (shared by the projection and engine
tests)."""

from __future__ import annotations

import json
from collections.abc import Mapping, Sequence
from typing import Any

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


class HandEstimator:
    """``len(text) // 4 + 1`` tokens per non-empty text, 100 per image, 50 per document
    without text, 4 per message, tool schemas as their sorted JSON."""

    def text(self, text: str) -> int:
        return len(text) // 4 + 1 if text else 0

    def part(self, part: Part) -> int:
        match part:
            case TextPart():
                return self.text(part.text)
            case ImagePart():
                return 100
            case DocumentPart():
                return self.text(part.text or "") or 50
            case ToolCallPart():
                return self.text(part.name) + self.text(part.arguments)
            case ToolResultPart():
                return 1 + sum(self.part(p) for p in part.content)
            case ReasoningPart():
                return self.text(part.text) + self.text(part.signature or "")
            case NativeCompactionPart():
                return self.text(part.payload)
        raise AssertionError(part)

    def message(self, message: Message) -> int:
        return 4 + sum(self.part(p) for p in message.parts)

    def tools(self, schemas: Sequence[Mapping[str, Any]]) -> int:
        return sum(self.text(json.dumps(s, sort_keys=True)) for s in schemas)
