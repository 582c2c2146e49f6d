"""``ctxengine migrate``: copy every session of one store into another (SQLite to PostgreSQL,
or back), entries unchanged."""

from __future__ import annotations

from typing import Annotated, Any

import typer

from ctxengine.cli import EXIT_BAD_INPUT
from ctxengine.cli.load import open_store
from ctxengine.cli.options import BusyTimeoutOpt, JsonOpt, QuietOpt
from ctxengine.cli.output import dump_json, error, say
from ctxengine.cli.progress import progress
from ctxengine.errors import ConfigError, StoreBusy, StoreError
from ctxengine.stores.location import store_label


def migrate(
    source: Annotated[
        str,
        typer.Option(
            "--from",
            metavar="PATH|URL",
            help="The store to copy from: a SQLite file, sqlite:///path or postgresql://… "
            "(only read).",
        ),
    ],
    target: Annotated[
        str,
        typer.Option(
            "--to",
            metavar="PATH|URL",
            help="The store to copy into (created and migrated when new): postgresql://… or a "
            "SQLite file.",
        ),
    ],
    busy_timeout: BusyTimeoutOpt = None,
    json_out: JsonOpt = False,
    quiet: QuietOpt = False,
) -> None:
    """Copy every session of --from into --to: each session (its row, link to the session it
    was started from, entries with their ids, seqs and bodies, import records) in one
    transaction of its own, in the order they were first stored (a parent before its
    children). Running it again adds only what --to lacks: a session that grew gets its new
    entries, one already copied whole is left as it is. A session that --to holds
    otherwise (changed apart from --from) is reported and left alone, and so are the
    sessions started from it; exit 2 at the end when any session failed. One line per
    session, a progress bar on a terminal."""
    if store_label(source) == store_label(target):
        raise ConfigError(f"--from and --to name the same store ({store_label(source)})")
    done: list[dict[str, Any]] = []
    counts = dict.fromkeys(("copied", "extended", "unchanged", "failed"), 0)
    failed: set[str] = set()
    with (
        open_store(source, busy_timeout=busy_timeout, read_only=True) as src,
        open_store(target, busy_timeout=busy_timeout) as dst,
    ):
        infos = src.sessions()
        with progress("copying sessions", total=len(infos), quiet=quiet) as tracker:
            for info in infos:
                tracker.describe(f"copying {info.id} ({info.entry_count:,} entries)")
                try:
                    copy = src.export_session(info.id)
                    if copy.link is not None and copy.link.parent_id in failed:
                        raise StoreError(
                            f"session {info.id!r} not copied: the session it was started "
                            f"from, {copy.link.parent_id!r}, was not copied"
                        )
                    result = dst.restore_session(copy)
                except StoreBusy:
                    raise
                except StoreError as exc:
                    counts["failed"] += 1
                    failed.add(info.id)
                    error(str(exc))
                    done.append(
                        {"id": info.id, "status": "failed", "added": 0, "entries": None,
                         "imports": 0, "error": str(exc)}
                    )  # fmt: skip
                    continue
                finally:
                    tracker.advance()
                status = (
                    "copied"
                    if result.created
                    else ("extended" if result.added or result.imports else "unchanged")
                )
                counts[status] += 1
                row = {
                    "id": info.id,
                    "status": status,
                    "added": result.added,
                    "entries": len(copy.entries),
                    "imports": result.imports,
                    "error": None,
                }
                done.append(row)
                if not json_out:
                    say(
                        f"{info.id}: {status}: {result.added:,} entries added "
                        f"({len(copy.entries):,} in the session), {result.imports} imports"
                    )
    if json_out:
        dump_json(
            {"from": store_label(source), "to": store_label(target), "sessions": done, **counts},
            None,
        )
    else:
        say(
            f"{len(infos)} sessions: {counts['copied']} copied, {counts['extended']} "
            f"extended, {counts['unchanged']} unchanged, {counts['failed']} failed"
        )
    if counts["failed"]:
        raise typer.Exit(EXIT_BAD_INPUT)
