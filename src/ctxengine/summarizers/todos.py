"""The todo list an agent keeps with its todo tool (Claude Code ``TodoWrite``, Codex
``update_plan``, Gemini CLI ``write_todos``, OpenCode ``todowrite``): the newest call, the
list it writes and its open items. Read by the next step (the first open item) and by the
re-injection of the list after a compaction (:mod:`ctxengine.ladder.reinject`).
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

from ctxengine.model import Message, ToolCallPart
from ctxengine.policy.defaults import (
    REINJECT_TODO_TOOLS,
    TODO_CLOSED_STATUSES,
    TODO_LIST_KEYS,
    TODO_TEXT_KEYS,
)
from ctxengine.summarizers.tools import arguments


def newest_call(
    messages: Sequence[Message],
    kept: Sequence[Message] = (),
    names: tuple[str, ...] = REINJECT_TODO_TOOLS,
) -> ToolCallPart | None:
    """The newest call of one of ``names`` (default: the todo tools) in ``messages``, or
    ``None`` when there is none or ``kept`` holds a newer one (the tail shows it)."""
    for group in (kept, messages):
        for m in reversed(group):
            for call in reversed(m.tool_calls):
                if call.name in names:
                    return None if group is kept else call
    return None


def todo_list(call: ToolCallPart) -> list[Any] | None:
    """The list a todo call writes: its first
    :data:`~ctxengine.policy.defaults.TODO_LIST_KEYS` argument holding a list, or ``None``."""
    args = arguments(call) or {}
    for key in TODO_LIST_KEYS:
        value = args.get(key)
        if isinstance(value, list):
            return value
    return None


def todo_text(item: Any) -> str:
    """An item's text: the item itself when a string, else its first
    :data:`~ctxengine.policy.defaults.TODO_TEXT_KEYS` value with text, else its ``str``."""
    if isinstance(item, str):
        return item
    if isinstance(item, dict):
        for key in TODO_TEXT_KEYS:
            value = item.get(key)
            if isinstance(value, str) and value.strip():
                return value
    return str(item)


def todo_status(item: Any) -> str:
    """An item's status as written, ``"pending"`` when it states none."""
    status = item.get("status") if isinstance(item, dict) else None
    return status if isinstance(status, str) and status.strip() else "pending"


@dataclass(frozen=True, slots=True)
class TodoItem:
    """One open item of a todo list.

    Attributes:
        status: its status as written (``"in_progress"``, ``"pending"``).
        text: its text.
    """

    status: str
    text: str


def open_items(items: Sequence[Any]) -> list[TodoItem]:
    """The items of a todo list whose status is not one of
    :data:`~ctxengine.policy.defaults.TODO_CLOSED_STATUSES`, in the list's order."""
    return [
        TodoItem(todo_status(i), todo_text(i))
        for i in items
        if todo_status(i).lower() not in TODO_CLOSED_STATUSES
    ]


def first_open_todo(messages: Sequence[Message]) -> TodoItem | None:
    """The first open item of the list the newest todo-tool call in ``messages`` writes, or
    ``None`` (no such call, no list, nothing open)."""
    call = newest_call(messages)
    items = todo_list(call) if call is not None else None
    found = open_items(items) if items is not None else []
    return found[0] if found else None


__all__ = [
    "TodoItem",
    "first_open_todo",
    "newest_call",
    "open_items",
    "todo_list",
    "todo_status",
    "todo_text",
]
