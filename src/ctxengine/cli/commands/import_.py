"""``ctxengine import``: transcript files into the store."""

from __future__ import annotations

from pathlib import Path
from typing import Annotated

import typer

from ctxengine.cli import EXIT_BAD_INPUT
from ctxengine.cli.load import open_store, report_line
from ctxengine.cli.options import DbOpt, FormatOpt, StrictOpt
from ctxengine.cli.output import err, out
from ctxengine.errors import StoreError, TranscriptError
from ctxengine.importers import get_importer, read_transcript


def import_(
    files: Annotated[list[Path], typer.Argument(help="Transcript files to import.")],
    db: DbOpt = None,
    format: FormatOpt = None,
    strict: StrictOpt = False,
) -> None:
    """Import transcript files into the store (importing a file twice adds nothing).

    Every file is tried: one line per file (what was stored, or the error), and one more on
    stderr when records were skipped or repaired (kinds, counts, first line of each; the
    record of it is stored with the session); exit 2 at the end when any file failed.
    With --strict the first record that cannot be read as it is fails its file."""
    if format is not None:
        get_importer(format)  # an unknown format fails every file: refuse it once
    failed = 0
    with open_store(db) as store:
        for f in files:
            try:
                imported = read_transcript(f, format, strict=strict)
                res = store.import_session(imported)
            except (TranscriptError, StoreError) as exc:
                failed += 1
                err.print(f"[red]error:[/red] {exc}", highlight=False)
                continue
            out.print(
                f"{f}: session {res.session_id} ({imported.format}): "
                f"{res.added} entries added, {res.skipped} already stored"
            )
            report_line(str(f), imported.report)
    if failed:
        if len(files) > 1:  # one file's error line says it all
            err.print(f"[red]error:[/red] {failed} of {len(files)} files not imported")
        raise typer.Exit(EXIT_BAD_INPUT)
