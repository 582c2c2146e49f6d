"""``ctxengine recall``: search a session's whole history for exact excerpts."""

from __future__ import annotations

from dataclasses import asdict
from typing import Annotated, Any

import typer

from ctxengine.cli.load import load_target
from ctxengine.cli.options import (
    DbOpt,
    FormatOpt,
    JsonOpt,
    SessionOpt,
    StrictOpt,
    TargetArg,
    TokenizerOpt,
    for_recorded_model,
    resolve_tokenizer,
)
from ctxengine.cli.output import dump_json, say
from ctxengine.engine import Session
from ctxengine.errors import ConfigError
from ctxengine.policy.defaults import DEFAULT_WINDOW, RECALL_BUDGET_TOKENS
from ctxengine.recall import RecallQuery, RecallResult, format_result
from ctxengine.recall.chain import SessionHit

#: The message roles --role takes.
ROLES: tuple[str, ...] = ("user", "assistant", "tool", "system", "developer")


def recall(
    target: TargetArg = None,
    query: Annotated[
        str | None,
        typer.Argument(
            metavar="QUERY",
            help="Text to find (case-insensitive; a regular expression with --regex).",
            show_default=False,
        ),
    ] = None,
    session: SessionOpt = None,
    regex: Annotated[bool, typer.Option("--regex", help="QUERY is a regular expression.")] = False,
    case_sensitive: Annotated[
        bool, typer.Option("--case-sensitive", help="Match case exactly.")
    ] = False,
    path: Annotated[
        str | None,
        typer.Option(
            "--path",
            metavar="PATH",
            help="Only tool calls that name PATH (and their results), and other text naming it.",
        ),
    ] = None,
    tool: Annotated[
        str | None,
        typer.Option("--tool", metavar="NAME", help="Only calls of this tool and their results."),
    ] = None,
    role: Annotated[
        str | None,
        typer.Option("--role", metavar="ROLE", help="Only messages of this role."),
    ] = None,
    entry: Annotated[
        str | None,
        typer.Option(
            "--entry",
            metavar="ID",
            help="Only this entry (an id a truncation or prune note names), shown whole.",
        ),
    ] = None,
    from_line: Annotated[
        int,
        typer.Option(
            "--from-line", metavar="N", min=1, help="First line shown of an entry shown whole."
        ),
    ] = 1,
    first: Annotated[
        int | None,
        typer.Option(
            "--from",
            metavar="SEQ",
            help="First entry number (of each session, for a hand-off: every hit names its "
            "session).",
        ),
    ] = None,
    last: Annotated[
        int | None,
        typer.Option("--to", metavar="SEQ", help="Last entry number (of each session)."),
    ] = None,
    summaries: Annotated[
        bool,
        typer.Option("--summaries", help="Search the compactions' continuation states too."),
    ] = False,
    budget: Annotated[
        int,
        typer.Option(
            "--budget", metavar="TOKENS", min=0, help="Tokens the excerpts may take in all."
        ),
    ] = RECALL_BUDGET_TOKENS,
    oldest_first: Annotated[
        bool, typer.Option("--oldest-first", help="List the oldest matches first.")
    ] = False,
    db: DbOpt = None,
    format: FormatOpt = None,
    strict: StrictOpt = False,
    tokenizer: TokenizerOpt = "auto",
    json_out: JsonOpt = False,
) -> None:
    """Search the whole history of a session, entries that compactions summarized away
    included, and print the matching excerpts (numbered lines around each match) with the
    entry they come from, newest first, within --budget tokens; how many more matched is
    said at the end. Give QUERY, or --path, --tool, --role, --entry or an entry range
    (--from/--to); an entry or a range without QUERY is shown whole (--from-line to go on).
    A session handed off from another searches that one's history up to the hand-off too
    (and so on up the chain), newest session first; those hits name their session, and
    --from/--to number the entries of each session."""
    if session is not None and query is None and target is not None:
        target, query = None, target  # ``recall --session ID QUERY``
    if role is not None and role not in ROLES:
        raise typer.BadParameter(f"expected one of {', '.join(ROLES)}", param_hint="--role")
    counting = resolve_tokenizer(tokenizer)
    t = load_target(target, session=session, db=db, format=format, strict=strict)
    counting = for_recorded_model(counting, tokenizer, None, t.entries)
    estimator = counting.session_estimator()
    wanted = RecallQuery(
        text=query or "",
        regex=regex,
        case_sensitive=case_sensitive,
        path=path,
        tool=tool,
        first_seq=first,
        last_seq=last,
        role=role,
        summaries=summaries,
        entry_id=entry,
        from_line=from_line,
    )
    # With its store: a session handed off from another searches the old history too.
    live = Session(
        DEFAULT_WINDOW,
        session_id=t.session_id,
        entries=t.entries,
        store=t.store,
        estimator=estimator,
    )
    result = live.recall(wanted, budget=budget, newest_first=not oldest_first)
    if entry is not None and not result.matched and all(e.id != entry for e in t.entries):
        raise ConfigError(f"{t.label}: no entry {entry!r} in this session's history")
    if json_out:
        dump_json(recall_json(t.label, t.session_id, result) | {"tokenizer": counting.name}, None)
    else:
        say(format_result(result, from_line="--from-line"))


def recall_json(source: str, session_id: str, result: RecallResult) -> dict[str, Any]:
    """The ``recall --json`` document (``schemas/recall.json``)."""
    return {
        "source": source,
        "session_id": session_id,
        "query": asdict(result.query),
        "matched": result.matched,
        "shown": len(result.hits),
        "budget": result.budget,
        "tokens": result.tokens,
        "hits": [
            {**asdict(h), "session_id": h.session_id if isinstance(h, SessionHit) else session_id}
            for h in result.hits
        ],
    }
