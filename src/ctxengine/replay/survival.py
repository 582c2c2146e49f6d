"""Ledger survival: which of a session's key facts the final context of a replay still holds.

The facts come from the session once (:func:`session_facts`, the deterministic ledgers of
:func:`ctxengine.summarizers.ledgers.extract_ledgers` over every message the last model call
could see, i.e. those before the last assistant message): the first substantive user request
(an acknowledgement such as "continue" is none), the user's constraints, the files modified
and the last error. A fact is present when its text appears in the final context's text
(every text, tool call argument and tool result, whitespace runs read as one space) — the
first request by its first :data:`~ctxengine.policy.defaults.REPLAY_SURVIVAL_GOAL_CHARS`
characters, a modified file by its absolute path or by its path relative to the session's
working directory (how patches and most tools name it).
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from dataclasses import dataclass

from ctxengine.model import (
    Entry,
    Message,
    TextPart,
    ToolCallPart,
    ToolResultPart,
    current_entries,
)
from ctxengine.model.roles import is_real_user_message, user_text
from ctxengine.policy.defaults import REPLAY_SURVIVAL_GOAL_CHARS
from ctxengine.projection.context import Context
from ctxengine.summarizers.acknowledge import is_acknowledgement
from ctxengine.summarizers.ledgers import extract_ledgers


@dataclass(frozen=True, slots=True)
class SessionFacts:
    """What a good compaction keeps, read from the whole session.

    Attributes:
        first_request: the first real user message's text (``None`` without one).
        constraints: the user's rules, in first-seen order.
        modified_files: paths the session modified (normalised, as the ledgers write them).
        last_error: the newest error line of a failed tool result, or ``None``.
        cwd: the session's working directory (``""`` when unknown).
    """

    first_request: str | None
    constraints: tuple[str, ...]
    modified_files: tuple[str, ...]
    last_error: str | None
    cwd: str = ""


@dataclass(frozen=True, slots=True)
class Survival:
    """Which facts a final context holds.

    Attributes:
        first_request: the first request is present (``None``: the session has none).
        constraints / modified_files: (present, total).
        last_error: the last error is present (``None``: the session has none).
    """

    first_request: bool | None
    constraints: tuple[int, int]
    modified_files: tuple[int, int]
    last_error: bool | None

    def to_dict(self) -> dict[str, object]:
        """JSON view: ``{"first_request": bool|null, "constraints": [present, total],
        "modified_files": [present, total], "last_error": bool|null}``."""
        return {
            "first_request": self.first_request,
            "constraints": list(self.constraints),
            "modified_files": list(self.modified_files),
            "last_error": self.last_error,
        }


def session_facts(entries: Iterable[Entry]) -> SessionFacts:
    """The :class:`SessionFacts` of a session log (its message entries before the last
    assistant message: what the last model call could be sent)."""
    messages = [e.message for e in current_entries(list(entries)) if e.message is not None]
    last_call = max((i for i, m in enumerate(messages) if m.role == "assistant"), default=None)
    if last_call is not None:
        messages = messages[:last_call]
    asked = [t for m in messages if is_real_user_message(m) and (t := user_text(m)).strip()]
    first = next((t for t in asked if not is_acknowledgement(t)), asked[0] if asked else None)
    ledgers = extract_ledgers(messages)
    return SessionFacts(
        first_request=first,
        constraints=tuple(ledgers.constraints),
        modified_files=tuple(ledgers.files_modified),
        last_error=ledgers.errors[-1] if ledgers.errors else None,
        cwd=ledgers.cwd,
    )


def context_text(messages: Sequence[Message]) -> str:
    """Every text of ``messages`` (text parts, tool call arguments, tool result texts), one
    space between words."""
    pieces: list[str] = []
    for message in messages:
        for part in message.parts:
            if isinstance(part, TextPart):
                pieces.append(part.text)
            elif isinstance(part, ToolCallPart):
                pieces.append(part.arguments)
            elif isinstance(part, ToolResultPart):
                pieces.extend(p.text for p in part.content if isinstance(p, TextPart))
    return _squeeze(" ".join(pieces))


def survival(facts: SessionFacts, final: Context | None) -> Survival:
    """Which of ``facts`` the context ``final`` holds (nothing when it is ``None``)."""
    text = context_text(final.messages) if final is not None else ""

    def present(fact: str) -> bool:
        needle = _squeeze(fact)
        return bool(needle) and needle in text

    def count(items: Sequence[str]) -> tuple[int, int]:
        return sum(1 for item in items if present(item)), len(items)

    def file_present(path: str) -> bool:
        root = facts.cwd.rstrip("/") + "/"
        return present(path) or (
            bool(facts.cwd) and path.startswith(root) and present(path.removeprefix(root))
        )

    first = facts.first_request
    files = facts.modified_files
    return Survival(
        first_request=None if first is None else present(first[:REPLAY_SURVIVAL_GOAL_CHARS]),
        constraints=count(facts.constraints),
        modified_files=(sum(1 for f in files if file_present(f)), len(files)),
        last_error=None if facts.last_error is None else present(facts.last_error),
    )


def _squeeze(text: str) -> str:
    return " ".join(text.split())
