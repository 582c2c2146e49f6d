"""Background tasks as agents report them: a shell command that went to the background and
its id, a call that reads a task's status or stops it, whether a status read back or a
notification says the task ended, its exit code and the output it showed.

The vocabularies are :data:`~ctxengine.policy.defaults.BACKGROUND_LAUNCH_PATTERNS` and the
other ``BACKGROUND_*`` constants: Claude Code ``Bash`` with ``run_in_background`` ("Command
running in background with ID: bash_2"), polled by ``BashOutput``/``TaskOutput``
(``<status>completed</status>``, ``<exit_code>1</exit_code>``, the output in ``<stdout>``,
``<stderr>`` or ``<output>``) and told by a ``<task-notification>``; Codex ``exec_command``
("Process running with session ID 4242"), polled by ``write_stdin`` ("Process exited with
code 101", the output after ``Output:``). Read by the ledgers (the outcome of a background
run, :mod:`ctxengine.summarizers.walk`) and by the re-injection of the tasks still running
(:mod:`ctxengine.ladder.reinject`).
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from typing import Any

from ctxengine.model import ToolCallPart
from ctxengine.policy.defaults import (
    BACKGROUND_AGENT_ID_PATTERN,
    BACKGROUND_EXIT_CODE_PATTERNS,
    BACKGROUND_EXITED_MARKER,
    BACKGROUND_ID_KEYS,
    BACKGROUND_LAUNCH_PATTERNS,
    BACKGROUND_OUTPUT_MARKER,
    BACKGROUND_OUTPUT_TAGS,
    BACKGROUND_POLL_TOOLS,
    BACKGROUND_RUNNING_STATUSES,
    BACKGROUND_STOP_TOOLS,
    BACKGROUND_SUBAGENT_TOOLS,
)
from ctxengine.summarizers.tools import SHELL_TOOLS, arguments

_LAUNCH = tuple(re.compile(p) for p in BACKGROUND_LAUNCH_PATTERNS)
_AGENT_ID = re.compile(BACKGROUND_AGENT_ID_PATTERN)
_STATUS = re.compile(r"<status>\s*([\w-]+)\s*</status>")
_NOTIFICATION = re.compile(r"<task-notification>(.*?)</task-notification>", re.DOTALL)
_TASK_ID = re.compile(r"<task-id>\s*([\w-]+)\s*</task-id>")
_SUMMARY = re.compile(r"<summary>(.*?)</summary>", re.DOTALL)
_EXIT_CODES = tuple(re.compile(p) for p in BACKGROUND_EXIT_CODE_PATTERNS)
_OUTPUT_TAGS = tuple(
    re.compile(rf"<{tag}>\n?(.*?)\n?</{tag}>", re.DOTALL) for tag in BACKGROUND_OUTPUT_TAGS
)


def call_args(call: ToolCallPart) -> dict[str, Any]:
    """A call's arguments as a JSON object, ``{}`` when they are not one."""
    return arguments(call) or {}


def task_id(args: dict[str, Any]) -> str | None:
    """The task a poll or stop call names: the value of the first of
    :data:`~ctxengine.policy.defaults.BACKGROUND_ID_KEYS` present (a string or an integer,
    as a string), else ``None``."""
    for key in BACKGROUND_ID_KEYS:
        value = args.get(key)
        if isinstance(value, str | int) and not isinstance(value, bool) and str(value):
            return str(value)
    return None


def launched_id(call: ToolCallPart, text: str) -> str | None:
    """The id of the background shell a shell-tool ``call`` started, read from its result
    ``text`` (:data:`~ctxengine.policy.defaults.BACKGROUND_LAUNCH_PATTERNS`), else ``None``
    (another tool, or a command that ran in the foreground)."""
    if call.name not in SHELL_TOOLS:
        return None
    for pattern in _LAUNCH:
        found = pattern.search(text)
        if found is not None:
            return found.group(1)
    return None


def agent_id(call: ToolCallPart, text: str) -> str:
    """The id of a subagent started in the background by ``call``: the one its result
    ``text`` gives ("agentId: a73f6f8bdab2fbcaf"), else the call's id."""
    found = _AGENT_ID.search(text)
    return found.group(1) if found is not None else call.id


def is_subagent(call: ToolCallPart) -> bool:
    """True for a subagent tool call
    (:data:`~ctxengine.policy.defaults.BACKGROUND_SUBAGENT_TOOLS`)."""
    return call.name in BACKGROUND_SUBAGENT_TOOLS


def polled_id(call: ToolCallPart) -> str | None:
    """The task a poll call reads (:data:`~ctxengine.policy.defaults.BACKGROUND_POLL_TOOLS`),
    else ``None``."""
    return task_id(call_args(call)) if call.name in BACKGROUND_POLL_TOOLS else None


def stopped_id(call: ToolCallPart) -> str | None:
    """The task a stop call ends (:data:`~ctxengine.policy.defaults.BACKGROUND_STOP_TOOLS`),
    else ``None``."""
    return task_id(call_args(call)) if call.name in BACKGROUND_STOP_TOOLS else None


def ended(status: str) -> bool:
    """True when a status read back (``completed``, ``failed``, ``killed``) is not one of
    :data:`~ctxengine.policy.defaults.BACKGROUND_RUNNING_STATUSES`."""
    return status.lower() not in BACKGROUND_RUNNING_STATUSES


@dataclass(frozen=True, slots=True)
class Poll:
    """What one poll result says about its task.

    Attributes:
        finished: the task ended (a status other than running, or a Codex "Process exited").
        exit_code: the exit code it states, or ``None``.
        status: the status it states (``"completed"``, ``"failed"``), ``""`` when none.
        output: the output it shows: the text inside its ``<stdout>``, ``<stderr>`` and
            ``<output>`` tags, else the text after Codex's ``Output:`` line, else the whole
            text.
    """

    finished: bool
    exit_code: int | None
    status: str
    output: str


def read_poll(text: str) -> Poll:
    """The :class:`Poll` of a poll tool's result ``text``."""
    status = _STATUS.search(text)
    said = status.group(1) if status is not None else ""
    finished = (bool(said) and ended(said)) or BACKGROUND_EXITED_MARKER in text
    return Poll(finished, stated_exit_code(text), said, output_of(text, text))


def stated_exit_code(text: str) -> int | None:
    """The exit code a poll result or a task notification states
    (:data:`~ctxengine.policy.defaults.BACKGROUND_EXIT_CODE_PATTERNS`), else ``None``."""
    for pattern in _EXIT_CODES:
        found = pattern.search(text)
        if found is not None:
            return int(found.group(1))
    return None


def output_of(text: str, default: str = "") -> str:
    """The output a poll result or launch reply shows: inside its ``<stdout>``,
    ``<stderr>`` and ``<output>`` tags, else after Codex's ``Output:`` line, else
    ``default``."""
    chunks = [m.group(1) for pattern in _OUTPUT_TAGS for m in pattern.finditer(text)]
    if chunks:
        return "\n".join(c for c in chunks if c.strip())
    marker = text.find(BACKGROUND_OUTPUT_MARKER)
    if marker >= 0 and (marker == 0 or text[marker - 1] == "\n"):
        return text[marker + len(BACKGROUND_OUTPUT_MARKER) :]
    return default


@dataclass(frozen=True, slots=True)
class Notification:
    """One ``<task-notification>`` block of a user message.

    Attributes:
        id: the task it names.
        status: the status it states.
        exit_code: the exit code its summary states, or ``None``.
        summary: its summary text (``Background command "Run new tests" completed (exit
            code 0)``), ``""`` when none.
    """

    id: str
    status: str
    exit_code: int | None
    summary: str

    @property
    def finished(self) -> bool:
        """The task ended (:func:`ended`)."""
        return ended(self.status)


def notifications(text: str) -> list[Notification]:
    """The task notifications of a user message's ``text`` that name a task and a status,
    in order."""
    if "<task-notification>" not in text:
        return []
    out: list[Notification] = []
    for block in _NOTIFICATION.findall(text):
        tid, status = _TASK_ID.search(block), _STATUS.search(block)
        if tid is None or status is None:
            continue
        summary = _SUMMARY.search(block)
        said = summary.group(1).strip() if summary is not None else ""
        out.append(Notification(tid.group(1), status.group(1), stated_exit_code(block), said))
    return out


__all__ = [
    "Notification",
    "Poll",
    "agent_id",
    "call_args",
    "ended",
    "is_subagent",
    "launched_id",
    "notifications",
    "output_of",
    "polled_id",
    "read_poll",
    "stated_exit_code",
    "stopped_id",
    "task_id",
]
