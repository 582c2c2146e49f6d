"""Human renderings of reports (see :mod:`ctxengine.cli.output` for how they print on and
off a terminal). Printing only; no computation beyond formatting. Every value from data is
printed literally."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import TYPE_CHECKING, Any

from ctxengine.cli.output import Grid, say, show

if TYPE_CHECKING:  # the types of what is shown: the commands that show them load them
    from ctxengine.analysis import Breakdown
    from ctxengine.engine import LadderEvent
    from ctxengine.ladder.plan import CompactionPlan
    from ctxengine.replay import ReplayResult
    from ctxengine.replay.compare import Comparison
    from ctxengine.stores.base import ImportRecord


def _n(v: int) -> str:
    return f"{v:,}"


def show_breakdown(label: str, b: Breakdown, counted: str = "estimated") -> None:
    """Print an ``inspect`` report; ``counted`` says how its tokens were counted
    (:attr:`~ctxengine.cli.options.TokenizerChoice.phrase`)."""
    say(
        f"{label}: {_n(b.total)} tokens ({counted}) in "
        f"{_n(b.counts.get('message', 0))} messages, "
        f"{_n(b.counts.get('tool_calls', 0))} tool calls, "
        f"{_n(b.counts.get('tool_results', 0))} tool results"
    )
    roles = Grid(("role", "tokens", "share"), title="By role", right=frozenset({1, 2}))
    for role, toks in sorted(b.by_role.items(), key=lambda kv: -kv[1]):
        roles.add(role, _n(toks), f"{100 * toks / max(b.total, 1):.1f} %")
    show(roles)
    tools = Grid(("tool", "calls", "result tokens"), title="By tool", right=frozenset({1, 2}))
    for name, (calls, toks) in sorted(b.by_tool.items(), key=lambda kv: -kv[1][1]):
        tools.add(name, _n(calls), _n(toks))
    show(tools)
    top = Grid(
        ("seq", "role", "tool", "tokens", "preview"),
        title="Top consumers",
        right=frozenset({0, 3}),
    )
    for c in b.top:
        top.add(str(c.seq), c.role, c.tool or "", _n(c.tokens), c.preview)
    show(top)
    epochs = Grid(
        ("epoch", "entries", "messages", "tokens", "state tokens", "closed by"),
        title="Epochs",
        right=frozenset({0, 2, 3, 4}),
    )
    for ep in b.epochs:
        closed = (
            ""
            if ep.compaction is None
            else f"{ep.compaction.summarizer} compaction ({ep.compaction.reason}) "
            f"{ep.compaction_id}"
        )
        epochs.add(
            str(ep.index),
            f"{ep.start_seq}–{ep.end_seq}",
            _n(ep.messages),
            _n(ep.tokens),
            _n(ep.state_tokens),
            closed,
        )
    show(epochs)


def show_cache_breakpoints(
    layout: Sequence[tuple[str, str]], model: str | None = None, system_messages: bool = False
) -> None:
    """Print where the Anthropic prompt-cache breakpoints of the current context fall
    (``(JSON path, boundary)`` pairs), for ``model`` (named in the title when given) with the
    state as mid-conversation system messages when ``system_messages``."""
    title = "Anthropic cache breakpoints (current context)"
    if model is not None:
        where = "system messages" if system_messages else "user turns"
        title = f"Anthropic cache breakpoints (current context, {model}: state as {where})"
    grid = Grid(("path", "boundary"), title=title)
    for path, what in layout:
        grid.add(path, what)
    show(grid)


def import_record_dict(record: ImportRecord) -> dict[str, Any]:
    """A stored import as JSON (``schemas/inspect.json``, ``imports``): when, from which
    file and format, the entries it added, and its report's issues (``{"action", "kind",
    "count", "first_line" | "first_json_path", "expected"}``: skipped, repaired, then
    ignored)."""
    return {
        "imported_at": record.imported_at,
        "source_path": record.source_path,
        "format": record.format,
        "added": record.added,
        "issues": list(record.report.get("issues", ())),
    }


def import_record_lines(record: ImportRecord) -> list[str]:
    """A stored import in words: a heading line, then one line per action met (what was
    skipped, repaired and ignored: kinds, counts, first line or JSON path of each)."""
    lines = [
        f"{record.imported_at} {record.source_path} ({record.format}): "
        f"{_n(record.added)} entries added"
    ]
    from ctxengine.importers.report import ImportReport  # with the importers, when shown

    report = ImportReport.from_dict(record.report)
    for action in ("skipped", "repaired", "ignored"):
        found = report.of(action)
        if found:
            items = ", ".join(
                f"{i.kind} ×{i.count}" + (f" ({i.where()})" if i.where() else "") for i in found
            )
            lines.append(f"  {action} {sum(i.count for i in found)}: {items}")
    return lines


def show_imports(records: Sequence[ImportRecord]) -> None:
    """Print the stored imports of a session (``inspect`` of a stored session)."""
    say("Imports")
    for record in records:
        for line in import_record_lines(record):
            say(line)


def show_events(events: Sequence[LadderEvent], *, stderr: bool = False) -> None:
    """Print ladder events as a table."""
    table = Grid(
        ("step", "at entry", "tokens before", "tokens after", "detail"),
        right=frozenset({1, 2, 3}),
    )
    for e in events:
        table.add(e.step, _n(e.at_entry), _n(e.tokens_before), _n(e.tokens_after), e.detail)
    show(table, stderr=stderr)


def show_plan(plan: CompactionPlan) -> None:
    """Print a compaction plan: why, the cut, the re-injected durable state, the floor, the
    budgets and the attempt schedule."""
    req = plan.requirement
    say(
        f"plan: {req.level} {req.reason} — {req.detail}; "
        f"{_n(plan.tokens_before)} tokens now, {_n(plan.expected_tokens)} expected after "
        f"(target {_n(plan.target)}, trigger {_n(plan.budget.trigger)})"
    )
    cut = plan.cut
    if cut is None:
        say("no valid cut point leaves anything to summarize")
    else:
        split = ", splits a turn" if cut.splits_turn else ""
        say(
            f"cut: first kept entry {cut.first_kept_id} (message {cut.index} of "
            f"{plan.conversation}); {cut.summarize + cut.turn_prefix} messages summarized, "
            f"{_n(cut.kept_tokens)} tokens kept{split}"
        )
    if plan.prune is not None:
        say(
            f"prune: {len(plan.prune.call_ids)} tool results, "
            f"{_n(plan.prune.tokens_saved)} tokens saved"
        )
    first = plan.first
    if first is not None and first.durable.texts:
        parts = ", ".join(f"{kind} {_n(n)}" for kind, n in first.durable.by_kind().items())
        say(f"re-injected: {_n(first.reinjected_tokens)} tokens ({parts})")
    parts = ", ".join(f"{name} {_n(n)}" for name, n in plan.floor)
    say(f"floor: {_n(plan.floor_tokens)} tokens ({parts or 'nothing'})")
    table = Grid(
        ("attempt", "keep recent", "truncate cap", "summary", "expected", "first kept"),
        right=frozenset({0, 1, 2, 3, 4}),
    )
    for n, a in enumerate(plan.attempts):
        table.add(
            str(n + 1),
            _n(a.keep_recent),
            "budget" if a.truncate_tokens is None else _n(a.truncate_tokens),
            _n(a.summary_tokens),
            _n(a.expected_tokens),
            "—" if a.cut is None else a.cut.first_kept_id or "(none: no tail)",
        )
    show(table)


def show_replay(label: str, r: ReplayResult, *, rows: int = 40) -> None:
    """Print a replay timeline (calls with ladder events, plus an evenly spaced sample)."""
    steps = r.steps
    every = max(1, len(steps) // rows)
    table = Grid(
        ("call", "entries", "context tokens", "messages", "epoch", "ladder", "valid"),
        title=f"Replay of {label} under a {_n(r.window)}-token window",
        right=frozenset({0, 1, 2, 3, 4}),
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
            table.add(
                str(s.call), _n(s.entries), _n(s.tokens), _n(s.messages), str(s.epoch), ladder, ok
            )
    show(table)
    say(
        f"{len(steps)} calls, {r.compactions} compactions, {r.prunes} prunes, "
        f"largest context {_n(r.max_tokens)} tokens, {r.invalid} invalid requests"
    )


def show_compact_report(rep: Mapping[str, Any], *, stderr: bool = False) -> None:
    """Print a ``compact`` report (the dict described in
    :func:`ctxengine.cli.commands.compact._run_compaction`) on stdout, or on stderr with
    ``stderr`` (when the request body goes to stdout)."""

    def line(text: str) -> None:
        say(text, stderr=stderr)

    line(
        f"{rep['source']} → {rep['provider']} request, "
        f"window {rep['window']:,} (trigger {rep['trigger']:,})"
    )
    line(f"tokens: {rep['tokens_before']:,} → {rep['tokens_after']:,} ({rep['messages']} messages)")
    asked = rep.get("keep_recent")
    if asked is not None and asked.get("asked") is not None:
        line(
            f"keep-recent: {asked['asked']:,} tokens asked, {asked['used']:,} used"
            + (f" ({asked['why']})" if asked.get("why") else "")
        )
    if rep["note"]:
        line(f"nothing compacted: {rep['note']}")
    summ = rep.get("summarizer") or {}
    if summ.get("model"):
        line(
            f"summary model {summ['model']}: {summ['calls']} call(s), "
            f"{summ['input_tokens']:,} input and {summ['output_tokens']:,} output tokens"
            + (
                f"; instructions from {', '.join(summ['instructions_from'])}"
                if summ["instructions_from"]
                else ""
            )
        )
    if summ.get("notes"):
        line("summary notes: " + ", ".join(summ["notes"]))
    if summ.get("fallback"):
        line(str(summ["fallback"]))
    if "cut" in rep:
        cut = rep["cut"]
        led = rep["compaction"].get("ledgers", {})
        line(
            f"cut point: first kept entry {cut['first_kept_id']}"
            + (" (inside a turn)" if cut["splits_turn"] else "")
        )
        line(
            f"summarized by {rep['compaction']['summarizer']}: "
            f"{len(led.get('files_modified', []))} files modified, "
            f"{len(led.get('files_read', []))} read, "
            f"{len(led.get('constraints', []))} constraints, "
            f"{len(led.get('errors', []))} errors, "
            f"{len(led.get('commands', []))} commands carried in the ledgers"
        )
    before = len(rep.get("truncated_before", ()))
    summarized = f" ({before} before the compaction)" if before != len(rep["truncated"]) else ""
    line(
        f"truncated tool results: {len(rep['truncated'])}{summarized}; "
        f"pruned tool results: {len(rep['pruned'])}"
    )


def _kept(pair: tuple[int, int]) -> str:
    kept, total = pair
    return f"{kept}/{total}" if total else "–"


def _yes(value: bool | None) -> str:
    return "–" if value is None else ("yes" if value else "NO")


def show_comparison(c: Comparison) -> None:
    """Print a ``replay --policy`` comparison: one column per policy, then the notes and the
    cache model checked against the transcript's recorded cache reads."""
    rules = c.price.rules
    ttl = rules.long_ttl_s if c.long_ttl else rules.ttl_s
    runs = c.runs
    table = Grid(
        ("", *(r.name for r in runs)),
        title=(
            f"Replay of {c.source} under a {_n(c.window)}-token window: {rules.provider} "
            f"prompt cache ({rules.mode}, {int(ttl)} s), {c.price.price.name} prices"
        ),
        right=frozenset(range(1, len(runs) + 1)),
        split=True,
    )
    table.add("model calls", *(_n(len(r.steps)) for r in runs))
    table.add("compactions", *(_n(r.result.compactions) for r in runs))
    table.add("prunes", *(_n(r.result.prunes) for r in runs))
    table.add("summarizer", *(r.summary.name + (" *" if r.summary.stand_in else "") for r in runs))
    table.add("summarizer calls", *(_n(r.summary.calls) for r in runs))
    table.add(
        "summarizer in / out tokens",
        *(f"{_n(r.summary.input_tokens)} / {_n(r.summary.output_tokens)}" for r in runs),
    )
    table.add("peak context", *(_n(r.peak_context) for r in runs))
    table.add("mean context", *(_n(r.mean_context) for r in runs))
    table.add("input tokens billed", *(_n(r.billed_input) for r in runs))
    table.add("  uncached", *(_n(r.uncached) for r in runs))
    table.add("  cache reads", *(_n(r.cache_read) for r in runs))
    table.add("  cache writes", *(_n(r.cache_write) for r in runs))
    table.add(
        "cache breaks",
        *(", ".join(f"{cause} {n}" for cause, n in r.breaks.items()) or "0" for r in runs),
    )
    table.add("estimated cost", *(f"${r.cost:,.2f}" for r in runs))
    table.add("first request kept", *(_yes(r.survival.first_request) for r in runs))
    table.add("constraints kept", *(_kept(r.survival.constraints) for r in runs))
    table.add("modified files kept", *(_kept(r.survival.modified_files) for r in runs))
    table.add("last error kept", *(_yes(r.survival.last_error) for r in runs))
    table.add("over the window at call", *(str(r.overflow_call or "–") for r in runs))
    table.add("invalid requests", *(_n(r.result.invalid) for r in runs))
    show(table)
    if any(r.summary.stand_in for r in runs):
        say("* model summarizer: the extractive one stood in, its calls estimated")
    for note in c.notes:
        say(f"note: {note}")
    check = c.cache_check
    if check is None:
        return
    say(
        f"Cache model against the transcript's own requests ({check['provider']} rules, "
        f"{check['compared']} calls after the first; unrecorded head "
        f"{_n(check['head_tokens'])} tokens): cache-read ratio recorded "
        f"{_pct(check['recorded_share'])}, simulated {_pct(check['simulated_share'])} "
        f"(x{_ratio(check['share_ratio'])}); reads recorded {_n(check['recorded_read'])}, "
        f"simulated {_n(check['simulated_read'])} tokens (x{_ratio(check['read_ratio'])})"
    )
    breaks = check["breaks"]
    if not breaks:
        return
    shown = Grid(
        ("call", "recorded read / prompt", "recorded cause", "simulated read", "simulated cause"),
        title=f"Cache breaks, recorded or simulated ({len(breaks)})",
        right=frozenset({0, 1, 3}),
    )
    for b in breaks[:BREAKS_SHOWN]:
        shown.add(
            str(b["call"]),
            f"{_n(b['recorded_read'])} / {_n(b['recorded_prompt'])}",
            b["recorded_cause"] or ("break" if b["recorded_break"] else "–"),
            _n(b["simulated_read"]),
            b["simulated_cause"] or "–",
        )
    show(shown)
    if len(breaks) > BREAKS_SHOWN:
        say(f"… {len(breaks) - BREAKS_SHOWN} more in --json")


#: Cache breaks listed in the text report (all of them are in ``--json``).
BREAKS_SHOWN = 20


def _pct(value: float | None) -> str:
    return "–" if value is None else f"{100 * value:.1f} %"


def _ratio(value: float | None) -> str:
    return "–" if value is None else f"{value:.3f}"
