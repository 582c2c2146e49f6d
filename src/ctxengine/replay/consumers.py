"""Where a session's tokens go, by tool and by file: the top consumers a report lists."""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass

from ctxengine.model import Entry, ToolCallPart, ToolResultPart
from ctxengine.summarizers.tools import PATH_KEYS, arguments, call_effects
from ctxengine.tokens.base import Estimator


@dataclass(frozen=True, slots=True)
class Consumer:
    """One tool or file and the tokens of the tool results it accounts for.

    Attributes:
        name: the tool's name, or the file's path as the calls wrote it.
        calls: tool calls (of that tool, or naming that file).
        tokens: estimated tokens of their results.
    """

    name: str
    calls: int
    tokens: int


def token_consumers(
    entries: Iterable[Entry], estimator: Estimator, *, top: int = 10
) -> tuple[list[Consumer], list[Consumer]]:
    """The ``top`` tools and the ``top`` files whose tool results take the most tokens
    (largest first, then by name). A result counts for its call's tool, and for the file its
    call names in a path argument (``file_path``, ``path`` …) or, for a shell command, the one
    file it reads, if any.
    """
    calls: dict[str, ToolCallPart] = {}
    tools: dict[str, list[int]] = {}
    files: dict[str, list[int]] = {}
    for entry in entries:
        message = entry.message
        if message is None:
            continue
        for part in message.parts:
            if isinstance(part, ToolCallPart):
                calls[part.id] = part
                tools.setdefault(part.name, [0, 0])[0] += 1
                path = _path(part)
                if path is not None:
                    files.setdefault(path, [0, 0])[0] += 1
            elif isinstance(part, ToolResultPart):
                call = calls.get(part.call_id)
                tokens = estimator.part(part)
                name = call.name if call is not None else part.name or "?"
                tools.setdefault(name, [0, 0])[1] += tokens
                path = _path(call) if call is not None else None
                if path is not None:
                    files[path][1] += tokens
    return _top(tools, top), _top(files, top)


def _path(call: ToolCallPart) -> str | None:
    """The file a call's result is about: its path argument, else the one file a shell
    command reads (``cat a.py``, ``sed -n '1,80p' a.py``: Codex and others read files through
    the shell), else ``None``."""
    args = arguments(call) or {}
    for key in PATH_KEYS:
        value = args.get(key)
        if isinstance(value, str) and value:
            return value
    read = {e.path for e in call_effects(call) if e.action == "read"}
    return read.pop() if len(read) == 1 else None


def _top(counts: dict[str, list[int]], top: int) -> list[Consumer]:
    ranked = sorted(counts.items(), key=lambda kv: (-kv[1][1], kv[0]))
    return [Consumer(name, n, tokens) for name, (n, tokens) in ranked[:top]]
