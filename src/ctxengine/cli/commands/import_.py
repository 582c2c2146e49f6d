"""``ctxengine import``: transcript files into the store."""

from __future__ import annotations

from pathlib import Path
from typing import Annotated, Any

import typer

from ctxengine.cli import EXIT_BAD_INPUT
from ctxengine.cli.load import open_store, report_line
from ctxengine.cli.options import BusyTimeoutOpt, DbOpt, FormatOpt, JsonOpt, QuietOpt, StrictOpt
from ctxengine.cli.output import dump_json, error, say
from ctxengine.cli.progress import progress
from ctxengine.errors import StoreBusy, StoreError, TranscriptError
from ctxengine.importers import get_importer, read_transcript
from ctxengine.stores.base import ImportResult


def change_note(res: ImportResult, count: int) -> str:
    """What the import line adds after the counts: how the file relates to the stored
    history when it is not a plain continuation of it (``count``: the file's entries)."""
    at = (res.diverged_at or 0) + 1
    if res.change == "grown":
        return f", {res.superseded} superseded (stored while still being written)"
    if res.change == "edited":
        return (
            f", {res.superseded} superseded (the file differs from the stored history at "
            f"entry {at:,} of {count:,}: an edited copy, stored as the current version)"
        )
    if res.change == "earlier":
        return (
            " (an earlier version of the session: the current history differs from it at "
            f"entry {at:,}; unchanged)"
        )
    return ""


def import_(
    files: Annotated[
        list[Path], typer.Argument(metavar="FILE", help="Transcript files to import.")
    ],
    db: DbOpt = None,
    busy_timeout: BusyTimeoutOpt = None,
    format: FormatOpt = None,
    strict: StrictOpt = False,
    json_out: JsonOpt = False,
    quiet: QuietOpt = False,
) -> None:
    """Import transcript files into the store (importing a file twice adds nothing; a file
    that grew adds its new entries, and supersedes the stored ones it no longer holds as
    they were: they were read while the agent was still writing them; an edited copy of a
    session, a line removed or changed, is stored as its current version, superseding the
    stored entries from the first difference on; a version imported before adds nothing).

    Every file is tried: one line per file (what was stored, or the error), and one more on
    stderr when records were skipped or repaired (kinds, counts, first line of each; the
    record of it is stored with the session); exit 2 at the end when any file failed.
    With --strict the first record that cannot be read as it is fails its file. A store
    that another process keeps busy past --busy-timeout stops the import with exit 3 (the
    files stored before stay stored)."""
    if format is not None:
        get_importer(format)  # an unknown format fails every file: refuse it once
    done: list[dict[str, Any]] = []
    failed = 0
    with (
        progress("importing", total=len(files), quiet=quiet) as tracker,
        open_store(db, busy_timeout=busy_timeout) as store,
    ):
        for f in files:
            try:
                tracker.describe(f"reading {f}")
                imported = read_transcript(f, format, strict=strict)
                tracker.describe(f"storing {f} ({len(imported.entries):,} entries)")
                res = store.import_session(imported)
            except StoreBusy:
                raise
            except (TranscriptError, StoreError) as exc:
                failed += 1
                error(str(exc))
                done.append({"file": str(f), "ok": False, "error": str(exc)})
                continue
            finally:
                tracker.advance()
            if not json_out:
                say(
                    f"{f}: session {res.session_id} ({imported.format}): "
                    f"{res.added} entries added, {res.skipped} already stored"
                    f"{change_note(res, len(imported.entries))}"
                )
            report_line(str(f), imported.report)
            done.append(
                {
                    "file": str(f),
                    "ok": True,
                    "session_id": res.session_id,
                    "format": imported.format,
                    "title": imported.title,
                    "added": res.added,
                    "skipped": res.skipped,
                    "superseded": res.superseded,
                    "change": res.change,
                    "diverged_at": res.diverged_at,
                    "issues": imported.report.to_dict()["issues"],
                }
            )
        db_path = store.path
    if json_out:
        dump_json(
            {
                "store": db_path,
                "files": done,
                "imported": len(files) - failed,
                "failed": failed,
            },
            None,
        )
    if failed:
        if len(files) > 1:  # one file's error line says it all
            error(f"{failed} of {len(files)} files not imported")
        raise typer.Exit(EXIT_BAD_INPUT)
