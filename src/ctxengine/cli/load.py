"""Resolve a CLI target (a transcript file or a stored session id) to a session log."""

from __future__ import annotations

import os
from dataclasses import dataclass
from pathlib import Path

from ctxengine.cli.output import err
from ctxengine.errors import TranscriptError
from ctxengine.importers import read_transcript
from ctxengine.importers.report import ImportReport
from ctxengine.model import Entry
from ctxengine.stores.sqlite import SQLiteStore


@dataclass(slots=True)
class Target:
    """A loaded session.

    Attributes:
        label: what to call it in reports (file path or session id).
        session_id: the session id.
        entries: its log.
        store: the store it came from (``None`` for a file read in memory).
        format: transcript format, when known.
        report: what the import of a file skipped and repaired (``None`` for a stored
            session).
    """

    label: str
    session_id: str
    entries: tuple[Entry, ...]
    store: SQLiteStore | None
    format: str | None
    report: ImportReport | None = None


def open_store(db: str | None) -> SQLiteStore:
    """The store at ``db`` (else ``CTXENGINE_DB``, else the default location)."""
    return SQLiteStore(db) if db else SQLiteStore()


#: Endings that mark a target as a transcript file rather than a session id.
FILE_SUFFIXES = (".jsonl", ".json", ".traj", ".md")


def looks_like_path(target: str) -> bool:
    """True when ``target`` names a file: it contains a path separator or ends in one of
    :data:`FILE_SUFFIXES`."""
    separators = {"/", os.sep} | ({os.altsep} if os.altsep else set())
    return any(s in target for s in separators) or target.lower().endswith(FILE_SUFFIXES)


def report_line(path: str, report: ImportReport) -> None:
    """Print ``"<path>: <report summary>"`` to stderr when the import skipped or repaired
    anything (one line; nothing for a clean import)."""
    summary = report.summary()
    if summary:
        err.print(f"{path}: {summary}", highlight=False, markup=False, soft_wrap=True)


def load_target(target: str, *, db: str | None, format: str | None, strict: bool = False) -> Target:
    """A file path is imported in memory (nothing written; what the import skipped or
    repaired is printed as one line on stderr); anything else is looked up as a stored
    session id (or unique prefix).

    Raises:
        TranscriptError: the file is malformed (with ``strict``: at its first record that
            cannot be read as it is) or in an unknown format; ``"file not found"`` for a
            missing file that looks like a path (:func:`looks_like_path`); ``"expected a
            file path or a session id"`` for an empty target.
        SessionNotFound: no stored session matches.
    """
    if not target:
        raise TranscriptError("", "expected a file path or a session id")
    path = Path(target)
    if not path.exists() and looks_like_path(target):
        raise TranscriptError(target, "file not found")
    if path.exists():
        imported = read_transcript(path, format, strict=strict)
        report_line(str(path), imported.report)
        return Target(
            str(path),
            imported.session_id,
            imported.entries,
            None,
            imported.format,
            imported.report,
        )
    store = open_store(db)
    info = store.session(target)
    return Target(info.id, info.id, tuple(store.entries(info.id)), store, info.format)
