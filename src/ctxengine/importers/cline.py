"""Cline task folders (``<VS Code global storage>/saoudrizwan.claude-dev/tasks/<taskId>/``):
the task's ``api_conversation_history.json``, with ``ui_messages.json`` and
``task_metadata.json`` read from beside it. Mapping: :mod:`ctxengine.importers._task_folder`.
"""

from __future__ import annotations

from pathlib import Path

from ctxengine.importers._task_folder import history_of, is_roo, read_task
from ctxengine.importers.base import ImportedSession, start_report
from ctxengine.importers.report import ImportReport


class ClineImporter:
    """Importer for Cline ``api_conversation_history.json`` (see the module docstring)."""

    name = "cline"
    label = "a Cline task"

    def sniff(self, path: Path, head: bytes) -> bool:
        """True for a file named ``api_conversation_history.json`` holding a JSON list, or a
        task folder holding one, that is not a Roo Code task."""
        found = history_of(path)
        if found is None:
            return False
        path, head = found
        return head.lstrip().startswith(b"[") and not is_roo(path, head)

    def read(self, path: Path, report: ImportReport | None = None) -> ImportedSession:
        """Import the task (see :func:`~ctxengine.importers._task_folder.read_task`); a
        task folder is read from its ``api_conversation_history.json``.

        Raises:
            TranscriptError: invalid JSON or a malformed block field (JSON path); in strict
                mode the first skip or repair.
        """
        found = history_of(path)
        history = found[0] if found is not None else path
        return read_task(history, start_report(history, report), self.name)


IMPORTER = ClineImporter()
