"""The volatile head sections read from the machine: the environment (date, working directory,
platform) and a git status snapshot. A :class:`~ctxengine.assembly.ContextAssembler` calls
these once per epoch (pass them as functions: ``environment=lambda:
current_environment(cwd)``).

Gemini CLI opens a session with today's date, the operating system and the working directory;
Claude Code adds the working directory, platform, date and a git status "snapshot in time"
to its system prompt.
"""

from __future__ import annotations

import datetime as dt
import os
import subprocess
import sys
from pathlib import Path

from ctxengine.assembly.head import Environment
from ctxengine.policy.defaults import GIT_STATUS_MAX_CHARS, GIT_STATUS_TIMEOUT_S

__all__ = ["GIT_CUT_NOTE", "current_environment", "git_status"]

#: Appended to a git status cut at :data:`~ctxengine.policy.defaults.GIT_STATUS_MAX_CHARS`.
GIT_CUT_NOTE = "\n… ({omitted:,} more characters; run git status for the rest)"


def current_environment(cwd: str | os.PathLike[str]) -> Environment:
    """Today's local date (ISO), ``cwd`` (absolute) and ``sys.platform``."""
    return Environment(
        date=dt.date.today().isoformat(),
        cwd=Path(cwd).expanduser().resolve().as_posix(),
        platform=sys.platform,
    )


def git_status(
    cwd: str | os.PathLike[str],
    *,
    max_chars: int = GIT_STATUS_MAX_CHARS,
    timeout_s: float = GIT_STATUS_TIMEOUT_S,
) -> str | None:
    """``git status --short --branch`` run in ``cwd``, cut at ``max_chars`` characters with
    a note of what was left out; ``None`` outside a repository, without git, or after
    ``timeout_s`` seconds."""
    try:
        done = subprocess.run(
            ["git", "status", "--short", "--branch"],
            cwd=cwd,
            capture_output=True,
            text=True,
            timeout=timeout_s,
            check=False,
        )
    except (OSError, subprocess.TimeoutExpired):
        return None
    if done.returncode != 0:
        return None
    text = done.stdout.rstrip("\n")
    if len(text) > max_chars:
        text = text[:max_chars] + GIT_CUT_NOTE.format(omitted=len(text) - max_chars)
    return text
