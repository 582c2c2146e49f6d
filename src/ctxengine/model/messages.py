"""Messages: a role plus ordered parts."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Literal, TypeAlias

from ctxengine.model._fast_init import fast_eq, fast_init
from ctxengine.model.parts import (
    Meta,
    Part,
    ReasoningPart,
    TextPart,
    ToolCallPart,
    ToolResultPart,
    _no_meta,
)
from ctxengine.model.usage import Usage

Role: TypeAlias = Literal["system", "developer", "user", "assistant", "tool"]
ROLES: tuple[str, ...] = ("system", "developer", "user", "assistant", "tool")

#: Key in ``Message.meta`` of an assistant message listing the files (paths as the agent
#: wrote them) that the agent changed by applying edits written in the message's text, as the
#: agent reported it (aider's ``Applied edit to <path>`` after a reply with SEARCH/REPLACE
#: blocks): such agents make no tool calls, so the ledgers read the changes from here.
APPLIED_EDITS = "applied_edits"

#: Stop reasons that mean the reply did not finish normally; its usage is never an anchor.
ABNORMAL_STOPS: frozenset[str] = frozenset({"error", "aborted", "abort", "cancelled"})


@fast_eq
@fast_init
@dataclass(frozen=True, slots=True)
class Message:
    """One message.

    Attributes:
        role: ``system``/``developer`` (instructions), ``user``, ``assistant``, or ``tool``
            (a message made only of :class:`ToolResultPart`).
        parts: ordered content.
        usage: provider usage, on assistant messages that have it.
        model: model name that produced an assistant message, when known.
        stop_reason: normalised stop reason (``"stop"``, ``"tool_use"``, ``"length"``,
            ``"error"``, ``"aborted"``) when known.
        meta: source fields we do not model (round-tripped by exporters); compared by
            ``==`` like every field (two messages that differ only there are different
            messages), left out of ``hash`` (a dict cannot be hashed).
    """

    role: Role
    parts: tuple[Part, ...]
    usage: Usage | None = None
    model: str | None = None
    stop_reason: str | None = None
    meta: Meta = field(default_factory=_no_meta, hash=False)

    @property
    def text(self) -> str:
        """Text parts joined by newlines."""
        return "\n".join(p.text for p in self.parts if isinstance(p, TextPart))

    @property
    def tool_calls(self) -> tuple[ToolCallPart, ...]:
        """The tool calls of this message, in order."""
        return tuple(p for p in self.parts if isinstance(p, ToolCallPart))

    @property
    def tool_results(self) -> tuple[ToolResultPart, ...]:
        """The tool results of this message, in order."""
        return tuple(p for p in self.parts if isinstance(p, ToolResultPart))

    @property
    def reasoning(self) -> tuple[ReasoningPart, ...]:
        """The reasoning parts of this message."""
        return tuple(p for p in self.parts if isinstance(p, ReasoningPart))

    @property
    def aborted(self) -> bool:
        """True when the reply ended abnormally (error or abort)."""
        return self.stop_reason in ABNORMAL_STOPS


def user(text: str) -> Message:
    """A user message with one text part."""
    return Message("user", (TextPart(text),))


def system(text: str) -> Message:
    """A system message with one text part."""
    return Message("system", (TextPart(text),))


def assistant(
    text: str = "",
    *calls: ToolCallPart,
    usage: Usage | None = None,
    reasoning: ReasoningPart | None = None,
) -> Message:
    """An assistant message: optional reasoning, optional text, then tool calls."""
    parts: list[Part] = []
    if reasoning is not None:
        parts.append(reasoning)
    if text:
        parts.append(TextPart(text))
    parts.extend(calls)
    return Message("assistant", tuple(parts), usage=usage)


def tool_result(
    call_id: str, text: str, *, is_error: bool = False, name: str | None = None
) -> Message:
    """A tool message holding one text result for ``call_id``."""
    return Message(
        "tool", (ToolResultPart(call_id, (TextPart(text),), is_error=is_error, name=name),)
    )
