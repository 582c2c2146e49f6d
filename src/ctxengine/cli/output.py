"""Where the CLI writes: results on stdout, errors, warnings and progress on stderr.

Three rules hold for everything printed here:

- **Data is never interpreted.** The consoles have markup, emoji codes and highlighting off:
  a file named ``run[bold]1.json`` or a line reference ``x.jsonl:100:`` prints as it is.
  Styles (red ``error:``) are applied as :class:`rich.text.Text` styles, never parsed from
  strings. Control characters in data (an ANSI escape sequence in a transcript, a carriage
  return, a bell) are shown as visible symbols (:func:`inert`), so no text can recolour,
  move or clear the reader's terminal.
- **Plain text off a terminal.** When the stream is not a terminal (a pipe, a file), lines
  are written as they are, never wrapped, without colour; a table is a header line and one
  line per row with fields separated by tabs (a tab or newline inside a field becomes a
  space). On a terminal, rich renders tables with boxes and wraps to the terminal's width.
- **Machine output is JSON** (:func:`dump_json`), written whole.

A reader that closes the pipe early (``ctxengine inspect x | head -1``) ends the command
quietly (see :func:`ctxengine.cli.main`).
"""

from __future__ import annotations

import os
import stat
import sys
import tempfile
from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import IO, Any

import orjson
from rich.cells import cell_len
from rich.console import Console
from rich.table import Table
from rich.text import Text

from ctxengine.cli.overwrite import OutputKind, holds, refusal

#: Results (tables, reports) on a terminal; off a terminal :func:`say` writes plain lines.
out = Console(markup=False, emoji=False, highlight=False)
#: Errors, warnings and progress on a terminal.
err = Console(stderr=True, markup=False, emoji=False, highlight=False)


#: C0 control characters other than tab and newline, DEL, and the C1 controls, each mapped to
#: one visible character (the Unicode control pictures ␀…␟ and ␡ for C0 and DEL, U+FFFD for
#: C1), so that styled spans keep their offsets.
_INERT = {
    **{c: 0x2400 + c for c in range(0x20) if c not in (0x09, 0x0A)},
    0x7F: 0x2421,
    **{c: 0xFFFD for c in range(0x80, 0xA0)},
}


def inert(text: str) -> str:
    """``text`` with every control character a terminal would act on (escape, carriage return,
    bell, backspace …, but not tab and newline) replaced by a visible symbol of one character
    (``"\x1b[31m"`` becomes ``"␛[31m"``)."""
    return text.translate(_INERT)


def _inert_text(text: str | Text) -> Text:
    if isinstance(text, Text):
        return Text(inert(text.plain), style=text.style, spans=list(text.spans))
    return Text(inert(text))


def is_terminal(stream: IO[str]) -> bool:
    """True when ``stream`` is an interactive terminal (not a pipe, a file or a capture)."""
    try:
        return os.isatty(stream.fileno())
    except (AttributeError, ValueError, OSError):
        return False


def _stream(stderr: bool) -> IO[str]:
    return sys.stderr if stderr else sys.stdout


class ClosedPipe(Exception):
    """The reader of stdout (or stderr) closed the pipe (``| head -1``). Not an ``OSError``
    on purpose: the command-line framework would turn that into a bare exit 1."""


def _write_plain(stream: IO[str], text: str) -> None:
    """Write ``text`` as UTF-8 (a lone surrogate in data escaped, never an encoding error)."""
    _write_bytes(stream, text.encode("utf-8", "backslashreplace"))


def say(text: str | Text, *, stderr: bool = False) -> None:
    """Print ``text`` (one or more lines) on stdout, or stderr with ``stderr``: through rich
    on a terminal (colours; long lines folded by the terminal, not broken), as plain lines
    otherwise. A ``str`` is printed literally."""
    stream = _stream(stderr)
    if is_terminal(stream):
        # soft wrap: the terminal folds a long line, no newline is inserted (an id or a path
        # copied from the screen stays whole)
        (err if stderr else out).print(_inert_text(text), soft_wrap=True)
    else:
        _write_plain(stream, inert(text.plain if isinstance(text, Text) else text) + "\n")


def labelled(label: str, style: str, message: str) -> Text:
    """``"<label>: <message>"`` with the label styled (the message literal)."""
    return Text.assemble((f"{label}:", style), " ", message)


def error(message: str, *, label: str = "error") -> None:
    """Print ``"error: <message>"`` on stderr (the label red on a terminal)."""
    say(labelled(label, "red", message), stderr=True)


def warning(message: str) -> None:
    """Print ``"warning: <message>"`` on stderr."""
    say(labelled("warning", "yellow", message), stderr=True)


def note(message: str) -> None:
    """Print ``"note: <message>"`` on stderr."""
    say(labelled("note", "cyan", message), stderr=True)


@dataclass(slots=True)
class Grid:
    """A table to print: rich on a terminal, tab-separated lines off it.

    Attributes:
        columns: the header.
        rows: cells as text, one tuple per row, as long as ``columns``.
        title: printed above the table (off a terminal: its own line), or ``None``.
        right: indexes of right-aligned columns (numbers) on a terminal.
        keep: indexes of columns never wrapped on a terminal (ids other commands take).
        split: on a terminal too narrow for the whole table, print it as several tables,
            each with the first column (the row labels) and as many of the others as fit,
            no cell wrapped (a comparison of many policies).
    """

    columns: tuple[str, ...]
    rows: list[tuple[str, ...]] = field(default_factory=list)
    title: str | None = None
    right: frozenset[int] = frozenset()
    keep: frozenset[int] = frozenset()
    split: bool = False

    def add(self, *cells: str) -> None:
        """Append a row (one cell per column)."""
        if len(cells) != len(self.columns):
            raise ValueError(f"a row of {len(cells)} cells for {len(self.columns)} columns")
        self.rows.append(tuple(inert(c) for c in cells))


def _field(cell: str) -> str:
    return cell.replace("\t", " ").replace("\r\n", " ").replace("\n", " ").replace("\r", " ")


def grid_lines(grid: Grid) -> list[str]:
    """The plain form of ``grid``: its title (when set), the header and one line per row,
    fields separated by tabs."""
    lines = [] if grid.title is None else [grid.title]
    lines.append("\t".join(_field(c) for c in grid.columns))
    lines.extend("\t".join(_field(c) for c in row) for row in grid.rows)
    return lines


def show(grid: Grid, *, stderr: bool = False) -> None:
    """Print ``grid`` (see :class:`Grid`)."""
    stream = _stream(stderr)
    if not is_terminal(stream):
        _write_plain(stream, "\n".join(grid_lines(grid)) + "\n")
        return
    console = err if stderr else out
    groups = [list(range(len(grid.columns)))]
    if grid.split:
        groups = [[0, *g] for g in column_groups(grid, console.width)]
    for n, group in enumerate(groups):
        title = grid.title if n == 0 else f"(continued: {n + 1} of {len(groups)})"
        table = Table(title=None if title is None else Text(title))
        for i in group:
            table.add_column(
                Text(grid.columns[i]),
                justify="right" if i in grid.right else "left",
                no_wrap=grid.split or i in grid.keep,
                overflow="fold",
            )
        for row in grid.rows:
            table.add_row(*(Text(row[i]) for i in group))
        console.print(table)


#: Columns a rich table adds to each column's text: a space either side and a border.
_CELL_FRAME = 3


def column_groups(grid: Grid, width: int) -> list[list[int]]:
    """The columns after the first, in order, grouped so that each group beside the first
    column fits ``width`` terminal cells unwrapped (a column wider than that alone is a
    group of its own)."""

    def need(i: int) -> int:
        cells = [grid.columns[i], *(row[i] for row in grid.rows)]
        return max(cell_len(c) for c in cells) + _CELL_FRAME

    room = width - need(0) - 1
    groups: list[list[int]] = []
    used = 0
    for i in range(1, len(grid.columns)):
        if groups and used + need(i) <= room:
            groups[-1].append(i)
            used += need(i)
        else:
            groups.append([i])
            used = need(i)
    return groups


def dump_json(data: Any, path: str | None, *, to_stderr: bool = False) -> None:
    """Write ``data`` as indented JSON (one trailing newline) to ``path`` (through
    :func:`write_output`), to stdout when ``path`` is ``None`` or ``"-"``, or to stderr with
    ``to_stderr``.

    Raises:
        OSError: ``path`` cannot be written.
    """
    raw = orjson.dumps(data, option=orjson.OPT_INDENT_2) + b"\n"
    if to_stderr:
        _write_bytes(sys.stderr, raw)
    elif path is None or path == "-":
        _write_bytes(sys.stdout, raw)
    else:
        write_output(path, raw)


def _write_bytes(stream: IO[str], raw: bytes) -> None:
    """Write ``raw`` to ``stream`` (its binary buffer when it has one) and flush.

    Raises:
        ClosedPipe: the reader went away.
    """
    try:
        stream.flush()
        buffer = getattr(stream, "buffer", None)
        if buffer is None:
            stream.write(raw.decode("utf-8"))
            stream.flush()
            return
        # A buffered write may take only part of a large block (a pipe whose reader went
        # away mid-write reports the part it took): write the rest until done or refused.
        view = memoryview(raw)
        while view:
            taken = buffer.write(view)
            view = view[taken if taken else len(view) :]
        buffer.flush()
    except BrokenPipeError as exc:
        raise ClosedPipe(str(exc)) from exc


def write_output(path: str, data: bytes) -> None:
    """Write ``data`` to ``path`` whole or not at all: into a temporary file in the same
    folder, flushed to disk, then renamed over ``path`` (a reader never sees half a file; an
    interrupted write leaves ``path`` as it was). ``"-"`` writes to stdout. A symbolic link
    is followed (the file it names is written, the link kept); a path that is not a regular
    file (``/dev/null``, ``/dev/stdout``, a named pipe) is written to as it is, never
    replaced.

    Raises:
        OSError: the folder cannot be written (the temporary file is removed).
    """
    if path == "-":
        _write_bytes(sys.stdout, data)
        return
    target = Path(os.path.realpath(path))
    try:
        mode = target.stat().st_mode
    except FileNotFoundError:
        mode = None
    if mode is not None and not stat.S_ISREG(mode):
        with open(target, "wb") as stream:
            stream.write(data)
        return
    fd, tmp = tempfile.mkstemp(prefix=f".{target.name}.", suffix=".tmp", dir=target.parent)
    try:
        with os.fdopen(fd, "wb") as fh:
            fh.write(data)
            fh.flush()
            os.fsync(fh.fileno())
        os.chmod(tmp, 0o666 & ~_umask())
        os.replace(tmp, target)
    except BaseException:
        Path(tmp).unlink(missing_ok=True)
        raise


def _umask() -> int:
    mask = os.umask(0)
    os.umask(mask)
    return mask


def _same(a: Path, b: Path) -> bool:
    """True when ``a`` and ``b`` name one file (hard or symbolic links included); for a path
    not created yet, when both resolve to the same place."""
    try:
        if a.exists() and b.exists():
            return os.path.samefile(a, b)
    except OSError:
        pass
    return os.path.realpath(a) == os.path.realpath(b)


def check_output(
    path: str | None,
    *,
    inputs: Sequence[str | Path] = (),
    store: str | None = None,
    kind: OutputKind | None = None,
    force: bool = False,
) -> None:
    """Refuse an output path before any work: a directory, the store (or its ``-wal`` /
    ``-shm`` files), one of the input files, or (unless ``force``) an existing file that is
    read-only (no write permission bit) or does not hold output of ``kind``, what the
    command writes (:mod:`ctxengine.cli.overwrite`: a transcript or another program's data
    is never replaced by a mistyped ``-o``). ``None`` and ``"-"`` (stdout) pass.

    Raises:
        OutputRefused: the path is one of those.
    """
    if path is None or path == "-":
        return
    target = Path(path)
    if target.is_dir():
        raise OutputRefused(path, "it is a directory")
    if store is not None and store != ":memory:":
        for suffix in ("", "-wal", "-shm"):
            if _same(target, Path(store + suffix)):
                raise OutputRefused(path, f"it is the session store {store}")
    for given in inputs:
        if _same(target, Path(given)):
            raise OutputRefused(path, f"it is the input file {given}")
    if not target.parent.is_dir():
        raise OutputRefused(path, f"its folder {target.parent} does not exist")
    if force or not target.is_file():
        return
    if not target.stat().st_mode & 0o222:
        raise OutputRefused(path, "it is read-only; pass --force to replace it")
    if kind is not None and not holds(target, kind):
        raise OutputRefused(path, refusal(target, kind))


class OutputRefused(ValueError):
    """An output path that would destroy data or cannot be written (see
    :func:`check_output`); the command did nothing.

    Attributes:
        path: the output path given.
        why: the reason.
    """

    def __init__(self, path: str, why: str) -> None:
        self.path = path
        self.why = why
        super().__init__(f"refusing to write {path}: {why}; nothing was written")


def silence_stdout() -> None:
    """Point the process's stdout at ``/dev/null`` (after the reader closed the pipe, so the
    interpreter's last flush does not fail again)."""
    try:
        devnull = os.open(os.devnull, os.O_WRONLY)
        os.dup2(devnull, sys.stdout.fileno())
        os.close(devnull)
    except (AttributeError, ValueError, OSError):
        pass
