"""Claude Code headless output: ``claude -p --output-format stream-json --verbose``.

One JSON object per line: ``system`` records (``init`` with the session's ``cwd``,
``model`` and ``claude_code_version``; ``compact_boundary``; progress and task events),
``assistant`` and ``user`` records holding the API messages themselves (``message``: the
same ``role`` / ``content`` blocks as a session file, one content block per assistant line),
``stream_event`` records with ``--include-partial-messages``, and a closing ``result``. The
sub-agent's turns are interleaved, marked by ``parent_tool_use_id`` (the parent's call that
started it).

It holds the conversation as the model saw it from its first reply on, so it is read with the
session-file mapping of :mod:`ctxengine.importers.claude_code`, after renaming what differs:
``session_id`` is ``sessionId``; a record with a ``parent_tool_use_id`` is a sidechain line
(the sub-agent's, left out and counted as ``sidechain``); ``compact_metadata`` (snake case:
``pre_tokens``, ``preserved_segment.head_uuid``) is ``compactMetadata``; the ``isSynthetic``
user record right after a compact boundary is its summary (``isCompactSummary``). ``init``
gives ``meta["cwd"]``, ``["model"]`` and ``["version"]``; the other ``system`` records,
``stream_event`` and ``result`` never reach the model (ignored, counted).

Not in it: the user's prompt (the first user message, unless the run was started with
``--input-format stream-json --replay-user-messages``), the system prompt and the
attachments Claude Code adds to a request (date, git status, reminders). The session file
Claude Code writes for the same run (``~/.claude/projects/<dir>/<session_id>.jsonl``) has
them.
"""

from __future__ import annotations

import re
from pathlib import Path
from typing import Any

from ctxengine.importers._build import read_jsonl
from ctxengine.importers._parts import opt_dict, opt_str
from ctxengine.importers.base import ImportedSession, start_report
from ctxengine.importers.claude_code import Reader
from ctxengine.importers.report import ImportReport

_FIRST = re.compile(rb'\A\s*\{\s*"type"\s*:\s*"(?:system|assistant|user|result|stream_event)"')
#: Record types that never reach the model.
IGNORED_RECORDS = frozenset({"result", "stream_event"})


class ClaudeCodeStreamImporter:
    """Importer for Claude Code ``--output-format stream-json`` output (see the module
    docstring)."""

    name = "claude-code-stream"
    label = "a Claude Code stream-json output"

    def sniff(self, path: Path, head: bytes) -> bool:
        """True for JSONL whose first record is a stream-json record type carrying
        ``session_id`` with a ``subtype`` (``system``) or a ``parent_tool_use_id``
        (messages)."""
        first = head.split(b"\n", 1)[0]
        return (
            _FIRST.match(first) is not None
            and b'"session_id"' in first
            and (b'"subtype"' in first or b'"parent_tool_use_id"' in first)
        )

    def read(self, path: Path, report: ImportReport | None = None) -> ImportedSession:
        """Parse ``path``, counting what is skipped, repaired and ignored in ``report``.

        Raises:
            TranscriptError: unreadable file; in strict mode the first skipped or repaired
                item, naming its line.
        """
        report = start_report(path, report)
        session = read_jsonl(path, _Adapter(path, report), report)
        return ImportedSession(
            session.session_id,
            self.name,
            session.source_path,
            session.entries,
            session.title,
            session.meta,
            report,
        )


class _Adapter:
    """Renames stream-json records into session-file lines for the Claude Code reader."""

    def __init__(self, path: Path, report: ImportReport) -> None:
        self.reader = Reader(path, report)
        self.report = report
        self.init: dict[str, Any] = {}
        self.after_boundary = False

    def feed(self, line: int, obj: dict[str, Any]) -> None:
        """Take the record on 1-based ``line``."""
        kind = obj.get("type")
        if kind in IGNORED_RECORDS:
            self.report.ignore(str(kind), line=line)
            return
        record = dict(obj)
        if isinstance(record.get("session_id"), str):
            record["sessionId"] = record.pop("session_id")
        if kind == "system":
            self._system(line, record)
            return
        if kind in ("user", "assistant"):
            record["isSidechain"] = record.get("parent_tool_use_id") is not None
            if kind == "user" and self.after_boundary and record.get("isSynthetic"):
                record["isCompactSummary"] = True
            self.after_boundary = False
            record.update({k: v for k, v in self.init.items() if k not in record})
        self.reader.feed(line, record)

    def _system(self, line: int, record: dict[str, Any]) -> None:
        sub = record.get("subtype")
        if sub == "init":
            self.init = {
                k: record[theirs]
                for theirs, k in (("cwd", "cwd"), ("claude_code_version", "version"))
                if isinstance(record.get(theirs), str)
            }
            if isinstance(record.get("model"), str):
                self.reader.info["model"] = record["model"]
            self.report.ignore("system:init", line=line)
            return
        if sub == "compact_boundary":
            meta = opt_dict(record, "compact_metadata")
            segment = opt_dict(meta, "preserved_segment")
            compact: dict[str, Any] = {"preTokens": meta.get("pre_tokens", 0)}
            if opt_str(meta, "trigger"):
                compact["trigger"] = meta["trigger"]
            if opt_str(segment, "head_uuid"):
                compact["preservedSegment"] = {"headUuid": segment["head_uuid"]}
            record["compactMetadata"] = compact
            self.after_boundary = True
        self.reader.feed(line, record)

    def finish(self) -> ImportedSession:
        """The session read so far."""
        return self.reader.finish()


IMPORTER = ClaudeCodeStreamImporter()
