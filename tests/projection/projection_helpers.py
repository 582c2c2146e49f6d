"""Builders and a tiny deterministic estimator for the projection tests."""

from __future__ import annotations

from ctxengine.model import (
    Entry,
    Message,
    TextPart,
    ToolCallPart,
    ToolResultPart,
)
from ctxengine.model.entries import Body
from ctxengine.projection import ProjectionSettings
from hand_estimator import HandEstimator

#: Generous caps: nothing is truncated unless a test asks for it.
LOOSE = ProjectionSettings(
    truncate_tokens=10_000, truncate_max_chars=100_000, truncate_head_ratio=0.5
)


TinyEstimator = HandEstimator


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
