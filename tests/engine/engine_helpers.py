"""Builders, a linear estimator and small summarizers for the engine tests."""

from __future__ import annotations

import json
import sqlite3
from collections.abc import Sequence
from dataclasses import replace
from pathlib import Path
from typing import Any

from ctxengine.engine import LadderEvent
from ctxengine.errors import SummaryRejected
from ctxengine.model import (
    Ledgers,
    Message,
    TextPart,
    ToolCallPart,
    ToolResultPart,
)
from ctxengine.projection.render import render_anthropic, render_openai
from ctxengine.projection.validate import validate
from ctxengine.summarizers.base import Summary, SummaryRequest
from ctxengine.tokens.base import Estimator
from hand_estimator import HandEstimator

LinearEstimator = HandEstimator


EST = LinearEstimator()


def filler(label: str, tokens: int) -> str:
    """A text of exactly ``tokens`` tokens under :data:`EST` (``tokens`` ≥ 3), starting with
    ``label``."""
    text = f"{label}: "
    text += "lorem ipsum dolor sit amet " * (4 * tokens)
    return text[: 4 * (tokens - 1)]


def call(cid: str, name: str = "bash", **args: Any) -> ToolCallPart:
    return ToolCallPart(cid, name, json.dumps(args or {"command": "ls"}))


def result(cid: str, text: str, *, is_error: bool = False) -> Message:
    return Message("tool", (ToolResultPart(cid, (TextPart(text),), is_error=is_error),))


def rows(db: Path) -> list[tuple[Any, ...]]:
    """Every row of the ``entries`` table, in log order, read with a fresh connection."""
    with sqlite3.connect(db) as conn:
        return conn.execute("SELECT * FROM entries ORDER BY session_id, seq").fetchall()


def problems(ctx: Any) -> dict[str, list[str]]:
    """Protocol violations of ``ctx`` rendered for each provider."""
    return {
        "openai": validate(render_openai(ctx), "openai"),
        "anthropic": validate(render_anthropic(ctx), "anthropic"),
    }


class RaisingSummarizer:
    """Raises ``error`` on every call and counts the calls."""

    def __init__(self, error: Exception) -> None:
        self.error = error
        self.calls = 0

    @property
    def name(self) -> str:
        return "raising"

    def summarize(self, request: SummaryRequest, estimator: Estimator) -> Summary:
        self.calls += 1
        raise self.error


class BloatedSummarizer:
    """Returns a summary of ``tokens`` tokens whatever it is given: a compaction that
    frees nothing when ``tokens`` is larger than what it replaces."""

    def __init__(self, tokens: int) -> None:
        self.tokens = tokens
        self.calls = 0

    @property
    def name(self) -> str:
        return "bloated"

    def summarize(self, request: SummaryRequest, estimator: Estimator) -> Summary:
        self.calls += 1
        text = filler("summary", self.tokens)
        return Summary(text, Ledgers(goal=request.goal), self.name, estimator.text(text))


__all__ = [
    "EST",
    "BloatedSummarizer",
    "LinearEstimator",
    "RaisingSummarizer",
    "SummaryRejected",
    "call",
    "filler",
    "problems",
    "result",
    "rows",
]


def without_plans(events: Sequence[LadderEvent]) -> list[LadderEvent]:
    """``events`` with their plans left out (tests that compare the steps, not the plans)."""
    return [replace(e, plan=None) for e in events]
