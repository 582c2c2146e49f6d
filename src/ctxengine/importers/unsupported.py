"""Agent formats ctxengine recognises but does not import yet.

Sniffing finds them, so ``read_transcript`` can say which format a file is instead of
"unrecognised"; :meth:`UnsupportedImporter.read` always raises
:class:`~ctxengine.errors.UnsupportedFormatError` naming it. Recognised:

* Files refused on purpose, the reason in the name (:mod:`ctxengine.importers._refusals`).
"""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path

from ctxengine.errors import TranscriptError, UnsupportedFormatError
from ctxengine.importers import _refusals as refused
from ctxengine.importers._lines import after_bad_lines
from ctxengine.importers.base import SNIFF_BYTES, ImportedSession
from ctxengine.importers.report import ImportReport

#: (format name, detector) in checking order.
FORMATS: tuple[tuple[str, Callable[[Path, bytes], bool]], ...] = (
    (refused.ANTIGRAVITY_STEPS, refused.antigravity_steps),
    (refused.ANTIGRAVITY_BRAIN, refused.antigravity_brain),
    (refused.GROK_SUMMARY, refused.grok_summary),
    (refused.KIMI_STATE, refused.kimi_state),
    (refused.CODEX_EXEC, refused.codex_exec),
    (refused.CLAUDE_SUBAGENT_META, refused.claude_subagent_meta),
    (refused.OPENCODE_STORAGE_FILE, refused.opencode_storage_file),
    (refused.REQUEST_LOG, refused.request_log),
)


def which(path: Path, head: bytes) -> str | None:
    """The name of the not-yet-supported format ``head`` is in, or ``None``."""
    for name, detect in FORMATS:
        if detect(path, head):
            return name
    return None


class UnsupportedImporter:
    """Recognises the formats listed in the module docstring and refuses to import them."""

    name = "unsupported"
    label = "a format without an importer"

    def sniff(self, path: Path, head: bytes) -> bool:
        """True when ``head`` is one of the recognised, not yet importable formats."""
        return which(path, head) is not None

    def read(self, path: Path, report: ImportReport | None = None) -> ImportedSession:
        """Always raises.

        Raises:
            UnsupportedFormatError: the file is in a recognised format (named in the error).
            TranscriptError: the file cannot be read or is in none of these formats.
        """
        try:
            with path.open("rb") as fh:
                head = fh.read(SNIFF_BYTES)
        except OSError as exc:
            raise TranscriptError(str(path), f"cannot read file: {exc.strerror}") from exc
        name = which(path, head)
        later = after_bad_lines(head) if name is None else None
        if later is not None:  # torn or foreign first lines, as format detection reads them
            name = which(path, later)
        if name is None:
            known = ", ".join(n for n, _ in FORMATS)
            expected = (
                f"expected one of: {known}" if known else "expected a listed format (none is)"
            )
            raise TranscriptError(str(path), expected)
        raise UnsupportedFormatError(str(path), name)


IMPORTER = UnsupportedImporter()
