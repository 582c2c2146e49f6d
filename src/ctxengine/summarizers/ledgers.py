"""Deterministic ledgers from a range of messages: files read and modified, completed steps,
user constraints, exact error lines and commands, from the tool vocabularies of Claude Code,
Codex, pi, OpenHands, SWE-agent and shell commands in general.

A step counts only when its tool result is present among the same messages and did not fail
(:func:`~ctxengine.summarizers.signals.result_failed`): a failed or unanswered edit modifies
nothing and is not done. Modified = edited ∪ written ∪ created ∪ deleted ∪ moved; read excludes
modified. Search tools (Grep, Glob, ``find_file`` …) are not reads: only explicit reads count.
"""

from __future__ import annotations

import re
import shlex
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field
from typing import Any

from ctxengine.model import Ledgers, Message, ToolCallPart, ToolResultPart
from ctxengine.model.json_depth import loads_bounded
from ctxengine.summarizers.constraints import constraints_of
from ctxengine.summarizers.shell import (
    CURRENT_FILE,
    Action,
    FileEffect,
    looks_like_check,
    patch_effects,
    shell_effects,
    strip_bodies,
)
from ctxengine.summarizers.signals import error_lines, looks_failed, result_failed, result_text

#: Longest command kept in the commands and done ledgers, in characters.
COMMAND_MAX_CHARS = 200

_SWE_FILE_HEADER = re.compile(r"^\[File: (.+?) \(\d+ lines total\)\]", re.MULTILINE)
#: How OpenHands answers ``view`` on a directory (a listing, not a file read).
_DIRECTORY_LISTING = "Here's the files and directories"
_PATH_KEYS = ("file_path", "path", "notebook_path", "filename", "absolute_path", "target_file")
#: tool name → action on the path in its arguments (``None`` path → SWE-agent's open file).
_FILE_TOOLS: dict[str, Action] = {
    "Read": "read",
    "NotebookRead": "read",
    "read": "read",
    "read_file": "read",
    "open": "read",
    "Edit": "edited",
    "MultiEdit": "edited",
    "NotebookEdit": "edited",
    "edit": "edited",
    "edit_file": "edited",
    "replace": "edited",
    "insert": "edited",
    "Write": "wrote",
    "write": "wrote",
    "write_file": "wrote",
    "create": "created",
}
_EDITOR_TOOLS = frozenset({"str_replace_editor", "file_editor", "str_replace_based_edit_tool"})
_EDITOR_COMMANDS: dict[str, Action] = {
    "view": "read",
    "create": "created",
    "str_replace": "edited",
    "insert": "edited",
    "undo_edit": "edited",
    "append": "edited",
}
_SHELL_TOOLS = frozenset(
    {
        "Bash",
        "bash",
        "shell",
        "exec_command",
        "execute_bash",
        "local_shell",
        "run_shell_command",
        "terminal",
        "execute_command",
        "run_command",
    }
)
_QUIET_TOOLS = frozenset(
    {
        "Grep",
        "Glob",
        "LS",
        "grep",
        "glob",
        "ls",
        "find",
        "find_file",
        "search_dir",
        "search_file",
        "list_directory",
        "search_file_content",
        "WebFetch",
        "WebSearch",
        "web_search",
    }
)


def _arguments(call: ToolCallPart) -> dict[str, Any] | None:
    try:
        data = loads_bounded(call.arguments)
    except ValueError:
        return None
    return data if isinstance(data, dict) else None


def _cap(text: str, limit: int = COMMAND_MAX_CHARS) -> str:
    return text if len(text) <= limit else text[: limit - 1] + "…"


def shell_command(call: ToolCallPart) -> str | None:
    """The shell command of a shell-tool call, verbatim (Codex ``["bash", "-lc", cmd]`` gives
    ``cmd``; another argv list is joined with shell quoting), or ``None`` for other tools."""
    if call.name not in _SHELL_TOOLS:
        return None
    args = _arguments(call)
    if args is None:
        return call.arguments or None
    value = args.get("command", args.get("cmd"))
    if isinstance(value, str):
        return value
    if isinstance(value, list) and all(isinstance(v, str) for v in value):
        argv: list[str] = value
        if len(argv) == 3 and argv[0] in ("bash", "sh", "zsh") and argv[1] in ("-lc", "-c"):
            return argv[2]
        return shlex.join(argv)
    return None


def _patch_text(call: ToolCallPart) -> str | None:
    if call.name == "apply_patch":
        args = _arguments(call)
        if args is None:
            return call.arguments
        value = args.get("input", args.get("patch"))
        return value if isinstance(value, str) else None
    args = _arguments(call)
    value = args.get("command") if args else None
    if isinstance(value, list) and value[:1] == ["apply_patch"] and len(value) > 1:
        return str(value[1])
    return None


def call_effects(call: ToolCallPart) -> tuple[FileEffect, ...]:
    """File effects of one tool call, judged from its name and arguments alone."""
    patch = _patch_text(call)
    if patch is not None:
        return patch_effects(patch)
    command = shell_command(call)
    if command is not None:
        return shell_effects(command)
    args = _arguments(call) or {}
    path = next((args[k] for k in _PATH_KEYS if isinstance(args.get(k), str)), None)
    if call.name in _EDITOR_TOOLS:
        action = _EDITOR_COMMANDS.get(str(args.get("command")))
        return (FileEffect(action, path),) if action and path else ()
    action = _FILE_TOOLS.get(call.name)
    if action is None:
        return ()
    if path is None:
        return (FileEffect(action, CURRENT_FILE),) if action == "edited" else ()
    return (FileEffect(action, path),)


def _first_line(command: str) -> str:
    """The command's first line without heredoc bodies, capped; "…" marks a cut."""
    lines = strip_bodies(command).splitlines() or [""]
    first = lines[0] + (" …" if len(lines) > 1 else "")
    return _cap(first)


def _done_line(effect: FileEffect) -> str:
    if effect.other is not None:
        return f"{effect.action} {effect.path} to {effect.other}"
    return f"{effect.action} {effect.path}"


@dataclass
class _Walk:
    """Accumulator for one pass over a range of messages."""

    read: list[str] = field(default_factory=list)
    modified: list[str] = field(default_factory=list)
    done: list[str] = field(default_factory=list)
    errors: list[str] = field(default_factory=list)
    commands: list[str] = field(default_factory=list)
    current_file: str | None = None

    def effects(self, effects: Sequence[FileEffect]) -> None:
        for effect in effects:
            path = effect.path
            if path == CURRENT_FILE:
                if self.current_file is None:
                    continue
                effect = FileEffect(effect.action, self.current_file, effect.other)
                path = self.current_file
            if effect.action == "read":
                self.read.append(path)
            else:
                self.modified.extend(effect.modified)
                self.done.append(_done_line(effect))
            if effect.action in ("read", "created", "edited", "wrote"):
                self.current_file = path

    def call(self, call: ToolCallPart, result: ToolResultPart | None) -> None:
        command = shell_command(call)
        if command is not None and _patch_text(call) is None and "*** Begin Patch" not in command:
            self.commands.append(_cap(command))
        if result is None:
            return
        effects = call_effects(call)
        failed = result_failed(result)
        text = result_text(result)
        if failed:
            self.errors.extend(error_lines(text))
            return
        if text.startswith(_DIRECTORY_LISTING):
            effects = tuple(e for e in effects if e.action != "read")
        if call.name == "Write" and text.startswith("File created successfully"):
            effects = tuple(FileEffect("created", e.path) for e in effects)
        if self.current_file is None and any(e.path == CURRENT_FILE for e in effects):
            header = _SWE_FILE_HEADER.search(text)
            self.current_file = header.group(1) if header else None
        self.effects(effects)
        reads_only = bool(effects) and all(e.action == "read" for e in effects)
        if call.name in _QUIET_TOOLS or reads_only or call.name in _FILE_TOOLS:
            return
        if looks_failed(text):
            self.errors.extend(error_lines(text))
        elif command is not None and looks_like_check(command):
            self.done.append(f"ran `{_first_line(command)}` (succeeded)")


def _dedup(items: Iterable[str]) -> tuple[str, ...]:
    return tuple(dict.fromkeys(items))


def extract_ledgers(messages: Sequence[Message], goal: str = "") -> Ledgers:
    """Ledgers of ``messages`` alone (merge with the previous compaction's ledgers with
    :meth:`Ledgers.merge`).

    Args:
        messages: a range of history in order; tool results are looked up by call id among
            these same messages (a call without its result counts as not done).
        goal: stored in ``Ledgers.goal`` unchanged.

    Returns:
        ``files_read`` (excluding modified paths), ``files_modified``, ``done`` (one line per
        successful change: ``"edited src/app.py"``, ``"created t.py"``, ``"moved a to b"``;
        and per successful test/build/lint/commit command: ``"ran `pytest -q` (succeeded)"``),
        ``constraints`` (from real user messages), ``errors`` (exact lines from failed results),
        ``commands`` (shell commands, ``apply_patch`` excluded), each in first-seen order.
    """
    results = {
        part.call_id: part for m in messages for part in m.parts if isinstance(part, ToolResultPart)
    }
    walk = _Walk()
    for message in messages:
        for part in message.parts:
            if isinstance(part, ToolCallPart):
                walk.call(part, results.get(part.id))
    modified = _dedup(walk.modified)
    mod_set = set(modified)
    return Ledgers(
        goal=goal,
        files_read=tuple(p for p in _dedup(walk.read) if p not in mod_set),
        files_modified=modified,
        constraints=constraints_of(messages),
        errors=_dedup(walk.errors),
        commands=_dedup(walk.commands),
        done=_dedup(walk.done),
    )
