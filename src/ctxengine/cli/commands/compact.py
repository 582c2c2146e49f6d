"""``ctxengine compact``: compact a session now and write the provider request body.

The command parses its options, calls :func:`_run_compaction` (the engine's compaction and
its outcome report, handed off as a request body) and prints. ``--plan`` prints the plan the
compaction would run and stops: no model call, nothing written.
"""

from __future__ import annotations

from contextlib import AbstractContextManager, nullcontext
from dataclasses import asdict, dataclass, replace
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
    StrictOpt,
    WindowOpt,
    policy_from_options,
)
from ctxengine.cli.output import dump_json, err, out
from ctxengine.cli.summary import SummarizerChoice, choose_summarizer, summary_report
from ctxengine.cli.views import show_compact_report, show_events, show_plan
from ctxengine.engine import CompactionOutcome, Session
from ctxengine.errors import CompactionError, NothingToCompact, SummaryRejected
from ctxengine.model import CompactionRecord, Entry
from ctxengine.model.codec import body_to_dict
from ctxengine.policy import Policy, SummarizerName
from ctxengine.policy.defaults import DEFAULT_COMPACTION_LOCK_TIMEOUT_S, DEFAULT_WINDOW
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
    strict: StrictOpt = False,
    plan: Annotated[
        bool,
        typer.Option(
            "--plan", help="Print the plan only: no model call, nothing written, no -o file."
        ),
    ] = False,
    json_out: Annotated[
        bool, typer.Option("--json", help="With --plan: print it as JSON.")
    ] = False,
) -> None:
    """Compact a session now and write the provider request body; print what was kept,
    truncated, pruned and summarized. A stored session gets the compaction appended; a file
    is compacted in memory. A model summarizer gets the "Compact instructions" section of
    AGENTS.md / CLAUDE.md in the current directory as priority instructions."""
    if provider not in RENDERERS:
        raise typer.BadParameter(f"expected one of {sorted(RENDERERS)}", param_hint="--provider")
    if json_out and not plan:
        raise typer.BadParameter("--json prints a plan: use it with --plan", param_hint="--json")
    if plan and (output is not None or report_json):
        raise typer.BadParameter(
            "--plan writes nothing and prints the plan only: drop -o/--report-json, or --plan",
            param_hint="--plan",
        )
    if summarizer is not None and summarizer not in get_args(SummarizerName):
        raise typer.BadParameter("expected extractive, llm or hybrid", param_hint="--summarizer")
    policy = policy_from_options(keep_recent, window=window, max_tokens=max_tokens)
    choice = choose_summarizer(
        summarizer, summary_model, policy=policy, base_url=base_url, api_key=api_key, verify=verify
    )
    for warning in choice.warnings:
        err.print(f"[yellow]warning:[/yellow] {warning}", highlight=False)
    t = load_target(target, db=db, format=format, strict=strict)
    if plan:
        _show_plan(_session(t, window, policy, choice, summarizer is not None), focus, json_out)
        return
    request = RequestOptions(provider, model, max_tokens, next_user)
    with _single_flight(t):
        if t.store is not None:
            # Under the session's compaction lock, from what is stored now: a compaction
            # another process stored meanwhile is used, not made again.
            t.entries = tuple(t.store.entries(t.session_id))
        run = _run_compaction(
            t,
            window=window,
            policy=policy,
            choice=choice,
            summarizer_asked=summarizer is not None,
            focus=focus,
            request=request,
        )
        _require_fit(run.report["tokens_after"], window, max_tokens)
        if output is not None:
            dump_json(run.body, output)
        if t.store is not None:
            # Only now, after the request was written, in one transaction: a failed run
            # leaves the store as it was.
            last = t.entries[-1].seq if t.entries else -1
            t.store.append(t.session_id, list(run.new_entries), expect_last_seq=last)
    if report_json:
        dump_json(run.report, None, to_stderr=output == "-")
    elif output != "-":
        show_compact_report(out, run.report)
        show_events(out, run.session.events)


def _require_fit(tokens: int, window: int, max_tokens: int | None) -> None:
    """Refuse a request that cannot be sent: ``tokens`` (the compacted request's estimate)
    plus ``max_tokens`` (the output asked for, 0 when none) over the ``window``. Raised before
    anything is written or stored, so a request a provider would reject never reaches ``-o``.

    Raises:
        CompactionError: naming the sizes; the head (system prompt, developer instructions)
            and the newest turn are kept whole, so they alone may not fit.
    """
    reserved = max_tokens or 0
    if tokens + reserved <= window:
        return
    asked = f" plus the {reserved:,} output tokens asked for (--max-tokens)" if reserved else ""
    raise CompactionError(
        f"the compacted request still needs about {tokens:,} tokens{asked}, more than the "
        f"{window:,}-token window (the system prompt, developer instructions and the newest "
        "turn are kept whole and alone may not fit); nothing was written"
    )


def _single_flight(t: Target) -> AbstractContextManager[None]:
    """The stored session's compaction lock (one compaction at a time across processes),
    or nothing for a file compacted in memory."""
    if t.store is None:
        return nullcontext()
    return t.store.compaction_lock(t.session_id, timeout_s=DEFAULT_COMPACTION_LOCK_TIMEOUT_S)


def _show_plan(session: Session, focus: str | None, json_out: bool) -> None:
    """Print the plan a manual compaction of ``session`` would run (as JSON with
    ``json_out``); a session with nothing new to compact prints why."""
    try:
        found = session.plan(focus)
    except NothingToCompact as exc:
        if json_out:
            dump_json({"plan": None, "note": str(exc)}, None)
        else:
            out.print(str(exc), highlight=False, markup=False)
        return
    assert found is not None  # a manual plan is always made or refused
    if json_out:
        dump_json({"plan": found.to_dict(), "note": ""}, None)
    else:
        show_plan(out, found)


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

    A model summarizer chosen by default (a configured summary model, ``summarizer_asked``
    False) runs with the session's ``"on_failure"`` fallback: a failed summary (other than an
    authentication or rejected-request error) is written by the extractive summarizer
    instead. "Nothing to compact" and an "inflated" summary leave the context as it was and
    explain why in ``note``.

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
        - ``outcome``: the engine's report of this run's compaction
          (:meth:`~ctxengine.engine.CompactionOutcome.report`: cut, sizes, summarizer,
          fallback, attempt and the plan), or ``None``.
        - ``events``: every ladder event of this run (:meth:`LadderEvent.to_dict
          <ctxengine.engine.LadderEvent.to_dict>` without the plan).
        - ``closed_pending_calls``: ids of the unanswered calls closed in the request.
        - ``summarizer``: :func:`~ctxengine.cli.summary.summary_report` plus ``notes`` (the
          summarizer's notes on this run's compaction, else ``[]``).

    Raises:
        SummaryRejected, ProviderError: the summarizer failed and no fallback applies.
        CompactionError: the compaction could not be carried out.
        typer.BadParameter, RuntimeError: from :func:`~ctxengine.cli.handoff.hand_off`.
    """
    session = _session(target, window, policy, choice, summarizer_asked)
    before = session.project()
    note = ""
    outcome: CompactionOutcome | None = None
    try:
        outcome = session.compact(focus)
        ctx = outcome.context
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
    report["outcome"] = None if outcome is None else outcome.report()
    report["events"] = [e.to_dict(with_plan=False) for e in session.events]
    report["closed_pending_calls"] = list(sent.closed)
    fell_back = next((e.detail for e in session.events if e.step == "fallback"), None)
    report["summarizer"] = summary_report(choice, fell_back) | {
        "notes": list(outcome.notes) if outcome is not None else []
    }
    new_entries = session.entries[len(target.entries) :]
    return CompactionRun(session, new_entries, sent.body, report)


def measured_by_us(target: Target) -> tuple[Entry, ...]:
    """The target's entries; for a transcript another agent wrote, without the provider
    usage on its replies: that usage measured the source agent's own requests (its system
    prompt and tool schemas are not in the log), so both sides of a compaction are sized by
    ctxengine's estimate (entry ids unchanged)."""
    if target.format == "ctxengine":
        return target.entries
    return tuple(
        replace(e, body=replace(m, usage=None)) if (m := e.message) is not None and m.usage else e
        for e in target.entries
    )


def _session(
    target: Target,
    window: int,
    policy: Policy,
    choice: SummarizerChoice,
    summarizer_asked: bool,
) -> Session:
    """The in-memory session of ``target``; a model summarizer the user did not ask for by
    name falls back to the extractive one on failure."""
    by_default = choice.kind != "extractive" and not summarizer_asked
    return Session(
        window,
        policy=policy,
        session_id=target.session_id,
        entries=measured_by_us(target),
        summarizer=choice.summarizer,
        fallback="on_failure" if by_default else "breaker",
    )
