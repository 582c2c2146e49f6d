"""Rows of the SQLite store: entries and sessions to and from table rows.

An entry row is ``(session_id, seq, id, parent_id, kind, created_at, body, meta)``: ``body``
holds the orjson bytes of ``codec.body_to_dict`` (written in one pass by ``codec.body_json``),
``meta`` the orjson bytes of the entry meta (``NULL`` when empty).
"""

from __future__ import annotations

from collections.abc import Mapping
from datetime import UTC, datetime
from typing import Any, TypeAlias

import orjson

from ctxengine.errors import StoreError
from ctxengine.model import Entry
from ctxengine.model.codec import body_from_dict, body_json
from ctxengine.stores.base import ImportedLog, ImportRecord, SessionInfo, SessionLink

EntryRow: TypeAlias = tuple[str, int, str, str | None, str, str | None, bytes, bytes | None]

ENTRY_COLUMNS = "session_id, seq, id, parent_id, kind, created_at, body, meta"
SESSION_COLUMNS = "id, format, source_path, title, created_at, meta"
IMPORT_COLUMNS = "session_id, imported_at, source_path, format, added, report"
LINK_COLUMNS = "session_id, parent_session_id, parent_entry_id, relation, created_at"


def dump_meta(meta: Mapping[str, Any]) -> bytes | None:
    """orjson bytes of ``meta``, or ``None`` when empty. Raises ``TypeError`` when a value
    is not JSON-serialisable."""
    return orjson.dumps(dict(meta)) if meta else None


def load_meta(raw: bytes | None) -> dict[str, Any]:
    """Inverse of :func:`dump_meta`."""
    if raw is None:
        return {}
    value: dict[str, Any] = orjson.loads(raw)
    return value


def entry_row(entry: Entry, where: str) -> EntryRow:
    """The table row of ``entry``.

    Raises:
        StoreError: the body or meta cannot be serialised (``where`` names store and call).
    """
    try:
        body = body_json(entry.body)
        meta = dump_meta(entry.meta)
    except (TypeError, ValueError) as exc:
        raise StoreError(
            f"{where}: entry {entry.id!r} (seq {entry.seq}) cannot be serialised: {exc}"
        ) from exc
    return (
        entry.session_id,
        entry.seq,
        entry.id,
        entry.parent_id,
        entry.kind,
        entry.created_at,
        body,
        meta,
    )


def row_entry(row: tuple[Any, ...], where: str) -> Entry:
    """The entry of a table row (columns in :data:`ENTRY_COLUMNS` order).

    Raises:
        StoreError: the stored body is not a valid entry body.
    """
    session_id, seq, entry_id, parent_id, _kind, created_at, body, meta = row
    try:
        return Entry(
            id=entry_id,
            session_id=session_id,
            seq=seq,
            body=body_from_dict(orjson.loads(body)),
            parent_id=parent_id,
            created_at=created_at,
            meta=load_meta(meta),
        )
    except (ValueError, TypeError, KeyError) as exc:
        raise StoreError(
            f"{where}: stored entry {entry_id!r} (seq {seq}) is corrupt: {exc}"
        ) from exc


def session_row(info: SessionInfo, where: str) -> tuple[Any, ...]:
    """The ``sessions`` row of ``info`` (columns in :data:`SESSION_COLUMNS` order).

    Raises:
        StoreError: ``info.meta`` cannot be serialised.
    """
    try:
        meta = dump_meta(info.meta)
    except TypeError as exc:
        raise StoreError(f"{where}: session meta cannot be serialised: {exc}") from exc
    return (info.id, info.format, info.source_path, info.title, info.created_at, meta)


def row_session(row: tuple[Any, ...]) -> SessionInfo:
    """The session of a row: :data:`SESSION_COLUMNS` followed by the entry count and the
    time of the newest entry (else of the newest import); ``updated_at`` is the creation
    time when that is later (:func:`not_before`)."""
    sid, fmt, source_path, title, created_at, meta, count, updated_at = row
    return SessionInfo(
        id=sid,
        format=fmt,
        source_path=source_path,
        title=title,
        created_at=created_at,
        entry_count=count,
        meta=load_meta(meta),
        updated_at=not_before(updated_at, created_at),
    )


def not_before(updated_at: str | None, created_at: str | None) -> str | None:
    """``updated_at``, or ``created_at`` when that is later: a session whose newest entries
    are copies (a hand-off, a fork: copies keep the times they were first written) was
    last changed when it was stored. Times are ISO-8601 (one without an offset is read as
    UTC); ``updated_at`` is kept as it is when either does not parse or is ``None``."""
    if updated_at is None or created_at is None:
        return updated_at
    try:
        updated, created = _instant(updated_at), _instant(created_at)
    except ValueError:
        return updated_at
    return created_at if created > updated else updated_at


def _instant(text: str) -> datetime:
    """An ISO-8601 time as an aware datetime (UTC when it names no offset).

    Raises:
        ValueError: not an ISO-8601 time.
    """
    value = datetime.fromisoformat(text)
    return value if value.tzinfo is not None else value.replace(tzinfo=UTC)


def import_row(imported: ImportedLog, added: int, where: str) -> tuple[Any, ...]:
    """The ``import_reports`` row of one import (columns in :data:`IMPORT_COLUMNS` order),
    stamped with the current time (UTC).

    Raises:
        StoreError: the report cannot be serialised.
    """
    try:
        report = orjson.dumps(imported.report.to_dict())
    except TypeError as exc:
        raise StoreError(f"{where}: import report cannot be serialised: {exc}") from exc
    now = datetime.now(UTC).isoformat(timespec="seconds")
    return (imported.session_id, now, imported.source_path, imported.format, added, report)


def import_record_row(record: ImportRecord, where: str) -> tuple[Any, ...]:
    """The ``import_reports`` row of a stored import record (a copy from another store).

    Raises:
        StoreError: the report cannot be serialised.
    """
    try:
        report = orjson.dumps(dict(record.report))
    except TypeError as exc:
        raise StoreError(f"{where}: import report cannot be serialised: {exc}") from exc
    return (
        record.session_id,
        record.imported_at,
        record.source_path,
        record.format,
        record.added,
        report,
    )


def row_import(row: tuple[Any, ...]) -> ImportRecord:
    """The import record of an ``import_reports`` row."""
    sid, imported_at, source_path, fmt, added, report = row
    return ImportRecord(sid, imported_at, source_path, fmt, added, orjson.loads(report))


def row_link(row: tuple[Any, ...]) -> SessionLink:
    """The link of a ``session_links`` row (columns in :data:`LINK_COLUMNS` order)."""
    sid, parent, entry, relation, created_at = row
    return SessionLink(sid, parent, entry, relation, created_at)
