"""``ctxengine sessions``: the stored sessions, with dates, sizes and titles.

The store is opened read-only: listing never creates a database file, never waits for a
writer and never writes.
"""

from __future__ import annotations

from collections.abc import Sequence
from datetime import UTC, datetime
from typing import Any

from ctxengine.cli.load import open_store, store_path
from ctxengine.cli.options import DbOpt, JsonOpt, TokenizerOpt, resolve_tokenizer
from ctxengine.cli.output import Grid, dump_json, note, show
from ctxengine.errors import StoreMissing
from ctxengine.model import Entry, current_entries
from ctxengine.model.roles import is_real_user_message, user_text
from ctxengine.stores.base import SessionInfo
from ctxengine.summarizers.acknowledge import is_substantive
from ctxengine.tokens.base import Estimator

#: Longest title shown, in characters (the importers cut titles at 80 too).
TITLE_CHARS = 80


def session_title(stored: str | None, entries: Sequence[Entry]) -> str:
    """A title for a session: the stored one when it says something, else the first line of
    the first real user message that is neither injected, a bare slash command nor a bare
    acknowledgement ("continue", "yes", "ok" …: :func:`~ctxengine.summarizers.acknowledge.
    is_substantive`), cut to :data:`TITLE_CHARS`; ``""`` when there is none."""
    if stored and is_substantive(stored):
        return stored
    for entry in entries:
        message = entry.message
        if message is None or not is_real_user_message(message):
            continue
        text = user_text(message).strip()
        if is_substantive(text):
            line = next(ln.strip() for ln in text.splitlines() if ln.strip())
            return line if len(line) <= TITLE_CHARS else line[: TITLE_CHARS - 1] + "…"
    return ""


def _when(stamp: str | None) -> str:
    """``YYYY-MM-DD HH:MM`` (UTC) of an ISO-8601 time; the text as stored when it is not
    one; ``""`` for none."""
    if not stamp:
        return ""
    try:
        moment = datetime.fromisoformat(stamp)
    except ValueError:
        return stamp
    if moment.tzinfo is not None:
        moment = moment.astimezone(UTC)
    return moment.strftime("%Y-%m-%d %H:%M")


def session_row(
    info: SessionInfo, entries: Sequence[Entry], estimator: Estimator
) -> dict[str, Any]:
    """One session as the ``sessions --json`` schema describes it: ``entries`` is every
    stored entry (``info.entry_count``), ``tokens`` is counted by ``estimator`` over the
    messages of its current history (without the entries a supersede record withdrew: a
    re-imported transcript's superseded entries, a reverted compaction, a branch left), as
    ``inspect`` counts them. ``entries``: the stored log, in seq order."""
    current = current_entries(entries)
    tokens = sum(estimator.message(e.message) for e in current if e.message is not None)
    return {
        "id": info.id,
        "format": info.format,
        "title": session_title(info.title, current),
        "created_at": info.created_at,
        "updated_at": info.updated_at,
        "entries": info.entry_count,
        "tokens": tokens,
        "source": info.source_path,
    }


def sessions(db: DbOpt = None, tokenizer: TokenizerOpt = "auto", json_out: JsonOpt = False) -> None:
    """List the stored sessions: id, created and updated dates, entries (stored, superseded
    ones included), tokens of the current history (estimated, as inspect counts them; see
    --tokenizer), format, title and source file. An empty or missing store lists nothing
    (and says so on stderr); no database file is created."""
    counting = resolve_tokenizer(tokenizer)
    estimator = counting.estimator()
    path = store_path(db)
    try:
        store = open_store(db, read_only=True)
    except StoreMissing:
        rows: list[dict[str, Any]] = []
    else:
        with store:
            rows = [
                session_row(info, store.entries(info.id), estimator) for info in store.sessions()
            ]
    if json_out:
        dump_json({"store": path, "tokenizer": counting.name, "sessions": rows}, None)
        return
    if not rows:
        note(f"no sessions stored in {path}")
        return
    table = Grid(
        ("id", "created", "updated", "entries", "tokens", "format", "title", "source"),
        right=frozenset({3, 4}),
        keep=frozenset({0}),  # shown whole: other commands take it
    )
    for r in rows:
        table.add(
            r["id"],
            _when(r["created_at"]),
            _when(r["updated_at"]),
            f"{r['entries']:,}",
            f"{r['tokens']:,}",
            r["format"] or "",
            r["title"],
            r["source"] or "",
        )
    show(table)
