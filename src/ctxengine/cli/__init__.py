"""Command-line interface (typer + rich). ``main(argv) -> int`` is the entry point.

Exit codes: 0 ok, 2 bad input (malformed transcript, unknown session, bad option or
configuration, an output file that cannot be written, a session that cannot be compacted into
the given window, a summary model that fails when one was asked for), 130 interrupted, 1
internal error.
"""

from __future__ import annotations

import sys
from typing import Protocol, runtime_checkable

from ctxengine.errors import (
    CompactionError,
    ConfigError,
    ProviderError,
    StoreError,
    TranscriptError,
)

EXIT_OK = 0
EXIT_INTERNAL = 1
EXIT_BAD_INPUT = 2
#: Interrupted by the user (Ctrl-C), as shells report SIGINT.
EXIT_INTERRUPTED = 130


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
    import typer

    from ctxengine.cli.app import app
    from ctxengine.cli.output import err

    args = sys.argv[1:] if argv is None else argv
    try:
        returned = app(args=args, standalone_mode=False, prog_name="ctxengine")
    except typer.Exit as exc:
        return int(exc.exit_code or 0)
    except (typer.Abort, KeyboardInterrupt):
        err.print("interrupted: nothing was written")
        return EXIT_INTERRUPTED
    except (TranscriptError, ConfigError, StoreError) as exc:
        err.print(f"[red]error:[/red] {exc}", highlight=False)
        return EXIT_BAD_INPUT
    except CompactionError as exc:
        err.print(f"[red]cannot compact:[/red] {exc}", highlight=False)
        return EXIT_BAD_INPUT
    except ProviderError as exc:
        err.print(f"[red]summary model failed:[/red] {exc}", highlight=False)
        return EXIT_BAD_INPUT
    except OSError as exc:
        where = f" {exc.filename}" if exc.filename else ""
        err.print(f"[red]error:[/red] cannot write{where}: {exc.strerror or exc}", highlight=False)
        return EXIT_BAD_INPUT
    except Exception as exc:
        if isinstance(exc, _UsageError):
            exc.show()
            return exc.exit_code
        err.print(f"[red]internal error:[/red] {type(exc).__name__}: {exc}", highlight=False)
        return EXIT_INTERNAL
    if isinstance(returned, int) and returned != 0:
        # outside standalone mode typer returns a ``typer.Exit`` code instead of raising it
        # (an interrupt: 130; a failed ``import``: 2)
        if returned == EXIT_INTERRUPTED:
            err.print("interrupted: nothing was written")
        return returned
    return EXIT_OK


def run() -> None:
    """Console-script entry point: exit with :func:`main`'s code."""
    raise SystemExit(main())
