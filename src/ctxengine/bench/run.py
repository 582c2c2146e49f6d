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


def run_bench(
    profile: Profile,
    *,
    seed: int = 0,
    policies: tuple[BenchPolicy, ...] = OFFLINE_POLICIES,
    corpus_dir: Path | None = None,
    on_cell: OnCell | None = None,
) -> dict[str, Any]:
    """Run ``profile`` and return the report (JSON-ready).

    Args:
        profile: sessions, k values, corpus and determinism settings.
        seed: added to every session's seed offset.
        policies: the policies compared.
        corpus_dir: where corpus transcripts are looked for (``None``: no corpus sessions).
        on_cell: told of each finished cell.

    Returns:
        ``{"profile", "seed", "ks", "sessions", "policies": {name: report}, "targets":
        {name: [missed target, …]}, "unmeasured": {name: [target the profile's k values do
        not measure, …]}, "corpus": {"dir", "used", "skipped": [{"file", "kind",
        "reason"}]} or ``None``, "seconds"}``; each policy report is
        :func:`~ctxengine.bench.report.policy_report` plus its ``"cells"``.
    """
    started = time.perf_counter()
    estimator = HeuristicEstimator()
    cells: dict[str, list[CellResult]] = {p.name: [] for p in policies}
    unreachable: dict[str, list[tuple[str, int]]] = {p.name: [] for p in policies}
    identical: dict[str, int | None] = {
        p.name: 0 if profile.determinism else None for p in policies
    }
    summaries = []
    planted_sources, scan = sources(profile, seed, corpus_dir)
    for source in planted_sources:
        planted = source.build()
        summaries.append(session_summary(planted))
        size = sum(estimator.message(m) for m in planted.messages)
        for bp in policies:
            search_policy = bp.policy
            search_factory = bp.make_session
            if bp.search_offline:
                search_policy = bp.policy.model_copy(update={"summarizer": "extractive"})
                search_factory = None

            count = partial(_count, planted, search_policy, search_factory)
            search = WindowSearch(count, upper=2 * size)
            for k in profile.ks:
                window = search.find(k)
                if window is None:
                    unreachable[bp.name].append((planted.name, k))
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
                cells[bp.name].append(cell)
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
                    count_ok = identical[bp.name]
                    if count_ok is not None and final_hashes(twin) == cell.hashes:
                        identical[bp.name] = count_ok + 1
                elif bp.make_session is not None:
                    identical[bp.name] = None
                if on_cell is not None:
                    on_cell(cell)
    reports: dict[str, Any] = {}
    for bp in policies:
        rep = policy_report(
            cells[bp.name],
            profile.ks,
            unreachable=unreachable[bp.name],
            identical=identical[bp.name],
        )
        rep["cells_detail"] = [_cell_summary(c) for c in cells[bp.name]]
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
        "seconds": round(time.perf_counter() - started, 1),
    }
