"""``ctxengine sessions``: the stored sessions as a table."""

from __future__ import annotations

from rich.table import Table

from ctxengine.cli.load import open_store
from ctxengine.cli.options import DbOpt
from ctxengine.cli.output import out


def sessions(db: DbOpt = None) -> None:
    """List stored sessions."""
    with open_store(db) as store:
        table = Table()
        table.add_column("id", no_wrap=True)  # shown whole: other commands take it
        table.add_column("format", no_wrap=True, min_width=6)
        table.add_column("entries", no_wrap=True, justify="right", min_width=7)
        table.add_column("title", max_width=40, overflow="fold")
        table.add_column("source", overflow="fold")
        for s in store.sessions():
            table.add_row(
                s.id, s.format or "", str(s.entry_count), (s.title or "")[:60], s.source_path or ""
            )
        out.print(table)
