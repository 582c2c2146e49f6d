"""OpenCode sessions: the SQLite store, the older JSON storage folders, and exports.

Targets:

* ``opencode.db`` (OpenCode ≥ 1.2, ``~/.local/share/opencode/``): tables ``session``
  (columns), ``message`` and ``part`` (``id``, ``session_id``, ``time_created``, JSON
  ``data``); a folder holding ``opencode.db`` is the same target.
* the JSON storage folder (OpenCode ≤ 1.1, ``~/.local/share/opencode/storage``):
  ``session/<project>/<session>.json``, ``message/<session>/<message>.json``,
  ``part/<message>/<part>.json``; a folder holding ``storage/`` is the same target, and a
  ``session/<project>/<session>.json`` file imports that session.
* an ``opencode export`` document: ``{"info": session, "messages": [{"info", "parts"}]}``.

A store holds many sessions: a folder or database imports the most recently updated session
that is no subagent's (no ``parentID``); the others are listed in ``meta["sessions"]``
(ignored ``other session`` in the report). A subagent session (imported from its session
file) names its parent in ``meta["parent_session_id"]``; a session lists its subagents in
``meta["child_sessions"]``. Messages are ordered by creation time, then id, and parts by
id (file name in the storage folder), as OpenCode reads them; they become log bodies as
:mod:`ctxengine.importers._opencode_parts` describes.

Locations in the report are store paths: ``message/<session>/<file>.json`` in a storage
folder, ``part[<id>].data`` in a database, ``$.messages[i].parts[j]`` in an export. A storage
file or a ``data`` value that is not JSON (a file being written) is skipped; a message file
without ``id`` takes its file name (repaired).
"""

from __future__ import annotations

import sqlite3
from collections.abc import Iterator
from contextlib import closing
from pathlib import Path
from typing import Any

import orjson

from ctxengine.errors import TranscriptError
from ctxengine.importers._build import LogBuilder, load_json, parse_json
from ctxengine.importers._opencode_parts import Converter, RawMessage, Where
from ctxengine.importers._parts import opt_dict, opt_str, title_of
from ctxengine.importers._peek import peek
from ctxengine.importers.base import ImportedSession, start_report
from ctxengine.importers.report import ImportReport
from ctxengine.model import CompactionRecord

NAME = "opencode"
SQLITE_HEADER = b"SQLite format 3\x00"
_TABLES = {"session", "message", "part"}


def _storage_root(path: Path) -> Path | None:
    """The JSON storage folder ``path`` is or holds, else ``None``."""
    for root in (path, path / "storage"):
        if (root / "session").is_dir() and (root / "message").is_dir():
            return root
    return None


def _database(path: Path) -> Path | None:
    """The OpenCode database ``path`` is or holds, else ``None``."""
    candidate = path / "opencode.db" if path.is_dir() else path
    if not candidate.is_file():
        return None
    try:
        with candidate.open("rb") as fh:
            if fh.read(16) != SQLITE_HEADER:
                return None
        with closing(sqlite3.connect(f"file:{candidate}?mode=ro", uri=True)) as db:
            names = {r[0] for r in db.execute("SELECT name FROM sqlite_master WHERE type='table'")}
    except (OSError, sqlite3.Error):
        return None
    return candidate if names >= _TABLES else None


def _session_file(path: Path, head: bytes) -> bool:
    """True for ``<storage>/session/<project>/<session>.json``."""
    if path.suffix != ".json" or len(path.parents) < 3 or path.parents[1].name != "session":
        return False
    p = peek(head)
    return p.kind == "object" and "id" in p.keys and (path.parents[2] / "message").is_dir()


def _export(head: bytes) -> bool:
    p = peek(head)
    if p.kind != "object" or not {"info", "messages"} <= set(p.keys):
        return False
    first = p.items("messages")[:1]
    return bool(first) and isinstance(first[0], dict) and {"info", "parts"} <= set(first[0])


class OpenCodeImporter:
    """Importer for OpenCode sessions (see the module docstring)."""

    name = NAME
    label = "an OpenCode session store"

    def sniff(self, path: Path, head: bytes) -> bool:
        """True for an OpenCode database, storage folder, session file or export."""
        if path.is_dir():
            return _storage_root(path) is not None or _database(path) is not None
        if head.startswith(SQLITE_HEADER):
            return _database(path) is not None
        return _session_file(path, head) or _export(head)

    def read(self, path: Path, report: ImportReport | None = None) -> ImportedSession:
        """Read the session ``path`` names (see the module docstring).

        Raises:
            TranscriptError: not an OpenCode store, no session in it, or an unreadable
                store; in strict mode the first skipped or repaired item.
        """
        report = start_report(path, report)
        store: _Store
        if path.is_dir() and _database(path) is None:
            root = _storage_root(path)
            if root is None:
                raise TranscriptError(
                    str(path), "expected an OpenCode storage folder or opencode.db"
                )
            store = _Folder(root, report)
        elif path.is_dir() or _is_sqlite(path):
            db = _database(path)
            if db is None:
                raise TranscriptError(
                    str(path), "expected an OpenCode database (session, message, part)"
                )
            store = _Database(db, report)
        elif path.suffix == ".json" and path.parents[1].name == "session":
            store = _Folder(path.parents[2], report)
            info = load_json(path, report)
            if not isinstance(info, dict) or not isinstance(info.get("id"), str):
                raise TranscriptError(str(path), "expected a session object with a string `id`")
            return _build(path, store, info, [], report)
        else:
            store = _Export(path, report)
        sessions = store.sessions()
        if not sessions:
            raise TranscriptError(str(path), "expected at least one session, found none")
        chosen = _latest(sessions)
        for other in sessions:
            if other is not chosen:
                report.ignore("other session")
        others = [str(s.get("id")) for s in sessions if s is not chosen]
        return _build(path, store, chosen, others, report, sessions)


def _is_sqlite(path: Path) -> bool:
    try:
        with path.open("rb") as fh:
            return fh.read(16) == SQLITE_HEADER
    except OSError:
        return False


def _latest(sessions: list[dict[str, Any]]) -> dict[str, Any]:
    """The most recently updated session without a parent (any session when all have
    one)."""
    roots = [s for s in sessions if not s.get("parentID")] or sessions

    def key(s: dict[str, Any]) -> tuple[float, str]:
        time = opt_dict(s, "time")
        value = time.get("updated", time.get("created", 0))
        return (float(value) if isinstance(value, int | float) else 0.0, str(s.get("id", "")))

    return max(roots, key=key)


def _build(
    path: Path,
    store: _Store,
    info: dict[str, Any],
    others: list[str],
    report: ImportReport,
    sessions: list[dict[str, Any]] | None = None,
) -> ImportedSession:
    sid = str(info["id"])
    built = Converter(report).session(store.messages(sid))
    builder = LogBuilder(sid)
    entry_of: dict[str, str] = {}
    for item in built:
        body = item.body
        if isinstance(body, CompactionRecord) and item.kept_from in entry_of:
            body = CompactionRecord(
                summary=body.summary,
                first_kept_id=entry_of[item.kept_from],
                tokens_before=0,
                tokens_after=0,
                policy=body.policy,
                summarizer=body.summarizer,
                reason=body.reason,
            )
        entry = builder.add(body, source_id=item.source, created_at=item.created)
        entry_of.setdefault(item.source, entry.id)
    meta: dict[str, Any] = {"store": store.kind}
    for key, name in (("title", "title"), ("directory", "directory"), ("version", "version"),
                      ("projectID", "project_id"), ("parentID", "parent_session_id")):  # fmt: skip
        if isinstance(info.get(key), str) and info[key]:
            meta[name] = info[key]
    pool = sessions if sessions is not None else store.sessions()
    children = [
        str(s["id"]) for s in pool if s.get("parentID") == sid and isinstance(s.get("id"), str)
    ]
    if children:
        meta["child_sessions"] = children
    if others:
        meta["sessions"] = others
    entries = tuple(builder.entries)
    title = opt_str(info, "title") or title_of(entries)
    return ImportedSession(sid, NAME, str(path), entries, title, meta, report)


class _Store:
    kind = ""

    def sessions(self) -> list[dict[str, Any]]:
        raise NotImplementedError

    def messages(self, session_id: str) -> list[RawMessage]:
        raise NotImplementedError


class _Folder(_Store):
    """The JSON storage folder."""

    kind = "storage"

    def __init__(self, root: Path, report: ImportReport) -> None:
        self.root = root
        self.report = report

    def _load(self, path: Path) -> tuple[Any, Where]:
        where: Where = {"json_path": str(path.relative_to(self.root))}
        try:
            raw = path.read_bytes()
        except OSError as exc:
            raise TranscriptError(str(path), f"cannot read file: {exc.strerror}") from exc
        value, error = _parse(raw, self.report, where)
        if error is not None or not isinstance(value, dict):
            self.report.skip(
                "invalid JSON file", "expected a JSON object in the storage file", **where
            )
            return None, where
        return value, where

    def _files(self, folder: Path) -> Iterator[Path]:
        if folder.is_dir():
            yield from sorted(p for p in folder.iterdir() if p.suffix == ".json" and p.is_file())

    def sessions(self) -> list[dict[str, Any]]:
        found: list[dict[str, Any]] = []
        for project in sorted(p for p in (self.root / "session").iterdir() if p.is_dir()):
            for file in self._files(project):
                value, _ = self._load(file)
                if value is not None and isinstance(value.get("id"), str):
                    found.append(value)
        return found

    def messages(self, session_id: str) -> list[RawMessage]:
        found: list[RawMessage] = []
        for file in self._files(self.root / "message" / session_id):
            info, where = self._load(file)
            if info is None:
                continue
            if not isinstance(info.get("id"), str):
                self.report.repair(
                    "message without id", "expected a string `id` on a message", **where
                )
                info = {**info, "id": file.stem}
            msg = RawMessage(info, where)
            for part_file in self._files(self.root / "part" / info["id"]):
                part, part_where = self._load(part_file)
                if part is not None:
                    msg.parts.append((part, part_where))
            found.append(msg)
        return _ordered(found)


class _Database(_Store):
    """The SQLite store."""

    kind = "sqlite"

    def __init__(self, path: Path, report: ImportReport) -> None:
        self.path = path
        self.report = report

    def _query(self, sql: str, args: tuple[Any, ...] = ()) -> list[Any]:
        try:
            with closing(sqlite3.connect(f"file:{self.path}?mode=ro", uri=True)) as db:
                if sql.startswith("SELECT *"):
                    db.row_factory = sqlite3.Row
                return db.execute(sql, args).fetchall()
        except sqlite3.Error as exc:
            raise TranscriptError(str(self.path), f"cannot read the database: {exc}") from exc

    def _data(self, raw: Any, where: Where) -> dict[str, Any] | None:
        blob = raw.encode() if isinstance(raw, str) else raw if isinstance(raw, bytes) else b""
        value, error = _parse(blob, self.report, where)
        if error is not None or not isinstance(value, dict):
            self.report.skip("invalid data", "expected a JSON object in the `data` column", **where)
            return None
        return value

    def sessions(self) -> list[dict[str, Any]]:
        rows = self._query("SELECT * FROM session")
        found: list[dict[str, Any]] = []
        for row in rows:
            cols = dict(row)
            info: dict[str, Any] = {
                "id": cols.get("id"),
                "parentID": cols.get("parent_id"),
                "projectID": cols.get("project_id"),
                "title": cols.get("title"),
                "directory": cols.get("directory"),
                "version": cols.get("version"),
                "time": {"created": cols.get("time_created"), "updated": cols.get("time_updated")},
            }
            found.append(info)
        return found

    def messages(self, session_id: str) -> list[RawMessage]:
        found: dict[str, RawMessage] = {}
        rows = self._query(
            "SELECT id, time_created, data FROM message WHERE session_id = ? "
            "ORDER BY time_created, id",
            (session_id,),
        )
        for msg_id, created, raw in rows:
            where: Where = {"json_path": f"message[{msg_id}].data"}
            data = self._data(raw, where)
            if data is None:
                continue
            info = {**data, "id": msg_id, "sessionID": session_id}
            info.setdefault("time", {"created": created})
            found[msg_id] = RawMessage(info, where)
        parts = self._query(
            "SELECT id, message_id, data FROM part WHERE session_id = ? ORDER BY message_id, id",
            (session_id,),
        )
        for part_id, message_id, raw in parts:
            where = {"json_path": f"part[{part_id}].data"}
            data = self._data(raw, where)
            msg = found.get(message_id)
            if data is not None and msg is not None:
                data["id"] = part_id
                msg.parts.append((data, where))
        return list(found.values())


class _Export(_Store):
    """An ``opencode export`` document."""

    kind = "export"

    def __init__(self, path: Path, report: ImportReport) -> None:
        data = load_json(path, report)
        if not isinstance(data, dict) or not isinstance(data.get("info"), dict):
            raise TranscriptError(str(path), "expected an export object with an `info` session")
        self.data = data
        self.report = report

    def sessions(self) -> list[dict[str, Any]]:
        return [self.data["info"]]

    def messages(self, session_id: str) -> list[RawMessage]:
        found: list[RawMessage] = []
        items = self.data.get("messages")
        for i, item in enumerate(items if isinstance(items, list) else ()):
            where: Where = {"json_path": f"$.messages[{i}]"}
            info = item.get("info") if isinstance(item, dict) else None
            if not isinstance(info, dict):
                self.report.skip(
                    "malformed message", "expected a message with an `info` object", **where
                )
                continue
            msg = RawMessage(info, where)
            parts = item.get("parts")
            for k, part in enumerate(parts if isinstance(parts, list) else ()):
                if isinstance(part, dict):
                    msg.parts.append((part, {"json_path": f"$.messages[{i}].parts[{k}]"}))
            found.append(msg)
        return found


def _parse(raw: bytes, report: ImportReport, where: Where) -> tuple[Any, Exception | None]:
    """:func:`~._build.parse_json` with its repairs (lone surrogates, bytes that are not
    UTF-8) counted at ``where`` (a store path) instead of at a line of the value's text."""
    try:
        return orjson.loads(raw), None
    except orjson.JSONDecodeError:
        pass
    scratch = ImportReport(report.path)
    value, error = parse_json(raw, scratch)
    for issue in scratch.issues:
        for _ in range(issue.count):
            report.repair(issue.kind, issue.expected or issue.kind, **where)
    return value, error


def _ordered(messages: list[RawMessage]) -> list[RawMessage]:
    def key(m: RawMessage) -> tuple[float, str]:
        created = opt_dict(m.info, "time").get("created", 0)
        return (float(created) if isinstance(created, int | float) else 0.0, m.id)

    return sorted(messages, key=key)


IMPORTER = OpenCodeImporter()
