"""Roo Code (and Kilo Code) task folders
(``<VS Code global storage>/rooveterinaryinc.roo-cline/tasks/<taskId>/``): the task's
``api_conversation_history.json``, with ``ui_messages.json`` and ``task_metadata.json`` read
from beside it. Its non-destructive condense summaries (``isSummary``) and sliding-window
truncation markers (``isTruncationMarker``) become compaction records. Mapping:
:mod:`ctxengine.importers._task_folder`.
"""

from __future__ import annotations

from pathlib import Path

from ctxengine.importers._task_folder import HISTORY, is_roo, read_task
from ctxengine.importers.base import ImportedSession, start_report
from ctxengine.importers.report import ImportReport


class RooCodeImporter:
    """Importer for Roo Code ``api_conversation_history.json`` (see the module docstring)."""

    name = "roo-code"
    label = "a Roo Code task"

    def sniff(self, path: Path, head: bytes) -> bool:
        """True for ``api_conversation_history.json`` under Roo's (or Kilo's) extension folder
        or with Roo's condense / truncation keys."""
        return path.name == HISTORY and head.lstrip().startswith(b"[") and is_roo(path, head)

    def read(self, path: Path, report: ImportReport | None = None) -> ImportedSession:
        """Import the task (see :func:`~ctxengine.importers._task_folder.read_task`).

        Raises:
            TranscriptError: invalid JSON or a malformed block field (JSON path); in strict
                mode the first skip or repair.
        """
        return read_task(path, start_report(path, report), self.name)


IMPORTER = RooCodeImporter()
