"""Cline task folders (``<VS Code global storage>/saoudrizwan.claude-dev/tasks/<taskId>/``):
the task's ``api_conversation_history.json``, with ``ui_messages.json`` and
``task_metadata.json`` read from beside it. Mapping: :mod:`ctxengine.importers._task_folder`.
"""

from __future__ import annotations

from pathlib import Path

from ctxengine.importers._task_folder import HISTORY, is_roo, read_task
from ctxengine.importers.base import ImportedSession, start_report
from ctxengine.importers.report import ImportReport


class ClineImporter:
    """Importer for Cline ``api_conversation_history.json`` (see the module docstring)."""

    name = "cline"
    label = "a Cline task"

    def sniff(self, path: Path, head: bytes) -> bool:
        """True for a file named ``api_conversation_history.json`` holding a JSON list that is
        not a Roo Code task."""
        return path.name == HISTORY and head.lstrip().startswith(b"[") and not is_roo(path, head)

    def read(self, path: Path, report: ImportReport | None = None) -> ImportedSession:
        """Import the task (see :func:`~ctxengine.importers._task_folder.read_task`).

        Raises:
            TranscriptError: invalid JSON or a malformed block field (JSON path); in strict
                mode the first skip or repair.
        """
        return read_task(path, start_report(path, report), self.name)


IMPORTER = ClineImporter()
