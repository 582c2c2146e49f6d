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
from ctxengine.cli.commands.replay import replay_cmd
from ctxengine.cli.commands.sessions import sessions
from ctxengine.cli.output import out

app = typer.Typer(
    add_completion=False,
    no_args_is_help=True,
    help="Inspect, compact, replay and export LLM agent sessions.",
)


def _show_version(value: bool) -> None:
    if value:
        out.print(f"ctxengine {__version__}")
        raise typer.Exit()


@app.callback()
def _root(
    version: Annotated[
        bool,
        typer.Option("--version", callback=_show_version, is_eager=True, help="Show the version."),
    ] = False,
) -> None:
    """Inspect, compact, replay and export LLM agent sessions."""


app.command("import")(import_)
app.command()(sessions)
app.command()(inspect)
app.command()(compact)
app.command("replay")(replay_cmd)
app.command()(export)
app.command()(bench)
