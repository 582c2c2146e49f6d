"""Anthropic Messages values shared by the Anthropic-shaped importers (Claude Code JSONL and
Anthropic Messages JSON): the stop-reason table and the usage mapping."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from ctxengine.model import Usage

#: Anthropic ``stop_reason`` → our normalised stop reason.
STOP_REASONS: Mapping[str, str] = {
    "end_turn": "stop",
    "stop_sequence": "stop",
    "pause_turn": "stop",
    "tool_use": "tool_use",
    "max_tokens": "length",
    "model_context_window_exceeded": "length",
    "refusal": "error",
}


def usage_of(raw: Any) -> Usage | None:
    """Anthropic ``usage`` (``input_tokens`` excludes cache) as :class:`Usage`, a missing or
    non-integer count read as 0; ``None`` when ``raw`` is not an object."""
    if not isinstance(raw, dict):
        return None
    return Usage(
        input_tokens=_int(raw, "input_tokens"),
        output_tokens=_int(raw, "output_tokens"),
        cache_read_tokens=_int(raw, "cache_read_input_tokens"),
        cache_write_tokens=_int(raw, "cache_creation_input_tokens"),
    )


def _int(raw: dict[str, Any], key: str) -> int:
    value = raw.get(key)
    return value if isinstance(value, int) else 0
