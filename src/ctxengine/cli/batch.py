"""``ctxengine replay`` over many transcripts × policies: the transcripts a command line names,
the run in this process, and the results gathered into one report whichever way they were
run (here, or on Ray: :mod:`ctxengine.cli.cluster`).

Each transcript is replayed under every policy (:func:`~ctxengine.replay.compare.compare`, as
``replay FILE --policy …`` does), then its cache model is checked against its recorded reads.
A transcript that cannot be read, a policy whose replay raises and a cache check that raises
are each one :class:`Failure`: the other results are kept, and the command prints them, then
one error line per failure, and exits with status 1.

The batch report (``--json``), schema ``ctxengine.replay.batch/1``::

    {"schema": "ctxengine.replay.batch/1", "window": int, "sample": int,
     "tokenizer": str,                        # how tokens were counted (--tokenizer)
     "policies": [str],                       # in the order asked
     "sources": [comparison],                 # ctxengine.replay.comparison/1, in the order of
                                              # the transcripts; one that could not be read
                                              # is left out
     "totals": [{"name": str, "transcripts": int, "calls": int, "compactions": int,
                 "prunes": int, "invalid": int,
                 "input_tokens": {"billed", "uncached", "cache_read", "cache_write"},
                 "cost_usd": float}],         # per policy, over the transcripts it ran on
     "errors": [{"source": str, "policy": str|null, "error": str}],
     "skipped": [{"file": str, "reason": str}]}   # files of a folder that are no transcript
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from ctxengine.cli.comparison import (
    ComparisonSpec,
    cache_rules,
    keep_recent_note,
)
from ctxengine.cli.load import Target, report_line
from ctxengine.cli.output import Grid, error, say, show
from ctxengine.cli.views import show_comparison
from ctxengine.errors import TranscriptError, describe
from ctxengine.importers import detect, read_transcript
from ctxengine.replay.compare import Comparison, PolicyReplay, compare
from ctxengine.replay.source import check_cache

SCHEMA = "ctxengine.replay.batch/1"


@dataclass(frozen=True, slots=True)
class BatchSource:
    """One transcript of a batch.

    Attributes:
        label: how reports name it: the path as given, or the folder as given joined with
            the file's path inside it.
        path: the file, absolute (what a worker in another folder, or on another host that
            mounts the same path, reads).
    """

    label: str
    path: Path


@dataclass(frozen=True, slots=True)
class Failure:
    """One piece of a batch that failed.

    Attributes:
        source: the index of the transcript in the batch.
        policy: the policy whose replay failed; ``None`` when the transcript itself failed
            (it could not be read, or its cache check raised: ``error`` then starts with
            ``"cache check: "``).
        error: ``"<ExceptionType>: <message>"`` (a message's first line).
    """

    source: int
    policy: str | None
    error: str


def expand_targets(targets: Sequence[str]) -> tuple[list[BatchSource], list[tuple[str, str]]]:
    """The transcripts ``targets`` name, in order (each file once): a file as it is; a folder
    that an importer reads as one transcript (an OpenCode store) as it is; any other folder's
    files (not hidden, nor under a hidden folder; sorted by path) whose format is recognised.

    Returns:
        ``(sources, skipped)``: ``skipped`` holds ``(label, reason)`` of each file of a folder
        whose format no importer recognises.

    Raises:
        TranscriptError: a target that does not exist (``"file not found"``).
    """
    sources: list[BatchSource] = []
    skipped: list[tuple[str, str]] = []
    seen: set[Path] = set()

    def add(label: str, path: Path) -> None:
        resolved = path.resolve()
        if resolved not in seen:
            seen.add(resolved)
            sources.append(BatchSource(label, resolved))

    for target in targets:
        path = Path(target)
        if not path.exists():
            raise TranscriptError(target, "file not found")
        if not path.is_dir() or _reads_folder(path):
            add(target, path)
            continue
        for file in sorted(p for p in path.rglob("*") if p.is_file()):
            inside = file.relative_to(path)
            if any(part.startswith(".") for part in inside.parts):
                continue
            label = str(path / inside)
            try:
                detect(file)
            except TranscriptError as exc:
                skipped.append((label, exc.expected))
                continue
            add(label, file)
    return sources, skipped


def _reads_folder(path: Path) -> bool:
    """True when an importer reads the folder ``path`` itself as one transcript."""
    try:
        detect(path)
    except TranscriptError:
        return False
    return True


@dataclass(slots=True)
class BatchReport:
    """The results of a batch, gathered in the order of its transcripts and policies
    whatever order they came back in.

    Attributes:
        sources: the transcripts.
        spec: what every replay shares.
        comparisons: per transcript, its comparison (``None`` until it is known, and for a
            transcript that could not be read).
        failures: what failed (:meth:`to_dict` and :meth:`failure_lines` sort them).
        skipped: ``(label, reason)`` of folder files that are no transcript.
    """

    sources: list[BatchSource]
    spec: ComparisonSpec
    comparisons: list[Comparison | None] = field(default_factory=list)
    failures: list[Failure] = field(default_factory=list)
    skipped: list[tuple[str, str]] = field(default_factory=list)

    def __post_init__(self) -> None:
        if not self.comparisons:
            self.comparisons = [None] * len(self.sources)

    @property
    def names(self) -> list[str]:
        """The policies' names, in the order asked."""
        return [name for name, _ in self.spec.policies]

    @property
    def replays(self) -> int:
        """(transcript, policy) replays in the batch."""
        return len(self.sources) * len(self.spec.policies)

    def fail(self, source: int, policy: str | None, error: str) -> None:
        """Record a failure (see :class:`Failure`)."""
        self.failures.append(Failure(source, policy, error))

    def sorted_failures(self) -> list[Failure]:
        """The failures by transcript, then the transcript's own (``policy`` ``None``)
        before its policies', those in the order asked."""
        order = {name: i for i, name in enumerate(self.names)}
        return sorted(
            self.failures,
            key=lambda f: (f.source, -1 if f.policy is None else order[f.policy], f.error),
        )

    def failure_lines(self) -> list[str]:
        """One line per failure: ``"<transcript> under <policy>: <error>"``, or
        ``"<transcript>: <error>"`` when the transcript itself failed."""
        lines = []
        for f in self.sorted_failures():
            label = self.sources[f.source].label
            where = label if f.policy is None else f"{label} under {f.policy}"
            lines.append(f"{where}: {f.error}")
        return lines

    @property
    def invalid(self) -> int:
        """Replayed requests that failed validation, over every comparison."""
        return sum(r.result.invalid for c in self.comparisons if c is not None for r in c.runs)

    def totals(self) -> list[dict[str, Any]]:
        """Per policy, in the order asked, its sums over the transcripts it ran on (see the
        module docstring)."""
        out = []
        for name in self.names:
            runs = [r for c in self.comparisons if c is not None for r in c.runs if r.name == name]
            out.append(
                {
                    "name": name,
                    "transcripts": len(runs),
                    "calls": sum(len(r.steps) for r in runs),
                    "compactions": sum(r.result.compactions for r in runs),
                    "prunes": sum(r.result.prunes for r in runs),
                    "invalid": sum(r.result.invalid for r in runs),
                    "input_tokens": {
                        "billed": sum(r.billed_input for r in runs),
                        "uncached": sum(r.uncached for r in runs),
                        "cache_read": sum(r.cache_read for r in runs),
                        "cache_write": sum(r.cache_write for r in runs),
                    },
                    "cost_usd": round(sum(r.cost for r in runs), 6),
                }
            )
        return out

    def to_dict(self, *, steps: bool = False) -> dict[str, Any]:
        """The JSON view described in the module docstring."""
        return {
            "schema": SCHEMA,
            "window": self.spec.window,
            "sample": self.spec.sample,
            "tokenizer": self.spec.tokenizer.name,
            "policies": self.names,
            "sources": [c.to_dict(steps=steps) for c in self.comparisons if c is not None],
            "totals": self.totals(),
            "errors": [
                {
                    "source": self.sources[f.source].label,
                    "policy": f.policy,
                    "error": f.error,
                }
                for f in self.sorted_failures()
            ],
            "skipped": [{"file": label, "reason": reason} for label, reason in self.skipped],
        }


def show_batch(report: BatchReport) -> None:
    """Print a batch: each transcript's comparison table, then the totals per policy and
    the folder files skipped."""
    for comparison in report.comparisons:
        if comparison is not None:
            show_comparison(comparison)
    done = sum(1 for c in report.comparisons if c is not None)
    table = Grid(
        ("", *report.names),
        title=f"Totals over {done} transcript{'s' if done != 1 else ''}",
        right=frozenset(range(1, len(report.names) + 1)),
        split=True,
    )
    totals = report.totals()
    table.add("transcripts", *(f"{t['transcripts']:,}" for t in totals))
    table.add("model calls", *(f"{t['calls']:,}" for t in totals))
    table.add("compactions", *(f"{t['compactions']:,}" for t in totals))
    table.add("prunes", *(f"{t['prunes']:,}" for t in totals))
    table.add("input tokens billed", *(f"{t['input_tokens']['billed']:,}" for t in totals))
    table.add("  cache reads", *(f"{t['input_tokens']['cache_read']:,}" for t in totals))
    table.add("estimated cost", *(f"${t['cost_usd']:,.2f}" for t in totals))
    table.add("invalid requests", *(f"{t['invalid']:,}" for t in totals))
    show(table)
    for label, reason in report.skipped:
        say(f"note: skipped {label}: {reason}")


def print_failures(report: BatchReport) -> None:
    """Print one ``error:`` line per failure on stderr, then how many replays failed."""
    for line in report.failure_lines():
        error(line)
    if report.failures:
        failed = _failed_replays(report)
        what = (
            f"{failed} of {report.replays} replays failed or were not run"
            if failed
            else ("a cache check failed")
        )
        error(f"{what} (listed above); the other results are printed")


def _failed_replays(report: BatchReport) -> int:
    """Replays that produced no run: every policy of a transcript that could not be read,
    and each failed policy."""
    unread = {
        f.source
        for f in report.failures
        if f.policy is None and report.comparisons[f.source] is None
    }
    failed = {(f.source, f.policy) for f in report.failures if f.policy is not None}
    return len(unread) * len(report.names) + sum(1 for s, _ in failed if s not in unread)


#: Told that one (transcript, policy) replay ended: the transcript's index, the policy's
#: name, and its wall time in seconds (``None`` when it failed or was not run).
OnReplay = Callable[[int, str, float | None], None]


def run_local(
    report: BatchReport,
    *,
    format: str | None,
    strict: bool,
    on_replay: OnReplay,
) -> None:
    """Run every replay of ``report`` in this process (each transcript's policies with
    ``spec.jobs`` processes, as ``replay FILE --policy …``), filling ``report`` in.

    Raises:
        ConfigError: an unknown cache provider (before any replay).
    """
    spec = report.spec
    rules = cache_rules(spec)
    estimator = spec.tokenizer.session_estimator()
    for i, source in enumerate(report.sources):
        try:
            imported = read_transcript(source.path, format, strict=strict)
        except Exception as exc:
            report.fail(i, None, describe(exc))
            for name in report.names:
                on_replay(i, name, None)
            continue
        report_line(source.label, imported.report)
        target = Target(
            source.label,
            imported.session_id,
            imported.entries,
            None,
            imported.format,
            imported.report,
            source.path,
            _cwd(imported.meta),
        )

        def failed(name: str, exc: Exception, i: int = i) -> None:
            report.fail(i, name, describe(exc))
            on_replay(i, name, None)

        def ran(name: str, replayed: PolicyReplay, i: int = i) -> None:
            on_replay(i, name, replayed.seconds)

        try:
            comparison = compare(
                target.entries,
                spec.policies,
                window=spec.window,
                prices=spec.prices,
                source=target.label,
                model=spec.model,
                rules=rules,
                long_ttl=spec.long_ttl,
                sample=spec.sample,
                jobs=spec.jobs,
                cwd=target.cwd,
                on_error=failed,
                on_run=ran,
                estimator=estimator,
            )
        except Exception as exc:
            report.fail(i, None, describe(exc))
            continue
        keep_recent_note(comparison, spec)
        try:
            check = check_cache(target.entries, comparison.price.rules, long_ttl=spec.long_ttl)
        except Exception as exc:
            report.fail(i, None, f"cache check: {describe(exc)}")
        else:
            comparison.cache_check = None if check is None else check.to_dict()
        report.comparisons[i] = comparison


def _cwd(meta: Any) -> str:
    """The absolute working directory a transcript's ``meta`` records, else ``""``."""
    cwd = meta.get("cwd")
    return cwd if isinstance(cwd, str) and cwd.startswith("/") else ""


class Progress:
    """Progress of a batch's replays: counted on a rich bar on a terminal, and one plain line
    per replay on stderr when it is not a terminal (``--quiet``: neither).

    Args:
        report: the batch.
        advance: counts one replay on the bar.
        plain: write the plain lines.
    """

    def __init__(self, report: BatchReport, advance: Callable[[], None], plain: bool) -> None:
        self._report = report
        self._advance = advance
        self._plain = plain
        self._done = 0

    def __call__(self, source: int, policy: str, seconds: float | None) -> None:
        """Count the replay of ``policy`` over transcript ``source`` (``seconds`` ``None``:
        it failed or was not run)."""
        self._done += 1
        self._advance()
        if self._plain:
            label = self._report.sources[source].label
            how = "failed" if seconds is None else f"{seconds:.1f} s"
            say(
                f"[{self._done}/{self._report.replays}] {label} under {policy}: {how}",
                stderr=True,
            )
