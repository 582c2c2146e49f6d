"""The issue's targets evaluated on a report (not asserted on today's numbers)."""

from __future__ import annotations

from typing import Any

from ctxengine.bench.targets import ISSUE_TARGETS, target_misses, unmeasured_targets


def _row(shown: int, total: int) -> dict[str, Any]:
    return {"shown": shown, "total": total, "rate": shown / total if total else None}


def _report(**changes: Any) -> dict[str, Any]:
    ks = ["1", "5", "10"]
    report: dict[str, Any] = {
        "ks": ks,
        "survival": {
            "rule": {k: _row(4, 4) for k in ks},
            "rule_cjk (adversarial)": {k: _row(2, 2) for k in ks},
            "identifier (user)": {k: _row(19, 20) for k in ks},
            "error": {k: _row(20, 20) for k in ks},
            "next_step": {k: _row(4, 4) for k in ks},
        },
        "stale": {k: {"stale": 0, "total": 4} for k in ks},
        "artifacts": {"10": {"recall": 0.99, "precision": 0.96}},
        "corruption": {k: {"corrupted": 0, "total": 40} for k in ks},
    }
    report.update(changes)
    return report


def test_a_report_meeting_every_target_misses_none() -> None:
    assert ISSUE_TARGETS.ids_errors == ((5, 0.95), (10, 0.90))
    assert target_misses(_report()) == []


def test_each_missed_target_is_named() -> None:
    ks = ["1", "5", "10"]
    survival = _report()["survival"]
    survival["rule_cjk (adversarial)"]["10"] = _row(1, 2)
    survival["identifier (user)"]["5"] = _row(17, 20)
    survival["next_step"]["1"] = _row(3, 4)
    misses = target_misses(
        _report(
            survival=survival,
            stale={k: {"stale": 1 if k == "5" else 0, "total": 4} for k in ks},
            artifacts={"10": {"recall": 0.9, "precision": 0.96}},
            corruption={k: {"corrupted": 1, "total": 40} for k in ks},
        )
    )
    assert misses == [
        "next step at k=1: 3/4, target 100%",
        "rules at k=10: 5/6 shown, target 100%",
        "superseded facts shown as current: 1, target 0",
        "identifiers and errors at k=5: 0.925, target 0.95",
        "modified-file recall at k=10: 0.900, target 0.98",
        "corruption: 3/120 = 0.025, target ≤ 1%",
    ]


def test_a_k_that_was_not_run_is_not_measured_and_not_a_miss() -> None:
    report = _report(ks=["1", "3"], artifacts={})
    assert target_misses(report) == []
    assert unmeasured_targets(report) == [
        "identifiers and errors at k=5",
        "identifiers and errors at k=10",
        "artifact trail at k=10",
    ]
    assert unmeasured_targets(_report()) == []
