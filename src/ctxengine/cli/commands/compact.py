"""``ctxengine compact``: compact a session now and write the provider request body.

The command parses its options, calls :func:`_run_compaction` and prints. That function holds
the compaction policy the engine does not offer yet (the fallback to the extractive
summarizer, the report); it is the one place to replace with the engine's outcome object.
"""

from __future__ import annotations

from dataclasses import asdict, dataclass
from typing import Annotated, Any, get_args

import typer

from ctxengine.cli.handoff import RequestOptions, hand_off
from ctxengine.cli.load import Target, load_target
from ctxengine.cli.options import (
    DbOpt,
    FormatOpt,
    KeepRecentOpt,
    MaxTokensOpt,
    ModelOpt,
    NextUserOpt,
    WindowOpt,
    policy_from_options,
)
from ctxengine.cli.output import dump_json, err, out
from ctxengine.cli.summary import SummarizerChoice, choose_summarizer, summary_report
from ctxengine.cli.views import show_compact_report, show_events
from ctxengine.engine import Session
from ctxengine.errors import (
    CompactionError,
    NothingToCompact,
    ProviderAuthError,
    ProviderError,
    ProviderRequestError,
    SummaryRejected,
)
from ctxengine.model import CompactionRecord, Entry
from ctxengine.model.codec import body_to_dict
from ctxengine.policy import Policy, SummarizerName
from ctxengine.policy.defaults import DEFAULT_WINDOW
from ctxengine.replay import RENDERERS


def compact(
    target: Annotated[str, typer.Argument(help="Transcript file or stored session id.")],
    window: WindowOpt = DEFAULT_WINDOW,
    keep_recent: KeepRecentOpt = None,
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
    if summarizer is not None and summarizer not in get_args(SummarizerName):
        raise typer.BadParameter("expected extractive, llm or hybrid", param_hint="--summarizer")
    policy = policy_from_options(keep_recent, window=window, max_tokens=max_tokens)
    choice = choose_summarizer(
        summarizer, summary_model, policy=policy, base_url=base_url, api_key=api_key, verify=verify
    )
    for warning in choice.warnings:
        err.print(f"[yellow]warning:[/yellow] {warning}", highlight=False)
    t = load_target(target, db=db, format=format)
    run = _run_compaction(
        t,
        window=window,
        policy=policy,
        choice=choice,
        summarizer_asked=summarizer is not None,
        focus=focus,
        request=RequestOptions(provider, model, max_tokens, next_user),
    )
    if output is not None:
        dump_json(run.body, output)
    if t.store is not None:
        # Only now, after the request was written, in one transaction: a failed run leaves
        # the store as it was.
        t.store.append(t.session_id, list(run.new_entries))
    if report_json:
        dump_json(run.report, None, to_stderr=output == "-")
    elif output != "-":
        show_compact_report(out, run.report)
        show_events(out, run.session.events)
    if run.report["tokens_after"] > window:
        raise CompactionError(
            f"the compacted request still needs about {run.report['tokens_after']:,} tokens, "
            f"more than the {window:,}-token window (the system prompt and the newest turn "
            "alone may not fit)"
        )


@dataclass(frozen=True, slots=True)
class CompactionRun:
    """What :func:`_run_compaction` hands back to the command.

    Attributes:
        session: the in-memory session after the run (its ``events`` are printed).
        new_entries: the entries this run appended (to store for a stored session).
        body: the provider request body.
        report: the report (keys in :func:`_run_compaction`).
    """

    session: Session
    new_entries: tuple[Entry, ...]
    body: dict[str, Any]
    report: dict[str, Any]


# ---------------------------------------------------------------------------------------------
# Compaction policy held by the CLI until the engine owns it (review 2026-12, problem 5): the
# fallback to the extractive summarizer, the "nothing compacted" notes and the report. Replace
# this one function with the engine's compaction outcome and its report.
# ---------------------------------------------------------------------------------------------


def _run_compaction(
    target: Target,
    *,
    window: int,
    policy: Policy,
    choice: SummarizerChoice,
    summarizer_asked: bool,
    focus: str | None,
    request: RequestOptions,
) -> CompactionRun:
    """Compact ``target`` in memory for a ``window``-token model and hand the result off as
    a request body.

    Policy applied here: a model summarizer chosen by default (a configured summary model,
    ``summarizer_asked`` False) that fails with a rejected summary or a provider error other
    than authentication or a rejected request is replaced by the extractive summarizer and
    the compaction runs again; "nothing to compact" and an "inflated" summary leave the
    context as it was and explain why in ``note``.

    Returns:
        The run. Its ``report`` has these keys (tokens as ctxengine estimates them, both
        sides: an imported session's provider usage measured its source agent's requests):

        - ``source``: the file path or session id given; ``session_id``.
        - ``window``, ``trigger``: the session's budget, in tokens.
        - ``provider``: ``openai`` or ``anthropic``.
        - ``tokens_before``: the projected context before the run; ``tokens_after``: the
          context sent (pending calls closed, the next user message appended).
        - ``messages``: messages in the request body.
        - ``truncated`` (truncations), ``pruned`` (pruned call ids), ``sanitized``: the
          projection after the run.
        - ``note``: why nothing was compacted, else ``""``.
        - ``compaction`` (the record as JSON) and ``cut`` (``first_kept_id``,
          ``splits_turn``): the newest compaction in the log, an earlier one when this run
          compacted nothing; absent when the log has none.
        - ``events``: every ladder event of this run (:class:`~ctxengine.engine.LadderEvent`
          as a dict: ``step``, ``entry_id``, tokens before and after, ``detail``, ``at_entry``,
          ``notes``).
        - ``closed_pending_calls``: ids of the unanswered calls closed in the request.
        - ``summarizer``: :func:`~ctxengine.cli.summary.summary_report` plus ``notes`` (the
          summarizer's notes on the last compaction event, else ``[]``).

    Raises:
        SummaryRejected, ProviderError: the summarizer failed and no fallback applies.
        CompactionError: the compaction could not be carried out.
        typer.BadParameter, RuntimeError: from :func:`~ctxengine.cli.handoff.hand_off`.
    """
    session = Session(
        window,
        policy=policy,
        session_id=target.session_id,
        entries=target.entries,
        summarizer=choice.summarizer,
    )
    before = session.project()
    note = ""
    fallback: str | None = None
    try:
        try:
            ctx = session.compact(focus).context
        except (SummaryRejected, ProviderError) as exc:
            # Another try cannot fix authentication or request errors, and a summarizer asked
            # for with --summarizer fails the command.
            if (
                choice.kind == "extractive"
                or summarizer_asked
                or isinstance(exc, ProviderAuthError | ProviderRequestError)
            ):
                raise
            fallback = f"the {choice.kind} summary failed ({exc}); used the extractive one"
            session.summarizer = choose_summarizer("extractive", None, policy=policy).summarizer
            ctx = session.compact(focus).context
    except NothingToCompact as exc:
        note = str(exc)
        ctx = before
    except SummaryRejected as exc:
        if exc.reason != "inflated":
            raise
        note = f"a continuation state would not make this session smaller ({exc})"
        ctx = before
    sent = hand_off(ctx, session.estimator, session.budget.reserve, request)
    after = session.project()
    report: dict[str, Any] = {
        "source": target.label,
        "session_id": session.session_id,
        "window": session.budget.window,
        "trigger": session.budget.trigger,
        "provider": request.provider,
        "tokens_before": before.tokens,
        "tokens_after": sent.context.tokens,
        "messages": len(sent.body.get("messages", ())),
        "truncated": [asdict(t) for t in after.truncations],
        "pruned": list(after.pruned),
        "sanitized": asdict(after.sanitize),
        "note": note,
    }
    newest = next(
        (e.body for e in reversed(session.entries) if isinstance(e.body, CompactionRecord)), None
    )
    if newest is not None:
        report["compaction"] = body_to_dict(newest)
        report["cut"] = {"first_kept_id": newest.first_kept_id, "splits_turn": newest.splits_turn}
    report["events"] = [asdict(e) for e in session.events]
    report["closed_pending_calls"] = list(sent.closed)
    compactions = [e for e in session.events if e.step == "compaction"]
    report["summarizer"] = summary_report(choice, fallback) | {
        "notes": list(compactions[-1].notes) if compactions else []
    }
    new_entries = session.entries[len(target.entries) :]
    return CompactionRun(session, new_entries, sent.body, report)
