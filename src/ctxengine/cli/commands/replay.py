"""``ctxengine replay``: a session re-played call by call as a live agent would send it; with
``--policy``, several policies side by side with cost and prompt-cache accounting; over several
transcripts or folders, every transcript × every policy (:mod:`ctxengine.cli.batch`), in this
process or, with ``--ray``, on a Ray cluster (:mod:`ctxengine.cli.cluster`)."""

from __future__ import annotations

from dataclasses import asdict, replace
from pathlib import Path
from typing import Annotated

import typer

from ctxengine.cli.batch import (
    BatchReport,
    Progress,
    expand_targets,
    print_failures,
    run_local,
    show_batch,
)
from ctxengine.cli.comparison import (
    CacheProviderOpt,
    CacheTtlOpt,
    ComparisonSpec,
    JobsOpt,
    PolicyOpt,
    PriceModelOpt,
    PricesOpt,
    SampleOpt,
    jobs_of,
    run_comparison,
)
from ctxengine.cli.load import load_target
from ctxengine.cli.options import (
    DbOpt,
    FormatOpt,
    JsonOpt,
    KeepRecentOpt,
    QuietOpt,
    RayAddressOpt,
    RayOpt,
    RayWorkersOpt,
    SessionOpt,
    StrictOpt,
    TokenizerOpt,
    WindowOpt,
    policy_from_options,
    resolve_tokenizer,
)
from ctxengine.cli.output import dump_json
from ctxengine.cli.progress import progress, progress_wanted
from ctxengine.cli.views import show_comparison, show_replay
from ctxengine.errors import ConfigError, TranscriptError
from ctxengine.policy.defaults import DEFAULT_WINDOW
from ctxengine.replay import replay

StepsOpt = Annotated[
    bool, typer.Option("--steps", help="With --policy --json: every call of every policy.")
]
TargetsArg = Annotated[
    list[str] | None,
    typer.Argument(
        metavar="FILE|DIR|SESSION...",
        help="Transcript file or stored session id (or give the id with --session); with "
        "--policy also several files and folders (every transcript a folder holds): each "
        "is replayed under every policy.",
        show_default=False,
    ),
]


def replay_cmd(
    targets: TargetsArg = None,
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
    ray: RayOpt = False,
    ray_address: RayAddressOpt = None,
    ray_workers: RayWorkersOpt = None,
    tokenizer: TokenizerOpt = "auto",
) -> None:
    """Re-play a session as a live agent would: prepare() before every assistant message,
    validate each request for both providers, and print the timeline. With --policy, replay
    each policy over the same session and print one table: calls, compactions, prunes,
    summarizer calls, context sizes, input tokens billed, simulated prompt-cache reads,
    writes and breaks, estimated cost, and which key facts the final context holds. Given
    several transcripts or folders (or --ray), every transcript is compared so, then the
    totals per policy; a transcript or policy that fails is named on stderr, the others are
    printed, and the exit status is 1. --tokenizer auto counts for --model's tokenizer when
    --model is given."""
    counting = resolve_tokenizer(tokenizer, model)
    estimator = counting.session_estimator()  # an exact count without tiktoken fails now
    if steps and not (json_out and policy is not None):
        raise ConfigError("--steps lists every call of a comparison: it needs --policy and --json")
    names = targets or []
    ray = ray or ray_address is not None
    if ray_workers is not None and not ray:
        raise ConfigError("--ray-workers sizes the local Ray cluster: it needs --ray")
    if ray_workers is not None and ray_address is not None:
        raise ConfigError(
            "--ray-workers sizes a local Ray cluster; the cluster --ray-address joins has its own"
        )
    if ray or len(names) > 1 or any(Path(n).is_dir() for n in names):
        if policy is None:
            raise ConfigError(
                "several transcripts, a folder or --ray replay policies side by side: give "
                "--policy NAMES (or --policy all)"
            )
        if session is not None:
            raise ConfigError("--session names one stored session: give transcript files here")
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
            tokenizer=counting,
        )
        _batch(
            names,
            spec,
            ray=ray,
            ray_address=ray_address,
            ray_workers=ray_workers,
            json_out=json_out,
            steps=steps,
            format=format,
            strict=strict,
            quiet=quiet,
        )
        return
    target = names[0] if names else None
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
            tokenizer=counting,
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
            estimator=estimator,
        )
    if json_out:
        dump_json(
            {
                "source": t.label,
                "window": window,
                "tokenizer": counting.name,
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


def _batch(
    names: list[str],
    spec: ComparisonSpec,
    *,
    ray: bool,
    ray_address: str | None,
    ray_workers: int | None,
    json_out: bool,
    steps: bool,
    format: str | None,
    strict: bool,
    quiet: bool,
) -> None:
    """Replay every transcript ``names`` holds under every policy of ``spec`` (here or on
    Ray) and print the results: one file's comparison as ``replay FILE --policy`` prints it,
    several as a batch (:mod:`ctxengine.cli.batch`).

    Raises:
        TranscriptError: a target that does not exist or is not a file or folder (a stored
            session id).
        ConfigError: Ray is not installed; an unknown cache provider.
        typer.Exit: some replay failed (status 1), after the other results are printed.
        RuntimeError: some replayed request failed validation.
    """
    for name in names:
        if not Path(name).exists():
            raise TranscriptError(
                name,
                "file not found (several transcripts and --ray replay files and folders, "
                "not stored sessions)",
            )
    sources, skipped = expand_targets(names)
    one = len(names) == 1 and Path(names[0]).is_file()
    report = BatchReport(sources, spec, skipped=skipped)
    options = None
    if ray:
        from ctxengine.cli.cluster import RayOptions, import_ray

        import_ray()  # the missing extra is said before any work
        options = RayOptions(ray_address, ray_workers or jobs_of(0))
    with progress("replaying", total=report.replays, quiet=quiet) as tracker:
        on_replay = Progress(report, tracker.advance, not quiet and not progress_wanted(quiet))
        if options is None:
            run_local(report, format=format, strict=strict, on_replay=on_replay)
        else:
            from ctxengine.cli.cluster import run_on_ray

            run_on_ray(report, options, format=format, strict=strict, on_replay=on_replay)
    if one:
        comparison = report.comparisons[0]
        if comparison is not None:
            if json_out:
                dump_json(comparison.to_dict(steps=steps), None)
            else:
                show_comparison(comparison)
    elif json_out:
        dump_json(report.to_dict(steps=steps), None)
    else:
        show_batch(report)
    print_failures(report)
    if report.failures:
        raise typer.Exit(1)
    if report.invalid:
        raise RuntimeError(f"{report.invalid} replayed requests failed validation")
