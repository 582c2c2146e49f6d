"""Where the CLI writes: the rich consoles and JSON output."""

from __future__ import annotations

import sys
from pathlib import Path
from typing import Any

import orjson
from rich.console import Console

#: Results (tables, reports); a JSON document written to stdout bypasses it.
out = Console()
#: Errors, warnings and progress.
err = Console(stderr=True)


def dump_json(data: Any, path: str | None, *, to_stderr: bool = False) -> None:
    """Write ``data`` as indented JSON (one trailing newline) to ``path``, to stdout when
    ``path`` is ``None`` or ``"-"``, or to stderr with ``to_stderr``.

    Raises:
        OSError: ``path`` cannot be written.
    """
    raw = orjson.dumps(data, option=orjson.OPT_INDENT_2) + b"\n"
    if to_stderr:
        sys.stderr.buffer.write(raw)
        sys.stderr.flush()
    elif path is None or path == "-":
        sys.stdout.buffer.write(raw)
        sys.stdout.flush()
    else:
        Path(path).write_bytes(raw)
