"""``ctxengine inspect``: where a session's tokens go."""

from __future__ import annotations

from typing import Annotated, Any

import typer

from ctxengine.analysis import Breakdown, breakdown
from ctxengine.cli.load import load_target
from ctxengine.cli.options import DbOpt, FormatOpt, JsonOpt, SessionOpt, StrictOpt, TargetArg
from ctxengine.cli.output import dump_json
from ctxengine.cli.views import import_record_dict, show_breakdown, show_imports
from ctxengine.tokens.estimate import HeuristicEstimator


def inspect(
    target: TargetArg = None,
    session: SessionOpt = None,
    db: DbOpt = None,
    format: FormatOpt = None,
    strict: StrictOpt = False,
    top: Annotated[int, typer.Option(metavar="N", help="Largest entries to list.")] = 10,
    json_out: JsonOpt = False,
) -> None:
    """Token breakdown by role, by tool, top consumers and epochs (a stored session is read
    without waiting for writers); for a stored session also its imports: when, from which
    file, entries added, and what each skipped, repaired and ignored (kinds, counts, first
    line)."""
    t = load_target(target, session=session, db=db, format=format, strict=strict)
    b = breakdown(t.entries, HeuristicEstimator(), top=top)
    records = t.store.import_reports(t.session_id) if t.store is not None else []
    if json_out:
        data = breakdown_json(t.label, t.session_id, t.format, b)
        if t.store is not None:
            data["imports"] = [import_record_dict(r) for r in records]
        dump_json(data, None)
    else:
        show_breakdown(t.label, b)
        if records:
            show_imports(records)


def breakdown_json(
    source: str, session_id: str, format: str | None, b: Breakdown
) -> dict[str, Any]:
    """The ``inspect --json`` document (``schemas/inspect.json``): every value labelled,
    tokens estimated."""
    return {
        "source": source,
        "session_id": session_id,
        "format": format,
        "tokens": b.total,
        "counts": dict(b.counts),
        "by_role": [
            {"role": role, "tokens": toks}
            for role, toks in sorted(b.by_role.items(), key=lambda kv: -kv[1])
        ],
        "by_tool": [
            {"tool": name, "calls": calls, "result_tokens": toks}
            for name, (calls, toks) in sorted(b.by_tool.items(), key=lambda kv: -kv[1][1])
        ],
        "top": [
            {
                "entry_id": c.entry_id,
                "seq": c.seq,
                "role": c.role,
                "tool": c.tool,
                "tokens": c.tokens,
                "preview": c.preview,
            }
            for c in b.top
        ],
        "epochs": [
            {
                "index": ep.index,
                "start_seq": ep.start_seq,
                "end_seq": ep.end_seq,
                "messages": ep.messages,
                "tokens": ep.tokens,
                "closed_by": None
                if ep.compaction is None
                else {"summarizer": ep.compaction.summarizer, "reason": ep.compaction.reason},
            }
            for ep in b.epochs
        ],
    }
