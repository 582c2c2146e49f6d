"""Running a benchmark profile: sessions × policies × k, into one report.

For each planted session (generated, then corpus) and each policy, the window giving exactly
k compactions is searched (:class:`~ctxengine.bench.windows.WindowSearch`), the session is
replayed at that window, and the final request is checked (:func:`~ctxengine.bench.cells.
evaluate`). With ``determinism`` the session is generated (or planted) again from scratch and
replayed at the same window: the final requests must hash the same.
"""

from __future__ import annotations

import time
from collections.abc import Callable
from dataclasses import dataclass
from functools import partial
from pathlib import Path
from typing import Any

from ctxengine.bench.cells import CellResult, evaluate, final_hashes
from ctxengine.bench.corpus import CorpusScan, plant_corpus, scan_corpus
from ctxengine.bench.drive import SessionFactory, compactions_at, replay_to_end
from ctxengine.bench.facts import PlantedSession
from ctxengine.bench.generator import generate
from ctxengine.bench.profiles import OFFLINE_POLICIES, BenchPolicy, Profile
from ctxengine.bench.report import policy_report
from ctxengine.bench.targets import target_misses, unmeasured_targets
from ctxengine.bench.windows import WindowSearch
from ctxengine.errors import describe
from ctxengine.policy import Policy
from ctxengine.tokens import HeuristicEstimator

#: Told of each finished cell (progress).
OnCell = Callable[[CellResult], None]


@dataclass(frozen=True, slots=True)
class Source:
    """A planted session and how to build it again (for the determinism check)."""

    name: str
    build: Callable[[], PlantedSession]


def sources(
    profile: Profile, seed: int, corpus_dir: Path | None
) -> tuple[list[Source], CorpusScan | None]:
    """The profile's sessions: generated ones, then up to ``profile.corpus`` transcripts of
    ``corpus_dir`` with the plants inserted; and the scan of ``corpus_dir`` (which files were
    used, which skipped and why), ``None`` when no corpus is read."""
    out = [
        Source(
            f"{spec.template}-{seed + spec.seed}",
            partial(generate, seed + spec.seed, template=spec.template, tokens=spec.tokens),
        )
        for spec in profile.sessions
    ]
    scan = None
    if corpus_dir is not None and profile.corpus > 0:
        scan = scan_corpus(corpus_dir, profile.corpus)
        for path in scan.used:
            out.append(Source(f"corpus:{path.name}", partial(plant_corpus, path, seed)))
    return out, scan


def corpus_report(directory: Path, scan: CorpusScan) -> dict[str, Any]:
    """The report's ``corpus`` part: the folder, the files used and the files skipped with
    their reason (paths relative to the folder)."""

    def rel(path: Path) -> str:
        return path.relative_to(directory).as_posix()

    return {
        "dir": str(directory),
        "used": [rel(p) for p in scan.used],
        "skipped": [
            {"file": rel(p), "kind": kind, "reason": reason} for p, kind, reason in scan.skipped
        ],
    }


def _count(
    planted: PlantedSession, policy: Policy, factory: SessionFactory | None, window: int
) -> int | None:
    return compactions_at(
        planted.name,
        planted.messages,
        window,
        policy,
        factory,
        imported_summary=planted.imported_summary,
    )


def session_summary(planted: PlantedSession) -> dict[str, Any]:
    """Name, template, world, dialect, messages and estimated tokens of a planted session."""
    estimator = HeuristicEstimator()
    return {
        "name": planted.name,
        "template": planted.template,
        **planted.meta,
        "messages": len(planted.messages),
        "tokens": sum(estimator.message(m) for m in planted.messages),
        "facts": len(planted.facts),
    }


def _cell_summary(cell: CellResult) -> dict[str, Any]:
    return {
        "session": cell.session,
        "k": cell.k,
        "window": cell.window,
        "compactions": cell.compactions,
        "lost": [f.id for f in cell.facts if f.exposure and f.outcome.survived is False],
        "stale": [f.id for f in cell.facts if f.outcome.stale],
        "corrupted": [f.id for f in cell.facts if f.outcome.corrupted],
        "hashes": cell.hashes,
    }


@dataclass(slots=True)
class PairResult:
    """One session under one policy, every k of the profile.

    Attributes:
        summary: the session's :func:`session_summary`.
        cells: the cells, in the order of the profile's k values.
        unreachable: ``(session, k)`` for each k no window gives exactly.
        identical: cells whose repeated replay gave the same request hashes (``None``: not
            checked: the profile checks no determinism, or the policy calls a model).
    """

    summary: dict[str, Any]
    cells: list[CellResult]
    unreachable: list[tuple[str, int]]
    identical: int | None


def run_pair(
    source: Source,
    bp: BenchPolicy,
    profile: Profile,
    *,
    planted: PlantedSession | None = None,
    on_cell: OnCell | None = None,
) -> PairResult:
    """Run every k of ``profile`` for the session ``source`` builds under ``bp``: the window
    search, the replay, the checks and (with ``profile.determinism``) the replay of a freshly
    built twin.

    Args:
        source: the session and how to build it.
        bp: the policy.
        profile: the k values and whether determinism is checked.
        planted: the session already built (default: built now).
        on_cell: told of each finished cell.

    Raises:
        TranscriptError, AssertionError: the session cannot be built (see
            :func:`~ctxengine.bench.corpus.plant_corpus`).
        ConfigError, CompactionLoopError: a replay fails.
    """
    if planted is None:
        planted = source.build()
    size = sum(HeuristicEstimator().message(m) for m in planted.messages)
    search_policy = bp.policy
    search_factory = bp.make_session
    if bp.search_offline:
        search_policy = bp.policy.model_copy(update={"summarizer": "extractive"})
        search_factory = None
    count = partial(_count, planted, search_policy, search_factory)
    search = WindowSearch(count, upper=2 * size)
    out = PairResult(session_summary(planted), [], [], 0 if profile.determinism else None)
    for k in profile.ks:
        window = search.find(k)
        if window is None:
            out.unreachable.append((planted.name, k))
            continue
        replayed = replay_to_end(
            planted.name,
            planted.messages,
            window,
            bp.policy,
            bp.make_session,
            imported_summary=planted.imported_summary,
        )
        cell = evaluate(planted, bp.name, k, window, replayed)
        out.cells.append(cell)
        if profile.determinism and bp.make_session is None:
            again = source.build()
            twin = replay_to_end(
                again.name,
                again.messages,
                window,
                bp.policy,
                validate_steps=False,
                imported_summary=again.imported_summary,
            )
            if out.identical is not None and final_hashes(twin) == cell.hashes:
                out.identical += 1
        elif bp.make_session is not None:
            out.identical = None
        if on_cell is not None:
            on_cell(cell)
    return out


#: Runs every pair of a benchmark: told the sources and policies, it calls the given
#: function with (source index, policy index, the pair's result or ``None``, the error or
#: ``None``) as each pair ends.
PairRunner = Callable[
    [
        list[Source],
        tuple[BenchPolicy, ...],
        Profile,
        Callable[[int, int, PairResult | None, str | None], None],
    ],
    None,
]


def run_bench(
    profile: Profile,
    *,
    seed: int = 0,
    policies: tuple[BenchPolicy, ...] = OFFLINE_POLICIES,
    corpus_dir: Path | None = None,
    on_cell: OnCell | None = None,
    on_error: Callable[[str, str, Exception], None] | None = None,
    runner: PairRunner | None = None,
) -> dict[str, Any]:
    """Run ``profile`` and return the report (JSON-ready).

    Args:
        profile: sessions, k values, corpus and determinism settings.
        seed: added to every session's seed offset.
        policies: the policies compared.
        corpus_dir: where corpus transcripts are looked for (``None``: no corpus sessions).
        on_cell: told of each finished cell.
        on_error: when given, a (session, policy) pair that raises an :class:`Exception` is
            handed to it (session name, policy name, exception) and listed in the report's
            ``errors``, and the other pairs go on; without it the exception propagates.
        runner: runs the pairs elsewhere (Ray) instead of one after another in this process;
            its failures are always listed in ``errors``, and ``on_cell`` is told of a
            pair's cells when the pair comes back.

    Returns:
        ``{"profile", "seed", "ks", "sessions", "policies": {name: report}, "targets":
        {name: [missed target, …]}, "unmeasured": {name: [target the profile's k values do
        not measure, …]}, "corpus": {"dir", "used", "skipped": [{"file", "kind",
        "reason"}]} or ``None``, "errors": [{"session", "policy", "error"}], "seconds"}``;
        each policy report is :func:`~ctxengine.bench.report.policy_report` plus its
        ``"cells_detail"``. A session whose every pair failed is left out of ``sessions``.
    """
    started = time.perf_counter()
    planted_sources, scan = sources(profile, seed, corpus_dir)
    pairs: dict[tuple[int, int], PairResult] = {}
    errors: list[tuple[int, int, str]] = []
    if runner is not None:

        def done(i: int, j: int, pair: PairResult | None, error: str | None) -> None:
            if pair is None:
                errors.append((i, j, error or "failed"))
                return
            pairs[i, j] = pair
            if on_cell is not None:
                for cell in pair.cells:
                    on_cell(cell)

        runner(planted_sources, policies, profile, done)
    else:
        for i, source in enumerate(planted_sources):
            try:
                planted: PlantedSession | None = source.build()
            except Exception as exc:
                if on_error is None:
                    raise
                planted = None
                for j, bp in enumerate(policies):
                    on_error(source.name, bp.name, exc)
                    errors.append((i, j, describe(exc)))
            if planted is None:
                continue
            for j, bp in enumerate(policies):
                try:
                    pairs[i, j] = run_pair(source, bp, profile, planted=planted, on_cell=on_cell)
                except Exception as exc:
                    if on_error is None:
                        raise
                    on_error(source.name, bp.name, exc)
                    errors.append((i, j, describe(exc)))
    summaries = []
    for i in range(len(planted_sources)):
        found = next((pairs[i, j] for j in range(len(policies)) if (i, j) in pairs), None)
        if found is not None:
            summaries.append(found.summary)
    reports: dict[str, Any] = {}
    for j, bp in enumerate(policies):
        mine = [pairs[i, j] for i in range(len(planted_sources)) if (i, j) in pairs]
        checked = [p.identical for p in mine]
        identical = (
            None
            if not profile.determinism or None in checked
            else sum(c for c in checked if c is not None)
        )
        cells = [c for p in mine for c in p.cells]
        rep = policy_report(
            cells,
            profile.ks,
            unreachable=[u for p in mine for u in p.unreachable],
            identical=identical,
        )
        rep["cells_detail"] = [_cell_summary(c) for c in cells]
        reports[bp.name] = rep
    return {
        "profile": profile.name,
        "seed": seed,
        "ks": list(profile.ks),
        "sessions": summaries,
        "policies": reports,
        "targets": {name: target_misses(rep) for name, rep in reports.items()},
        "unmeasured": {name: unmeasured_targets(rep) for name, rep in reports.items()},
        "corpus": None if scan is None or corpus_dir is None else corpus_report(corpus_dir, scan),
        "errors": [
            {"session": planted_sources[i].name, "policy": policies[j].name, "error": e}
            for i, j, e in sorted(errors)
        ],
        "seconds": round(time.perf_counter() - started, 1),
    }
