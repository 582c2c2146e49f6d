"""``ctxengine revert``: undo a compaction of a stored session (append-only)."""

from __future__ import annotations

from typing import Annotated

import typer

from ctxengine.cli.load import load_target
from ctxengine.cli.options import (
    DbOpt,
    JsonOpt,
    SessionOpt,
    TargetArg,
    TokenizerOpt,
    for_recorded_model,
    resolve_tokenizer,
)
from ctxengine.cli.output import dump_json, say
from ctxengine.engine import Session
from ctxengine.errors import ConfigError
from ctxengine.model import SupersedeRecord
from ctxengine.policy.defaults import DEFAULT_WINDOW


def revert(
    target: TargetArg = None,
    session: SessionOpt = None,
    compaction: Annotated[
        str | None,
        typer.Option(
            "--compaction",
            metavar="ID",
            help="The compaction's entry id (inspect lists them under Epochs; default: the "
            "latest compaction in force).",
        ),
    ] = None,
    db: DbOpt = None,
    tokenizer: TokenizerOpt = "auto",
    json_out: JsonOpt = False,
) -> None:
    """Undo a compaction of a stored session: append a record that withdraws it and every
    compaction and prune after it, so the context is projected as it was before it, with
    every entry appended since. Nothing is deleted; the next compaction decides afresh."""
    counting = resolve_tokenizer(tokenizer)
    t = load_target(target, session=session, db=db, format=None, writable=True)
    counting = for_recorded_model(counting, tokenizer, None, t.entries)
    estimator = counting.session_estimator()
    if t.store is None:
        raise ConfigError(
            f"{t.label}: revert changes a stored session; import the file first "
            "(ctxengine import FILE) and revert the session id it prints"
        )
    live = Session(DEFAULT_WINDOW, store=t.store, session_id=t.session_id, estimator=estimator)
    before = live.project()
    try:
        entry = live.revert(compaction)
    except ValueError as exc:
        raise ConfigError(f"{t.label}: {exc}") from exc
    after = live.project()
    body = entry.body
    assert isinstance(body, SupersedeRecord)
    report = {
        "session_id": t.session_id,
        "tokenizer": counting.name,
        "record_id": entry.id,
        "withdrawn": list(body.entry_ids),
        "tokens_before": before.tokens,
        "tokens_after": after.tokens,
        "messages_before": len(before.messages),
        "messages_after": len(after.messages),
        "compaction_in_force": after.compaction_id,
    }
    if json_out:
        dump_json(report, None)
        return
    first, rest = body.entry_ids[0], len(body.entry_ids) - 1
    also = f" and {rest} later record{'s' if rest != 1 else ''}" if rest else ""
    say(
        f"reverted compaction {first}{also}: the context is {after.tokens:,} tokens in "
        f"{len(after.messages)} messages (was {before.tokens:,} in {len(before.messages)}); "
        f"compaction in force: {after.compaction_id or 'none'}"
    )
