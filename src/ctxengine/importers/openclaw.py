"""OpenClaw sessions (``~/.openclaw/agents/<agent>/sessions/<id>.jsonl``).

OpenClaw runs on pi's agent core and writes pi's session format (a ``session`` header, then
``message``, ``compaction``, ``model_change``, ``custom_message`` … entries): the mapping is
:mod:`ctxengine.importers.pi`'s. The difference is the order: pi follows the ``parentId``
tree from the last entry, while OpenClaw logs are read as the linear transcript they are
whenever a ``parentId`` names no earlier entry (OpenClaw links a tool result to the tool call
it answers and the first entry to the session header). A file whose every ``parentId`` names
an earlier entry is a tree and is read as pi reads it.
"""

from __future__ import annotations

import dataclasses
from pathlib import Path

from ctxengine.errors import TranscriptError
from ctxengine.importers._build import iter_jsonl
from ctxengine.importers._parts import opt_str
from ctxengine.importers.base import ImportedSession, start_report
from ctxengine.importers.pi import IMPORTER as PI
from ctxengine.importers.pi import Row, _active_branch, _Reader, _with_ids
from ctxengine.importers.report import ImportReport


class OpenClawImporter:
    """Importer for OpenClaw session JSONL (see the module docstring)."""

    name = "openclaw"
    label = "an OpenClaw session"

    def sniff(self, path: Path, head: bytes) -> bool:
        """True for a pi-format session (a ``session`` header line) under ``.openclaw`` or
        naming OpenClaw in its first lines."""
        if not PI.sniff(path, head):
            return False
        in_folder = any(p.lower() == ".openclaw" for p in path.parts)
        # ASCII case-insensitive, as a bytes regex with re.I, but not tried at every position
        return in_folder or b"openclaw" in head[:4096].lower()

    def read(self, path: Path, report: ImportReport | None = None) -> ImportedSession:
        """Parse ``path`` (pi's mapping, OpenClaw's order).

        Raises:
            TranscriptError: unreadable file or no header line; in strict mode the first
                skipped or repaired item, naming its line.
        """
        report = start_report(path, report)
        rows = list(iter_jsonl(path, report))
        if not rows or rows[0][1].get("type") != "session" or not opt_str(rows[0][1], "id"):
            raise TranscriptError(
                str(path),
                "expected a session header line with `type` session and an `id`",
                line=rows[0][0] if rows else 1,
            )
        header = rows[0][1]
        entries = _with_ids(rows[1:], report)
        branch = _active_branch(entries, report) if _is_tree(entries) else entries
        session = _Reader(path, header, [rows[0], *entries], branch, True, report).run()
        return dataclasses.replace(session, format=self.name)


def _is_tree(rows: list[Row]) -> bool:
    """True when every ``parentId`` is null or names an earlier entry."""
    seen: set[str] = set()
    for _, obj in rows:
        parent = obj.get("parentId")
        if parent is not None and parent not in seen:
            return False
        seen.add(obj["id"])
    return True


IMPORTER = OpenClawImporter()
