"""Kimi CLI and Kimi Code sessions (MoonshotAI).

Two files are read:

* Kimi CLI ``context.jsonl`` (``~/.kimi/sessions/<work dir hash>/<session id>/``; rotated
  copies ``context_<n>.jsonl``): kosong messages plus ``_system_prompt``, ``_checkpoint`` and
  ``_usage`` records; mapping in :mod:`ctxengine.importers._kimi_context`.
* Kimi Code's wire log (``sessions/<work dir>/session_<id>/agents/<agent>/``): typed records
  (``context.append_message``, ``context.append_loop_event``, ``context.apply_compaction`` …);
  mapping in :mod:`ctxengine.importers._kimi_wire`.

Session id: the session folder (``session_<id>`` → ``<id>``, or the folder holding
``context.jsonl``), else a hash of the file. A Kimi Code agent other than ``main`` is a
sub-agent: its id is ``<session id>:<agent>``, and ``meta["parent_agent_id"]`` comes from the
session's ``state.json`` (``agents.<agent>.parentAgentId``) when it is there. ``state.json``
(or ``<stem>.state.json`` beside the file) also gives the title and the work directory.
"""

from __future__ import annotations

import re
from pathlib import Path
from typing import Any

import orjson

from ctxengine.errors import TranscriptError
from ctxengine.importers._kimi_context import ContextReader
from ctxengine.importers._kimi_wire import WireReader
from ctxengine.importers._lines import first_line, iter_objects
from ctxengine.importers._parts import opt_dict, opt_str, title_of
from ctxengine.importers._text import bytes_digest
from ctxengine.importers.base import ImportedSession, start_report
from ctxengine.importers.report import ImportReport

_CONTEXT_RECORD = re.compile(rb'"role"\s*:\s*"_(?:checkpoint|usage|system_prompt)"')
_CONTEXT_NAME = re.compile(r"\Acontext(?:_\d+)?\.jsonl\Z")
_FIRST_ROLE = re.compile(rb'\A\{\s*"role"\s*:\s*"(?:_[a-z_]+|user|system|assistant|tool)"')
_WIRE = re.compile(
    rb'"type"\s*:\s*"(?:context\.append_message|context\.append_loop_event|'
    rb'context\.apply_compaction)"'
)
_WIRE_FIRST = re.compile(rb'\A\{\s*"type"\s*:\s*"metadata"\s*,\s*"protocol_version"')


class KimiImporter:
    """Importer for Kimi CLI ``context.jsonl`` and Kimi Code wire logs."""

    name = "kimi"
    label = "a Kimi session"

    def sniff(self, path: Path, head: bytes) -> bool:
        """True for a Kimi CLI context file (kosong message lines with ``_checkpoint`` /
        ``_usage`` / ``_system_prompt`` records, or named ``context.jsonl``) or a Kimi Code wire
        log (a ``metadata`` line with ``protocol_version``, or ``context.*`` records)."""
        first = first_line(head)
        if _FIRST_ROLE.match(first) and b'"message"' not in first:
            return _CONTEXT_RECORD.search(head) is not None or bool(_CONTEXT_NAME.match(path.name))
        return first.startswith(b"{") and (
            _WIRE_FIRST.match(first) is not None or _WIRE.search(head) is not None
        )

    def read(self, path: Path, report: ImportReport | None = None) -> ImportedSession:
        """Parse ``path``, counting what is skipped, repaired and ignored in ``report``.

        Raises:
            TranscriptError: unreadable file; in strict mode the first skipped or repaired
                item, naming its line.
        """
        report = start_report(path, report)
        try:
            data = path.read_bytes()
        except OSError as exc:
            raise TranscriptError(str(path), f"cannot read file: {exc.strerror}") from exc
        context: ContextReader | None = None
        wire: WireReader | None = None
        for line, obj, raw in iter_objects(path, report, data):
            if context is None and wire is None:
                if "role" in obj and "type" not in obj:
                    context = ContextReader(report)
                else:
                    wire = WireReader(report)
            if context is not None:
                context.feed(line, obj, raw)
            elif wire is not None:
                wire.feed(line, obj, raw)
        sid, meta = _identity(path)
        if wire is not None:
            wire.finish()
            rows = wire.rows
            meta.update(wire.info)
            if wire.model:
                meta["model"] = wire.model
            if wire.subagents:
                meta["subagents"] = dict(wire.subagents)
            meta["kind"] = "kimi-code"
        else:
            rows = context.rows if context is not None else ContextReader(report).rows
            meta["kind"] = "kimi-cli"
        session_id = sid or bytes_digest(data)
        entries = rows.build(session_id)
        title = meta.pop("title", None) or title_of(entries)
        return ImportedSession(session_id, self.name, str(path), entries, title, meta, report)


def _identity(path: Path) -> tuple[str | None, dict[str, Any]]:
    """The session id and meta the folder layout records (``None`` when it records none)."""
    meta: dict[str, Any] = {}
    resolved = path.resolve()
    parts = resolved.parts
    agent: str | None = None
    session_dir: Path | None = None
    if len(parts) >= 4 and parts[-3] == "agents":
        agent = parts[-2]
        session_dir = resolved.parents[2]
    elif _CONTEXT_NAME.match(path.name):
        session_dir = resolved.parent
    state = _state(path, session_dir)
    if state:
        if opt_str(state, "title"):
            meta["title"] = state["title"]
        if opt_str(state, "workDir"):
            meta["cwd"] = state["workDir"]
    sid: str | None = None
    if session_dir is not None:
        sid = session_dir.name.removeprefix("session_")
    if agent is not None and agent != "main":
        meta["agent_id"] = agent
        parent = opt_str(opt_dict(opt_dict(state, "agents"), agent), "parentAgentId")
        if parent:
            meta["parent_agent_id"] = parent
        if sid:
            meta["parent_session_id"] = sid
            sid = f"{sid}:{agent}"
    return sid, meta


def _state(path: Path, session_dir: Path | None) -> dict[str, Any]:
    """The session's ``state.json`` (or ``<stem>.state.json`` beside ``path``), or ``{}``."""
    for candidate in (
        path.with_name(f"{path.stem}.state.json"),
        *((session_dir / "state.json",) if session_dir is not None else ()),
    ):
        try:
            data = orjson.loads(candidate.read_bytes())
        except (OSError, orjson.JSONDecodeError):
            continue
        if isinstance(data, dict):
            return data
    return {}


IMPORTER = KimiImporter()
