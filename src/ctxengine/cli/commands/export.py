"""``ctxengine export``: a session's log as JSONL, or the request body for its next call."""

from __future__ import annotations

from typing import Annotated, Any

import orjson
import typer

from ctxengine.cli.handoff import RequestOptions, hand_off
from ctxengine.cli.load import check_output_path, load_target
from ctxengine.cli.options import (
    DbOpt,
    ForceOpt,
    MaxTokensOpt,
    ModelOpt,
    ModelWindowOpt,
    NextUserOpt,
    QuietOpt,
    SessionOpt,
    StrictOpt,
    TargetArg,
    TokenizerOpt,
    for_recorded_model,
    policy_from_options,
    resolve_tokenizer,
    resolve_window,
)
from ctxengine.cli.output import dump_json, write_output
from ctxengine.cli.progress import progress
from ctxengine.engine import Session
from ctxengine.model.codec import entry_to_dict
from ctxengine.projection.render import called_tool_schemas
from ctxengine.replay import RENDERERS


def export(
    target: TargetArg = None,
    session: SessionOpt = None,
    format: Annotated[
        str,
        typer.Option(
            "--format", metavar="NAME", help="jsonl (the log), openai or anthropic (request body)"
        ),
    ] = "jsonl",
    window: ModelWindowOpt = None,
    output: Annotated[
        str | None,
        typer.Option("-o", "--output", metavar="FILE", help="Output file (default and -: stdout)."),
    ] = None,
    model: ModelOpt = None,
    max_tokens: MaxTokensOpt = None,
    next_user: NextUserOpt = None,
    db: DbOpt = None,
    strict: StrictOpt = False,
    json_out: Annotated[
        bool,
        typer.Option(
            "--json",
            help="Also print what was exported as JSON (schemas/export.json): on stdout, or "
            "on stderr when the export itself goes to stdout.",
        ),
    ] = False,
    tokenizer: TokenizerOpt = "auto",
    quiet: QuietOpt = False,
    force: ForceOpt = False,
) -> None:
    """Export a session: its whole log as ctxengine JSONL, or the request body for its next
    call (the ladder run for --window, unanswered calls closed). A file is written whole or
    not at all; -o naming the store, the input file or a directory is refused."""
    if format != "jsonl" and format not in RENDERERS:
        raise typer.BadParameter("expected jsonl, openai or anthropic", param_hint="--format")
    check_output_path(output, target, db, "log" if format == "jsonl" else "request", force)
    counting = resolve_tokenizer(tokenizer, model)
    counts = format != "jsonl"  # the log itself is written without counting
    estimator = counting.session_estimator() if counts else None
    window = resolve_window(window, model)
    with progress("reading", quiet=quiet) as tracker:
        t = load_target(target, session=session, db=db, format=None, strict=strict)
        if counts:
            counting = for_recorded_model(counting, tokenizer, model, t.entries)
            estimator = counting.session_estimator()
        report: dict[str, Any] = {
            "source": t.label,
            "session_id": t.session_id,
            "format": format,
            "tokenizer": counting.name if counts else None,
            "output": output if output not in (None, "-") else "-",
            "entries": len(t.entries),
            "messages": None,
            "tokens": None,
        }
        if format == "jsonl":
            tracker.step(f"writing {len(t.entries):,} entries")
            data = b"".join(orjson.dumps(entry_to_dict(e)) + b"\n" for e in t.entries)
        else:
            tracker.step(f"projecting {len(t.entries):,} entries for a {window:,}-token window")
            policy = policy_from_options(window=window, max_tokens=max_tokens)
            tools = called_tool_schemas(m for e in t.entries if (m := e.message) is not None)
            live = Session(
                window,
                policy=policy,
                session_id=t.session_id,
                entries=t.entries,
                tools=tools,
                estimator=estimator,
            )
            request = RequestOptions(format, model, max_tokens, next_user)
            sent = hand_off(live.prepare(), live.estimator, live.budget.reserve, request)
            data = orjson.dumps(sent.body, option=orjson.OPT_INDENT_2) + b"\n"
            report["messages"] = len(sent.body.get("messages", ()))
            report["tokens"] = sent.context.tokens
        report["bytes"] = len(data)
        write_output(output or "-", data)
    if json_out:
        dump_json(report, None, to_stderr=output in (None, "-"))
