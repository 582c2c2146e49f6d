"""Tool definitions as an agent sends them (Anthropic's or OpenAI's shape)."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any


def tool_name(tool: Mapping[str, Any]) -> str:
    """A tool definition's name: ``name``, or ``function.name`` (OpenAI's shape); ``""``."""
    name = tool.get("name")
    if isinstance(name, str):
        return name
    fn = tool.get("function")
    if isinstance(fn, Mapping) and isinstance(fn.get("name"), str):
        return str(fn["name"])
    return ""
