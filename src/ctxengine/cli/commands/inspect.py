"""``ctxengine inspect``: where a session's tokens go."""

from __future__ import annotations

from dataclasses import asdict
from typing import Annotated

import typer

from ctxengine.analysis import breakdown
from ctxengine.cli.load import load_target
from ctxengine.cli.options import DbOpt, FormatOpt, StrictOpt
from ctxengine.cli.output import dump_json, out
from ctxengine.cli.views import show_breakdown
from ctxengine.tokens.estimate import HeuristicEstimator


def inspect(
    target: Annotated[str, typer.Argument(help="Transcript file or stored session id.")],
    db: DbOpt = None,
    format: FormatOpt = None,
    strict: StrictOpt = False,
    top: Annotated[int, typer.Option(help="Largest entries to list.")] = 10,
    json_out: Annotated[bool, typer.Option("--json", help="Print JSON instead.")] = False,
) -> None:
    """Token breakdown by role, by tool, top consumers and epochs."""
    t = load_target(target, db=db, format=format, strict=strict)
    b = breakdown(t.entries, HeuristicEstimator(), top=top)
    if json_out:
        dump_json(asdict(b), None)
    else:
        show_breakdown(out, t.label, b)
