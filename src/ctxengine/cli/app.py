"""The typer application: one function per command, parsing and printing only."""

from __future__ import annotations

import sys
from dataclasses import asdict, replace
from pathlib import Path
from typing import Annotated, Any

import orjson
import typer
from rich.console import Console
from rich.progress import BarColumn, MofNCompleteColumn, Progress, TextColumn, TimeElapsedColumn

from ctxengine import __version__
from ctxengine.analysis import breakdown
from ctxengine.cli.load import load_target, open_store
from ctxengine.cli.summary import choose_summarizer, summary_report
from ctxengine.cli.views import show_breakdown, show_events, show_replay
from ctxengine.engine import Session
from ctxengine.errors import (
    CompactionError,
    NothingToCompact,
    ProviderAuthError,
    ProviderError,
    ProviderRequestError,
    StoreError,
    SummaryRejected,
    TranscriptError,
)
from ctxengine.importers import get_importer, read_transcript
from ctxengine.model.codec import entry_to_dict
from ctxengine.policy import DEFAULT_POLICY, Policy
from ctxengine.projection.context import Context
from ctxengine.projection.handoff import close_pending, with_next_user
from ctxengine.projection.render.anthropic import render_anthropic
from ctxengine.projection.render.openai import render_openai
from ctxengine.projection.validate import validate
from ctxengine.replay import RENDERERS, replay
from ctxengine.tokens.estimate import HeuristicEstimator

#: Window assumed when ``--window`` is not given, in tokens.
DEFAULT_WINDOW = 128_000

app = typer.Typer(
    add_completion=False,
    no_args_is_help=True,
    help="Inspect, compact, replay and export LLM agent sessions.",
)
out = Console()
err = Console(stderr=True)


def _show_version(value: bool) -> None:
    if value:
        out.print(f"ctxengine {__version__}")
        raise typer.Exit()


@app.callback()
def _root(
    version: Annotated[
        bool,
        typer.Option("--version", callback=_show_version, is_eager=True, help="Show the version."),
    ] = False,
) -> None:
    """Inspect, compact, replay and export LLM agent sessions."""


DbOpt = Annotated[
    str | None,
    typer.Option("--db", envvar="CTXENGINE_DB", help="SQLite store (default: user data dir)."),
]
FormatOpt = Annotated[
    str | None, typer.Option("--format", help="Force the transcript format instead of sniffing.")
]
NextUserOpt = Annotated[
    str | None,
    typer.Option(
        "--user",
        help="The next user message, appended to the request (newer Anthropic models reject "
        "a request that ends with the assistant's turn).",
    ),
]
ModelOpt = Annotated[
    str | None, typer.Option("--model", help="Model name written into the request body.")
]
MaxTokensOpt = Annotated[
    int | None,
    typer.Option("--max-tokens", min=1, help="Output budget written into the request body."),
]
WindowOpt = Annotated[int, typer.Option("--window", min=1, help="Model context window in tokens.")]


def _policy(
    keep_recent: int | None = None, *, window: int = 0, max_tokens: int | None = None
) -> Policy:
    """The default policy; an explicit ``--keep-recent`` is taken as given (not capped at a
    share of the window; a budget that leaves nothing to compact is a ConfigError); an
    explicit ``--max-tokens`` becomes the reserve (plus a 5 % margin), so the request and its
    output budget fit the window together (else a ConfigError)."""
    update: dict[str, Any] = {}
    if keep_recent is not None:
        update |= {"keep_recent_tokens": keep_recent, "keep_recent_max_ratio": 1.0}
    if max_tokens is not None:
        update["reserve_tokens"] = max_tokens + window // 20
    return DEFAULT_POLICY.model_copy(update=update) if update else DEFAULT_POLICY


def _dump(data: Any, path: str | None, *, to_stderr: bool = False) -> None:
    raw = orjson.dumps(data, option=orjson.OPT_INDENT_2) + b"\n"
    if to_stderr:
        sys.stderr.buffer.write(raw)
        sys.stderr.flush()
    elif path is None or path == "-":
        sys.stdout.buffer.write(raw)
        sys.stdout.flush()
    else:
        Path(path).write_bytes(raw)


@app.command("import")
def import_(
    files: Annotated[list[Path], typer.Argument(help="Transcript files to import.")],
    db: DbOpt = None,
    format: FormatOpt = None,
) -> None:
    """Import transcript files into the store (importing a file twice adds nothing).

    Every file is tried: one line per file (what was stored, or the error); exit 2 at the end
    when any file failed."""
    if format is not None:
        get_importer(format)  # an unknown format fails every file: refuse it once
    failed = 0
    with open_store(db) as store:
        for f in files:
            try:
                imported = read_transcript(f, format)
                res = store.import_session(imported)
            except (TranscriptError, StoreError) as exc:
                failed += 1
                err.print(f"[red]error:[/red] {exc}", highlight=False)
                continue
            out.print(
                f"{f}: session {res.session_id} ({imported.format}): "
                f"{res.added} entries added, {res.skipped} already stored"
            )
    if failed:
        raise ImportFailed(failed, len(files))


class ImportFailed(Exception):
    """``failed`` of ``total`` files of an ``import`` failed (each reported on its own line).
    Like a click usage error it has ``show()`` and ``exit_code`` 2, so
    :func:`ctxengine.cli.main` shows it and exits 2 (a ``typer.Exit`` code is dropped when the
    app runs outside standalone mode)."""

    exit_code = 2

    def __init__(self, failed: int, total: int) -> None:
        super().__init__(f"{failed} of {total} files not imported")
        self.failed = failed
        self.total = total

    def show(self) -> None:
        """Print the summary line to stderr (only after several files: one file's error
        line says it all)."""
        if self.total > 1:
            err.print(f"[red]error:[/red] {self}", highlight=False)


@app.command()
def sessions(db: DbOpt = None) -> None:
    """List stored sessions."""
    from rich.table import Table

    with open_store(db) as store:
        table = Table()
        table.add_column("id", no_wrap=True)  # shown whole: other commands take it
        table.add_column("format", no_wrap=True, min_width=6)
        table.add_column("entries", no_wrap=True, justify="right", min_width=7)
        table.add_column("title", max_width=40, overflow="fold")
        table.add_column("source", overflow="fold")
        for s in store.sessions():
            table.add_row(
                s.id, s.format or "", str(s.entry_count), (s.title or "")[:60], s.source_path or ""
            )
        out.print(table)


@app.command()
def inspect(
    target: Annotated[str, typer.Argument(help="Transcript file or stored session id.")],
    db: DbOpt = None,
    format: FormatOpt = None,
    top: Annotated[int, typer.Option(help="Largest entries to list.")] = 10,
    json_out: Annotated[bool, typer.Option("--json", help="Print JSON instead.")] = False,
) -> None:
    """Token breakdown by role, by tool, top consumers and epochs."""
    t = load_target(target, db=db, format=format)
    b = breakdown(t.entries, HeuristicEstimator(), top=top)
    if json_out:
        _dump(asdict(b), None)
    else:
        show_breakdown(out, t.label, b)


@app.command()
def compact(
    target: Annotated[str, typer.Argument(help="Transcript file or stored session id.")],
    window: WindowOpt = DEFAULT_WINDOW,
    keep_recent: Annotated[
        int | None, typer.Option("--keep-recent", min=0, help="Keep-recent budget in tokens.")
    ] = None,
    provider: Annotated[str, typer.Option(help="openai or anthropic")] = "openai",
    output: Annotated[
        str | None,
        typer.Option("-o", "--output", help="Write the request body here (- for stdout)."),
    ] = None,
    report_json: Annotated[
        bool, typer.Option("--report-json", help="Print the report as JSON.")
    ] = False,
    focus: Annotated[str | None, typer.Option(help="What the summary should focus on.")] = None,
    summarizer: Annotated[
        str | None,
        typer.Option(
            help="extractive, llm or hybrid (default: hybrid when a summary model is set)."
        ),
    ] = None,
    summary_model: Annotated[
        str | None,
        typer.Option(
            "--summary-model",
            help="provider:model, e.g. openai:gpt-4o-mini (default: CTXENGINE_SUMMARY_MODEL).",
        ),
    ] = None,
    base_url: Annotated[
        str | None, typer.Option("--base-url", help="Summary model base URL (else SDK env).")
    ] = None,
    api_key: Annotated[
        str | None, typer.Option("--api-key", help="Summary model API key (else SDK env).")
    ] = None,
    verify: Annotated[
        bool, typer.Option("--verify-summary", help="Second pass checking the summary.")
    ] = False,
    model: ModelOpt = None,
    max_tokens: MaxTokensOpt = None,
    next_user: NextUserOpt = None,
    db: DbOpt = None,
    format: FormatOpt = None,
) -> None:
    """Compact a session now and write the provider request body; print what was kept,
    truncated, pruned and summarized. A stored session gets the compaction appended; a file
    is compacted in memory. A model summarizer gets the "Compact instructions" section of
    AGENTS.md / CLAUDE.md in the current directory as priority instructions."""
    if provider not in RENDERERS:
        raise typer.BadParameter(f"expected one of {sorted(RENDERERS)}", param_hint="--provider")
    if summarizer not in (None, "extractive", "llm", "hybrid"):
        raise typer.BadParameter("expected extractive, llm or hybrid", param_hint="--summarizer")
    policy = _policy(keep_recent, window=window, max_tokens=max_tokens)
    choice = choose_summarizer(
        summarizer, summary_model, policy=policy, base_url=base_url, api_key=api_key, verify=verify
    )
    for warning in choice.warnings:
        err.print(f"[yellow]warning:[/yellow] {warning}", highlight=False)
    t = load_target(target, db=db, format=format)
    # Compacted in memory; a stored session gets the new entries only after the request
    # was written, in one transaction (a failed run leaves the store as it was).
    session = Session(
        window,
        policy=policy,
        session_id=t.session_id,
        entries=t.entries,
        summarizer=choice.summarizer,
    )
    before_ctx = session.project()
    # Both sides as ctxengine estimates them: an imported session's provider usage measured
    # the source agent's own requests (its system prompt and tool schemas are not in the log).
    before = before_ctx.tokens
    note = ""
    fallback: str | None = None
    try:
        try:
            ctx = session.compact(focus).context
        except (SummaryRejected, ProviderError) as exc:
            # Only a summarizer chosen by default (a configured model) falls back; one asked
            # for with --summarizer fails the command, and so do authentication and request
            # errors, which another try cannot fix.
            if (
                choice.kind == "extractive"
                or summarizer is not None
                or isinstance(exc, ProviderAuthError | ProviderRequestError)
            ):
                raise
            fallback = f"the {choice.kind} summary failed ({exc}); used the extractive one"
            session.summarizer = choose_summarizer("extractive", None, policy=policy).summarizer
            ctx = session.compact(focus).context
    except NothingToCompact as exc:
        note = str(exc)
        ctx = before_ctx
    except SummaryRejected as exc:
        if exc.reason != "inflated":
            raise
        note = f"a continuation state would not make this session smaller ({exc})"
        ctx = before_ctx
    ctx, closed = close_pending(ctx, session.estimator)
    if next_user:
        ctx = with_next_user(ctx, next_user, session.estimator)
    body = _render(ctx, provider, model, max_tokens, session.budget.reserve)
    report = _compact_report(session, t.label, provider, before, ctx.tokens, note)
    report["messages"] = len(body.get("messages", ()))
    report["closed_pending_calls"] = list(closed)
    report["summarizer"] = summary_report(choice, fallback)
    compactions = [e for e in session.events if e.step == "compaction"]
    report["summarizer"]["notes"] = list(compactions[-1].notes) if compactions else []
    if output is not None:
        _dump(body, output)
    if t.store is not None:
        t.store.append(t.session_id, list(session.entries[len(t.entries) :]))
    if report_json:
        _dump(report, None, to_stderr=output == "-")
    elif output != "-":
        _print_compact_report(report)
        show_events(out, session.events)
    if ctx.tokens > window:
        raise CompactionError(
            f"the compacted request still needs about {ctx.tokens:,} tokens, more than the "
            f"{window:,}-token window (the system prompt and the newest turn alone may not fit)"
        )


#: Output budget written into an Anthropic body when --max-tokens is not given (the
#: Messages API requires one).
DEFAULT_ANTHROPIC_MAX_TOKENS = 4_096


def _render(
    ctx: Context, provider: str, model: str | None, max_tokens: int | None, reserve: int
) -> Any:
    """Render a hand-off body: every tool it calls declared (transcripts rarely record the
    schemas); Anthropic's required ``max_tokens`` filled in (``--max-tokens``, else the
    smaller of 4,096 and the session's reserve); with ``--model`` the body must pass the
    strict check (it can be POSTed as is).

    Raises:
        typer.BadParameter: a strict Anthropic body ends with the assistant's turn (the
            next user message is needed: ``--user``).
        RuntimeError: ctxengine produced an invalid body (an internal error).
    """
    if provider == "anthropic":
        out_budget = max_tokens or min(DEFAULT_ANTHROPIC_MAX_TOKENS, reserve)
        body = render_anthropic(ctx, model=model, max_tokens=out_budget, declare_tools=True)
    else:
        body = render_openai(ctx, model=model, max_tokens=max_tokens, declare_tools=True)
    problems = validate(body, provider, strict=model is not None)
    if any("(prefill)" in p for p in problems):
        raise typer.BadParameter(
            "the request ends with the assistant's last reply, which Anthropic models reject "
            "as prefill: give the next user message with --user TEXT",
            param_hint="--user",
        )
    if problems:
        raise RuntimeError(f"ctxengine produced an invalid {provider} request: {problems[:3]}")
    return body


def _compact_report(
    session: Session, label: str, provider: str, before: int, after: int, note: str
) -> dict[str, Any]:
    ctx = session.project()
    comp = next((e for e in reversed(session.entries) if e.kind == "compaction"), None)
    rep: dict[str, Any] = {
        "source": label,
        "session_id": session.session_id,
        "window": session.budget.window,
        "trigger": session.budget.trigger,
        "provider": provider,
        "tokens_before": before,
        "tokens_after": after,
        "messages": len(ctx.messages),
        "truncated": [asdict(t) for t in ctx.truncations],
        "pruned": list(ctx.pruned),
        "sanitized": asdict(ctx.sanitize),
        "note": note,
    }
    if comp is not None and comp.kind == "compaction":
        rec = comp.body
        rep["compaction"] = entry_to_dict(comp)["body"]
        rep["cut"] = {
            "first_kept_id": getattr(rec, "first_kept_id", None),
            "splits_turn": getattr(rec, "splits_turn", False),
        }
        rep["summarized_events"] = [e.to_dict() for e in session.events]
    return rep


def _print_compact_report(rep: dict[str, Any]) -> None:
    out.print(
        f"[bold]{rep['source']}[/bold] → {rep['provider']} request, "
        f"window {rep['window']:,} (trigger {rep['trigger']:,})"
    )
    out.print(
        f"tokens: {rep['tokens_before']:,} → {rep['tokens_after']:,} ({rep['messages']} messages)"
    )
    if rep["note"]:
        out.print(f"nothing compacted: {rep['note']}")
    summ = rep.get("summarizer") or {}
    if summ.get("model"):
        out.print(
            f"summary model {summ['model']}: {summ['calls']} call(s), "
            f"{summ['input_tokens']:,} input and {summ['output_tokens']:,} output tokens"
            + (
                f"; instructions from {', '.join(summ['instructions_from'])}"
                if summ["instructions_from"]
                else ""
            )
        )
    if summ.get("notes"):
        out.print("summary notes: " + ", ".join(summ["notes"]), highlight=False)
    if summ.get("fallback"):
        out.print(f"[yellow]{summ['fallback']}[/yellow]", highlight=False)
    if "cut" in rep:
        cut = rep["cut"]
        led = rep["compaction"].get("ledgers", {})
        out.print(
            f"cut point: first kept entry {cut['first_kept_id']}"
            + (" (inside a turn)" if cut["splits_turn"] else "")
        )
        out.print(
            f"summarized by {rep['compaction']['summarizer']}: "
            f"{len(led.get('files_modified', []))} files modified, "
            f"{len(led.get('files_read', []))} read, "
            f"{len(led.get('constraints', []))} constraints, "
            f"{len(led.get('errors', []))} errors, "
            f"{len(led.get('commands', []))} commands carried in the ledgers"
        )
    out.print(
        f"truncated tool results: {len(rep['truncated'])}; "
        f"pruned tool results: {len(rep['pruned'])}"
    )


@app.command("replay")
def replay_cmd(
    target: Annotated[str, typer.Argument(help="Transcript file or stored session id.")],
    window: WindowOpt = DEFAULT_WINDOW,
    keep_recent: Annotated[
        int | None, typer.Option("--keep-recent", min=0, help="Keep-recent budget in tokens.")
    ] = None,
    json_out: Annotated[bool, typer.Option("--json", help="Print the timeline as JSON.")] = False,
    db: DbOpt = None,
    format: FormatOpt = None,
) -> None:
    """Re-play a session as a live agent would: prepare() before every assistant message,
    validate each request for both providers, and print the timeline."""
    t = load_target(target, db=db, format=format)
    total = sum(1 for e in t.entries if e.message is not None and e.message.role == "assistant")
    with Progress(
        TextColumn("replaying"),
        BarColumn(),
        MofNCompleteColumn(),
        TimeElapsedColumn(),
        console=err,
        transient=True,
        disable=total < 200 or json_out,
    ) as progress:
        task = progress.add_task("calls", total=total)
        result = replay(
            t.entries,
            window=window,
            policy=_policy(keep_recent),
            on_step=lambda _s: progress.advance(task),
        )
    if json_out:
        _dump(
            {
                "source": t.label,
                "window": window,
                "calls": len(result.steps),
                "compactions": result.compactions,
                "prunes": result.prunes,
                "invalid": result.invalid,
                "max_tokens": result.max_tokens,
                "steps": [
                    {
                        **asdict(replace(s, events=())),
                        "events": [e.to_dict(with_plan=False) for e in s.events],
                    }
                    for s in result.steps
                ],
            },
            None,
        )
    else:
        show_replay(out, t.label, result)
    if result.invalid:
        raise RuntimeError(f"{result.invalid} replayed requests failed validation")


@app.command()
def export(
    target: Annotated[str, typer.Argument(help="Stored session id or transcript file.")],
    format: Annotated[
        str, typer.Option("--format", help="jsonl (the log), openai or anthropic (request body)")
    ] = "jsonl",
    window: WindowOpt = DEFAULT_WINDOW,
    output: Annotated[str | None, typer.Option("-o", "--output", help="Output file.")] = None,
    model: ModelOpt = None,
    max_tokens: MaxTokensOpt = None,
    next_user: NextUserOpt = None,
    db: DbOpt = None,
) -> None:
    """Export a session: its whole log as ctxengine JSONL, or the request body for its next
    call (the ladder run for --window, unanswered calls closed)."""
    t = load_target(target, db=db, format=None)
    if format == "jsonl":
        lines = b"".join(orjson.dumps(entry_to_dict(e)) + b"\n" for e in t.entries)
        if output:
            Path(output).write_bytes(lines)
        else:
            sys.stdout.buffer.write(lines)
        return
    if format not in RENDERERS:
        raise typer.BadParameter("expected jsonl, openai or anthropic", param_hint="--format")
    policy = _policy(window=window, max_tokens=max_tokens)
    session = Session(window, policy=policy, session_id=t.session_id, entries=t.entries)
    ctx, _closed = close_pending(session.prepare(), session.estimator)
    if next_user:
        ctx = with_next_user(ctx, next_user, session.estimator)
    _dump(_render(ctx, format, model, max_tokens, session.budget.reserve), output)
