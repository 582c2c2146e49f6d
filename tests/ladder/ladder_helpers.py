"""The hand-computable estimator and builders of the ladder tests (the engine tests'
``engine_helpers`` is not importable from this folder)."""

from __future__ import annotations

import json
from typing import Any

from ctxengine.model import ToolCallPart
from hand_estimator import HandEstimator

#: ``len(text) // 4 + 1`` tokens per text, 4 per message (see :class:`HandEstimator`).
EST = HandEstimator()


def filler(label: str, tokens: int) -> str:
    """A text of exactly ``tokens`` tokens under :data:`EST` (``tokens`` ≥ 3), starting with
    ``label``."""
    text = f"{label}: " + "lorem ipsum dolor sit amet " * (4 * tokens)
    return text[: 4 * (tokens - 1)]


def call(cid: str, name: str = "bash", **args: Any) -> ToolCallPart:
    """A call of ``name`` with ``args`` as JSON (default ``{"command": "ls"}``: 17 characters,
    5 tokens; the name ``bash``: 2 tokens)."""
    return ToolCallPart(cid, name, json.dumps(args or {"command": "ls"}))
