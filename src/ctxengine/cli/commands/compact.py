"""``ctxengine compact``: compact a session now and write the provider request body.

The command parses its options, calls :func:`_run_compaction` (the engine's compaction and
its outcome report, handed off as a request body) and prints. ``--plan`` prints the plan the
compaction would run and stops: no model call, nothing written.
"""

from __future__ import annotations

import threading
from contextlib import AbstractContextManager, nullcontext
from dataclasses import asdict, dataclass, replace
from typing import Annotated, Any, get_args

import typer

from ctxengine.cli.handoff import RequestOptions, hand_off
from ctxengine.cli.load import Target, check_output_path, load_target
from ctxengine.cli.options import (
    BusyTimeoutOpt,
    DbOpt,
    ForceOpt,
    FormatOpt,
    KeepRecentOpt,
    MaxTokensOpt,
    ModelOpt,
    ModelWindowOpt,
    NextUserOpt,
    PolicyOpt,
    QuietOpt,
    SessionOpt,
    StrictOpt,
    TargetArg,
    TokenizerChoice,
    TokenizerOpt,
    for_recorded_model,
    policy_from_options,
    resolve_tokenizer,
    resolve_window,
)
from ctxengine.cli.output import dump_json, note, say, warning
from ctxengine.cli.progress import progress
from ctxengine.cli.summary import SummarizerChoice, choose_summarizer, summary_report
from ctxengine.cli.views import show_compact_report, show_events, show_plan
from ctxengine.engine import CompactionOutcome, Session
from ctxengine.errors import (
    Cancelled,
    CompactionError,
    NothingToCompact,
    ProviderError,
    SummaryRejected,
)
from ctxengine.ladder.plan import choose_backend
from ctxengine.model import CompactionRecord, Entry
from ctxengine.model.codec import body_to_dict
from ctxengine.policy import Policy, SummarizerName
from ctxengine.policy.defaults import (
    DEFAULT_COMPACTION_LOCK_TIMEOUT_S,
    MODEL_SUMMARIZER_NAMES,
    PROVIDER_TIMEOUT_S,
)
from ctxengine.policy.policy import Backend
from ctxengine.projection.render import called_tool_schemas
from ctxengine.providers import create_provider
from ctxengine.providers.base import NativeProvider
from ctxengine.providers.profiles import ModelProfile, ProfileTable
from ctxengine.replay import RENDERERS

#: Environment variable giving ``--timeout`` (seconds per summary request).
SUMMARY_TIMEOUT_ENV_VAR = "CTXENGINE_SUMMARY_TIMEOUT"
#: Environment variable giving ``--deadline`` (seconds for all summary calls of a compaction).
SUMMARY_DEADLINE_ENV_VAR = "CTXENGINE_SUMMARY_DEADLINE"


def compact(
    target: TargetArg = None,
    session: SessionOpt = None,
    window: ModelWindowOpt = None,
    keep_recent: KeepRecentOpt = None,
    policy_name: PolicyOpt = None,
    provider: Annotated[
        str,
        typer.Option(
            metavar="NAME",
            help="openai or anthropic: the API of the request body (with a native backend: "
            "the provider that compacts; openai is then the Responses API).",
        ),
    ] = "openai",
    backend: Annotated[
        str | None,
        typer.Option(
            "--backend",
            metavar="NAME",
            help="local (ctxengine summarizes), native (the provider compacts on demand: "
            "needs --model; key and base URL from ANTHROPIC_API_KEY/ANTHROPIC_BASE_URL or "
            "OPENAI_API_KEY/OPENAI_BASE_URL, or --api-key/--base-url) or auto (native where "
            "the model's profile has native compaction). Default: the policy's (local).",
        ),
    ] = None,
    output: Annotated[
        str | None,
        typer.Option(
            "-o",
            "--output",
            metavar="FILE",
            help="Write the request body here (- for stdout; the report then goes to stderr).",
        ),
    ] = None,
    json_out: Annotated[
        bool,
        typer.Option(
            "--json",
            "--report-json",
            help="Print the report (with --plan: the plan) as JSON (schemas/compact.json).",
        ),
    ] = False,
    focus: Annotated[
        str | None, typer.Option(metavar="TEXT", help="What the summary should focus on.")
    ] = None,
    summarizer: Annotated[
        str | None,
        typer.Option(
            metavar="NAME",
            help="extractive, llm, hybrid or none (default: hybrid when a summary model is set).",
        ),
    ] = None,
    summary_model: Annotated[
        str | None,
        typer.Option(
            "--summary-model",
            metavar="PROVIDER:MODEL",
            help="provider:model, e.g. openai:gpt-4o-mini (default: CTXENGINE_SUMMARY_MODEL).",
        ),
    ] = None,
    base_url: Annotated[
        str | None,
        typer.Option(
            "--base-url",
            metavar="URL",
            help="Summary model (native backend: the provider's) base URL (else SDK env).",
        ),
    ] = None,
    api_key: Annotated[
        str | None,
        typer.Option(
            "--api-key",
            metavar="KEY",
            help="Summary model (native backend: the provider's) API key (else SDK env).",
        ),
    ] = None,
    verify: Annotated[
        bool, typer.Option("--verify-summary", help="Second pass checking the summary.")
    ] = False,
    timeout: Annotated[
        float | None,
        typer.Option(
            "--timeout",
            min=0.001,
            metavar="SECONDS",
            envvar=SUMMARY_TIMEOUT_ENV_VAR,
            help="Seconds a summary request may wait for the model (retries only while they "
            f"fit in it). Default: {PROVIDER_TIMEOUT_S:g} per attempt.",
        ),
    ] = None,
    deadline: Annotated[
        float | None,
        typer.Option(
            "--deadline",
            min=0.001,
            metavar="SECONDS",
            envvar=SUMMARY_DEADLINE_ENV_VAR,
            help="Seconds the whole compaction may spend on summary calls; past it they are "
            "cancelled and nothing is written. Default: none.",
        ),
    ] = None,
    model: ModelOpt = None,
    max_tokens: MaxTokensOpt = None,
    next_user: NextUserOpt = None,
    db: DbOpt = None,
    busy_timeout: BusyTimeoutOpt = None,
    format: FormatOpt = None,
    strict: StrictOpt = False,
    plan: Annotated[
        bool,
        typer.Option(
            "--plan", help="Print the plan only: no model call, nothing written, no -o file."
        ),
    ] = False,
    no_cache_markers: Annotated[
        bool,
        typer.Option(
            "--no-cache-markers",
            help="Leave the prompt-cache breakpoints out of an Anthropic request body. By "
            "default it carries those every agent request carries: at most 4 cache_control "
            "markers, never on the last message (the paths inspect lists).",
        ),
    ] = False,
    tokenizer: TokenizerOpt = "auto",
    quiet: QuietOpt = False,
    force: ForceOpt = False,
) -> None:
    """Compact a session now and write the provider request body; print what was kept,
    truncated, pruned and summarized. ``--policy`` compacts the way a preset does (pi,
    codex, gemini-cli, …; see the README). A stored session gets the compaction appended; a file
    is compacted in memory. A model summarizer gets the "Compact instructions" section of
    AGENTS.md / CLAUDE.md in the current directory as priority instructions.

    Nothing is written when the compaction fails: no -o file, no entry in the store. -o is
    written whole or not at all, and refused before any work when it names the store, the
    input file or a directory.

    An Anthropic body carries the prompt-cache breakpoints Session.complete puts on every
    agent request (at most 4 cache_control markers, never on the last message;
    --no-cache-markers leaves them out), and with --model a model whose profile takes
    mid-conversation system messages gets the continuation and re-injected state as
    role "system" messages.

    --backend native asks the provider (--provider anthropic|openai, --model) to compact
    the messages before the cut on demand, and writes the request with the returned
    compaction block (Anthropic) or item (OpenAI Responses) first and the kept tail after
    it; --backend auto does so where the model's profile has native compaction."""
    if provider not in RENDERERS:
        raise typer.BadParameter(f"expected one of {sorted(RENDERERS)}", param_hint="--provider")
    if backend is not None and backend not in get_args(Backend):
        raise typer.BadParameter("expected local, native or auto", param_hint="--backend")
    if plan and output is not None:
        raise typer.BadParameter(
            "--plan writes nothing and prints the plan only: drop -o, or --plan",
            param_hint="--plan",
        )
    if summarizer is not None and summarizer not in get_args(SummarizerName):
        raise typer.BadParameter(
            "expected extractive, llm, hybrid or none", param_hint="--summarizer"
        )
    check_output_path(output, target, db, "request", force)
    counting = resolve_tokenizer(tokenizer, model)
    counting.session_estimator()  # an exact count without tiktoken fails before any work
    window = resolve_window(window, model)
    policy = policy_from_options(
        keep_recent, window=window, max_tokens=max_tokens, name=policy_name, model=model
    )
    native = _native_provider(
        backend or policy.compaction_backend, provider, model, api_key, base_url, timeout
    )
    if backend is not None or native is not None:
        policy = policy.model_copy(
            update={"compaction_backend": "local" if native is None else "native"}
        )
    choice = choose_summarizer(
        summarizer,
        summary_model,
        policy=policy,
        base_url=base_url,
        api_key=api_key,
        verify=verify or policy.summary_verify,
        timeout=timeout,
        preferred=None if policy_name is None else policy.summarizer,
    )
    if policy.summarizer in MODEL_SUMMARIZER_NAMES and choice.kind == "extractive":
        choice.warnings.append(
            f"policy {policy.name!r} writes its summary with a model ({policy.summarizer}); no "
            "summary model is set, so the extractive summarizer stands in"
        )
    for text in choice.warnings:
        warning(text)
    with progress("reading", quiet=quiet) as tracker:
        t = load_target(
            target,
            session=session,
            db=db,
            format=format,
            strict=strict,
            busy_timeout=busy_timeout,
            writable=not plan,
        )
        counting = for_recorded_model(counting, tokenizer, model, t.entries)
        if plan:
            tracker.close()
            planned = _session(t, window, policy, choice, summarizer is not None, counting)
            _show_plan(planned, focus, json_out, counting)
            return
        api = provider if native is None else native.provider.name
        request = RequestOptions(api, model, max_tokens, next_user, cache=not no_cache_markers)
        tracker.step(f"compacting {len(t.entries):,} entries")
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
                deadline=deadline,
                native=native,
                counting=counting,
            )
            run.report["keep_recent"] = _keep_recent(keep_recent, run)
            _require_fit(run, window, max_tokens)
            if t.store is not None:
                # In one transaction, before the request is written: a store that stays busy
                # (exit 3) or refuses the append leaves both the store and -o as they were.
                # The -o path was checked before any work, so the write that follows rarely
                # fails; if it does, the stored compaction is valid history that the next
                # compact of the session reuses.
                last = t.entries[-1].seq if t.entries else -1
                t.store.append(t.session_id, list(run.new_entries), expect_last_seq=last)
            if output is not None:
                tracker.step(f"writing {output}")
                dump_json(run.body, output)
    if json_out:
        dump_json(run.report, None, to_stderr=output == "-")
    else:
        show_compact_report(run.report, stderr=output == "-")
        show_events(run.session.events, stderr=output == "-")
    if output is None:
        note("the request body was not written: give -o FILE (or -o - for stdout)")


@dataclass(frozen=True, slots=True)
class NativeChoice:
    """The provider a native compaction goes to, and its model's profile."""

    provider: NativeProvider
    profile: ModelProfile | None


def _native_provider(
    backend: str,
    provider: str,
    model: str | None,
    api_key: str | None,
    base_url: str | None,
    timeout: float | None,
) -> NativeChoice | None:
    """The provider that compacts under ``backend`` (``"local"``, ``"native"``, ``"auto"``),
    or ``None`` when the compaction is local: ``--provider anthropic`` is the Messages API,
    ``openai`` the Responses API; key and base URL from the options, else the SDK's
    environment variables.

    Raises:
        typer.BadParameter: a native or auto backend without ``--model``.
        ConfigError: ``native`` for a model whose profile has no native compaction, a missing
            SDK or key.
    """
    if backend == "local":
        return None
    if model is None:
        raise typer.BadParameter(
            f"--backend {backend} needs --model (the provider's model)", param_hint="--model"
        )
    api = "anthropic" if provider == "anthropic" else "openai-responses"
    profile = ProfileTable.load().lookup(model)
    supported = profile is not None and profile.native_compaction
    if choose_backend(backend, api, supported) == "local":
        return None
    options: dict[str, Any] = {} if timeout is None else {"timeout": timeout}
    made = create_provider(f"{api}:{model}", api_key=api_key, base_url=base_url, **options)
    assert isinstance(made, NativeProvider)
    return NativeChoice(made, profile)


def _keep_recent(asked: int | None, run: CompactionRun) -> dict[str, Any]:
    """The keep-recent budget typed (``asked``, ``None`` when not given) and the one the
    compaction used (its attempt's, else the session's), in tokens, with why they differ."""
    session_budget = run.session.budget.keep_recent
    outcome = run.report.get("outcome") or {}
    plan = outcome.get("plan") or {}
    attempts = plan.get("attempts") or []
    index = int(outcome.get("attempt") or 0)  # 0: the planned cut; -1: the fallback's own
    used = attempts[index]["keep_recent"] if 0 <= index < len(attempts) else session_budget
    why = ""
    if asked is not None and used != asked:
        why = (
            f"lowered so the kept tail and the continuation state fit the "
            f"{run.report['window']:,}-token window's target"
        )
    return {"asked": asked, "used": used, "why": why}


def _require_fit(run: CompactionRun, window: int, max_tokens: int | None) -> None:
    """Refuse a request that cannot be sent: the compacted request's estimate plus
    ``max_tokens`` (the output asked for, 0 when none) over the ``window``. Raised before
    anything is written or stored, so a request a provider would reject never reaches ``-o``.

    Raises:
        CompactionError: naming the sizes and why: the reason nothing was compacted when
            there is one, else that the head (system prompt, developer instructions) and the
            newest turn are kept whole, so they alone may not fit.
    """
    tokens = run.report["tokens_after"]
    reserved = max_tokens or 0
    if tokens + reserved <= window:
        return
    asked = f" plus the {reserved:,} output tokens asked for (--max-tokens)" if reserved else ""
    head = (
        f"the compacted request still needs about {tokens:,} tokens{asked}, more than the "
        f"{window:,}-token window"
    )
    if run.report["note"]:
        raise CompactionError(
            f"{head}: nothing was compacted ({run.report['note']}); nothing was written"
        )
    raise CompactionError(
        f"{head} (the system prompt, developer instructions and the newest turn are kept "
        "whole and alone may not fit); nothing was written"
    )


def _single_flight(t: Target) -> AbstractContextManager[None]:
    """The stored session's compaction lock (one compaction at a time across processes),
    or nothing for a file compacted in memory."""
    if t.store is None:
        return nullcontext()
    return t.store.compaction_lock(t.session_id, timeout_s=DEFAULT_COMPACTION_LOCK_TIMEOUT_S)


def _show_plan(
    session: Session, focus: str | None, json_out: bool, counting: TokenizerChoice
) -> None:
    """Print the plan a manual compaction of ``session`` would run (as JSON with
    ``json_out``, naming how its tokens were counted); a session with nothing new to compact
    prints why."""
    try:
        found = session.plan(focus)
    except NothingToCompact as exc:
        if json_out:
            dump_json({"plan": None, "note": str(exc), "tokenizer": counting.name}, None)
        else:
            say(str(exc))
        return
    assert found is not None  # a manual plan is always made or refused
    if json_out:
        dump_json({"plan": found.to_dict(), "note": "", "tokenizer": counting.name}, None)
    else:
        show_plan(found)


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
    deadline: float | None = None,
    native: NativeChoice | None = None,
    counting: TokenizerChoice | None = None,
) -> CompactionRun:
    """Compact ``target`` in memory for a ``window``-token model and hand the result off as
    a request body. With ``native`` the provider compacts on demand
    (:meth:`Session.compact <ctxengine.engine.Session.compact>` with its provider); a failure
    of its call is a :class:`~ctxengine.errors.CompactionError` naming the HTTP status and
    the provider's message.

    A model summarizer chosen by default (a configured summary model, ``summarizer_asked``
    False) runs with the session's ``"on_failure"`` fallback: a failed summary (other than an
    authentication or rejected-request error) is written by the extractive summarizer
    instead. "Nothing to compact" and an "inflated" extractive or fallback summary leave the
    context as it was and explain why in ``note``; a model summary asked for by name that is
    rejected, for any reason, fails the run. ``deadline`` (seconds) bounds every summary call
    of the compaction together: past it they are cancelled and the run fails. ``counting``:
    how the session counts tokens (default: the default estimate).

    Returns:
        The run. Its ``report`` has these keys (tokens as ctxengine estimates them, both
        sides: an imported session's provider usage measured its source agent's requests):

        - ``source``: the file path or session id given; ``session_id``.
        - ``tokenizer``: how tokens were counted (``counting.name``).
        - ``window``, ``trigger``: the session's budget, in tokens.
        - ``provider``: ``openai``, ``anthropic`` or (a native compaction by OpenAI)
          ``openai-responses``; ``backend``: ``local`` or ``native``.
        - ``tokens_before``: the projected context before the run; ``tokens_after``: the
          context sent (pending calls closed, the next user message appended).
        - ``messages``: messages (Responses: input items) in the request body.
        - ``cache_breakpoints``: the prompt-cache breakpoints written into an Anthropic body,
          ``{"path", "boundary"}`` in request order as ``inspect`` lists them (``[]`` for
          another provider or without ``request.cache``).
        - ``truncated`` (truncations), ``pruned`` (pruned call ids), ``sanitized``: the
          projection after the run; ``truncated_before``: the truncations of the context
          before it (``tokens_before`` counts those results truncated; the ones the
          compaction summarized are not in ``truncated``).
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
        SummaryRejected, ProviderError: the summarizer failed and no fallback applies
            (``ProviderError`` naming the deadline when it passed).
        CompactionError: the compaction could not be carried out; a model summary asked
            for by name was rejected (the message names it).
        typer.BadParameter, RuntimeError: from :func:`~ctxengine.cli.handoff.hand_off`.
    """
    counting = counting or TokenizerChoice()
    session = _session(target, window, policy, choice, summarizer_asked, counting)
    before = session.project()
    note = ""
    outcome: CompactionOutcome | None = None
    cancel = threading.Event()
    timer = None if deadline is None else threading.Timer(deadline, cancel.set)
    explicit_model = summarizer_asked and choice.kind != "extractive"
    try:
        if timer is not None:
            timer.daemon = True
            timer.start()
        if native is None:
            outcome = session.compact(focus, cancel=cancel)
        else:
            outcome = _compact_natively(session, focus, cancel, native)
        ctx = outcome.context
    except NothingToCompact as exc:
        note = str(exc)
        ctx = before
    except SummaryRejected as exc:
        if explicit_model:
            raise CompactionError(_rejected(choice, exc)) from exc
        if exc.reason != "inflated":
            raise
        note = f"a continuation state would not make this session smaller ({exc})"
        ctx = before
    except Cancelled as exc:
        if cancel.is_set() and deadline is not None:
            raise ProviderError(
                f"{choice.model} did not finish the summary within the {deadline:g} s "
                "deadline (--deadline); the call was cancelled and nothing was written"
            ) from exc
        raise
    finally:
        if timer is not None:
            timer.cancel()
    sent = hand_off(ctx, session.estimator, session.budget.reserve, request)
    after = session.project()
    report: dict[str, Any] = {
        "source": target.label,
        "session_id": session.session_id,
        "tokenizer": counting.name,
        "window": session.budget.window,
        "trigger": session.budget.trigger,
        "provider": request.provider,
        "backend": "local" if native is None else "native",
        "tokens_before": before.tokens,
        "tokens_after": sent.context.tokens,
        "messages": len(sent.body.get("messages") or sent.body.get("input") or ()),
        "cache_breakpoints": [{"path": p, "boundary": b} for p, b in sent.cache_breakpoints],
        "truncated": [asdict(t) for t in after.truncations],
        "truncated_before": [asdict(t) for t in before.truncations],
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


def _compact_natively(
    session: Session, focus: str | None, cancel: threading.Event, native: NativeChoice
) -> CompactionOutcome:
    """``session.compact`` on ``native``'s provider; its call failing is a
    :class:`~ctxengine.errors.CompactionError` with the status and the provider's message.

    Raises:
        CompactionError: the provider's compaction failed.
        NothingToCompact, SummaryRejected: as :meth:`Session.compact`.
    """
    name = native.provider.name
    try:
        return session.compact(
            focus, cancel=cancel, provider=native.provider, profile=native.profile
        )
    except Cancelled:
        raise
    except ProviderError as exc:
        status = getattr(exc, "status", None)
        where = f" (HTTP {status})" if isinstance(status, int) else ""
        raise CompactionError(
            f"the {name} native compaction of {native.provider.model} failed{where}: {exc}"
        ) from exc


def _rejected(choice: SummarizerChoice, exc: SummaryRejected) -> str:
    """The message of a rejected model summary asked for by name."""
    why = str(exc).removeprefix("summary rejected: ")
    return (
        f"the {choice.kind} summary written by {choice.model} was rejected: {why}; "
        "nothing was written"
    )


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
    counting: TokenizerChoice,
) -> Session:
    """The in-memory session of ``target``, counting tokens as ``counting`` says; a model
    summarizer the user did not ask for by name falls back to the extractive one on
    failure.

    Raises:
        ConfigError: an exact count without tiktoken (see :meth:`TokenizerChoice.estimator
            <ctxengine.cli.options.TokenizerChoice.estimator>`).
    """
    by_default = choice.kind != "extractive" and not summarizer_asked
    entries = measured_by_us(target)
    return Session(
        window,
        policy=policy,
        session_id=target.session_id,
        entries=entries,
        tools=called_tool_schemas(m for e in entries if (m := e.message) is not None),
        summarizer=choice.summarizer,
        fallback="on_failure" if by_default else "breaker",
        cwd=target.cwd,
        estimator=counting.session_estimator(),
    )
