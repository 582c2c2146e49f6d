"""Cursor agent transcripts (``~/.cursor/projects/<path>/agent-transcripts/<uuid>/<uuid>.jsonl``,
sub-agents in ``<uuid>/subagents/<child>.jsonl``).

Every line is ``{"role": "user" | "assistant", "message": {"content": [blocks]}}`` with
Anthropic-shaped blocks. Mapping, in file order:

* ``user`` lines: ``tool_result`` blocks become one ``tool`` message, the other blocks (text,
  images) a following user message.
* ``assistant`` lines: one assistant message: ``thinking`` as reasoning, ``text``, and
  ``tool_use`` as tool calls. Cursor records no call ids: a call gets ``"cursor_<line>_<n>"``
  (or its ``id`` when a later version writes one), and a result answers the call its
  ``tool_use_id`` names when that call exists, else the oldest unanswered call (its own
  ``tool_use_id`` is kept in the result's meta); neither is drift.
* Lines with a ``type`` and no ``role`` (``turn_ended``) are turn bookkeeping, ignored.
* The session id is the file name; a file in a ``subagents`` folder is a sub-agent: its id is
  ``<parent>:<name>`` and ``meta["parent_session_id"]`` names the parent transcript (the
  ``<folder>.jsonl`` next to the ``subagents`` folder); a parent lists its sub-agents in
  ``meta["subagents"]``.

Tolerated drift (counted in the report, refused in strict mode): ``null`` tool input
(``{}``), a ``tool_result`` whose ``content`` is one block object, a result with no call left
to answer, unknown roles, record types and blocks, and what
:func:`~ctxengine.importers._lines.iter_objects` tolerates.
"""

from __future__ import annotations

import re
from pathlib import Path
from typing import Any

from ctxengine.importers._build import LogBuilder
from ctxengine.importers._line_blocks import LineBlocks, assistant_message
from ctxengine.importers._lines import first_line, iter_objects
from ctxengine.importers._log import source_digest
from ctxengine.importers._parts import title_of
from ctxengine.importers.base import ImportedSession, start_report
from ctxengine.importers.report import ImportReport

_FIRST = re.compile(rb'\A\{\s*"role"\s*:\s*"(?:user|assistant)"\s*,\s*"message"\s*:\s*\{')
#: Record types without a role that Cursor writes between turns.
_IGNORED_TYPES = frozenset({"turn_ended", "turn_started"})


class CursorImporter:
    """Importer for Cursor agent transcript JSONL (see the module docstring)."""

    name = "cursor"
    label = "a Cursor agent transcript"

    def sniff(self, path: Path, head: bytes) -> bool:
        """True when the first line is ``{"role": "user"|"assistant", "message": {…``."""
        return _FIRST.match(first_line(head)) is not None

    def read(self, path: Path, report: ImportReport | None = None) -> ImportedSession:
        """Parse ``path``, counting what is skipped, repaired and ignored in ``report``.

        Raises:
            TranscriptError: unreadable file; in strict mode the first skipped or repaired
                item, naming its line.
        """
        report = start_report(path, report)
        sid, meta = _identity(path)
        reader = _Reader(report, sid)
        for line, obj, raw in iter_objects(path, report):
            reader.feed(line, obj, raw)
        entries = tuple(reader.log.entries)
        return ImportedSession(sid, self.name, str(path), entries, title_of(entries), meta, report)


def _identity(path: Path) -> tuple[str, dict[str, Any]]:
    """The session id and the parent/sub-agent links recorded by the folder layout."""
    meta: dict[str, Any] = {}
    if path.parent.name == "subagents":
        folder = path.parent.parent
        parent = folder / f"{folder.name}.jsonl"
        if not parent.is_file():
            others = sorted(p for p in folder.glob("*.jsonl") if p.is_file())
            parent = others[0] if len(others) == 1 else parent
        if parent.is_file():
            meta["parent_session_id"] = parent.stem
            return f"{parent.stem}:{path.stem}", meta
        return path.stem, meta
    children = path.parent / "subagents"
    if children.is_dir():
        names = sorted(p.stem for p in children.glob("*.jsonl"))
        if names:
            meta["subagents"] = names
    return path.stem, meta


class _Reader:
    """Converts the lines of one transcript into log entries as it reads them. Entry ids are
    those of :class:`~ctxengine.importers._log.Rows` for messages keyed by their line: the
    line's digest chained to the previous entry."""

    def __init__(self, report: ImportReport, session_id: str) -> None:
        self.report = report
        self.log = LogBuilder(session_id)
        self.blocks = LineBlocks(report, "cursor", ids_recorded=False)

    def feed(self, line: int, obj: dict[str, Any], raw: bytes) -> None:
        role = obj.get("role")
        if role is None and isinstance(obj.get("type"), str):
            kind = obj["type"]
            if kind in _IGNORED_TYPES:
                self.report.ignore(kind, line=line)
            else:
                self.report.skip(
                    f"record:{kind}",
                    f"expected a message line with `role` user or assistant, got type {kind!r}",
                    line=line,
                )
            return
        if role != "assistant" and role != "user":
            self.report.skip(
                f"role {role}" if isinstance(role, str) else "line without role",
                "expected `role` user or assistant",
                line=line,
            )
            return
        message = obj.get("message")
        content = message.get("content") if type(message) is dict else None
        if type(content) is str:
            content = [{"type": "text", "text": content}]
        if type(content) is not list:
            self.report.skip(
                f"{role} without content",
                "expected a `message` object with a `content` list",
                line=line,
            )
            return
        if role == "assistant":
            parts = self.blocks.assistant(line, content)
            if parts:
                self.log.add_keyed(assistant_message(parts), source_digest(raw))
            else:
                self.report.skip("empty assistant message", "expected content blocks", line=line)
        else:
            messages = self.blocks.user(line, content)
            if messages:
                digest = source_digest(raw)
                for msg in messages:
                    self.log.add_keyed(msg, digest)


IMPORTER = CursorImporter()
