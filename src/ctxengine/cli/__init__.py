"""Command-line interface (typer + rich)."""

from __future__ import annotations


def main(argv: list[str] | None = None) -> int:
    """Run the CLI with ``argv`` (default: ``sys.argv[1:]``); returns the exit code."""
    raise SystemExit("ctxengine CLI is not assembled yet")
