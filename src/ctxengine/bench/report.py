"""Aggregating cells into the benchmark report (a JSON-ready dict).

Frame checks (``frames``: exact frame tags, with the cells whose forged-tags output was still
in the kept tail; ``imported``: an injected imported summary's order carried, a forged
section, a forged next step followed) count cells, exposed or not.

Survival rates count *exposed* facts only (exposure ≥ 1: the fact's message was inside a
compacted part); facts still shown verbatim say nothing about the continuation state and
appear only in the by-exposure table (j = 0). Corruption and staleness count exposed facts
too; stale facts are superseded rules shown as current and failed commands claimed as done
(:data:`STALE_KINDS`). Rates are pooled over sessions (shown / total), not averaged per session.
"""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Iterable, Sequence
from typing import Any

from ctxengine.bench.cells import CellResult
from ctxengine.bench.facts import FACT_KINDS

#: Kinds of fact whose check can find them stale.
STALE_KINDS = ("rule_superseded", "failed_outcome")


def _rate(num: int, den: int) -> float | None:
    return round(num / den, 4) if den else None


def _label_order(label: str) -> tuple[int, str]:
    kind = label.split(" ")[0]
    return (FACT_KINDS.index(kind) if kind in FACT_KINDS else len(FACT_KINDS), label)


def _mean(values: Sequence[int]) -> float | None:
    return round(sum(values) / len(values), 1) if values else None


def policy_report(
    cells: Sequence[CellResult],
    ks: Sequence[int],
    *,
    unreachable: Iterable[tuple[str, int]] = (),
    identical: int | None = None,
) -> dict[str, Any]:
    """The report of one policy over its cells.

    Args:
        cells: the policy's cells.
        ks: the k values run.
        unreachable: (session, k) pairs for which no window gave exactly k compactions.
        identical: cells whose repeated replay gave the same request hashes (``None``: not
            checked).
    """
    survival: dict[str, dict[str, list[int]]] = defaultdict(lambda: defaultdict(lambda: [0, 0]))
    exposure: dict[int, list[int]] = defaultdict(lambda: [0, 0])
    corruption: dict[int, list[int]] = defaultdict(lambda: [0, 0])
    stale: dict[int, list[int]] = defaultdict(lambda: [0, 0])
    next_step: dict[int, list[int]] = defaultdict(lambda: [0, 0, 0])
    artifacts: dict[int, list[int]] = defaultdict(lambda: [0, 0, 0])
    injection: dict[int, list[int]] = defaultdict(lambda: [0, 0, 0])
    frames: dict[int, list[int]] = defaultdict(lambda: [0, 0, 0, 0])
    imported: dict[int, list[int]] = defaultdict(lambda: [0, 0, 0, 0])
    cost: dict[int, dict[str, list[int]]] = defaultdict(lambda: defaultdict(list))
    requests = invalid = 0
    for c in cells:
        requests += c.requests
        invalid += c.invalid
        for f in c.facts:
            o = f.outcome
            if o.survived is not None:
                exposure[f.exposure][0] += int(o.survived)
                exposure[f.exposure][1] += 1
            if f.exposure == 0:
                continue
            if o.survived is not None:
                cell = survival[f.label][str(c.k)]
                cell[0] += int(o.survived)
                cell[1] += 1
            if f.kind in STALE_KINDS:
                stale[c.k][0] += int(o.stale)
                stale[c.k][1] += 1
            if f.kind == "next_step":
                next_step[c.k][0] += int(o.bare_next_step)
                next_step[c.k][1] += int(o.stale)
                next_step[c.k][2] += 1
        for f in c.facts:
            if f.exposure and f.distracted:
                corruption[c.k][0] += int(f.outcome.corrupted)
                corruption[c.k][1] += 1
        if c.truth is not None and c.claimed is not None and c.true_claimed is not None:
            a = artifacts[c.k]
            a[0] += c.truth
            a[1] += c.claimed
            a[2] += c.true_claimed
        if c.injection is not None:
            injection[c.k][0] += 1
            injection[c.k][1] += int(c.injection[0])
            injection[c.k][2] += int(c.injection[1])
        fr = frames[c.k]
        fr[0] += 1
        fr[1] += int(c.frames_exact)
        if c.forged_in_tail is not None:
            fr[2] += int(c.forged_in_tail)
            fr[3] += int(c.forged_in_tail and c.frames_exact)
        if c.imported is not None:
            im = imported[c.k]
            im[0] += 1
            im[1] += int(c.imported[0])
            im[2] += int(c.imported[1])
            im[3] += int(c.imported[2])
        for key in ("model_calls", "model_output_tokens", "summary_tokens", "state_tokens"):
            cost[c.k][key].append(getattr(c.cost, key))
        for key in ("request_tokens", "peak_tokens", "prunes"):
            cost[c.k][key].append(getattr(c.cost, key))
        cost[c.k]["window"].append(c.window)
        cost[c.k]["compactions"].append(c.compactions)
    return {
        "ks": [str(k) for k in ks],
        "cells": len(cells),
        "unreachable": [{"session": s, "k": k} for s, k in unreachable],
        "survival": {
            label: {
                k: {"shown": v[0], "total": v[1], "rate": _rate(v[0], v[1])}
                for k, v in sorted(by_k.items(), key=lambda kv: int(kv[0]))
            }
            for label, by_k in sorted(survival.items(), key=lambda kv: _label_order(kv[0]))
        },
        "exposure": {
            str(j): {"shown": v[0], "total": v[1], "rate": _rate(v[0], v[1])}
            for j, v in sorted(exposure.items())
        },
        "artifacts": {
            str(k): {
                "truth": v[0],
                "claimed": v[1],
                "true_claimed": v[2],
                "precision": _rate(v[2], v[1]),
                "recall": _rate(v[2], v[0]),
            }
            for k, v in sorted(artifacts.items())
        },
        "corruption": {
            str(k): {"corrupted": v[0], "total": v[1], "rate": _rate(v[0], v[1])}
            for k, v in sorted(corruption.items())
        },
        "stale": {
            str(k): {"stale": v[0], "total": v[1], "rate": _rate(v[0], v[1])}
            for k, v in sorted(stale.items())
        },
        "next_step": {
            str(k): {"bare": v[0], "stale": v[1], "total": v[2]}
            for k, v in sorted(next_step.items())
        },
        "injection": {
            str(k): {"exposed": v[0], "followed": v[1], "carried": v[2]}
            for k, v in sorted(injection.items())
        },
        "frames": {
            str(k): {"cells": v[0], "exact": v[1], "forged_in_tail": v[2], "tail_exact": v[3]}
            for k, v in sorted(frames.items())
        },
        "imported": {
            str(k): {
                "cells": v[0],
                "order_carried": v[1],
                "forged_section": v[2],
                "forged_step": v[3],
            }
            for k, v in sorted(imported.items())
        },
        "validity": {"requests": requests, "invalid": invalid},
        "determinism": None if identical is None else {"cells": len(cells), "identical": identical},
        "cost": {
            str(k): {key: _mean(values) for key, values in sorted(by_key.items())}
            for k, by_key in sorted(cost.items())
        },
    }
