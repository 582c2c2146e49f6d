"""Small builders shared by the agent-log importers (Claude Code, Codex, pi)."""

from __future__ import annotations

from collections.abc import Iterable
from typing import Any

from ctxengine.model import Entry, Message

#: Longest session title, in characters.
TITLE_CHARS = 80

#: Key in ``Message.meta`` marking a user-role message the human did not type (hook output,
#: environment context, a shell command run by the user, an extension message …). The value
#: names its origin, e.g. ``"isMeta"``, ``"environment_context"``, ``"bashExecution"``.
SYNTHETIC = "synthetic"


def title_of(entries: Iterable[Entry]) -> str | None:
    """The first line of the first non-synthetic user message with text, cut to
    :data:`TITLE_CHARS` characters; ``None`` when there is none."""
    for entry in entries:
        msg = entry.body
        if not isinstance(msg, Message) or msg.role != "user" or msg.meta.get(SYNTHETIC):
            continue
        text = msg.text.strip()
        if text:
            line = text.splitlines()[0].strip()
            return line if len(line) <= TITLE_CHARS else line[: TITLE_CHARS - 1] + "…"
    return None


def count(counter: dict[str, int], key: str) -> None:
    """Add one to ``counter[key]`` (skipped-record tallies kept in session meta)."""
    counter[key] = counter.get(key, 0) + 1


def opt_str(obj: dict[str, Any], key: str) -> str | None:
    """``obj[key]`` when it is a string, else ``None``."""
    value = obj.get(key)
    return value if isinstance(value, str) else None


def opt_dict(obj: dict[str, Any], key: str) -> dict[str, Any]:
    """``obj[key]`` when it is an object, else an empty dict."""
    value = obj.get(key)
    return value if isinstance(value, dict) else {}


def opt_int(obj: dict[str, Any], key: str) -> int:
    """``obj[key]`` when it is an integer (not a bool), else 0."""
    value = obj.get(key)
    return value if isinstance(value, int) and not isinstance(value, bool) else 0
