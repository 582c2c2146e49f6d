"""The tool vocabularies of Claude Code, Codex, pi, OpenHands and SWE-agent: which calls run
a shell command, which read or change which file, which only search.
"""

from __future__ import annotations

import shlex
from functools import lru_cache
from typing import Any

from ctxengine.model import ToolCallPart
from ctxengine.model.json_depth import loads_bounded
from ctxengine.policy.defaults import LEDGER_WALK_CACHE
from ctxengine.summarizers.shell import (
    CURRENT_FILE,
    Action,
    FileEffect,
    patch_effects,
    shell_effects,
)

#: Longest command kept in the commands and done ledgers, in characters.
COMMAND_MAX_CHARS = 200

PATH_KEYS = ("file_path", "path", "notebook_path", "filename", "absolute_path", "target_file")
#: tool name → action on the path in its arguments (``None`` path → SWE-agent's open file).
FILE_TOOLS: dict[str, Action] = {
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
EDITOR_TOOLS = frozenset({"str_replace_editor", "file_editor", "str_replace_based_edit_tool"})
EDITOR_COMMANDS: dict[str, Action] = {
    "view": "read",
    "create": "created",
    "str_replace": "edited",
    "insert": "edited",
    "undo_edit": "edited",
    "append": "edited",
}
SHELL_TOOLS = frozenset(
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
QUIET_TOOLS = frozenset(
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


def arguments(call: ToolCallPart) -> dict[str, Any] | None:
    """The call's JSON arguments as a dict, or ``None`` when they are not a JSON object."""
    try:
        data = loads_bounded(call.arguments)
    except ValueError:
        return None
    return data if isinstance(data, dict) else None


def cap_command(text: str, limit: int = COMMAND_MAX_CHARS) -> str:
    """``text`` cut to ``limit`` characters, the last one "…" when cut."""
    return text if len(text) <= limit else text[: limit - 1] + "…"


@lru_cache(maxsize=LEDGER_WALK_CACHE)
def shell_command(call: ToolCallPart) -> str | None:
    """The shell command of a shell-tool call, verbatim (Codex ``["bash", "-lc", cmd]`` gives
    ``cmd``; another argv list is joined with shell quoting), or ``None`` for other tools."""
    if call.name not in SHELL_TOOLS:
        return None
    args = arguments(call)
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


@lru_cache(maxsize=LEDGER_WALK_CACHE)
def patch_text(call: ToolCallPart) -> str | None:
    """The patch of a Codex ``apply_patch`` call (a custom tool, or ``["apply_patch", patch]``
    as a shell argv), or ``None`` for other calls."""
    if call.name == "apply_patch":
        args = arguments(call)
        if args is None:
            return call.arguments
        value = args.get("input", args.get("patch"))
        return value if isinstance(value, str) else None
    args = arguments(call)
    value = args.get("command") if args else None
    if isinstance(value, list) and value[:1] == ["apply_patch"] and len(value) > 1:
        return str(value[1])
    return None


@lru_cache(maxsize=LEDGER_WALK_CACHE)
def call_effects(call: ToolCallPart) -> tuple[FileEffect, ...]:
    """File effects of one tool call, judged from its name and arguments alone."""
    patch = patch_text(call)
    if patch is not None:
        return patch_effects(patch)
    command = shell_command(call)
    if command is not None:
        return shell_effects(command)
    args = arguments(call) or {}
    path = next((args[k] for k in PATH_KEYS if isinstance(args.get(k), str)), None)
    if call.name in EDITOR_TOOLS:
        action = EDITOR_COMMANDS.get(str(args.get("command")))
        return (FileEffect(action, path),) if action and path else ()
    action = FILE_TOOLS.get(call.name)
    if action is None:
        return ()
    if path is None:
        return (FileEffect(action, CURRENT_FILE),) if action == "edited" else ()
    return (FileEffect(action, path),)
