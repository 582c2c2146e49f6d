"""Command-line interface (typer + rich). ``main(argv) -> int`` is the entry point.

Exit codes: 0 ok, 2 bad input (malformed transcript, unknown session, bad option or
configuration, an output file that cannot be written, a session that cannot be compacted into
the given window), 1 internal error.
"""

from __future__ import annotations

import sys

from ctxengine.errors import CompactionError, ConfigError, StoreError, TranscriptError

EXIT_OK = 0
EXIT_INTERNAL = 1
EXIT_BAD_INPUT = 2


def main(argv: list[str] | None = None) -> int:
    """Run the CLI with ``argv`` (default ``sys.argv[1:]``) and return the exit code."""
    import typer

    from ctxengine.cli.app import app, err

    args = sys.argv[1:] if argv is None else argv
    try:
        app(args=args, standalone_mode=False, prog_name="ctxengine")
    except typer.Exit as exc:
        return int(exc.exit_code or 0)
    except typer.Abort:
        err.print("aborted")
        return EXIT_INTERNAL
    except (TranscriptError, ConfigError, StoreError, KeyError) as exc:
        message = exc.args[0] if isinstance(exc, KeyError) and exc.args else str(exc)
        err.print(f"[red]error:[/red] {message}", highlight=False)
        return EXIT_BAD_INPUT
    except CompactionError as exc:
        err.print(f"[red]cannot compact:[/red] {exc}", highlight=False)
        return EXIT_BAD_INPUT
    except OSError as exc:
        where = f" {exc.filename}" if exc.filename else ""
        err.print(f"[red]error:[/red] cannot write{where}: {exc.strerror or exc}", highlight=False)
        return EXIT_BAD_INPUT
    except Exception as exc:
        show = getattr(exc, "show", None)
        code = getattr(exc, "exit_code", None)
        if callable(show) and isinstance(code, int):  # click usage errors
            show()
            return EXIT_BAD_INPUT if code == 2 else code
        err.print(f"[red]internal error:[/red] {type(exc).__name__}: {exc}", highlight=False)
        return EXIT_INTERNAL
    return EXIT_OK


def run() -> None:
    """Console-script entry point: exit with :func:`main`'s code."""
    raise SystemExit(main())
