"""How each kind of agent writes tool calls and results: three dialects.

* ``claude``: Claude Code tools (``Read``, ``Edit``, ``Write``, ``Bash``, ``Grep``) with
  absolute ``file_path`` arguments; a failing command is an error result starting
  ``Exit code N``; ``Read`` results are numbered like ``cat -n``.
* ``generic``: OpenAI-style function tools (``read_file``, ``edit``, ``write``, ``bash``,
  ``grep``) with project-relative ``path`` arguments; failures are error results.
* ``mini``: one ``bash`` tool, as mini-swe-agent: every result is a
  ``<returncode>N</returncode>`` envelope around the output, never flagged as an error;
  files are read with ``cat``, written with a heredoc and edited with ``sed -i``.
"""

from __future__ import annotations

import json
import shlex
from dataclasses import dataclass
from typing import Literal, TypeAlias

Dialect: TypeAlias = Literal["claude", "generic", "mini"]
DIALECTS: tuple[Dialect, ...] = ("claude", "generic", "mini")


@dataclass(frozen=True, slots=True)
class Call:
    """A tool call and its result, written in one dialect.

    Attributes:
        name: tool name.
        arguments: JSON arguments.
        result: result text.
        is_error: the result is flagged as an error.
    """

    name: str
    arguments: str
    result: str
    is_error: bool = False


def _args(**kw: object) -> str:
    return json.dumps(kw, ensure_ascii=False)


def _numbered(content: str) -> str:
    return "\n".join(f"{i:>6}\t{line}" for i, line in enumerate(content.splitlines(), 1))


def _envelope(rc: int, output: str) -> str:
    return f"<returncode>{rc}</returncode>\n<output>\n{output}</output>"


def bash(dialect: Dialect, command: str, output: str, rc: int = 0) -> Call:
    """A shell command with its output and exit status ``rc``."""
    if dialect == "mini":
        return Call("bash", _args(command=command), _envelope(rc, output))
    if dialect == "claude":
        text = output if rc == 0 else f"Exit code {rc}\n{output}"
        return Call("Bash", _args(command=command, description="Run a command"), text, rc != 0)
    text = output if rc == 0 else f"{output}\n[exit code {rc}]"
    return Call("bash", _args(command=command), text, rc != 0)


def read(dialect: Dialect, root: str, path: str, content: str) -> Call:
    """Read the project file ``path`` (relative to ``root``)."""
    if dialect == "claude":
        return Call("Read", _args(file_path=f"{root}/{path}"), _numbered(content))
    if dialect == "generic":
        return Call("read_file", _args(path=path), content)
    return bash(dialect, f"cat {path}", content)


def grep(dialect: Dialect, pattern: str, where: str, output: str) -> Call:
    """Search ``where`` for ``pattern``."""
    if dialect == "claude":
        return Call("Grep", _args(pattern=pattern, path=where, output_mode="content"), output)
    if dialect == "generic":
        return Call("grep", _args(pattern=pattern, path=where), output)
    return bash(dialect, f"grep -rn {shlex.quote(pattern)} {where}", output)


def edit(dialect: Dialect, root: str, path: str, old: str, new: str, *, ok: bool = True) -> Call:
    """Replace ``old`` by ``new`` in ``path``; ``ok=False`` when ``old`` is not in the file."""
    if dialect == "claude":
        args = _args(file_path=f"{root}/{path}", old_string=old, new_string=new)
        if not ok:
            text = (
                "<tool_use_error>String to replace not found in file.\n"
                f"String: {old}</tool_use_error>"
            )
            return Call("Edit", args, text, True)
        return Call("Edit", args, f"The file {root}/{path} has been updated.")
    if dialect == "generic":
        args = _args(path=path, old=old, new=new)
        if not ok:
            return Call("edit", args, f"Error: the text to replace was not found in {path}", True)
        return Call("edit", args, f"Edited {path} (1 replacement)")
    if not ok:
        # mini-swe-agent edits through a short script that checks the pattern first
        command = (
            "python - <<'EOF'\nfrom pathlib import Path\n"
            f"p = Path({path!r})\ns = p.read_text()\n"
            f"assert {old!r} in s, 'pattern not found'\n"
            f"p.write_text(s.replace({old!r}, {new!r}))\nEOF"
        )
        output = (
            'Traceback (most recent call last):\n  File "<stdin>", line 4, in <module>\n'
            "AssertionError: pattern not found\n"
        )
        return bash(dialect, command, output, 1)
    old_s = old.replace("/", r"\/")
    new_s = new.replace("/", r"\/")
    return bash(dialect, f"sed -i 's/{old_s}/{new_s}/' {path}", "")


def write(dialect: Dialect, root: str, path: str, content: str) -> Call:
    """Write ``content`` to ``path`` (absolute paths, e.g. ``/tmp/…``, are kept as given)."""
    full = path if path.startswith("/") else f"{root}/{path}"
    if dialect == "claude":
        return Call(
            "Write", _args(file_path=full, content=content), f"File created successfully at: {full}"
        )
    if dialect == "generic":
        return Call(
            "write",
            _args(path=path, content=content),
            f"Wrote {len(content.encode())} bytes to {path}",
        )
    return bash(dialect, f"cat <<'EOF' > {path}\n{content}EOF", "")
