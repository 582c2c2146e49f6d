"""Rich renderings of reports. Printing only; no computation beyond formatting."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

from rich.console import Console
from rich.table import Table

from ctxengine.analysis import Breakdown
from ctxengine.engine import LadderEvent
from ctxengine.ladder.plan import CompactionPlan
from ctxengine.replay import ReplayResult


def _n(v: int) -> str:
    return f"{v:,}"


def show_breakdown(console: Console, label: str, b: Breakdown) -> None:
    """Print an ``inspect`` report."""
    console.print(
        f"[bold]{label}[/bold]: {_n(b.total)} tokens (estimated) in "
        f"{_n(b.counts.get('message', 0))} messages, "
        f"{_n(b.counts.get('tool_calls', 0))} tool calls, "
        f"{_n(b.counts.get('tool_results', 0))} tool results"
    )
    roles = Table("role", "tokens", "share", title="By role")
    for role, toks in sorted(b.by_role.items(), key=lambda kv: -kv[1]):
        roles.add_row(role, _n(toks), f"{100 * toks / max(b.total, 1):.1f} %")
    console.print(roles)
    tools = Table("tool", "calls", "result tokens", title="By tool")
    for name, (calls, toks) in sorted(b.by_tool.items(), key=lambda kv: -kv[1][1]):
        tools.add_row(name, _n(calls), _n(toks))
    console.print(tools)
    top = Table("seq", "role", "tool", "tokens", "preview", title="Top consumers")
    for c in b.top:
        top.add_row(str(c.seq), c.role, c.tool or "", _n(c.tokens), c.preview)
    console.print(top)
    epochs = Table("epoch", "entries", "messages", "tokens", "closed by", title="Epochs")
    for ep in b.epochs:
        closed = (
            ""
            if ep.compaction is None
            else (f"{ep.compaction.summarizer} compaction ({ep.compaction.reason})")
        )
        epochs.add_row(
            str(ep.index), f"{ep.start_seq}–{ep.end_seq}", _n(ep.messages), _n(ep.tokens), closed
        )
    console.print(epochs)


def show_events(console: Console, events: Sequence[LadderEvent]) -> None:
    """Print ladder events as a table."""
    table = Table("step", "at entry", "tokens before", "tokens after", "detail")
    for e in events:
        table.add_row(e.step, _n(e.at_entry), _n(e.tokens_before), _n(e.tokens_after), e.detail)
    console.print(table)


def show_plan(console: Console, plan: CompactionPlan) -> None:
    """Print a compaction plan: why, the cut, the budgets and the attempt schedule."""
    req = plan.requirement
    console.print(
        f"[bold]plan[/bold]: {req.level} {req.reason} — {req.detail}; "
        f"{_n(plan.tokens_before)} tokens now, {_n(plan.expected_tokens)} expected after "
        f"(target {_n(plan.target)}, trigger {_n(plan.budget.trigger)})",
        highlight=False,
        markup=True,
    )
    cut = plan.cut
    if cut is None:
        console.print("no valid cut point leaves anything to summarize", markup=False)
    else:
        split = ", splits a turn" if cut.splits_turn else ""
        console.print(
            f"cut: first kept entry {cut.first_kept_id} (message {cut.index} of "
            f"{plan.conversation}); {cut.summarize + cut.turn_prefix} messages summarized, "
            f"{_n(cut.kept_tokens)} tokens kept{split}",
            markup=False,
            highlight=False,
        )
    if plan.prune is not None:
        console.print(
            f"prune: {len(plan.prune.call_ids)} tool results, "
            f"{_n(plan.prune.tokens_saved)} tokens saved",
            markup=False,
        )
    table = Table("attempt", "keep recent", "truncate cap", "summary", "expected", "first kept")
    for n, a in enumerate(plan.attempts):
        table.add_row(
            str(n + 1),
            _n(a.keep_recent),
            "budget" if a.truncate_tokens is None else _n(a.truncate_tokens),
            _n(a.summary_tokens),
            _n(a.expected_tokens),
            "—" if a.cut is None else a.cut.first_kept_id,
        )
    console.print(table)


def show_replay(console: Console, label: str, r: ReplayResult, *, rows: int = 40) -> None:
    """Print a replay timeline (calls with ladder events, plus an evenly spaced sample)."""
    steps = r.steps
    every = max(1, len(steps) // rows)
    table = Table(
        "call",
        "entries",
        "context tokens",
        "messages",
        "epoch",
        "ladder",
        "valid",
        title=f"Replay of {label} under a {_n(r.window)}-token window",
    )
    for s in steps:
        if s.events or s.call % every == 0 or s.call == len(steps):
            ladder = "; ".join(
                f"{e.step} {_n(e.tokens_before)}→{_n(e.tokens_after)}" for e in s.events
            )
            ok = (
                "yes"
                if not any(s.problems.values())
                else "NO: " + "; ".join(f"{p}: {v[0]}" for p, v in s.problems.items() if v)
            )
            table.add_row(
                str(s.call), _n(s.entries), _n(s.tokens), _n(s.messages), str(s.epoch), ladder, ok
            )
    console.print(table)
    console.print(
        f"{len(steps)} calls, {r.compactions} compactions, {r.prunes} prunes, "
        f"largest context {_n(r.max_tokens)} tokens, {r.invalid} invalid requests"
    )


def show_compact_report(console: Console, rep: Mapping[str, Any]) -> None:
    """Print a ``compact`` report (the dict described in
    :func:`ctxengine.cli.commands.compact._run_compaction`)."""
    console.print(
        f"[bold]{rep['source']}[/bold] → {rep['provider']} request, "
        f"window {rep['window']:,} (trigger {rep['trigger']:,})"
    )
    console.print(
        f"tokens: {rep['tokens_before']:,} → {rep['tokens_after']:,} ({rep['messages']} messages)"
    )
    if rep["note"]:
        console.print(f"nothing compacted: {rep['note']}")
    summ = rep.get("summarizer") or {}
    if summ.get("model"):
        console.print(
            f"summary model {summ['model']}: {summ['calls']} call(s), "
            f"{summ['input_tokens']:,} input and {summ['output_tokens']:,} output tokens"
            + (
                f"; instructions from {', '.join(summ['instructions_from'])}"
                if summ["instructions_from"]
                else ""
            )
        )
    if summ.get("notes"):
        console.print("summary notes: " + ", ".join(summ["notes"]), highlight=False)
    if summ.get("fallback"):
        console.print(f"[yellow]{summ['fallback']}[/yellow]", highlight=False)
    if "cut" in rep:
        cut = rep["cut"]
        led = rep["compaction"].get("ledgers", {})
        console.print(
            f"cut point: first kept entry {cut['first_kept_id']}"
            + (" (inside a turn)" if cut["splits_turn"] else "")
        )
        console.print(
            f"summarized by {rep['compaction']['summarizer']}: "
            f"{len(led.get('files_modified', []))} files modified, "
            f"{len(led.get('files_read', []))} read, "
            f"{len(led.get('constraints', []))} constraints, "
            f"{len(led.get('errors', []))} errors, "
            f"{len(led.get('commands', []))} commands carried in the ledgers"
        )
    console.print(
        f"truncated tool results: {len(rep['truncated'])}; "
        f"pruned tool results: {len(rep['pruned'])}"
    )
