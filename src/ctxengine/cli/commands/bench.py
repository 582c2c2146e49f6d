"""``ctxengine bench``: the fact-survival benchmark of the continuation state.

Generated coding sessions (and, with ``--corpus``, real transcripts) carry planted facts; each
is replayed with the window that gives exactly k compactions and the final request is checked
fact by fact (:mod:`ctxengine.bench`). Prints tables (plain text when piped) or, with
``--json``, the whole report.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import replace
from pathlib import Path
from typing import Annotated, Any

import typer

from ctxengine.bench.cells import CellResult
from ctxengine.bench.corpus import MIN_TOKENS
from ctxengine.bench.profiles import OFFLINE_POLICIES, PROFILES, BenchPolicy, Profile
from ctxengine.bench.run import PairResult, PairRunner, Source, run_bench
from ctxengine.cli.comparison import jobs_of
from ctxengine.cli.options import QuietOpt, RayAddressOpt, RayOpt, RayWorkersOpt
from ctxengine.cli.output import Grid, dump_json, error, note, say, show
from ctxengine.cli.progress import progress as progress_display
from ctxengine.cli.summary import choose_summarizer
from ctxengine.engine import Session
from ctxengine.errors import ConfigError
from ctxengine.policy import DEFAULT_POLICY, Policy

#: Corpus transcripts a profile without corpus sessions (smoke) plants when ``--corpus`` is
#: given: one, so that the run stays short.
SMOKE_CORPUS_FILES = 1
#: Skip reasons listed file by file (the others are counted): a file too large or with too
#: few user messages is a transcript the user may have expected to be used.
LISTED_SKIPS = frozenset({"too_large", "few_users"})
#: How the counted skip reasons are named.
SKIP_NOUNS = {
    "too_small": f"under {MIN_TOKENS:,} estimated tokens",
    "unreadable": "not transcripts ctxengine reads",
}

#: Model summarizers compared when a summary model is given.
MODEL_SUMMARIZERS: tuple[str, ...] = ("llm", "hybrid")


def _model_policies(
    model: str, base_url: str | None, api_key: str | None
) -> tuple[BenchPolicy, ...]:
    """The default policy with each model summarizer, each cell with a fresh summarizer
    (so its calls and tokens are counted per cell)."""
    found = []
    for kind in MODEL_SUMMARIZERS:
        policy = DEFAULT_POLICY.model_copy(update={"summarizer": kind})
        # resolve once now, so a bad model spec fails before the run
        choose_summarizer(kind, model, policy=policy, base_url=base_url, api_key=api_key)

        def make(window: int, k: str = kind, p: Policy = policy) -> Session:
            choice = choose_summarizer(k, model, policy=p, base_url=base_url, api_key=api_key)
            return Session(window, policy=p, summarizer=choice.summarizer)

        found.append(BenchPolicy(f"default+{kind}", policy, make, search_offline=True))
    return tuple(found)


def bench(
    profile: Annotated[
        str, typer.Option("--profile", help=f"One of: {', '.join(PROFILES)}.")
    ] = "smoke",
    seed: Annotated[int, typer.Option("--seed", help="Added to every session's seed.")] = 0,
    json_out: Annotated[bool, typer.Option("--json", help="Print the report as JSON.")] = False,
    corpus: Annotated[
        Path | None,
        typer.Option(
            "--corpus",
            help=(
                "Folder of transcripts to insert the plants into (full: 3; smoke: 1); the "
                "files skipped are listed with the reason."
            ),
            exists=True,
            file_okay=False,
        ),
    ] = None,
    ks: Annotated[
        list[int] | None,
        typer.Option("--k", min=1, help="Compaction counts to run instead of the profile's."),
    ] = None,
    sessions: Annotated[
        int | None,
        typer.Option("--sessions", min=1, help="Run only the first N generated sessions."),
    ] = None,
    summary_model: Annotated[
        str | None,
        typer.Option(
            "--summary-model",
            help="provider:model: also compare the llm and hybrid summarizers (model calls).",
        ),
    ] = None,
    base_url: Annotated[
        str | None, typer.Option("--base-url", help="Summary model base URL (else SDK env).")
    ] = None,
    api_key: Annotated[
        str | None, typer.Option("--api-key", help="Summary model API key (else SDK env).")
    ] = None,
    quiet: QuietOpt = False,
    ray: RayOpt = False,
    ray_address: RayAddressOpt = None,
    ray_workers: RayWorkersOpt = None,
) -> None:
    """Measure which planted facts survive k = 1…10 compactions in the request the model
    receives: survival by fact type and by exposure, artifact trail, corruption, staleness,
    injection, protocol validity, determinism and cost. With --ray, one Ray task per
    (session, policy) runs its every k; the report is the same. A pair that fails is named
    on stderr (and under errors in --json), the others are reported, and the exit status is
    1."""
    ray = ray or ray_address is not None
    if ray_workers is not None and not ray:
        raise ConfigError("--ray-workers sizes the local Ray cluster: it needs --ray")
    if ray_workers is not None and ray_address is not None:
        raise ConfigError(
            "--ray-workers sizes a local Ray cluster; the cluster --ray-address joins has its own"
        )
    runner: PairRunner | None = None
    if ray:
        from ctxengine.cli.cluster import RayOptions, bench_on_ray, import_ray

        import_ray()  # the missing extra is said before any work
        options = RayOptions(ray_address, ray_workers or jobs_of(0))

        def on_ray(
            sources: list[Source],
            policies: tuple[BenchPolicy, ...],
            profile: Profile,
            done: Callable[[int, int, PairResult | None, str | None], None],
        ) -> None:
            bench_on_ray(sources, policies, profile, options, on_pair=done)

        runner = on_ray
    chosen = PROFILES.get(profile)
    if chosen is None:
        raise typer.BadParameter(f"expected one of {', '.join(PROFILES)}", param_hint="--profile")
    if ks:
        chosen = replace(chosen, ks=tuple(sorted(set(ks))))
    if sessions is not None:
        chosen = replace(chosen, sessions=chosen.sessions[:sessions])
    policies = OFFLINE_POLICIES
    if summary_model is not None:
        policies = policies + _model_policies(summary_model, base_url, api_key)
    if chosen.corpus and corpus is None and not json_out:
        note("no --corpus folder given: corpus sessions are skipped")
    if corpus is not None and not chosen.corpus:
        chosen = replace(chosen, corpus=SMOKE_CORPUS_FILES)
        if not json_out:
            note(
                f"the {chosen.name} profile plants no corpus transcripts of its own; "
                f"--corpus adds {SMOKE_CORPUS_FILES} from {corpus}"
            )

    cells = 0

    def progress(cell: CellResult) -> None:
        nonlocal cells
        cells += 1
        tracker.describe(f"benchmark: {cells} cells done")
        if not json_out and not quiet:
            say(f"  {cell.policy} {cell.session} k={cell.k}: window {cell.window:,}", stderr=True)

    def failed(session: str, policy: str, exc: Exception) -> None:
        """Nothing now: the failures are listed from the report, as a runner's are."""

    with progress_display("benchmark", quiet=quiet) as tracker:
        report = run_bench(
            chosen,
            seed=seed,
            policies=policies,
            corpus_dir=corpus.resolve() if corpus is not None and ray else corpus,
            on_cell=progress,
            on_error=failed,
            runner=runner,
        )
    if json_out:
        dump_json(report, None)
    else:
        show_bench(report)
    for e in report["errors"]:
        error(f"session {e['session']} under {e['policy']}: {e['error']}")
    if report["errors"]:
        error(
            f"{len(report['errors'])} (session, policy) pairs failed (listed above); the "
            "other results are printed"
        )
        raise typer.Exit(1)


def _pct(shown: int, total: int) -> str:
    return f"{100 * shown / total:.0f} % ({shown}/{total})" if total else "–"


def _mean(value: float | None) -> str:
    if value is None:
        return "–"
    return f"{value:,.0f}" if abs(value) >= 100 else f"{value:,.1f}"


def _rate(value: float | None) -> str:
    return "–" if value is None else f"{value:.3f}"


def show_bench(report: dict[str, Any]) -> None:
    """Print a benchmark report: one set of tables per policy."""
    sessions = report["sessions"]
    say(
        f"ctxengine bench — profile {report['profile']}, seed {report['seed']}, "
        f"{len(sessions)} sessions "
        f"({min(s['messages'] for s in sessions)}–{max(s['messages'] for s in sessions)} "
        f"messages, {min(s['tokens'] for s in sessions):,}–{max(s['tokens'] for s in sessions):,}"
        f" tokens), k ∈ {{{', '.join(map(str, report['ks']))}}}, {report['seconds']} s"
    )
    corpus = report.get("corpus")
    if corpus is not None:
        _show_corpus(corpus)
    for name, rep in report["policies"].items():
        ks = rep["ks"]
        numbers = frozenset(range(1, len(ks) + 1))
        table = Grid(
            ("fact", *(f"k={k}" for k in ks)),
            title=f"{name}: survival of exposed facts",
            right=numbers,
        )
        for label, by_k in rep["survival"].items():
            table.add(
                label, *(_pct(by_k[k]["shown"], by_k[k]["total"]) if k in by_k else "–" for k in ks)
            )
        show(table)
        exp = Grid(
            ("exposure j", "survival"), title=f"{name}: survival by exposure", right=frozenset({1})
        )
        for j, v in rep["exposure"].items():
            exp.add(j, _pct(v["shown"], v["total"]))
        show(exp)
        show(_metrics_table(name, rep))
        validity = rep["validity"]
        det = rep["determinism"]
        say(
            f"{name}: {validity['invalid']} of {validity['requests']} requests invalid; "
            + (
                "determinism not checked"
                if det is None
                else f"determinism {det['identical']}/{det['cells']} identical request hashes"
            )
        )
        for miss in rep["unreachable"]:
            say(f"{name}: {miss['session']}: no window ≥ the floor gives exactly k={miss['k']}")
        misses = report["targets"][name]
        unmeasured = report.get("unmeasured", {}).get(name, [])
        met = "all met" if not unmeasured else "all measured ones met"
        say(f"{name}: issue targets " + (met if not misses else f"missed ({len(misses)}):"))
        for m in misses:
            say(f"  - {m}")
        if unmeasured:
            say(
                f"{name}: not measured in this profile (its k is not run; --k or --profile "
                f"full): {'; '.join(unmeasured)}"
            )


def _show_corpus(corpus: dict[str, Any]) -> None:
    """Which corpus transcripts were used, and why the others looked at were not."""
    used = corpus["used"]
    say(
        f"corpus {corpus['dir']}: {len(used)} transcript{'s' if len(used) != 1 else ''} used"
        + (f": {', '.join(used)}" if used else "")
    )
    counted: dict[str, int] = {}
    for skip in corpus["skipped"]:
        if skip["kind"] in LISTED_SKIPS:
            say(f"corpus: skipped {skip['file']}: {skip['reason']}")
        else:
            counted[skip["kind"]] = counted.get(skip["kind"], 0) + 1
    if counted:
        parts = [f"{n} {SKIP_NOUNS.get(kind, kind)}" for kind, n in sorted(counted.items())]
        say(f"corpus: also skipped {', '.join(parts)} (see --json for each file)")


def _metrics_table(name: str, rep: dict[str, Any]) -> Grid:
    ks = rep["ks"]
    table = Grid(
        ("metric", *(f"k={k}" for k in ks)),
        title=f"{name}: trail, errors, cost",
        right=frozenset(range(1, len(ks) + 1)),
    )

    def row(label: str, section: str, fmt: Any) -> None:
        values = rep[section]
        table.add(label, *(fmt(values[k]) if k in values else "–" for k in ks))

    row("modified-file recall", "artifacts", lambda v: _rate(v["recall"]))
    row("modified-file precision", "artifacts", lambda v: _rate(v["precision"]))
    row("corruption", "corruption", lambda v: _pct(v["corrupted"], v["total"]))
    row("stale superseded rule", "stale", lambda v: _pct(v["stale"], v["total"]))
    row("bare next step", "next_step", lambda v: _pct(v["bare"], v["total"]))
    row("injection followed", "injection", lambda v: _pct(v["followed"], v["exposed"]))
    row("injection carried", "injection", lambda v: _pct(v["carried"], v["exposed"]))
    row("frame tags exact (1 open, 1 close)", "frames", lambda v: _pct(v["exact"], v["cells"]))
    row(
        "  with forged tags in the tail",
        "frames",
        lambda v: _pct(v["tail_exact"], v["forged_in_tail"]),
    )
    row("imported order carried", "imported", lambda v: _pct(v["order_carried"], v["cells"]))
    row("imported forged section", "imported", lambda v: _pct(v["forged_section"], v["cells"]))
    row("imported forged next step", "imported", lambda v: _pct(v["forged_step"], v["cells"]))
    for label, key in (
        ("window (mean tokens)", "window"),
        ("compactions (mean)", "compactions"),
        ("prunes (mean)", "prunes"),
        ("summarizer model calls", "model_calls"),
        ("summary model output tokens", "model_output_tokens"),
        ("summary tokens written", "summary_tokens"),
        ("state tokens in request", "state_tokens"),
        ("request tokens", "request_tokens"),
        ("peak request tokens", "peak_tokens"),
    ):
        row(label, "cost", lambda v, key=key: _mean(v[key]))
    return table
