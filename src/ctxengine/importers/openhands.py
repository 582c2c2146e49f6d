"""OpenHands event streams and trajectories.

Shapes read:

* a JSON list of events (a saved trajectory, ``tests/runtime/trajs/*.json``);
* a JSON object whose ``history`` is that list (one evaluation output);
* JSONL whose lines are evaluation outputs (``output.jsonl``: ``instance_id`` /
  ``instruction`` / ``history`` / ``metrics`` …), or events, one per line.

An evaluation file holds one run per line. The runs are imported one after the other into
one log, each message marked with its run (``meta["run"]``: the ``instance_id``, the issue
``owner/repo#number`` of a resolver output, else ``line <n>``); a later run's system prompt,
when equal to the first one, is not repeated. ``meta["runs"]`` lists the runs.

The events become messages as :mod:`ctxengine.importers._openhands_events` describes; meta
holds the last ``model``.

Ids (OpenHands files carry no session id, and events no entry id): an entry's id hashes the
key of the event it was made from with the previous entry's id
(:meth:`~ctxengine.importers._build.LogBuilder.add_keyed`). An event's key: in an event stream,
the blake2b digest of its line; in an evaluation output, its identity (its run, its index in
the run's ``history``, its ``id`` and ``timestamp``), which costs less than hashing the run's
line (about a tenth of the parse; a changed event is still found when the file is imported
again, as the store compares bodies); in a JSON document, the digest of its canonical JSON
(its events have no bytes of their own). The session id is ``"f:"`` + 16 hex digits of the
digest of the file's first record (its first line, or the first event of a JSON document): a
file that grows (events or runs appended) keeps its session id, so importing it again adds the
new entries to the same session. A file without events:
:func:`~ctxengine.importers._text.bytes_digest`.
"""

from __future__ import annotations

import re
from collections.abc import Iterator
from pathlib import Path
from typing import Any

from ctxengine.importers._build import LogBuilder, expect, load_json
from ctxengine.importers._chat import title_from
from ctxengine.importers._lines import iter_objects
from ctxengine.importers._log import key_digest, source_digest
from ctxengine.importers._openhands_events import Event, EventReader
from ctxengine.importers._parts import opt_dict, opt_str
from ctxengine.importers._text import bytes_digest
from ctxengine.importers.base import ImportedSession, start_report
from ctxengine.importers.report import ImportReport
from ctxengine.model import CompactionRecord, Entry, Message

NAME = "openhands"
_SOURCE = re.compile(rb'"source"\s*:\s*"(?:agent|user|environment)"')
_KIND = re.compile(
    rb'"(?:action|observation)"\s*:\s*"(?:message|run|run_ipython|read|write|edit|browse|'
    rb"browse_interactive|think|finish|reject|delegate|recall|system|condensation|"
    rb'change_agent_state|agent_state_changed|error|null|mcp|task_tracking)"'
)
_EVAL = re.compile(rb'"(?:instance_id|issue_type)"\s*:')


def _run_name(obj: dict[str, Any], line: int) -> str:
    name = opt_str(obj, "instance_id")
    if name:
        return name
    issue = opt_dict(obj, "issue")
    if issue.get("owner") and issue.get("repo"):
        return f"{issue['owner']}/{issue['repo']}#{issue.get('number', '')}"
    return f"line {line}"


class OpenHandsImporter:
    """Importer for OpenHands event streams (see the module docstring)."""

    name = NAME
    label = "an OpenHands event stream"

    def sniff(self, path: Path, head: bytes) -> bool:
        """True for JSON or JSONL holding OpenHands events (``source`` and an ``action`` or
        ``observation`` of a known kind), or evaluation outputs whose ``history`` holds
        them."""
        start = head.lstrip()[:1]
        if start not in (b"[", b"{") or _KIND.search(head) is None:
            return False
        if _SOURCE.search(head) is not None:
            return True
        return start == b"{" and b'"history"' in head and _EVAL.search(head) is not None

    def read(self, path: Path, report: ImportReport | None = None) -> ImportedSession:
        """Parse ``path``, counting what is skipped, repaired and ignored in ``report``.

        Raises:
            TranscriptError: unreadable or invalid JSON; in strict mode the first skipped
                or repaired item, naming its line or JSON path.
            OSError: the file cannot be opened.
        """
        report = start_report(path, report)
        data = path.read_bytes()
        reader = EventReader(report)
        source = _Source(path, data, report)
        for event in source.events():
            reader.event(event)
        sid = "f:" + source.first[:8].hex() if source.first else bytes_digest(data)
        return _session(path, sid, reader, report)


class _Source:
    """The events of the file ``path`` whose bytes are ``data``, with their locations and
    keys, and the digest of its first record (see the module docstring)."""

    def __init__(self, path: Path, data: bytes, report: ImportReport) -> None:
        self.path = path
        self.data = data
        self.report = report
        #: digest of the first record (line, or event of a JSON document) once read.
        self.first: bytes | None = None

    def events(self) -> Iterator[Event]:
        """Every event, in file order."""
        path, data, report = self.path, self.data, self.report
        if data[:4096].lstrip()[:1] == b"[":
            yield from self._document(load_json(path, report, data), "$")
            return
        document = load_json(path, report, data) if _single_document(data) else None
        if isinstance(document, dict):
            history = document.get("history")
            expect(path, isinstance(history, list), "expected a `history` list", json_path="$")
            yield from self._document(history, "$.history")
            return
        for line, obj, raw in iter_objects(path, report, data):
            history = obj.get("history")
            if type(history) is list:
                if self.first is None:
                    self.first = source_digest(raw)
                yield from _run(history, line, _run_name(obj, line))
            else:
                key = source_digest(raw)
                if self.first is None:
                    self.first = key
                yield Event(obj, {"line": line}, None, key)

    def _document(self, events: Any, at: str) -> Iterator[Event]:
        """The events of the list ``events`` of a JSON document, at JSON path ``at``."""
        for i, ev in enumerate(events):
            key = key_digest(ev)
            if self.first is None:
                self.first = key
            yield Event(ev, {"json_path": f"{at}[{i}]"}, None, key)


def _single_document(data: bytes) -> bool:
    """True when the file holds one JSON value over several lines (a pretty-printed object),
    not one object per line."""
    end = data.find(b"\n")
    return (data if end < 0 else data[:end]).strip() == b"{"


def _run(history: list[Any], line: int, run: str) -> Iterator[Event]:
    """The events of the run ``run`` on ``line``, whose ``history`` they are, each keyed by
    its identity (see the module docstring)."""
    where = {"line": line}
    for i, ev in enumerate(history):
        if type(ev) is dict:
            ident = f"{run}\0{i}\0{ev.get('id')!r}\0{ev.get('timestamp')!r}"
        else:
            ident = f"{run}\0{i}"
        yield Event(ev, where, run, ident.encode())


def _session(path: Path, sid: str, reader: EventReader, report: ImportReport) -> ImportedSession:
    builder = LogBuilder(sid)
    ids: list[str] = []
    for body, created, meta, key in reader.bodies:
        extra = meta  # LogBuilder copies it
        if isinstance(body, CompactionRecord):
            extra = dict(meta)
            index = extra.pop("first_kept_index", None)
            kept = _first_message(reader, ids, index) if isinstance(index, int) else None
            body = CompactionRecord(
                summary=body.summary,
                first_kept_id=kept,
                tokens_before=0,
                tokens_after=0,
                policy=body.policy,
                summarizer=body.summarizer,
                reason=body.reason,
            )
        if key is None:
            entry = builder.add(body, created_at=created, meta=extra)
        else:
            entry = builder.add_keyed(body, key, created_at=created, meta=extra)
        ids.append(entry.id)
    info: dict[str, Any] = {}
    if reader.model:
        info["model"] = reader.model
    if reader.runs:
        info["runs"] = list(reader.runs)
    entries = tuple(builder.entries)
    return ImportedSession(sid, NAME, str(path), entries, _title(entries), info, report)


def _first_message(reader: EventReader, ids: list[str], index: int) -> str | None:
    """The entry id of the first message body at or after ``index``."""
    return next(
        (ids[k] for k in range(index, len(ids)) if isinstance(reader.bodies[k][0], Message)), None
    )


def _title(entries: tuple[Entry, ...]) -> str | None:
    return title_from([e.body for e in entries if isinstance(e.body, Message)])


IMPORTER = OpenHandsImporter()
