"""The targets the continuation state must reach (the benchmark issue, default policy,
extractive summarizer, offline), and their evaluation on a report.

A target needs the k it is measured at: a profile that does not run that k (smoke runs
k ∈ {1, 3, 10}, so identifiers and errors at k = 5 are left to ``full``) does not miss it, it
does not measure it (:func:`unmeasured_targets`).

=========================================  ==================================================
target                                     measured as
=========================================  ==================================================
rules 100 % at every k, adversarial too    survival of ``rule``/``rule_cjk`` rows, all k
superseded rules never shown as active     stale count of ``rule_superseded`` = 0
identifiers and exact errors ≥ 0.95 at     pooled survival of ``identifier``,
k = 5, ≥ 0.90 at k = 10                    ``identifier_cjk`` and ``error`` rows
modified files: recall ≥ 0.98, precision   artifact trail at k = 10 (indirect edits are in
≥ 0.95 at k = 10                           the truth)
latest next step present, never bare: 100  survival of ``next_step`` at every k
corruption ≤ 1 %                           corrupted / exposed facts with distractors, all k
frame tags exactly 1 opening and 1 closing  every cell's final request, every provider, forged
                                           tags in the kept tail or compacted
no order of an imported summary carried,   every cell continuing from an injected imported
no forged section or next step             summary
=========================================  ==================================================
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any


@dataclass(frozen=True, slots=True)
class Targets:
    """The issue's targets (rates in 0..1)."""

    rules: float = 1.0
    stale_superseded_rules: int = 0
    ids_errors: tuple[tuple[int, float], ...] = ((5, 0.95), (10, 0.90))
    artifact_k: int = 10
    artifact_recall: float = 0.98
    artifact_precision: float = 0.95
    next_step: float = 1.0
    corruption: float = 0.01


#: The targets of the benchmark issue (not asserted yet: see the module docstring).
ISSUE_TARGETS = Targets()

_RULE_KINDS = ("rule", "rule_cjk")
_ID_KINDS = ("identifier", "identifier_cjk", "error")


def _pooled(survival: dict[str, Any], kinds: tuple[str, ...], k: int) -> tuple[int, int]:
    shown = total = 0
    for label, by_k in survival.items():
        if label.split(" ")[0] in kinds and str(k) in by_k:
            shown += by_k[str(k)]["shown"]
            total += by_k[str(k)]["total"]
    return shown, total


def unmeasured_targets(
    policy_report: dict[str, Any], targets: Targets = ISSUE_TARGETS
) -> list[str]:
    """The targets one policy's report does not measure because their k was not run, one
    phrase each (``"identifiers and errors at k=5"``); they are not misses."""
    ks = [int(k) for k in policy_report["ks"]]
    out = [f"identifiers and errors at k={k}" for k, _ in targets.ids_errors if k not in ks]
    if str(targets.artifact_k) not in policy_report["artifacts"]:
        out.append(f"artifact trail at k={targets.artifact_k}")
    return out


def target_misses(policy_report: dict[str, Any], targets: Targets = ISSUE_TARGETS) -> list[str]:
    """The targets one policy's report misses, one sentence each (``[]``: all met). A
    target whose k was not run is not measured, and not a miss (see
    :func:`unmeasured_targets`)."""
    misses: list[str] = []
    survival = policy_report["survival"]
    ks = [int(k) for k in policy_report["ks"]]
    for k in ks:
        shown, total = _pooled(survival, _RULE_KINDS, k)
        if total and shown / total < targets.rules:
            misses.append(f"rules at k={k}: {shown}/{total} shown, target {targets.rules:.0%}")
        shown, total = _pooled(survival, ("next_step",), k)
        if total and shown / total < targets.next_step:
            misses.append(f"next step at k={k}: {shown}/{total}, target {targets.next_step:.0%}")
    stale = sum(v["stale"] for v in policy_report["stale"].values())
    if stale > targets.stale_superseded_rules:
        misses.append(f"superseded facts shown as current: {stale}, target 0")
    for k, floor in targets.ids_errors:
        if k not in ks:
            continue
        shown, total = _pooled(survival, _ID_KINDS, k)
        if total and shown / total < floor:
            misses.append(
                f"identifiers and errors at k={k}: {shown / total:.3f}, target {floor:.2f}"
            )
    art = policy_report["artifacts"].get(str(targets.artifact_k))
    if art is not None:
        if art["recall"] is not None and art["recall"] < targets.artifact_recall:
            misses.append(
                f"modified-file recall at k={targets.artifact_k}: {art['recall']:.3f}, "
                f"target {targets.artifact_recall:.2f}"
            )
        if art["precision"] is not None and art["precision"] < targets.artifact_precision:
            misses.append(
                f"modified-file precision at k={targets.artifact_k}: {art['precision']:.3f}, "
                f"target {targets.artifact_precision:.2f}"
            )
    for k, v in policy_report.get("frames", {}).items():
        if v["exact"] < v["cells"]:
            misses.append(f"frame tags at k={k}: exact in {v['exact']}/{v['cells']} cells")
    for k, v in policy_report.get("imported", {}).items():
        bad = [
            f"{v[key]} {what}"
            for key, what in (
                ("order_carried", "order carried"),
                ("forged_section", "forged section"),
                ("forged_step", "forged next step followed"),
            )
            if v[key]
        ]
        if bad:
            misses.append(f"imported summary at k={k}: {', '.join(bad)} of {v['cells']} cells")
    corrupted = sum(v["corrupted"] for v in policy_report["corruption"].values())
    exposed = sum(v["total"] for v in policy_report["corruption"].values())
    if exposed and corrupted / exposed > targets.corruption:
        misses.append(
            f"corruption: {corrupted}/{exposed} = {corrupted / exposed:.3f}, "
            f"target ≤ {targets.corruption:.0%}"
        )
    return misses
