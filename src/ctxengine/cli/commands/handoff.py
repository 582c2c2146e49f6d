"""``ctxengine handoff``: continue a stored session in a new one (Amp's hand-off instead of
compaction): the new session is stored, linked to the old one, and its first request body is
written."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import replace
from typing import Annotated, Any

import typer

from ctxengine.cli.commands.compact import measured_by_us
from ctxengine.cli.handoff import RequestOptions, hand_off
from ctxengine.cli.load import check_output_path, load_target
from ctxengine.cli.options import (
    BusyTimeoutOpt,
    DbOpt,
    ForceOpt,
    KeepRecentOpt,
    MaxTokensOpt,
    ModelOpt,
    ModelWindowOpt,
    NextUserOpt,
    PolicyOpt,
    QuietOpt,
    SessionOpt,
    TargetArg,
    TokenizerOpt,
    for_recorded_model,
    policy_from_options,
    resolve_tokenizer,
    resolve_window,
)
from ctxengine.cli.output import dump_json, note, say
from ctxengine.cli.progress import progress
from ctxengine.cli.summary import choose_summarizer
from ctxengine.engine import Session
from ctxengine.engine.handoff import renamed
from ctxengine.errors import ConfigError, SessionNotFound
from ctxengine.model import Entry
from ctxengine.policy.defaults import MODEL_SUMMARIZER_NAMES
from ctxengine.projection.render import called_tool_schemas
from ctxengine.projection.tools import tool_name
from ctxengine.replay import RENDERERS
from ctxengine.stores import SessionInfo, SessionLink
from ctxengine.stores.location import OpenedStore


def handoff(
    target: TargetArg = None,
    session: SessionOpt = None,
    window: ModelWindowOpt = None,
    keep_recent: KeepRecentOpt = None,
    policy_name: PolicyOpt = None,
    provider: Annotated[str, typer.Option(metavar="NAME", help="openai or anthropic")] = "openai",
    output: Annotated[
        str | None,
        typer.Option(
            "-o",
            "--output",
            metavar="FILE",
            help="Write the new session's request body here (- for stdout; the report then "
            "goes to stderr).",
        ),
    ] = None,
    new_id: Annotated[
        str | None,
        typer.Option(
            "--new-id",
            metavar="ID",
            help="The new session's id (default: handoff-N.SESSION).",
        ),
    ] = None,
    focus: Annotated[
        str | None, typer.Option(metavar="TEXT", help="What the summary should focus on.")
    ] = None,
    model: ModelOpt = None,
    max_tokens: MaxTokensOpt = None,
    next_user: NextUserOpt = None,
    db: DbOpt = None,
    busy_timeout: BusyTimeoutOpt = None,
    json_out: Annotated[
        bool,
        typer.Option("--json", help="Print the report as JSON (schemas/handoff.json)."),
    ] = False,
    tokenizer: TokenizerOpt = "auto",
    quiet: QuietOpt = False,
    force: ForceOpt = False,
) -> None:
    """Continue a stored session in a new one instead of compacting it: the new session is
    stored with only what its next request needs (the head, the continuation state with its
    ledgers and re-injected state, the kept tail), linked to the old one, which is left as
    it is; its request body declares the recall tool, and the continuation state says the
    whole history can be searched with it: the new session's recall (and ctxengine recall
    NEW-ID) searches the old session's history too.

    Nothing is stored or written when the hand-off fails; -o is written whole or not at all
    and refused before any work when it names the store or a directory."""
    if provider not in RENDERERS:
        raise typer.BadParameter(f"expected one of {sorted(RENDERERS)}", param_hint="--provider")
    check_output_path(output, target, db, "request", force)
    counting = resolve_tokenizer(tokenizer, model)
    estimator = counting.session_estimator()
    window = resolve_window(window, model)
    policy = policy_from_options(
        keep_recent, window=window, max_tokens=max_tokens, name=policy_name, model=model
    )
    choice = choose_summarizer(
        None, None, policy=policy, preferred=None if policy_name is None else policy.summarizer
    )
    if policy.summarizer in MODEL_SUMMARIZER_NAMES and choice.kind == "extractive":
        choice.warnings.append(
            f"policy {policy.name!r} writes its summary with a model ({policy.summarizer}); no "
            "summary model is set, so the extractive summarizer stands in"
        )
    with progress("reading", quiet=quiet) as tracker:
        t = load_target(
            target, session=session, db=db, format=None, busy_timeout=busy_timeout, writable=True
        )
        counting = for_recorded_model(counting, tokenizer, model, t.entries)
        estimator = counting.session_estimator()
        if t.store is None:
            raise ConfigError(
                f"{t.label}: handoff stores a new session linked to a stored one; import the "
                "file first (ctxengine import FILE) and hand off the session id it prints"
            )
        tracker.step(f"handing off {len(t.entries):,} entries")
        # Another agent's usage measured its own requests: both sides are estimated.
        entries = measured_by_us(t)
        tools = called_tool_schemas(m for e in entries if (m := e.message) is not None)
        live = Session(
            window,
            policy=policy,
            session_id=t.session_id,
            entries=entries,
            tools=tools,
            summarizer=choice.summarizer,
            fallback="on_failure" if choice.kind != "extractive" else "breaker",
            estimator=estimator,
        )
        made = live.handoff(_new_id(t.store, t.session_id, new_id), focus=focus)
        child = made.session
        request = RequestOptions(provider, model, max_tokens, next_user, cache=True)
        sent = hand_off(child.project(), child.estimator, child.budget.reserve, request)
        assert child.link is not None
        link = _store(t.store, child.link, child.entries, fixed=new_id is not None)
        if output is not None:
            tracker.step(f"writing {output}")
            dump_json(sent.body, output)
    report: dict[str, Any] = {
        "source": t.label,
        "session_id": t.session_id,
        "tokenizer": counting.name,
        "new_session_id": link.session_id,
        "relation": link.relation,
        "parent_entry_id": link.parent_entry_id,
        "provider": provider,
        "output": output,
        "tokens_before": made.tokens_before,
        "tokens_after": sent.context.tokens,
        "messages": len(sent.body.get("messages", ())),
        "entries": len(child.entries),
        "compaction_id": made.compaction_id,
        "summarized": made.summarized,
        "note": made.note,
        "summarizer": choice.kind,
        "tools": sorted(tool_name(x) for x in sent.context.tools),
        "closed_pending_calls": list(made.closed),
    }
    for text in choice.warnings:
        say(f"warning: {text}", stderr=True)
    if json_out:
        dump_json(report, None, to_stderr=output == "-")
    else:
        state = (
            f"continuation state {made.compaction_id}"
            if made.compaction_id
            else "the context verbatim"
        )
        say(
            f"handed off {t.session_id} to {link.session_id}: {len(child.entries)} entries "
            f"stored ({state}); its request is {sent.context.tokens:,} tokens in "
            f"{report['messages']} messages (the old context: {made.tokens_before:,})",
            stderr=output == "-",
        )
        if made.note:
            note(f"nothing was summarized: {made.note}")
    if output is None:
        note("the request body was not written: give -o FILE (or -o - for stdout)")


def _store(
    store: OpenedStore, link: SessionLink, entries: Sequence[Entry], *, fixed: bool
) -> SessionLink:
    """Store the new session, its link and its entries in one transaction; returns the link
    stored. When another writer stored a session of the default id first (two hand-offs of
    one session at once), the store refuses it and the next free id is taken.

    Raises:
        ConfigError: ``fixed`` (the id was given with --new-id) and a session has it.
    """
    while not store.create_session(
        SessionInfo(id=link.session_id, format="ctxengine"),
        link=link,
        entries=renamed(entries, link.session_id),
    ):
        if fixed:
            raise ConfigError(f"session {link.session_id!r} exists already: give another --new-id")
        link = replace(link, session_id=_new_id(store, link.parent_id, None))
    return link


def _new_id(store: OpenedStore, session_id: str, wanted: str | None) -> str:
    """``wanted`` when no session has it, else the first free ``"handoff-<n>.<session_id>"``.

    Raises:
        ConfigError: ``wanted`` names a stored session.
    """

    def taken(name: str) -> bool:
        try:
            store.session_link(name)
        except SessionNotFound:
            return False
        return True

    if wanted is not None:
        if taken(wanted):
            raise ConfigError(f"session {wanted!r} exists already: give another --new-id")
        return wanted
    n = 1 + sum(1 for x in store.children(session_id) if x.relation == "handoff")
    while taken(f"handoff-{n}.{session_id}"):
        n += 1
    return f"handoff-{n}.{session_id}"
