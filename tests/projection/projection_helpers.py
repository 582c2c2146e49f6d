"""Builders and a tiny deterministic estimator for the projection tests."""

from __future__ import annotations

import json
from collections.abc import Mapping, Sequence
from typing import Any

from ctxengine.model import (
    DocumentPart,
    Entry,
    ImagePart,
    Message,
    NativeCompactionPart,
    Part,
    ReasoningPart,
    TextPart,
    ToolCallPart,
    ToolResultPart,
)
from ctxengine.model.entries import Body
from ctxengine.projection import ProjectionSettings

#: Generous caps: nothing is truncated unless a test asks for it.
LOOSE = ProjectionSettings(
    truncate_tokens=10_000, truncate_max_chars=100_000, truncate_head_ratio=0.5
)


class TinyEstimator:
    """``len(text) // 4 + 1`` tokens per non-empty text; images 100; 4 per message."""

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


EST = TinyEstimator()


def log(*bodies: Body, session: str = "s") -> list[Entry]:
    """Entries ``e0, e1, …`` holding ``bodies`` in order, parent-linked."""
    out: list[Entry] = []
    for i, body in enumerate(bodies):
        out.append(Entry(f"e{i}", session, i, body, parent_id=f"e{i - 1}" if i else None))
    return out


def call(cid: str, name: str = "bash", args: str = '{"cmd": "ls"}') -> ToolCallPart:
    return ToolCallPart(cid, name, args)


def result(cid: str, text: str, *, is_error: bool = False) -> ToolResultPart:
    return ToolResultPart(cid, (TextPart(text),), is_error=is_error)


def tool(*results: ToolResultPart) -> Message:
    return Message("tool", tuple(results))
