"""``Context``: the messages sent on one model call, with provenance and a report."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any

from ctxengine.boundaries.sanitize import SanitizeReport
from ctxengine.model import Message

__all__ = ["Context", "SanitizeReport", "Truncation"]


@dataclass(frozen=True, slots=True)
class Truncation:
    """One tool result shown as head + tail.

    Attributes:
        call_id: the tool call whose result was truncated.
        entry_id: the history entry holding the full text.
        omitted_chars: characters left out.
        omitted_tokens: estimated tokens left out.
        part: ``"tool_result"``; ``"tool_call"`` for truncated call arguments; or the role
            (``"user"``/``"assistant"``) of a message whose own text was truncated (then
            ``call_id`` is ``""``).
    """

    call_id: str
    entry_id: str | None
    omitted_chars: int
    omitted_tokens: int
    part: str = "tool_result"


@dataclass(frozen=True, slots=True)
class Context:
    """The projection of a session log for one model call.

    Attributes:
        messages: system/developer messages first, then continuation state (if any), then the
            kept tail and everything after it.
        sources: per message, the id of the history entry it came from (``None`` for
            synthetic messages such as the continuation state).
        tools: tool schemas sent with the request (provider-neutral: name, description,
            parameters JSON schema).
        tokens: estimated size of the whole request in tokens (messages + tools).
        epoch: number of compactions applied so far (0 = never compacted).
        compaction_id: id of the compaction entry in force, or ``None``.
        truncations: tool results shown as head + tail.
        pruned: call ids whose results are shown as placeholders.
        sanitize: repairs made by the sanitizer.
        preamble: messages before the tail (head, retained messages, the continuation state,
            re-injected state, pinned items and durable state); ``None`` when unknown (a
            context built by hand).
    """

    messages: tuple[Message, ...]
    sources: tuple[str | None, ...]
    tools: tuple[Mapping[str, Any], ...] = ()
    tokens: int = 0
    epoch: int = 0
    compaction_id: str | None = None
    truncations: tuple[Truncation, ...] = ()
    pruned: tuple[str, ...] = ()
    sanitize: SanitizeReport = field(default_factory=SanitizeReport)
    preamble: int | None = field(default=None, compare=False)
