"""Tiny message factories for the boundary tests."""

from __future__ import annotations

from ctxengine.model import Message, ReasoningPart, TextPart, ToolCallPart, ToolResultPart


def u(text: str = "q") -> Message:
    """A real user message."""
    return Message("user", (TextPart(text),))


def a(*call_ids: str, text: str = "", thinking: bool = False) -> Message:
    """An assistant message with optional signed reasoning, text, and calls."""
    parts: list[ToolCallPart | TextPart | ReasoningPart] = []
    if thinking:
        parts.append(ReasoningPart("think", signature="sig"))
    if text or (not call_ids and not thinking):
        parts.append(TextPart(text or "ok"))
    parts.extend(ToolCallPart(c, "bash", "{}") for c in call_ids)
    return Message("assistant", tuple(parts))


def r(*call_ids: str) -> Message:
    """A tool message holding one result per call id."""
    return Message("tool", tuple(ToolResultPart(c, (TextPart("out"),)) for c in call_ids))


class Sizes:
    """A flat estimator: 10 tokens per message (most tests pass ``per_message`` instead)."""

    def text(self, text: str) -> int:
        return len(text)

    def part(self, part: object) -> int:
        return 1

    def message(self, message: Message) -> int:
        return 10

    def tools(self, schemas: object) -> int:
        return 0
