"""Batch replays and benchmarks on Ray (``--ray``; the optional extra ``ctxengine[ray]``).

One Ray task per (transcript, policy) replays the transcript under the policy
(:func:`~ctxengine.replay.compare.run_policy`) and computes which key facts its final context
holds; per transcript, one task reads its facts and prices (the policies' tasks wait for it)
and one checks its cache model. Results stream back as they finish (``ray.wait``) and are
gathered into the same :class:`~ctxengine.cli.batch.BatchReport` as a run in this process, in
the order of the transcripts and policies: the same tables and JSON, the same numbers. For
``bench``, one task per (session, policy) runs every k of the pair
(:func:`~ctxengine.bench.run.run_pair`).

Tasks receive what they need as data: the transcript's absolute path, the policies and price
table as values (pickled), never a live session or store. Every node must reach the transcript
paths (the same mount) and run the same Python dependencies; the driver ships its own
``ctxengine`` package to the workers (Ray's ``runtime_env`` ``py_modules``), and every result
carries the fingerprint of the ``ctxengine`` its worker imported (version and a digest of the
package's files), checked against this process's: a worker that imported another copy stops
the run with an error rather than giving different numbers.

Without ``--ray-address`` a local cluster of ``--ray-workers`` CPUs is started and shut down
at the end; with it the command joins that cluster and only disconnects.
"""

from __future__ import annotations

import hashlib
import importlib
import logging
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field, replace
from functools import cache
from pathlib import Path
from types import ModuleType
from typing import Any

import ctxengine
from ctxengine.bench.profiles import BenchPolicy, Profile
from ctxengine.bench.run import PairResult, Source, run_pair
from ctxengine.cli.batch import BatchReport, BatchSource, OnReplay
from ctxengine.cli.comparison import cache_rules, keep_recent_note
from ctxengine.cli.options import TokenizerChoice
from ctxengine.cli.output import say
from ctxengine.cost import CacheRules, PriceChoice, PriceTable
from ctxengine.errors import ConfigError, describe
from ctxengine.importers import read_transcript
from ctxengine.policy import Policy
from ctxengine.replay.compare import (
    PolicyReplay,
    add_run,
    comparison_setup,
    run_policy,
    start_comparison,
)
from ctxengine.replay.loop import CacheSetup
from ctxengine.replay.source import check_cache
from ctxengine.replay.survival import SessionFacts, Survival, session_facts, survival

#: What ``--ray`` without the extra says.
MISSING_EXTRA = "--ray needs Ray, an optional extra: pip install 'ctxengine[ray]'"


def import_ray() -> ModuleType:
    """The ``ray`` module, imported now (only ``--ray`` needs it).

    Raises:
        ConfigError: Ray is not installed (:data:`MISSING_EXTRA`).
    """
    try:
        return importlib.import_module("ray")
    except ImportError as exc:
        raise ConfigError(MISSING_EXTRA) from exc


@dataclass(frozen=True, slots=True)
class RayOptions:
    """Where the tasks run.

    Attributes:
        address: the cluster to join (``ray start --head`` printed it; ``"auto"`` finds
            one started on this host), or ``None`` to start a local one.
        workers: CPUs of the local cluster (tasks that run at once); ignored with
            ``address``.
    """

    address: str | None
    workers: int


@cache
def fingerprint() -> str:
    """``"<version> <digest>"`` of the ``ctxengine`` this process imported: its version and
    the first 16 hex digits of the sha256 over every file of the package (paths and bytes,
    sorted by path; ``__pycache__`` left out)."""
    root = Path(ctxengine.__file__).resolve().parent
    digest = hashlib.sha256()
    for path in sorted(p for p in root.rglob("*") if p.is_file()):
        rel = path.relative_to(root)
        if "__pycache__" in rel.parts or path.suffix == ".pyc":
            continue
        digest.update(rel.as_posix().encode() + b"\0" + path.read_bytes() + b"\0")
    return f"{ctxengine.__version__} {digest.hexdigest()[:16]}"


@contextmanager
def ray_cluster(options: RayOptions) -> Iterator[ModuleType]:
    """Ray, connected to the cluster ``options`` names (or to a local one started for the
    block) with this process's ``ctxengine`` shipped to its workers; disconnected (and the
    local cluster stopped) when the block ends, however it ends.

    Raises:
        ConfigError: Ray is not installed.
    """
    ray = import_ray()
    init: dict[str, Any] = {
        "include_dashboard": False,
        "log_to_driver": False,
        "logging_level": logging.ERROR,
        "runtime_env": {"py_modules": [ctxengine], "excludes": ["__pycache__", "*.pyc"]},
    }
    if options.address is None:
        ray.init(address="local", num_cpus=options.workers, **init)
    else:
        ray.init(address=options.address, **init)
    try:
        yield ray
    finally:
        ray.shutdown()


# --- replay tasks (run in the workers) -----------------------------------------------------


@dataclass(frozen=True, slots=True)
class ReplayJob:
    """What every task of a batch replay shares (sent once; plain values).

    Attributes:
        policies: ``(name, policy)`` pairs, in report order.
        window: the model window, in tokens.
        prices: the price table.
        model: the model to price (``None``: the one each transcript records).
        rules: the cache rules to simulate (``None``: the priced model's).
        long_ttl: cache writes at the long lifetime.
        sample: validate every Nth request in full (0: every request).
        format: the transcript format to read as (``None``: sniffed).
        strict: refuse a transcript at its first record that cannot be read as it is.
        tokenizer: how the replays count tokens (each task builds its estimator from it).
    """

    policies: tuple[tuple[str, Policy], ...]
    window: int
    prices: PriceTable
    model: str | None
    rules: CacheRules | None
    long_ttl: bool
    sample: int
    format: str | None
    strict: bool
    tokenizer: TokenizerChoice = field(default_factory=TokenizerChoice)


@dataclass(frozen=True, slots=True)
class SourceFacts:
    """What a transcript's policies share, read once per transcript.

    Attributes:
        choice: the prices chosen.
        timed: the transcript records times.
        facts: its key facts.
        report: what the import skipped or repaired (one line; ``""`` for nothing).
    """

    choice: PriceChoice
    timed: bool
    facts: SessionFacts
    report: str


@dataclass(frozen=True, slots=True)
class TaskResult:
    """What a task sends back.

    Attributes:
        value: its result (``None`` when it failed or was not run).
        error: ``"<ExceptionType>: <message>"`` when it failed, else ``None``.
        fingerprint: :func:`fingerprint` in the worker.
    """

    value: Any
    error: str | None
    fingerprint: str


def _read(source: BatchSource, job: ReplayJob) -> Any:
    return read_transcript(source.path, job.format, strict=job.strict)


def facts_task(source: BatchSource, job: ReplayJob) -> TaskResult:
    """Read ``source`` and return its :class:`SourceFacts` (the error, if any)."""
    try:
        imported = _read(source, job)
        choice, timed = comparison_setup(
            imported.entries, job.prices, model=job.model, rules=job.rules
        )
        facts = session_facts(imported.entries)
        value = SourceFacts(choice, timed, facts, imported.report.summary())
    except Exception as exc:
        return TaskResult(None, describe(exc), fingerprint())
    return TaskResult(value, None, fingerprint())


def replay_task(source: BatchSource, job: ReplayJob, index: int, read: TaskResult) -> TaskResult:
    """Replay ``source`` under policy ``index`` of ``job`` and return
    ``(PolicyReplay, Survival)``, the replay stripped of what a report does not read (its
    session, final context and plans); nothing when ``read`` (:func:`facts_task`) failed."""
    if read.error is not None:
        return TaskResult(None, None, fingerprint())
    known: SourceFacts = read.value
    name, policy = job.policies[index]
    try:
        imported = _read(source, job)
        replayed = run_policy(
            imported.entries,
            name,
            policy,
            window=job.window,
            estimator=job.tokenizer.session_estimator(),
            sample=job.sample,
            setup=CacheSetup(known.choice.rules, long_ttl=job.long_ttl),
            cwd=_cwd(imported.meta),
        )
        held = survival(known.facts, replayed.result.final)
    except Exception as exc:
        return TaskResult(None, describe(exc), fingerprint())
    result = replayed.result
    result.session = None
    result.final = None
    result.steps = [
        replace(s, events=tuple(replace(e, plan=None) for e in s.events)) for s in result.steps
    ]
    return TaskResult((replayed, held), None, fingerprint())


def cache_task(source: BatchSource, job: ReplayJob) -> TaskResult:
    """Check the cache model of ``source`` against its recorded reads; the check as JSON
    (``None`` when it records none)."""
    try:
        imported = _read(source, job)
        choice, _ = comparison_setup(imported.entries, job.prices, model=job.model, rules=job.rules)
        check = check_cache(imported.entries, choice.rules, long_ttl=job.long_ttl)
    except Exception as exc:
        return TaskResult(None, describe(exc), fingerprint())
    return TaskResult(None if check is None else check.to_dict(), None, fingerprint())


def _cwd(meta: Any) -> str:
    cwd = meta.get("cwd")
    return cwd if isinstance(cwd, str) and cwd.startswith("/") else ""


# --- the driver ----------------------------------------------------------------------------


def _check_fingerprint(result: TaskResult) -> None:
    """Raise when the worker imported another ``ctxengine`` than this process."""
    mine = fingerprint()
    if result.fingerprint != mine:
        raise ConfigError(
            f"a Ray worker imported ctxengine {result.fingerprint}, this process {mine}: the "
            "workers must run the same ctxengine (and its dependencies) for the results to be "
            "the same"
        )


def _system_failure(ray: ModuleType, ref: Any) -> TaskResult:
    """The result of ``ref``, or the failure Ray reports for it (a worker that died, a node
    lost …) as a :class:`TaskResult` with its first line."""
    try:
        value: TaskResult = ray.get(ref)
    except ray.exceptions.RayError as exc:
        return TaskResult(None, describe(exc), fingerprint())
    return value


def stream(ray: ModuleType, refs: list[Any]) -> Iterator[tuple[Any, TaskResult]]:
    """``(ref, result)`` of each of ``refs`` as it finishes (``ray.wait``)."""
    pending = list(refs)
    while pending:
        ready, pending = ray.wait(pending, num_returns=1)
        for ref in ready:
            result = _system_failure(ray, ref)
            if result.error is None:
                _check_fingerprint(result)
            yield ref, result


def run_on_ray(
    report: BatchReport,
    options: RayOptions,
    *,
    format: str | None,
    strict: bool,
    on_replay: OnReplay,
) -> None:
    """Run every replay of ``report`` on Ray, filling ``report`` in exactly as
    :func:`~ctxengine.cli.batch.run_local` does (see the module docstring).

    Raises:
        ConfigError: Ray is not installed; an unknown cache provider; a worker that imported
            another ``ctxengine``.
    """
    spec = report.spec
    job = ReplayJob(
        policies=tuple(spec.policies),
        window=spec.window,
        prices=spec.prices,
        model=spec.model,
        rules=cache_rules(spec),
        long_ttl=spec.long_ttl,
        sample=spec.sample,
        format=format,
        strict=strict,
        tokenizer=spec.tokenizer,
    )
    names = report.names
    # The largest transcripts first, so that the last tasks to start are short ones.
    order = sorted(range(len(report.sources)), key=lambda i: -_size(report.sources[i].path))
    with ray_cluster(options) as ray:
        shared = ray.put(job)
        remote_facts = ray.remote(facts_task)
        remote_replay = ray.remote(replay_task)
        remote_cache = ray.remote(cache_task)
        what: dict[Any, tuple[str, int, int]] = {}
        refs = []
        for i in order:
            source = report.sources[i]
            read = remote_facts.remote(source, shared)
            what[read] = ("facts", i, -1)
            refs.append(read)
            for j in range(len(names)):
                ref = remote_replay.remote(source, shared, j, read)
                what[ref] = ("replay", i, j)
                refs.append(ref)
            check = remote_cache.remote(source, shared)
            what[check] = ("cache", i, -1)
            refs.append(check)
        facts: dict[int, SourceFacts] = {}
        runs: dict[tuple[int, int], tuple[PolicyReplay, Survival]] = {}
        checks: dict[int, dict[str, Any] | None] = {}
        cache_errors: dict[int, str] = {}
        for ref, result in stream(ray, refs):
            kind, i, j = what.pop(ref)
            if kind == "facts":
                if result.error is not None:
                    report.fail(i, None, result.error)
                else:
                    facts[i] = result.value
            elif kind == "cache":
                if result.error is not None:
                    cache_errors[i] = result.error
                checks[i] = result.value
            elif result.error is not None:
                report.fail(i, names[j], result.error)
                on_replay(i, names[j], None)
            elif result.value is None:
                on_replay(i, names[j], None)  # its transcript could not be read
            else:
                runs[i, j] = result.value
                on_replay(i, names[j], result.value[0].seconds)
    for i, source in enumerate(report.sources):
        known = facts.get(i)
        if known is None:
            continue  # its failure is recorded (and its cache check's is the same one)
        if i in cache_errors:
            report.fail(i, None, f"cache check: {cache_errors[i]}")
        if known.report:
            say(f"{source.label}: {known.report}", stderr=True)
        comparison = start_comparison(
            source=source.label,
            window=spec.window,
            choice=known.choice,
            long_ttl=spec.long_ttl,
            sample=spec.sample,
            timed=known.timed,
            facts=known.facts,
            tokenizer=spec.tokenizer.name,
        )
        for j, name in enumerate(names):
            if (i, j) in runs:
                replayed, held = runs[i, j]
                add_run(comparison, name, replayed, held)
        keep_recent_note(comparison, spec)
        comparison.cache_check = checks.get(i)
        report.comparisons[i] = comparison


def _size(path: Path) -> int:
    try:
        return path.stat().st_size
    except OSError:
        return 0


# --- bench ---------------------------------------------------------------------------------


def pair_task(source: Source, policy: BenchPolicy, profile: Profile) -> TaskResult:
    """:func:`~ctxengine.bench.run.run_pair` of ``source`` under ``policy``."""
    try:
        value = run_pair(source, policy, profile)
    except Exception as exc:
        return TaskResult(None, describe(exc), fingerprint())
    return TaskResult(value, None, fingerprint())


def bench_on_ray(
    sources: list[Source],
    policies: tuple[BenchPolicy, ...],
    profile: Profile,
    options: RayOptions,
    *,
    on_pair: Callable[[int, int, PairResult | None, str | None], None],
) -> None:
    """Run every (session, policy) pair of a benchmark on Ray, telling ``on_pair`` of each
    as it finishes: the session's and policy's indexes, the pair's result (``None`` when it
    failed) and the error (``None`` when it did not).

    Raises:
        ConfigError: Ray is not installed; a worker that imported another ``ctxengine``.
    """
    with ray_cluster(options) as ray:
        remote = ray.remote(pair_task)
        shared = ray.put(profile)
        what: dict[Any, tuple[int, int]] = {}
        for i, source in enumerate(sources):
            for j, policy in enumerate(policies):
                what[remote.remote(source, policy, shared)] = (i, j)
        for ref, result in stream(ray, list(what)):
            i, j = what.pop(ref)
            on_pair(i, j, result.value, result.error)
