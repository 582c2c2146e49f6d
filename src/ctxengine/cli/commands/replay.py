"""``ctxengine replay``: a session re-played call by call as a live agent would send it."""

from __future__ import annotations

from dataclasses import asdict, replace

from ctxengine.cli.load import load_target
from ctxengine.cli.options import (
    DbOpt,
    FormatOpt,
    JsonOpt,
    KeepRecentOpt,
    QuietOpt,
    SessionOpt,
    StrictOpt,
    TargetArg,
    WindowOpt,
    policy_from_options,
)
from ctxengine.cli.output import dump_json
from ctxengine.cli.progress import progress
from ctxengine.cli.views import show_replay
from ctxengine.policy.defaults import DEFAULT_WINDOW
from ctxengine.replay import replay


def replay_cmd(
    target: TargetArg = None,
    session: SessionOpt = None,
    window: WindowOpt = DEFAULT_WINDOW,
    keep_recent: KeepRecentOpt = None,
    json_out: JsonOpt = False,
    db: DbOpt = None,
    format: FormatOpt = None,
    strict: StrictOpt = False,
    quiet: QuietOpt = False,
) -> None:
    """Re-play a session as a live agent would: prepare() before every assistant message,
    validate each request for both providers, and print the timeline."""
    with progress("reading", quiet=quiet) as tracker:
        t = load_target(target, session=session, db=db, format=format, strict=strict)
        total = sum(1 for e in t.entries if e.message is not None and e.message.role == "assistant")
        tracker.step("replaying calls", total=total)
        result = replay(
            t.entries,
            window=window,
            policy=policy_from_options(keep_recent),
            on_step=lambda _s: tracker.advance(),
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
        show_replay(t.label, result)
    if result.invalid:
        raise RuntimeError(f"{result.invalid} replayed requests failed validation")
