"""``ctxengine replay``: a session re-played call by call as a live agent would send it."""

from __future__ import annotations

from dataclasses import asdict, replace
from typing import Annotated

import typer
from rich.progress import BarColumn, MofNCompleteColumn, Progress, TextColumn, TimeElapsedColumn

from ctxengine.cli.load import load_target
from ctxengine.cli.options import (
    DbOpt,
    FormatOpt,
    KeepRecentOpt,
    StrictOpt,
    WindowOpt,
    policy_from_options,
)
from ctxengine.cli.output import dump_json, err, out
from ctxengine.cli.views import show_replay
from ctxengine.policy.defaults import DEFAULT_WINDOW
from ctxengine.replay import replay

#: Below this many calls the replay runs without a progress bar.
PROGRESS_MIN_CALLS = 200


def replay_cmd(
    target: Annotated[str, typer.Argument(help="Transcript file or stored session id.")],
    window: WindowOpt = DEFAULT_WINDOW,
    keep_recent: KeepRecentOpt = None,
    json_out: Annotated[bool, typer.Option("--json", help="Print the timeline as JSON.")] = False,
    db: DbOpt = None,
    format: FormatOpt = None,
    strict: StrictOpt = False,
) -> None:
    """Re-play a session as a live agent would: prepare() before every assistant message,
    validate each request for both providers, and print the timeline."""
    t = load_target(target, db=db, format=format, strict=strict)
    total = sum(1 for e in t.entries if e.message is not None and e.message.role == "assistant")
    with Progress(
        TextColumn("replaying"),
        BarColumn(),
        MofNCompleteColumn(),
        TimeElapsedColumn(),
        console=err,
        transient=True,
        disable=total < PROGRESS_MIN_CALLS or json_out,
    ) as progress:
        task = progress.add_task("calls", total=total)
        result = replay(
            t.entries,
            window=window,
            policy=policy_from_options(keep_recent),
            on_step=lambda _s: progress.advance(task),
        )
    if json_out:
        dump_json(
            {
                "source": t.label,
                "window": window,
                "calls": len(result.steps),
                "compactions": result.compactions,
                "prunes": result.prunes,
                "invalid": result.invalid,
                "max_tokens": result.max_tokens,
                "steps": [
                    {
                        **asdict(replace(s, events=())),
                        "events": [e.to_dict(with_plan=False) for e in s.events],
                    }
                    for s in result.steps
                ],
            },
            None,
        )
    else:
        show_replay(out, t.label, result)
    if result.invalid:
        raise RuntimeError(f"{result.invalid} replayed requests failed validation")
