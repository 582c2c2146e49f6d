"""Benchmark profiles (which sessions, which k) and the policies compared.

``smoke`` runs in the test suite: one session per template, k ∈ {1, 3, 10}, no corpus.
``full``: four sessions per template from about 60k to 200k estimated tokens (about 150 to 450
messages), k ∈ {1, 2, 3, 5, 10}, and the plants inserted into three corpus transcripts.

A policy compared is a :class:`BenchPolicy`: a :class:`~ctxengine.policy.Policy` value and,
for a summarizer that needs a model, a factory of the session it runs in. A preset is one more
``BenchPolicy`` in :data:`OFFLINE_POLICIES` (the default policy is the only one today).
"""

from __future__ import annotations

from dataclasses import dataclass

from ctxengine.bench.drive import SessionFactory
from ctxengine.policy import DEFAULT_POLICY, Policy


@dataclass(frozen=True, slots=True)
class SessionSpec:
    """One generated session: template, seed offset (added to the run's seed) and size in
    estimated tokens."""

    template: str
    seed: int
    tokens: int


@dataclass(frozen=True, slots=True)
class Profile:
    """What a benchmark run covers.

    Attributes:
        name: ``"smoke"`` or ``"full"``.
        sessions: the generated sessions.
        ks: compaction counts, each replayed with a window giving exactly that many.
        corpus: corpus transcripts to plant (0: none).
        determinism: replay every cell twice from a freshly generated session and compare
            the final requests' hashes.
    """

    name: str
    sessions: tuple[SessionSpec, ...]
    ks: tuple[int, ...]
    corpus: int = 0
    determinism: bool = True


SMOKE = Profile(
    name="smoke",
    sessions=(
        # debug-0 and ci_fix-25 at 64,000 tokens: generated to 60,000 under the estimate that
        # prices words in capitals, they compact only 9 times at the 4,000-token floor (k = 10
        # unreachable); at 64,000 their k = 10 windows are 6,207 and 5,294 tokens
        SessionSpec("debug", 0, 64_000),
        SessionSpec("feature", 1, 60_000),
        SessionSpec("refactor", 2, 60_000),
        # chat-completions dialect (outputs without exit codes); seed 11 no longer reaches
        # k = 10 above the 4,000-token floor under the estimate of 2026-12-02
        SessionSpec("ci_fix", 25, 64_000),
    ),
    ks=(1, 3, 10),
)

FULL = Profile(
    name="full",
    sessions=tuple(
        SessionSpec(template, 100 + 4 * i + j, tokens)
        for i, tokens in enumerate((60_000, 100_000, 140_000, 200_000))
        for j, template in enumerate(("debug", "feature", "refactor", "ci_fix"))
    ),
    ks=(1, 2, 3, 5, 10),
    corpus=3,
)

PROFILES: dict[str, Profile] = {p.name: p for p in (SMOKE, FULL)}


@dataclass(frozen=True, slots=True)
class BenchPolicy:
    """A policy compared by the benchmark.

    Attributes:
        name: the report's label (``"default"``, ``"default+hybrid"``).
        policy: the policy value.
        make_session: builds the session for a window, for a summarizer that needs a model
            (``None``: :func:`ctxengine.replay.replay` builds it from ``policy``).
        search_offline: choose the windows with the policy's deterministic twin
            (``policy`` with the extractive summarizer, no model calls) and replay the model
            once per k at that window; its compactions may then differ from k by a few, and
            the cell records how many happened.
    """

    name: str
    policy: Policy
    make_session: SessionFactory | None = None
    search_offline: bool = False


#: The policies that run without a model: the default policy (extractive summarizer).
OFFLINE_POLICIES: tuple[BenchPolicy, ...] = (BenchPolicy("default", DEFAULT_POLICY),)
