"""The typer application: the root options and the commands of :mod:`ctxengine.cli.commands`."""

from __future__ import annotations

from typing import Annotated

import typer

from ctxengine import __version__
from ctxengine.cli.commands.bench import bench
from ctxengine.cli.commands.compact import compact
from ctxengine.cli.commands.export import export
from ctxengine.cli.commands.import_ import import_
from ctxengine.cli.commands.inspect import inspect
from ctxengine.cli.commands.recall import recall
from ctxengine.cli.commands.replay import replay_cmd
from ctxengine.cli.commands.report import report_cmd
from ctxengine.cli.commands.revert import revert
from ctxengine.cli.commands.sessions import sessions
from ctxengine.cli.output import say

# Plain help (click's): every flag without a type label, full descriptions, no boxes.
app = typer.Typer(
    add_completion=False,
    no_args_is_help=True,
    rich_markup_mode=None,
    pretty_exceptions_enable=False,
    help="Inspect, compact, replay and export LLM agent sessions.",
    epilog="Exit codes: 0 ok, 1 internal error, 2 bad input, 3 store busy, 130 interrupted, "
    "141 output pipe closed.",
)


def _show_version(value: bool) -> None:
    if value:
        say(f"ctxengine {__version__}")
        raise typer.Exit()


@app.callback()
def _root(
    version: Annotated[
        bool,
        typer.Option("--version", callback=_show_version, is_eager=True, help="Show the version."),
    ] = False,
) -> None:
    """Inspect, compact, replay and export LLM agent sessions."""


# One whole sentence each for the command list (click would cut the docstring at 45 characters).
app.command("import", short_help="Import transcript files into the store.")(import_)
app.command(short_help="List stored sessions with dates, sizes and titles.")(sessions)
app.command(short_help="Show where a session's tokens go.")(inspect)
app.command(short_help="Search a session's whole history for exact excerpts.")(recall)
app.command(short_help="Compact a session and write the request body.")(compact)
app.command(short_help="Undo a compaction of a stored session.")(revert)
app.command("replay", short_help="Re-play a session call by call.")(replay_cmd)
app.command("report", short_help="Write policies side by side as an HTML page.")(report_cmd)
app.command(short_help="Export a session's log or its next request body.")(export)
app.command(short_help="Measure which planted facts survive compactions.")(bench)
