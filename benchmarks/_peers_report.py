"""Tables and diagnostics printed by ``peers_measure.py`` (shapes of peers-measured.md §3–§5)."""

from __future__ import annotations

import cProfile
import pstats
import re
from collections import Counter
from collections.abc import Sequence

import _peers
from _common import median, pct, percentile, table
from _outcome import BUDGETS, TARGET_P95_MS, Outcome, Transcript

from ctxengine.tokens import HeuristicEstimator

SIZE_EDGES = (8_000, 16_000, 32_000, 64_000)


def _kind(problem: str) -> str:
    text = re.sub(r"^messages\[\d+\][^:]*: ", "", problem)
    return re.sub(r"'[^']*'", "…", text)


def _kinds(outcomes: Sequence[Outcome]) -> str:
    counts = Counter(_kind(p) for o in outcomes for p in set(o.openai))
    return ", ".join(f"{k} {n}" for k, n in counts.most_common()) or "none"


def _ratio_stats(values: Sequence[float]) -> str:
    if not values:
        return "- / - / -"
    return f"{median(values):.2f} / {percentile(values, 95):.2f} / {max(values):.2f}"


def validity_row(label: str, out: Sequence[Outcome]) -> tuple[str, ...]:
    """A row shaped like §5.1's first table (OpenAI validity, approximate counter)."""
    over = [o for o in out if o.over_history]
    return (
        label,
        str(len(out)),
        pct(sum(o.invalid for o in out), len(out)),
        pct(sum(o.invalid for o in over), len(over)),
        _kinds(out),
        pct(sum(o.tokens_approx > o.budget for o in over), len(over)),
        f"{pct(sum(o.task_kept for o in out), len(out))} / "
        f"{pct(sum(o.task_kept for o in over), len(over))}",
        pct(sum(o.last_kept for o in out), len(out)),
        pct(sum(o.system_kept for o in out), len(out)),
    )


def detail_row(label: str, out: Sequence[Outcome]) -> tuple[str, ...]:
    """ctxengine-only figures: both providers, both counters, truncated newest results."""
    over = [o for o in out if o.over_history]
    return (
        label,
        str(len(out)),
        pct(sum(o.invalid for o in out), len(out)),
        pct(sum(bool(o.anthropic) for o in out), len(out)),
        pct(sum(o.tokens_ours > o.budget for o in out), len(out)),
        pct(sum(o.tokens_approx > o.budget for o in out), len(out)),
        _ratio_stats([o.tokens_approx / o.budget for o in over]),
        _ratio_stats([o.tokens_ours / o.budget for o in over]),
        pct(sum(o.task != "lost" for o in out), len(out)),
        f"{sum(not o.last_kept and o.last_role == 'tool' for o in out)} / "
        f"{sum(not o.last_kept and o.last_role != 'tool' for o in out)}",
        f"{sum(o.compacted for o in out)}",
    )


def budget_row(label: str, out: Sequence[Outcome]) -> tuple[str, ...]:
    cells = []
    for b in BUDGETS:
        at = [o for o in out if o.budget == b]
        cells.append(
            f"{pct(sum(o.invalid for o in at), len(at))} / "
            f"{pct(sum(o.task_kept for o in at), len(at))}"
        )
    return (label, *cells)


def time_row(label: str, out: Sequence[Outcome]) -> tuple[str, ...]:
    times = [o.ms for o in out]
    buckets: list[list[float]] = [[] for _ in range(len(SIZE_EDGES) + 1)]
    for o in out:
        buckets[sum(o.raw_tokens >= e for e in SIZE_EDGES)].append(o.ms)
    by_size = " / ".join(f"{median(b):.3f}" if b else "-" for b in buckets)
    plain = [o.ms for o in out if not o.compacted]
    return (
        label,
        f"{median(times):.3f}",
        f"{percentile(times, 95):.2f}",
        f"{max(times):.1f}",
        by_size,
        f"{median(plain):.3f} / {percentile(plain, 95):.2f}",
    )


def print_inputs(transcripts: Sequence[Transcript]) -> None:
    """§3's input table, ours beside the published one (checks the counter and import)."""
    rows = []
    for t in transcripts:
        msgs, reqs, largest, over = _peers.INPUTS[t.name]
        mine = [sum(v > b for v in t.raw_tokens.values()) for b in BUDGETS]
        rows.append(
            (
                t.name,
                f"{len(t.messages)} ({msgs})",
                f"{len(t.requests)} ({reqs})",
                f"{max(t.raw_tokens.values()):,} ({largest:,})",
                f"{' / '.join(map(str, mine))} ({' / '.join(map(str, over))})",
                f"{max(t.raw_ours.values()):,}",
                f"{len(t.task):,} / {HeuristicEstimator().text(t.task):,}",
            )
        )
    table(
        (
            "transcript",
            "messages",
            "requests",
            "largest request, approx tokens",
            "requests over 4k/8k/16k/32k/64k (approx)",
            "largest request, ctxengine tokens",
            "task (first user message): chars / ctxengine tokens",
        ),
        rows,
        title="§3 inputs as imported by ctxengine (peers-measured.md figures in parentheses)",
    )


def _misses(o: Outcome) -> list[str]:
    why = []
    if o.openai or o.anthropic:
        why.append("invalid: " + "; ".join((*o.openai, *o.anthropic))[:160])
    if o.tokens_ours > o.budget or o.tokens_approx > o.budget:
        why.append(f"over B: ours {o.tokens_ours:,}, approx {o.tokens_approx:,}")
    if not o.task_kept:
        why.append(f"task {o.task}" + (f" in {o.task_where}" if o.task_where else ""))
    return why


def print_failures(label: str, out: Sequence[Outcome]) -> None:
    """Outputs that miss a validity/budget/task target, grouped by transcript, B and reason,
    with the first output of each group (its messages and token sizes)."""
    groups: dict[tuple[str, int, str], list[Outcome]] = {}
    for o in out:
        for why in _misses(o):
            reason = why.split(":")[0] if not why.startswith("task") else why
            groups.setdefault((o.transcript, o.budget, reason), []).append(o)
    missed = sum(bool(_misses(o)) for o in out)
    print(f"\n{label}: {missed} of {len(out)} outputs miss a validity/budget/task target")
    for (name, budget, reason), items in groups.items():
        o = items[0]
        print(
            f"  {name} B={budget:,}: {reason}: {len(items)} outputs; first: "
            f"messages[:{o.request}] (untouched {o.raw_tokens:,} approx tokens), "
            f"{'; '.join(_misses(o))}\n    output: {o.shape[:240]}"
        )


def print_slowest(label: str, out: Sequence[Outcome], limit: int = 8) -> None:
    """The slowest calls, to show where the time goes."""
    over = [o for o in out if o.ms > TARGET_P95_MS]
    compacting = sum(o.compacted for o in over)
    print(
        f"\n{label}: {len(over)} of {len(out)} calls over {TARGET_P95_MS} ms "
        f"({compacting} of them ran a compaction)"
    )
    for o in sorted(out, key=lambda o: -o.ms)[:limit]:
        print(
            f"  {o.ms:7.2f} ms  {o.transcript} B={o.budget:,} messages[:{o.request}] "
            f"untouched {o.raw_tokens:,} tok, compaction={o.compacted}"
        )


def print_targets(results: dict[str, list[Outcome]]) -> None:
    print("\nTargets (issue 2): 0 % invalid, 0 % over budget, 100 % task kept, p95 ≤ 0.5 ms")
    for label, out in results.items():
        n = len(out)
        invalid = sum(o.invalid or bool(o.anthropic) for o in out)
        over = sum(max(o.tokens_ours, o.tokens_approx) > o.budget for o in out)
        task = sum(o.task_kept for o in out)
        p95 = percentile([o.ms for o in out], 95)
        checks = (
            ("invalid (either provider)", f"{invalid}/{n}", invalid == 0),
            ("over B (either counter)", f"{over}/{n}", over == 0),
            ("task kept", f"{task}/{n}", task == n),
            ("p95 ms", f"{p95:.3f}", p95 <= TARGET_P95_MS),
        )
        cells = ", ".join(f"{name} {value} {'ok' if ok else 'MISS'}" for name, value, ok in checks)
        print(f"  {label}: {cells}")


def print_profile(label: str, profiler: cProfile.Profile, out: Sequence[Outcome]) -> None:
    """The ctxengine functions with the most cumulative time inside ``prepare()``."""
    raw = pstats.Stats(profiler).stats  # type: ignore[attr-defined]
    total_ms = sum(o.ms for o in out)
    rows = []
    for (filename, line, name), (_, ncalls, tottime, cumtime, _) in sorted(
        raw.items(), key=lambda kv: -kv[1][3]
    ):
        if "ctxengine" not in filename:
            continue
        module = filename.split("src/")[-1].removesuffix(".py").replace("/", ".")
        rows.append(
            (
                f"{module}.{name}:{line}",
                ncalls,
                f"{cumtime * 1e3 / len(out):.3f}",
                f"{tottime * 1e3 / len(out):.3f}",
                f"{100 * cumtime * 1e3 / total_ms:.1f}",
            )
        )
        if len(rows) == 20:
            break
    table(
        ("function", "calls", "cum ms/prepare", "own ms/prepare", "cum % of prepare"),
        rows,
        title=f"{label}: cProfile of {len(out)} prepare() calls (profiled times are inflated)",
    )


def print_tables(results: dict[str, list[Outcome]]) -> None:
    """The §5.1 and §5.3 tables with the peers' published rows first."""
    ours = list(results.items())
    table(
        (
            "library / setting",
            "library calls",
            "invalid % (all)",
            "invalid % (history > B)",
            "error kinds (outputs)",
            "over B % (history > B)",
            "task verbatim % (all / history > B)",
            "last input kept %",
            "system kept %",
        ),
        [*_peers.VALIDITY, *(validity_row(k, v) for k, v in ours)],
        title="§5.1 validity, budget and survival, all 5 budgets pooled (OpenAI validator, "
        "approximate counter; peers quoted from peers-measured.md)",
    )
    table(
        (
            "ctxengine",
            "calls",
            "invalid % OpenAI",
            "invalid % Anthropic",
            "over B % (ours)",
            "over B % (approx)",
            "out/B approx, history > B (median / p95 / max)",
            "out/B ours, history > B (median / p95 / max)",
            "task or its first 500 chars kept %",
            "newest input not verbatim: tool result / user message",
            "calls that compacted",
        ),
        [detail_row(k, v) for k, v in ours],
        title="ctxengine details, all calls of each variant",
    )
    sizes = [
        (k, *_ratio_stats([o.tokens_approx / o.budget for o in v if o.over_history]).split(" / "))
        for k, v in ours
    ]
    table(
        ("setting", "median", "p95", "max"),
        [*_peers.SIZES, *sizes],
        title="§5.1 output sizes, out/B for history > B (approximate counter)",
    )
    table(
        ("library / setting", *(f"B={b // 1000}k" for b in BUDGETS)),
        [*_peers.BY_BUDGET, *(budget_row(k, v) for k, v in ours)],
        title="§5.1 by budget: invalid % / task kept verbatim %",
    )
    table(
        (
            "library / setting",
            "median ms",
            "p95 ms",
            "max ms",
            "median ms by input size: <8k / 8–16k / 16–32k / 32–64k / ≥64k",
            "no-compaction calls: median / p95 ms",
        ),
        [*((*row, "") for row in _peers.TIMES), *(time_row(k, v) for k, v in ours)],
        title="§5.3 time per call (library call only; ctxengine: prepare() only)",
    )


def _ms(values: Sequence[float]) -> tuple[float, float, float]:
    return median(values), percentile(values, 95), max(values)


def print_side_by_side(results: dict[str, list[Outcome]], same: dict[str, list[bool]]) -> None:
    """Every variant's time per call beside the live one's, with the ratios to it: all
    calls, then the calls that compacted; and, for the cached stateless variants, how many
    contexts equal the live session's at the same request."""
    live = results.get("ctxengine / live")
    if live is None:
        return
    base = _ms([o.ms for o in live])
    base_c = [o.ms for o in live if o.compacted]
    rows = []
    for label, out in results.items():
        times = _ms([o.ms for o in out])
        comp = [o.ms for o in out if o.compacted]
        ratios = " / ".join(f"{a / b:.2f}" for a, b in zip(times, base, strict=True))
        compacting = (
            f"{len(comp)}: {median(comp):.2f} / {percentile(comp, 95):.2f}" if comp else "0"
        )
        comp_ratio = (
            f"{median(comp) / median(base_c):.2f} / "
            f"{percentile(comp, 95) / percentile(base_c, 95):.2f}"
            if comp and base_c
            else "-"
        )
        equal = same.get(label)
        rows.append(
            (
                label,
                f"{times[0]:.3f} / {times[1]:.2f} / {times[2]:.1f}",
                ratios,
                compacting,
                comp_ratio,
                f"{sum(equal)}/{len(equal)}" if equal is not None else "-",
            )
        )
    table(
        (
            "variant",
            "median / p95 / max ms",
            "÷ live (median / p95 / max)",
            "compacting calls: n: p50 / p95 ms",
            "compacting ÷ live (p50 / p95)",
            "same context as live",
        ),
        rows,
        title="Live and stateless side by side (one run; stateless times the whole call)",
    )
