"""The typer application: the root options and the commands of :mod:`ctxengine.cli.commands`.

A command's module (and what it imports: the engine, the importers, the store, rich) is
imported only when that command is run or its help is shown: the command list of
``ctxengine --help`` comes from :data:`COMMANDS`, so the root help and ``--version`` read
none of them.
"""

from __future__ import annotations

import inspect
from collections.abc import Iterator, MutableMapping
from dataclasses import dataclass
from importlib import import_module
from typing import Annotated, Any

import typer
from typer.core import TyperGroup

from ctxengine import __version__


@dataclass(frozen=True, slots=True)
class LazyCommand:
    """A command registered by where its function lives.

    Attributes:
        module: the module that defines the command's function.
        function: the function's name in ``module``; its signature gives the options.
        short_help: the line ``ctxengine --help`` shows for it (one whole sentence: click
            would cut the docstring at 45 characters).
    """

    module: str
    function: str
    short_help: str


#: The commands in the order ``ctxengine --help`` lists them, by the name they are run as.
COMMANDS: dict[str, LazyCommand] = {
    "import": LazyCommand(
        "ctxengine.cli.commands.import_", "import_", "Import transcript files into the store."
    ),
    "sessions": LazyCommand(
        "ctxengine.cli.commands.sessions",
        "sessions",
        "List stored sessions with dates, sizes and titles.",
    ),
    "inspect": LazyCommand(
        "ctxengine.cli.commands.inspect", "inspect", "Show where a session's tokens go."
    ),
    "recall": LazyCommand(
        "ctxengine.cli.commands.recall",
        "recall",
        "Search a session's whole history for exact excerpts.",
    ),
    "compact": LazyCommand(
        "ctxengine.cli.commands.compact",
        "compact",
        "Compact a session and write the request body.",
    ),
    "revert": LazyCommand(
        "ctxengine.cli.commands.revert", "revert", "Undo a compaction of a stored session."
    ),
    "handoff": LazyCommand(
        "ctxengine.cli.commands.handoff",
        "handoff",
        "Continue a stored session in a new one and write its request body.",
    ),
    "replay": LazyCommand(
        "ctxengine.cli.commands.replay", "replay_cmd", "Re-play a session call by call."
    ),
    "report": LazyCommand(
        "ctxengine.cli.commands.report",
        "report_cmd",
        "Write policies side by side as an HTML page.",
    ),
    "export": LazyCommand(
        "ctxengine.cli.commands.export",
        "export",
        "Export a session's log or its next request body.",
    ),
    "migrate": LazyCommand(
        "ctxengine.cli.commands.migrate",
        "migrate",
        "Copy every session of one store into another (SQLite to PostgreSQL).",
    ),
    "serve": LazyCommand(
        "ctxengine.cli.commands.serve",
        "serve",
        "Run the compacting proxy in front of an OpenAI or Anthropic API.",
    ),
    "bench": LazyCommand(
        "ctxengine.cli.commands.bench",
        "bench",
        "Measure which planted facts survive compactions.",
    ),
}


def build_command(name: str, spec: LazyCommand) -> Any:
    """The click command ``name`` of ``spec``: its module imported and its function turned
    into a command by typer, as :meth:`typer.Typer.command` would register it on the root.

    Raises:
        ImportError, AttributeError: ``spec`` names a module or function that does not exist.
    """
    function = getattr(import_module(spec.module), spec.function)
    single = typer.Typer(
        add_completion=False, rich_markup_mode=None, pretty_exceptions_enable=False
    )
    single.command(name, short_help=spec.short_help)(function)
    return typer.main.get_command(single)


class _Commands(MutableMapping[str, Any]):
    """The root group's commands by name: every name of :data:`COMMANDS` is listed from the
    start, and its command is built on first access (:func:`build_command`)."""

    def __init__(self, built: MutableMapping[str, Any]) -> None:
        self._built = dict(built)
        self._names = [*COMMANDS, *(n for n in built if n not in COMMANDS)]

    def __getitem__(self, name: str) -> Any:
        if name not in self._built:
            if name not in COMMANDS:
                raise KeyError(name)
            self._built[name] = build_command(name, COMMANDS[name])
        return self._built[name]

    def __setitem__(self, name: str, command: Any) -> None:
        if name not in self._names:
            self._names.append(name)
        self._built[name] = command

    def __delitem__(self, name: str) -> None:
        self._names.remove(name)
        self._built.pop(name, None)

    def __iter__(self) -> Iterator[str]:
        return iter(self._names)

    def __len__(self) -> int:
        return len(self._names)

    def short_help(self, name: str, limit: int) -> str:
        """What the command list shows for ``name``: the short help of :data:`COMMANDS`
        (cleaned as click cleans it) while the command is not built, else the command's own
        (:meth:`click.Command.get_short_help_str`, cut to ``limit`` characters)."""
        built = self._built.get(name)
        if built is None:
            return inspect.cleandoc(COMMANDS[name].short_help).strip()
        text: str = built.get_short_help_str(limit)
        return text


class LazyGroup(TyperGroup):
    """The root group: its commands are :class:`_Commands`, so listing them (the root help,
    a suggestion for a mistyped command) imports no command module; running one imports
    only its own."""

    def __init__(self, **attrs: Any) -> None:
        super().__init__(**attrs)
        self.commands = _Commands(self.commands)

    def list_commands(self, ctx: Any) -> list[str]:
        """The command names in :data:`COMMANDS` order (nothing built)."""
        return list(self.commands)

    def format_commands(self, ctx: Any, formatter: Any) -> None:
        """The ``Commands:`` section, as click writes it, without building a command: a
        command of :data:`COMMANDS` is never hidden."""
        commands = self.commands
        assert isinstance(commands, _Commands)
        names = [
            n
            for n in self.list_commands(ctx)
            if n in COMMANDS or not commands[n].hidden  # a command added by other means
        ]
        if not names:
            return
        limit = formatter.width - 6 - max(len(n) for n in names)
        rows = [(n, commands.short_help(n, limit)) for n in names]
        with formatter.section("Commands"):
            formatter.write_dl(rows)


# Plain help (click's): every flag without a type label, full descriptions, no boxes.
app = typer.Typer(
    cls=LazyGroup,
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
        from ctxengine.cli.output import say

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
