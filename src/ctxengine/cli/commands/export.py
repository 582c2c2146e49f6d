"""``ctxengine export``: a session's log as JSONL, or the request body for its next call."""

from __future__ import annotations

import sys
from pathlib import Path
from typing import Annotated

import orjson
import typer

from ctxengine.cli.handoff import RequestOptions, hand_off
from ctxengine.cli.load import load_target
from ctxengine.cli.options import (
    DbOpt,
    MaxTokensOpt,
    ModelOpt,
    NextUserOpt,
    StrictOpt,
    WindowOpt,
    policy_from_options,
)
from ctxengine.cli.output import dump_json
from ctxengine.engine import Session
from ctxengine.model.codec import entry_to_dict
from ctxengine.policy.defaults import DEFAULT_WINDOW
from ctxengine.replay import RENDERERS


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
    strict: StrictOpt = False,
) -> None:
    """Export a session: its whole log as ctxengine JSONL, or the request body for its next
    call (the ladder run for --window, unanswered calls closed)."""
    t = load_target(target, db=db, format=None, strict=strict)
    if format == "jsonl":
        lines = b"".join(orjson.dumps(entry_to_dict(e)) + b"\n" for e in t.entries)
        if output:
            Path(output).write_bytes(lines)
        else:
            sys.stdout.buffer.write(lines)
        return
    if format not in RENDERERS:
        raise typer.BadParameter("expected jsonl, openai or anthropic", param_hint="--format")
    policy = policy_from_options(window=window, max_tokens=max_tokens)
    session = Session(window, policy=policy, session_id=t.session_id, entries=t.entries)
    request = RequestOptions(format, model, max_tokens, next_user)
    sent = hand_off(session.prepare(), session.estimator, session.budget.reserve, request)
    dump_json(sent.body, output)
