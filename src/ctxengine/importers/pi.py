"""pi coding-agent session JSONL (``~/.pi/agent/sessions/<dir>/<time>_<id>.jsonl``).

The first line is the ``session`` header. Version 1 files (no ``version`` key) are linear and
their entries carry no ids; from version 2 every entry has ``id`` / ``parentId`` and the file
is a tree (a user can go back and branch). Mapping:

* Which entries: like pi's own ``buildSessionContext``, the active branch is the path from
  the last entry of the file back to the root; entries on abandoned branches are not
  imported (their count is ``meta["off_branch"]``). Version 1 files are imported in file
  order. Entry ids are pi's ``id`` (content hashes for version 1).
* ``message`` entries by role: ``user``, ``assistant`` (text, thinking with its signature kept
  byte-exact, ``redacted`` thinking, tool calls, usage, ``stopReason`` normalised,
  ``errorMessage`` in meta), ``toolResult`` (one ``tool`` message each), ``bashExecution``
  (a command the user ran with ``!``): pi sends it to the model as a user message, so it
  becomes a user message with the same text pi builds (``bashExecutionToText``), marked
  ``meta["synthetic"] = "bashExecution"``; ``excludeFromContext`` ones (``!!``) are skipped.
  ``custom`` / ``hookMessage`` messages and ``custom_message`` entries become user messages
  (pi ``convertToLlm``); ``branch_summary`` entries become a user message with the summary.
* ``compaction`` entries become :class:`CompactionRecord` (``summarizer`` and ``reason``
  ``"imported"``, ``tokens_before`` = ``tokensBefore``); ``first_kept_id`` is the entry made
  from ``firstKeptEntryId`` (version 1: ``firstKeptEntryIndex``, an index into the file's
  entries counting the header), or from the first message after it when that entry is not a
  message.
* ``model_change``, ``thinking_level_change``, ``custom``, ``label`` and ``session_info``
  entries are metadata, ignored and counted in ``meta["skipped"]``; other entry types are
  skipped.

Tolerated drift (counted in the report, refused in strict mode): a version 2 entry without
``id`` or a ``parentId`` cycle (the branch stops there), a message that is not an object or
has an unknown role, a block that is not text/image/thinking/toolCall, a ``toolCall`` without
``id`` (``"call_gen_<line>_<n>"``) or with ``null`` arguments (``{}``), a ``toolResult``
without ``toolCallId`` (paired with the oldest unanswered call), and what
:func:`~ctxengine.importers._build.iter_jsonl` tolerates. A file without its header line is
refused.
"""

from __future__ import annotations

import re
from collections.abc import Iterable
from pathlib import Path
from typing import Any

from ctxengine.errors import TranscriptError
from ctxengine.importers._build import CallIds, LogBuilder, iter_jsonl
from ctxengine.importers._lines import first_line
from ctxengine.importers._parts import SYNTHETIC, opt_int, opt_str, title_of
from ctxengine.importers._pi_messages import PiMessages
from ctxengine.importers.base import ImportedSession, start_report
from ctxengine.importers.report import ImportReport
from ctxengine.model import CompactionRecord, Message, TextPart

#: The header's type, with or without spaces around the colon.
_SESSION_TYPE = re.compile(rb'"type" *: *"session"')
_HEADER_KEYS = ("cwd", "provider", "modelId", "thinkingLevel", "branchedFrom", "parentSession")
_METADATA = frozenset({"model_change", "thinking_level_change", "custom", "label", "session_info"})

Row = tuple[int, dict[str, Any]]


class PiImporter:
    """Importer for pi session JSONL (see the module docstring for the mapping)."""

    name = "pi"
    label = "a pi session"

    def sniff(self, path: Path, head: bytes) -> bool:
        """True when the first line is a pi ``{"type": "session", "id": …}`` header."""
        first = first_line(head)
        return (
            first.startswith(b"{")
            and _SESSION_TYPE.search(first) is not None
            and b'"id"' in first
            and b'"sessionId"' not in first
        )

    def read(self, path: Path, report: ImportReport | None = None) -> ImportedSession:
        """Parse ``path``, counting what is skipped, repaired and ignored in ``report``.

        Raises:
            TranscriptError: unreadable file or no header line; in strict mode the first
                skipped or repaired item, naming its line.
        """
        report = start_report(path, report)
        rows = iter_jsonl(path, report)
        first = next(rows, None)
        if first is None or first[1].get("type") != "session" or not opt_str(first[1], "id"):
            raise TranscriptError(
                str(path),
                "expected a pi session header line with `type` session and an `id`",
                line=first[0] if first else 1,
            )
        header = first[1]
        version = header.get("version", 1)
        if isinstance(version, int) and version >= 2:
            entries = _with_ids(list(rows), report)
            branch = _active_branch(entries, report)
            return _Reader(path, header, [first, *entries], branch, True, report).run()
        # Version 1 is linear: each line is converted as it is read (none is kept).
        return _Reader(path, header, None, rows, False, report).run()


def _with_ids(rows: list[Row], report: ImportReport) -> list[Row]:
    """The rows that have a string ``id`` (the others are skipped)."""
    kept: list[Row] = []
    for line, obj in rows:
        if opt_str(obj, "id") is None:
            report.skip("entry without id", "expected a string `id` on a session entry", line=line)
        else:
            kept.append((line, obj))
    return kept


def _active_branch(rows: list[Row], report: ImportReport) -> list[Row]:
    """The rows from the root to the last entry, following ``parentId`` (pi's default leaf);
    a ``parentId`` cycle ends the walk (skipped)."""
    by_id: dict[str, Row] = {obj["id"]: (line, obj) for line, obj in rows}
    branch: list[Row] = []
    seen: set[str] = set()
    current = rows[-1] if rows else None
    while current is not None:
        branch.append(current)
        entry_id = current[1]["id"]
        seen.add(entry_id)
        parent = opt_str(current[1], "parentId")
        if parent in seen:
            report.skip(
                "parentId cycle",
                f"expected `parentId` links without a cycle (at {parent})",
                line=current[0],
            )
            break
        current = by_id.get(parent) if parent else None
    branch.reverse()
    return branch


class _Reader:
    """Converts the entries of a session file.

    Args:
        rows: a tree's rows (the header and every entry with an id), ``None`` for a linear
            (version 1) file.
        branch: the rows imported, in order (a linear file's rows after the header, read as
            they are converted).
    """

    def __init__(
        self,
        path: Path,
        header: dict[str, Any],
        rows: list[Row] | None,
        branch: Iterable[Row],
        tree: bool,
        report: ImportReport,
    ) -> None:
        self.path = path
        self.header = header
        self.rows = rows
        self.branch = branch
        self.tree = tree
        self.session_id: str = header["id"]
        self.builder = LogBuilder(self.session_id)
        self.report = report
        self.messages = PiMessages(path, CallIds(), report)
        #: id of the message entry made from each branch position (``None``: none).
        self.made: list[str | None] = []

    def run(self) -> ImportedSession:
        made, entry = self.made, self._entry
        for line, obj in self.branch:
            made.append(entry(line, obj))
        meta: dict[str, Any] = {k: self.header[k] for k in _HEADER_KEYS if k in self.header}
        meta["version"] = self.header.get("version", 1)
        off = len(self.rows) - 1 - len(made) if self.rows is not None else 0
        if off:
            meta["off_branch"] = off
        skipped = {
            k: n for k, n in self.report.counts("ignored").items() if not k.startswith("block:")
        }
        if skipped:
            meta["skipped"] = skipped
        entries = tuple(self.builder.entries)
        return ImportedSession(
            self.session_id, "pi", str(self.path), entries, title_of(entries), meta, self.report
        )

    def _entry(self, line: int, obj: dict[str, Any]) -> str | None:
        kind = obj.get("type")
        if not isinstance(kind, str):
            self.report.skip("entry without type", "expected a string `type`", line=line)
            return None
        source_id = opt_str(obj, "id")
        created = opt_str(obj, "timestamp")
        body: Message | CompactionRecord | None = None
        if kind == "message":
            body = self.messages.convert(line, obj.get("message"))
        elif kind == "custom_message":
            body = self.messages.custom(line, obj)
        elif kind == "branch_summary":
            text = opt_str(obj, "summary") or ""
            body = Message("user", (TextPart(text),), meta={SYNTHETIC: "branch_summary"})
        elif kind == "compaction":
            body = self._compaction(line, obj)
        elif kind in _METADATA:
            self.report.ignore(kind, line=line)
        else:
            self.report.skip(
                f"entry:{kind}",
                f"expected a pi entry type (message, compaction, model_change …), got {kind!r}",
                line=line,
            )
        if body is None:
            return None
        entry = self.builder.add(body, source_id=source_id, created_at=created)
        return entry.id if isinstance(body, Message) else None

    def _compaction(self, line: int, obj: dict[str, Any]) -> CompactionRecord:
        here = len(self.made)
        start: int | None = None
        if self.tree:
            assert isinstance(self.branch, list)
            target = opt_str(obj, "firstKeptEntryId")
            start = next(
                (i for i, (_, o) in enumerate(self.branch[:here]) if o.get("id") == target), None
            )
        elif isinstance(obj.get("firstKeptEntryIndex"), int):
            # Row ``index`` of a linear file (the header is row 0) is branch position
            # ``index - 1``; an index past this entry keeps nothing before it.
            index = obj["firstKeptEntryIndex"]
            if index > 0:
                start = index - 1
        first_kept = None
        if start is not None:
            first_kept = next((m for m in self.made[start:here] if m is not None), None)
        return CompactionRecord(
            summary=opt_str(obj, "summary") or "",
            first_kept_id=first_kept,
            tokens_before=opt_int(obj, "tokensBefore"),
            tokens_after=0,
            policy="pi",
            summarizer="imported",
            reason="imported",
        )


IMPORTER = PiImporter()
