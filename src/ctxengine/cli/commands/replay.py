"""``ctxengine replay``: a session re-played call by call as a live agent would send it; with
``--policy``, several policies side by side with cost and prompt-cache accounting."""

from __future__ import annotations

from dataclasses import asdict, replace
from typing import Annotated

import typer

from ctxengine.cli.comparison import (
    CacheProviderOpt,
    CacheTtlOpt,
    ComparisonSpec,
    JobsOpt,
    PolicyOpt,
    PriceModelOpt,
    PricesOpt,
    SampleOpt,
    run_comparison,
)
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
from ctxengine.cli.views import show_comparison, show_replay
from ctxengine.errors import ConfigError
from ctxengine.policy.defaults import DEFAULT_WINDOW
from ctxengine.replay import replay

StepsOpt = Annotated[
    bool, typer.Option("--steps", help="With --policy --json: every call of every policy.")
]


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
    policy: PolicyOpt = None,
    sample: SampleOpt = 0,
    model: PriceModelOpt = None,
    prices: PricesOpt = None,
    cache_ttl: CacheTtlOpt = "5m",
    cache_provider: CacheProviderOpt = None,
    steps: StepsOpt = False,
    jobs: JobsOpt = 0,
) -> None:
    """Re-play a session as a live agent would: prepare() before every assistant message,
    validate each request for both providers, and print the timeline. With --policy, replay
    each policy over the same session and print one table: calls, compactions, prunes,
    summarizer calls, context sizes, input tokens billed, simulated prompt-cache reads,
    writes and breaks, estimated cost, and which key facts the final context holds."""
    if steps and not (json_out and policy is not None):
        raise ConfigError("--steps lists every call of a comparison: it needs --policy and --json")
    if policy is not None:
        spec = ComparisonSpec.of(
            policy,
            keep_recent=keep_recent,
            window=window,
            prices=prices,
            model=model,
            cache_ttl=cache_ttl,
            cache_provider=cache_provider,
            sample=sample,
            jobs=jobs,
        )
        with progress("reading", quiet=quiet) as tracker:
            t = load_target(target, session=session, db=db, format=format, strict=strict)
            comparison = run_comparison(t, spec, tracker)
        if json_out:
            dump_json(comparison.to_dict(steps=steps), None)
        else:
            show_comparison(comparison)
        invalid = sum(r.result.invalid for r in comparison.runs)
        if invalid:
            raise RuntimeError(f"{invalid} replayed requests failed validation")
        return
    with progress("reading", quiet=quiet) as tracker:
        t = load_target(target, session=session, db=db, format=format, strict=strict)
        total = sum(1 for e in t.entries if e.message is not None and e.message.role == "assistant")
        tracker.step("replaying calls", total=total)
        result = replay(
            t.entries,
            window=window,
            policy=policy_from_options(keep_recent),
            sample=sample,
            on_step=lambda _s: tracker.advance(),
            cwd=t.cwd,
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
                        **asdict(replace(s, events=(), cache=None)),
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
