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

The events become messages as :mod:`ctxengine.importers._openhands_events` describes. The
session id is a hash of the file (OpenHands files carry no session id); meta holds the last
``model``.
"""

from __future__ import annotations

import re
from collections.abc import Iterator
from pathlib import Path
from typing import Any

from ctxengine.importers._build import LogBuilder, iter_jsonl, load_json
from ctxengine.importers._chat import title_from
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
        for event in _events(path, data, report):
            reader.event(event)
        return _session(path, bytes_digest(data), reader, report)


def _events(path: Path, data: bytes, report: ImportReport) -> Iterator[Event]:
    """The events of the file ``path`` whose bytes are ``data``, with their locations."""
    if data[:4096].lstrip()[:1] == b"[":
        for i, ev in enumerate(load_json(path, report, data)):
            yield Event(ev, {"json_path": f"$[{i}]"})
        return
    document = load_json(path, report, data) if _single_document(data) else None
    if isinstance(document, dict):
        yield from _run(document, lambda i: {"json_path": f"$.history[{i}]"}, None)
        return
    for line, obj in iter_jsonl(path, report, data):
        if isinstance(obj.get("history"), list):
            yield from _run(obj, lambda _i, n=line: {"line": n}, _run_name(obj, line))
        else:
            yield Event(obj, {"line": line})


def _single_document(data: bytes) -> bool:
    """True when the file holds one JSON value over several lines (a pretty-printed object),
    not one object per line."""
    end = data.find(b"\n")
    return (data if end < 0 else data[:end]).strip() == b"{"


def _run(obj: dict[str, Any], where: Any, run: str | None) -> Iterator[Event]:
    for i, ev in enumerate(obj["history"]):
        yield Event(ev, where(i), run)


def _session(path: Path, sid: str, reader: EventReader, report: ImportReport) -> ImportedSession:
    builder = LogBuilder(sid)
    ids: list[str] = []
    for body, created, meta in reader.bodies:
        extra = dict(meta)
        if isinstance(body, CompactionRecord):
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
        entry = builder.add(body, created_at=created, meta=extra)
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
