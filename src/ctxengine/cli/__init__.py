"""Command-line interface (typer + rich). ``main(argv) -> int`` is the entry point.

Exit codes:

- 0 ok;
- 1 internal error (a bug in ctxengine, or a replay that produced invalid requests), or a
  batch replay or benchmark in which some (transcript or session, policy) task failed (the
  others are printed);
- 2 bad input: a malformed transcript, an unknown session, a bad option or configuration, an
  output path refused or not writable, a session that cannot be compacted into the given
  window, a summary model that fails when one was asked for;
- 3 store busy: another process held the store's write lock (or the session's compaction
  lock) longer than the busy timeout (``--busy-timeout``, ``CTXENGINE_BUSY_TIMEOUT``);
- 130 interrupted (Ctrl-C), as shells report SIGINT;
- 141 the reader closed the pipe (``| head``), as shells report SIGPIPE; nothing is printed.
"""

from __future__ import annotations

import sys
from typing import Protocol, runtime_checkable

from ctxengine.errors import (
    CompactionError,
    ConfigError,
    ProviderError,
    StoreBusy,
    StoreError,
    TranscriptError,
)

EXIT_OK = 0
EXIT_INTERNAL = 1
EXIT_BAD_INPUT = 2
#: Another writer held the store (or the session's compaction lock) past the busy timeout.
EXIT_STORE_BUSY = 3
#: Interrupted by the user (Ctrl-C), as shells report SIGINT.
EXIT_INTERRUPTED = 130
#: The reader of stdout went away (``| head -1``), as shells report SIGPIPE.
EXIT_CLOSED_PIPE = 141


@runtime_checkable
class _UsageError(Protocol):
    """The command-line framework's usage errors (an unknown option, a bad value, a missing
    argument): click's ``ClickException``, which prints itself with the usage line. Matched
    by shape because its class is public only in click, which typer 0.26 and later vendor as
    a private module."""

    exit_code: int

    def show(self) -> None:
        """Print the error and the usage line to stderr."""


def main(argv: list[str] | None = None) -> int:
    """Run the CLI with ``argv`` (default ``sys.argv[1:]``) and return the exit code."""
    from ctxengine.cli.app import app

    args = sys.argv[1:] if argv is None else argv
    try:
        returned = app(args=args, standalone_mode=False, prog_name="ctxengine")
    except (Exception, KeyboardInterrupt) as exc:
        return _exit_code(exc)
    if isinstance(returned, int) and returned != 0:
        # outside standalone mode typer returns a ``typer.Exit`` code instead of raising it
        # (an interrupt: 130; a failed ``import``: 2)
        if returned == EXIT_INTERRUPTED:
            from ctxengine.cli.output import say

            say("interrupted: nothing was written", stderr=True)
        return returned
    return EXIT_OK


def _exit_code(exc: BaseException) -> int:
    """The exit code of a command that raised ``exc``, after printing what went wrong (see
    the module docstring). The printing module is imported here, not for a command that
    succeeds without printing (``--help``)."""
    import typer

    from ctxengine.cli.output import ClosedPipe, OutputRefused, error, say, silence_stdout

    if isinstance(exc, typer.Exit):
        return int(exc.exit_code or 0)
    if isinstance(exc, typer.Abort | KeyboardInterrupt):
        say("interrupted: nothing was written", stderr=True)
        return EXIT_INTERRUPTED
    if isinstance(exc, ClosedPipe | BrokenPipeError):
        silence_stdout()
        return EXIT_CLOSED_PIPE
    if isinstance(exc, StoreBusy):
        error(str(exc) if exc.stored else f"{exc}; nothing was written")
        return EXIT_STORE_BUSY
    if isinstance(exc, TranscriptError | ConfigError | StoreError | OutputRefused):
        error(str(exc))
        return EXIT_BAD_INPUT
    if isinstance(exc, CompactionError):
        said = str(exc)
        written = "" if said.endswith("nothing was written") else "; nothing was written"
        error(said + written, label="cannot compact")
        return EXIT_BAD_INPUT
    if isinstance(exc, ProviderError):
        error(str(exc), label="summary model failed")
        return EXIT_BAD_INPUT
    if isinstance(exc, OSError):
        where = f" {exc.filename}" if exc.filename else ""
        error(f"cannot write{where}: {exc.strerror or exc}")
        return EXIT_BAD_INPUT
    if isinstance(exc, _UsageError):
        exc.show()
        return exc.exit_code
    error(f"{type(exc).__name__}: {exc}", label="internal error")
    return EXIT_INTERNAL


def run() -> None:
    """Console-script entry point: exit with :func:`main`'s code."""
    raise SystemExit(main())
