"""``ctxengine inspect``: where a session's tokens go."""

from __future__ import annotations

from pathlib import Path
from typing import Annotated, Any

import typer

from ctxengine.analysis import Breakdown, breakdown
from ctxengine.cli.handoff import takes_system_messages
from ctxengine.cli.head import build_head, head_json, show_head
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
from ctxengine.cli.output import dump_json
from ctxengine.cli.views import (
    import_record_dict,
    show_breakdown,
    show_cache_breakpoints,
    show_imports,
)
from ctxengine.engine import Session
from ctxengine.policy.defaults import DEFAULT_WINDOW
from ctxengine.projection.render import called_tool_schemas
from ctxengine.projection.render.anthropic import cache_layout
from ctxengine.replay.compare import recorded_model


def inspect(
    target: TargetArg = None,
    session: SessionOpt = None,
    db: DbOpt = None,
    format: FormatOpt = None,
    strict: StrictOpt = False,
    top: Annotated[int, typer.Option(metavar="N", help="Largest entries to list.")] = 10,
    rules_from: Annotated[
        Path | None,
        typer.Option(
            "--rules-from",
            metavar="DIR",
            help="Show the head a session working in DIR would start with: the rules files "
            "found from the user level through the repository root down to DIR (AGENTS.md, "
            "CLAUDE.md, GEMINI.md, Cursor, Cline and Copilot rules), the skill catalog "
            "(.claude/skills and .agents/skills from DIR up to the root, then under the home "
            "folder), the environment and git status, with each section's tokens. With a "
            "session, its read and edited files load the path-scoped rules they match. "
            "Without FILE|SESSION only the head is shown.",
        ),
    ] = None,
    home: Annotated[
        Path | None,
        typer.Option(
            "--home",
            metavar="DIR",
            help="The folder user-level rules are read from (~/.codex, ~/.claude, "
            "~/.gemini); default: your home.",
        ),
    ] = None,
    rules_name: Annotated[
        list[str] | None,
        typer.Option(
            "--rules-name",
            metavar="NAME",
            help="A rules-file name to look for in each folder instead of the defaults "
            "(repeatable; 'A|B' takes the first that exists; globs allowed).",
        ),
    ] = None,
    skills_dir: Annotated[
        list[Path] | None,
        typer.Option(
            "--skills-dir",
            metavar="DIR",
            help="A skills folder (holding <name>/SKILL.md) searched before the usual ones "
            "(repeatable; with --rules-from).",
        ),
    ] = None,
    model: Annotated[
        str | None,
        typer.Option(
            "--model",
            metavar="NAME",
            help="The model whose profile says where the continuation and re-injected state "
            "go in an Anthropic request (mid-conversation system messages from Claude Opus "
            "4.8 on, else user turns), for the cache breakpoints; default: the model the "
            "transcript records.",
        ),
    ] = None,
    tokenizer: TokenizerOpt = "auto",
    json_out: JsonOpt = False,
) -> None:
    """Token breakdown by role, by tool, top consumers and epochs (a stored session is read
    without waiting for writers); where the Anthropic prompt-cache breakpoints of the current
    context fall (the log projected as it stands, for a 128,000-token window, the state placed
    as --model's profile says); for a stored
    session also its imports: when, from which file, entries added, and what each skipped,
    repaired and ignored (kinds, counts, first line). With --rules-from, the head's sections
    and the rules files loaded and the skill catalog, with tokens. --tokenizer auto counts
    for --model's tokenizer when --model is given."""
    counting = resolve_tokenizer(tokenizer, model)
    estimator = counting.estimator()
    if rules_from is not None and target is None and session is None:
        alone = build_head(
            rules_from, estimator, home=home, names=rules_name or (), skill_dirs=skills_dir or ()
        )
        if json_out:
            dump_json({"tokenizer": counting.name, "head": head_json(alone)}, None)
        else:
            show_head(alone)
        return
    t = load_target(target, session=session, db=db, format=format, strict=strict)
    counting = for_recorded_model(counting, tokenizer, model, t.entries)
    estimator = counting.estimator()
    b = breakdown(t.entries, estimator, top=top)
    records = t.store.import_reports(t.session_id) if t.store is not None else []
    view = (
        build_head(
            rules_from,
            estimator,
            home=home,
            names=rules_name or (),
            entries=t.entries,
            skill_dirs=skills_dir or (),
        )
        if rules_from is not None
        else None
    )
    called = called_tool_schemas(m for e in t.entries if (m := e.message) is not None)
    current = Session(
        DEFAULT_WINDOW,
        session_id=t.session_id,
        entries=t.entries,
        tools=called,
        estimator=counting.session_estimator(),
    ).project()
    cache_model = model or recorded_model(t.entries)
    system_messages = takes_system_messages(cache_model)
    layout = cache_layout(current, declare_tools=True, system_messages=system_messages)
    if json_out:
        data = breakdown_json(t.label, t.session_id, t.format, b)
        data["tokenizer"] = counting.name
        data["cache_breakpoints"] = [{"path": p, "boundary": what} for p, what in layout]
        data["cache_model"] = cache_model
        data["state_as_system_messages"] = system_messages
        if t.store is not None:
            data["imports"] = [import_record_dict(r) for r in records]
        if view is not None:
            data["head"] = head_json(view)
        dump_json(data, None)
    else:
        show_breakdown(t.label, b, counting.phrase)
        show_cache_breakpoints(layout, cache_model, system_messages)
        if records:
            show_imports(records)
        if view is not None:
            show_head(view)


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
                "state_tokens": ep.state_tokens,
                "closed_by": None
                if ep.compaction is None
                else {
                    "summarizer": ep.compaction.summarizer,
                    "reason": ep.compaction.reason,
                    "entry_id": ep.compaction_id,
                },
            }
            for ep in b.epochs
        ],
    }
