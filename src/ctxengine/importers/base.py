"""The ``Importer`` protocol and the imported-session value."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Protocol

from ctxengine.model import Entry

#: Bytes read from the start of a file for sniffing.
SNIFF_BYTES = 64 * 1024


@dataclass(frozen=True, slots=True)
class ImportedSession:
    """One session read from a transcript file.

    Attributes:
        session_id: stable id: the source's session id when it has one, else a content hash
            of the file (so importing the same file twice yields the same id).
        format: importer name (``"claude-code"``, ``"codex"`` …).
        source_path: the file as given.
        entries: the session log, ``seq`` 0..n-1, parent-linked, in source order (a store
            gives new entries the seqs that continue its stored log instead).
        title: a short human label (first user request, cut to 80 chars) or ``None``.
        meta: source facts we keep (model, cwd, version …).
    """

    session_id: str
    format: str
    source_path: str
    entries: tuple[Entry, ...]
    title: str | None = None
    meta: Mapping[str, Any] = field(default_factory=dict)


class Importer(Protocol):
    """Reads one transcript format.

    Attributes:
        name: format name used by ``--format`` and stored with the session.
    """

    name: str

    def sniff(self, path: Path, head: bytes) -> bool:
        """True when ``head`` (the first :data:`SNIFF_BYTES` of ``path``) is this format."""
        ...

    def read(self, path: Path) -> ImportedSession:
        """Parse the whole file.

        Raises:
            TranscriptError: malformed input, naming the file, line or JSON path and what
                was expected.
        """
        ...
