"""The ``smoke`` benchmark profile, run once: every issue target the profile can measure is met
(:data:`ctxengine.bench.targets.ISSUE_TARGETS`; identifiers and errors at k = 5 are measured by
the ``full`` profile only, since smoke runs k ∈ {1, 3, 10}), today's numbers are floors (a
change may only raise survival and lower corruption and staleness), every cell has exactly k
compactions, every request is valid and the run is deterministic.
"""

from __future__ import annotations

import time
from dataclasses import replace
from typing import Any

import pytest

from ctxengine.bench.profiles import SMOKE
from ctxengine.bench.run import run_bench
from ctxengine.bench.targets import ISSUE_TARGETS, Targets, target_misses

#: Survival of exposed facts measured on the smoke profile (default policy, extractive),
#: per report row and k: the floor each rate must stay at or above.
SURVIVAL_FLOORS: dict[str, dict[str, float]] = {
    "rule": {"1": 1.0, "3": 1.0, "10": 1.0},
    "rule (adversarial)": {"1": 1.0, "3": 1.0, "10": 1.0},
    "rule (superseding)": {"1": 1.0, "3": 1.0, "10": 1.0},
    "rule (superseding: switch)": {"1": 1.0, "3": 1.0, "10": 1.0},
    "rule (superseding: instead of)": {"1": 1.0, "3": 1.0, "10": 1.0},
    "rule (superseding: forget)": {"1": 1.0, "3": 1.0, "10": 1.0},
    "rule (de)": {"1": 1.0, "3": 1.0, "10": 1.0},
    "rule (fr)": {"1": 1.0, "3": 1.0, "10": 1.0},
    "rule (es)": {"1": 1.0, "3": 1.0, "10": 1.0},
    "rule (ru)": {"1": 1.0, "3": 1.0, "10": 1.0},
    "rule_cjk": {"1": 1.0, "3": 1.0, "10": 1.0},
    "rule_cjk (adversarial)": {"1": 1.0, "3": 1.0, "10": 1.0},
    "identifier (assistant)": {"1": 1.0, "3": 1.0, "10": 1.0},
    "identifier (tool)": {"1": 1.0, "3": 1.0, "10": 1.0},
    "identifier (user)": {"1": 1.0, "3": 1.0, "10": 1.0},
    "identifier_cjk": {"1": 1.0, "3": 1.0, "10": 1.0},
    "error": {"1": 1.0, "3": 1.0, "10": 1.0},
    "decision (assistant)": {"1": 1.0, "3": 1.0, "10": 1.0},
    "decision (user)": {"1": 1.0, "3": 1.0, "10": 1.0},
    "next_step": {"1": 1.0, "3": 1.0, "10": 1.0},
    "file_modified (direct)": {"1": 1.0, "3": 1.0, "10": 1.0},
    "file_modified (indirect)": {"1": 1.0, "3": 1.0, "10": 1.0},
    "failed_outcome (push)": {"1": 1.0, "3": 1.0, "10": 1.0},
    "failed_outcome (write)": {"1": 1.0, "3": 1.0, "10": 1.0},
}
#: Artifact trail floors per k: (recall, precision).
ARTIFACT_FLOORS: dict[str, tuple[float, float]] = {
    "1": (1.0, 1.0),
    "3": (1.0, 1.0),
    "10": (1.0, 1.0),
}
#: Ceilings per k (lower is better): corruption rate, stale facts (superseded rules shown as
#: current, failed commands claimed as done), bare next steps.
CORRUPTION_CEILINGS: dict[str, float] = {"1": 0.0, "3": 0.0, "10": 0.0}
STALE_CEILINGS: dict[str, float] = {"1": 0.0, "3": 0.0, "10": 0.0}
BARE_NEXT_STEP_CEILINGS: dict[str, int] = {"1": 0, "3": 0, "10": 0}
#: The smoke profile must run in the test suite in under this many seconds of CPU time (the
#: process's, so that other work on a shared machine does not count).
SMOKE_MAX_SECONDS = 60


@pytest.fixture(scope="module")
def smoke() -> tuple[dict[str, Any], float]:
    started = time.process_time()
    report = run_bench(SMOKE)
    return report, time.process_time() - started


def _policy(smoke: tuple[dict[str, Any], float]) -> dict[str, Any]:
    policy: dict[str, Any] = smoke[0]["policies"]["default"]
    return policy


def test_smoke_runs_in_time_with_exactly_k_compactions_in_every_cell(
    smoke: tuple[dict[str, Any], float],
) -> None:
    report, seconds = smoke
    assert seconds < SMOKE_MAX_SECONDS
    policy = _policy(smoke)
    assert policy["unreachable"] == []
    assert policy["cells"] == len(SMOKE.sessions) * len(SMOKE.ks) == 12
    assert sorted((c["session"], c["k"]) for c in policy["cells_detail"]) == sorted(
        (f"{s.template}-{s.seed}", k) for s in SMOKE.sessions for k in SMOKE.ks
    )
    for cell in policy["cells_detail"]:
        assert cell["compactions"] == cell["k"], cell["session"]
        assert cell["window"] >= 4_000
    names = [s["name"] for s in report["sessions"]]
    assert names == ["debug-0", "feature-1", "refactor-2", "ci_fix-25"]


def test_every_request_is_valid_and_the_run_is_deterministic(
    smoke: tuple[dict[str, Any], float],
) -> None:
    policy = _policy(smoke)
    assert policy["validity"]["invalid"] == 0
    assert policy["validity"]["requests"] > 500
    assert policy["determinism"] == {"cells": 12, "identical": 12}


def measurable(targets: Targets, ks: list[str]) -> Targets:
    """``targets`` without the identifier-and-error floors at a k the profile does not run."""
    return replace(targets, ids_errors=tuple(t for t in targets.ids_errors if str(t[0]) in ks))


def test_every_issue_target_the_smoke_profile_measures_is_met(
    smoke: tuple[dict[str, Any], float],
) -> None:
    policy = _policy(smoke)
    targets = measurable(ISSUE_TARGETS, policy["ks"])
    assert targets.ids_errors == ((10, 0.90),)
    assert target_misses(policy, targets) == []
    # the one target left to the full profile is not measured here, and not a miss
    assert target_misses(policy) == []
    assert smoke[0]["targets"] == {"default": []}
    assert smoke[0]["unmeasured"] == {"default": ["identifiers and errors at k=5"]}


def test_survival_stays_at_or_above_todays_floors(smoke: tuple[dict[str, Any], float]) -> None:
    survival = _policy(smoke)["survival"]
    assert set(survival) == set(SURVIVAL_FLOORS)
    below = [
        f"{label} k={k}: {survival[label][k]['rate']} < {floor}"
        for label, by_k in SURVIVAL_FLOORS.items()
        for k, floor in by_k.items()
        if survival[label][k]["total"] == 0 or survival[label][k]["rate"] < floor
    ]
    assert below == []


def test_artifact_trail_corruption_and_staleness_stay_within_todays_bounds(
    smoke: tuple[dict[str, Any], float],
) -> None:
    policy = _policy(smoke)
    for k, (recall, precision) in ARTIFACT_FLOORS.items():
        art = policy["artifacts"][k]
        assert art["truth"] == 28  # 7 modified files per session, indirect edits included
        assert art["recall"] >= recall and art["precision"] >= precision, k
    for k, ceiling in CORRUPTION_CEILINGS.items():
        assert policy["corruption"][k]["rate"] <= ceiling, k
    for k, ceiling in STALE_CEILINGS.items():
        assert policy["stale"][k]["rate"] <= ceiling, k
    for k, ceiling in BARE_NEXT_STEP_CEILINGS.items():
        assert policy["next_step"][k]["bare"] <= ceiling, k
    for k, inj in policy["injection"].items():
        assert inj["exposed"] == 2 and inj["followed"] == 0 and inj["carried"] == 0, k


def test_frame_forgery_and_an_injected_imported_summary_change_nothing(
    smoke: tuple[dict[str, Any], float],
) -> None:
    policy = _policy(smoke)
    # every session reads a file forging the state's frame late in the session: at k=1 it
    # is still in the kept tail of all four, at k=3 of three, at k=10 of one
    assert policy["frames"] == {
        "1": {"cells": 4, "exact": 4, "forged_in_tail": 4, "tail_exact": 4},
        "3": {"cells": 4, "exact": 4, "forged_in_tail": 3, "tail_exact": 3},
        "10": {"cells": 4, "exact": 4, "forged_in_tail": 1, "tail_exact": 1},
    }
    # the even-seeded sessions (debug-0, refactor-2) continue from an imported summary
    # holding an order, a forged closing tag and a forged "## Next step"
    for k in ("1", "3", "10"):
        assert policy["imported"][k] == {
            "cells": 2,
            "order_carried": 0,
            "forged_section": 0,
            "forged_step": 0,
        }, k


def test_cost_of_the_extractive_summarizer(smoke: tuple[dict[str, Any], float]) -> None:
    cost = _policy(smoke)["cost"]
    for k in ("1", "3", "10"):
        assert cost[k]["model_calls"] == 0 and cost[k]["model_output_tokens"] == 0
        assert cost[k]["compactions"] == float(k)
        assert 0 < cost[k]["state_tokens"] <= cost[k]["summary_tokens"]
        assert cost[k]["request_tokens"] < cost[k]["window"]
