"""Resolve a CLI target (a transcript file or a stored session id) to a session log."""

from __future__ import annotations

import os
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any

import typer

from ctxengine.cli.output import check_output, say
from ctxengine.cli.overwrite import OutputKind
from ctxengine.errors import SessionNotFound, StoreMissing, TranscriptError
from ctxengine.model import Entry
from ctxengine.stores.location import OpenedStore, store_label
from ctxengine.stores.location import open_store as _open_location

if TYPE_CHECKING:
    from ctxengine.importers.report import ImportReport


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
        path: the transcript file read (``None`` for a stored session).
        cwd: the working directory the transcript records (``meta["cwd"]``), ``""`` when it
            records none.
    """

    label: str
    session_id: str
    entries: tuple[Entry, ...]
    store: OpenedStore | None
    format: str | None
    report: ImportReport | None = None
    path: Path | None = None
    cwd: str = ""


def open_store(
    db: str | None, *, busy_timeout: float | None = None, read_only: bool = False
) -> OpenedStore:
    """The store at ``db`` (a SQLite file path, a ``sqlite:///`` URL or a
    ``postgresql://`` URL; else ``CTXENGINE_DB``, else the default SQLite file); writes wait
    ``busy_timeout`` seconds for another writer (default ``CTXENGINE_BUSY_TIMEOUT``, else
    5). ``read_only`` opens an existing store without writing anything.

    Raises:
        StoreMissing: ``read_only`` and no store exists there.
        StoreError, ConfigError: see :func:`ctxengine.stores.location.open_store`.
    """
    return _open_location(db or None, busy_timeout_s=busy_timeout, read_only=read_only)


def store_path(db: str | None) -> str:
    """How the store ``open_store(db)`` would open is named (its file path; a PostgreSQL
    URL with the password hidden); nothing is created."""
    return store_label(db or None)


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
        say(f"{path}: {summary}", stderr=True)


def resolve_target(target: str | None, session: str | None) -> tuple[str, bool]:
    """``(what, is_session)``: the session id given with ``--session``, else the target.

    Raises:
        typer.BadParameter: both or neither were given.
    """
    if session is not None and target is not None:
        raise typer.BadParameter(
            "give a transcript file or --session ID, not both", param_hint="--session"
        )
    if session is not None:
        return session, True
    if target is None:
        raise typer.BadParameter("give a transcript file or a session id (or --session ID)")
    return target, False


def load_target(
    target: str | None,
    *,
    db: str | None,
    format: str | None,
    strict: bool = False,
    session: str | None = None,
    busy_timeout: float | None = None,
    writable: bool = False,
) -> Target:
    """A file path is imported in memory (nothing written; what the import skipped or
    repaired is printed as one line on stderr); anything else, and any ``session``, is looked
    up as a stored session id (or unique prefix). The store is opened read-only unless
    ``writable`` (a caller that appends to the session).

    Raises:
        TranscriptError: the file is malformed (with ``strict``: at its first record that
            cannot be read as it is) or in an unknown format; ``"file not found"`` for a
            missing file that looks like a path (:func:`looks_like_path`); ``"expected a
            file path or a session id"`` for an empty target.
        SessionNotFound: no stored session matches (or there is no store at all).
        typer.BadParameter: both a target and ``session``, or neither.
    """
    name, is_session = resolve_target(target, session)
    if not name:
        raise TranscriptError("", "expected a file path or a session id")
    path = Path(name)
    if not is_session:
        if not path.exists() and looks_like_path(name):
            raise TranscriptError(name, "file not found")
        if path.exists():
            from ctxengine.importers import read_transcript  # its parsers load when a file is read

            imported = read_transcript(path, format, strict=strict)
            report_line(str(path), imported.report)
            return Target(
                str(path),
                imported.session_id,
                imported.entries,
                None,
                imported.format,
                imported.report,
                path,
                _cwd(imported.meta),
            )
    try:
        store = open_store(db, busy_timeout=busy_timeout, read_only=True)
    except StoreMissing as exc:
        raise SessionNotFound(name, where=exc.path) from exc
    info = store.session(name)
    if writable:
        store.close()
        store = open_store(db, busy_timeout=busy_timeout)
    entries = tuple(store.entries(info.id))
    return Target(info.id, info.id, entries, store, info.format, cwd=_cwd(info.meta))


def _cwd(meta: Mapping[str, Any]) -> str:
    """The absolute working directory ``meta`` records, else ``""``."""
    cwd = meta.get("cwd")
    return cwd if isinstance(cwd, str) and cwd.startswith("/") else ""


def check_output_path(
    output: str | None,
    target: str | None,
    db: str | None,
    kind: OutputKind | None = None,
    force: bool = False,
) -> None:
    """Refuse ``output`` before any work when it is a directory, the store, the transcript
    ``target``, or (unless ``force``) an existing file that does not hold output of
    ``kind`` (see :func:`ctxengine.cli.output.check_output`).

    Raises:
        OutputRefused: it is one of those.
    """
    inputs = [target] if target and Path(target).exists() else []
    check_output(output, inputs=inputs, store=store_path(db), kind=kind, force=force)
