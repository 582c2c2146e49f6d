"""The ``Importer`` protocol, the imported-session value, and the tolerance framework every
importer shares.

Tolerant by default, strict on request
--------------------------------------
Agents change their transcript formats often (new record kinds, a tool call without an id,
a structured tool output, a line still being written). An importer therefore reads what it
understands and accounts for the rest in one :class:`~ctxengine.importers.report.ImportReport`
(``read(path, report)``), with three verbs:

``report.skip(kind, expected, line=…)``
    an item not understood and left out: an unknown record kind, a line that is not JSON
    (a partial last line of a live session), a content block without its required fields.
``report.repair(kind, expected, line=…)``
    an item made usable: a tool call without an id gets a deterministic one and is paired
    with its result by the agent's own linkage; ``null`` arguments become ``{}``; a
    structured tool output becomes parts; a lone UTF-16 surrogate becomes U+FFFD.
``report.ignore(kind, line=…)``
    a record understood and deliberately not imported because it never reaches the model
    (UI events, cost and mode records, file-history snapshots).

``kind`` is a short stable name (``"record:foo"``, ``"tool_use without id"``) and ``expected``
is what a strict import says (``"expected a string `id` on a tool_use block"``). The report
keeps per kind the count and the first line (or JSON path). With ``strict=True`` the first
``skip`` or ``repair`` raises ``TranscriptError(path, expected, line=…)`` instead, so a strict
import fails fast at ``file:line`` exactly as importers did before they were tolerant.

:func:`~ctxengine.importers.registry.read_transcript` makes the report, hands it to the
importer and refuses a file only when nothing usable is in it (no message), naming the format
it looked like (``"looks like a Codex rollout, but …"``). The CLI prints
:meth:`~ctxengine.importers.report.ImportReport.summary` as one line and stores the report
with the session.

Writing an importer
-------------------
A module with an ``IMPORTER`` object having ``name`` (what ``--format`` takes), ``label``
(what the file is, for messages: ``"a Codex rollout"``), ``sniff(path, head)`` and
``read(path, report=None)``; list the module in ``registry._MODULES``. JSONL readers feed
:func:`~ctxengine.importers._build.read_jsonl` (which already skips invalid and partial lines
and repairs surrogates); JSON readers call :func:`~ctxengine.importers._build.load_json`.
Return the session with ``report`` set to the report used (:func:`start_report` makes one
when the caller passed none).
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Protocol

from ctxengine.importers.report import ImportReport
from ctxengine.model import Entry

#: Bytes read from the start of a file for sniffing.
SNIFF_BYTES = 64 * 1024


def _empty_report() -> ImportReport:
    return ImportReport("")


@dataclass(frozen=True, slots=True)
class ImportedSession:
    """One session read from a transcript file.

    Attributes:
        session_id: stable id: the source's session id when it has one, else a content hash
            of the file, or of its first record where a file grows by appended records
            (OpenHands), so importing the same file twice yields the same id.
        format: importer name (``"claude-code"``, ``"codex"`` …).
        source_path: the file as given.
        entries: the session log, ``seq`` 0..n-1, parent-linked, in source order (a store
            gives new entries the seqs that continue its stored log instead).
        title: a short human label (first user request, cut to 80 chars) or ``None``.
        meta: source facts we keep (model, cwd, version …).
        report: what was skipped, repaired and ignored while reading (not compared).
    """

    session_id: str
    format: str
    source_path: str
    entries: tuple[Entry, ...]
    title: str | None = None
    meta: Mapping[str, Any] = field(default_factory=dict)
    report: ImportReport = field(default_factory=_empty_report, compare=False)


def start_report(path: Path, report: ImportReport | None) -> ImportReport:
    """``report``, or a new tolerant report for ``path`` when it is ``None``."""
    return report if report is not None else ImportReport(path)


class Importer(Protocol):
    """Reads one transcript format.

    Attributes:
        name: format name used by ``--format`` and stored with the session.
        label: what a file of this format is, for messages (``"a Claude Code session"``).
    """

    name: str
    label: str

    def sniff(self, path: Path, head: bytes) -> bool:
        """True when ``head`` (the first :data:`SNIFF_BYTES` of ``path``) is this format."""
        ...

    def read(self, path: Path, report: ImportReport | None = None) -> ImportedSession:
        """Parse the whole file, accounting in ``report`` (a new tolerant one when ``None``)
        for what was skipped, repaired and ignored; the session's ``report`` is that report.

        Raises:
            TranscriptError: unreadable input; in strict mode the first skipped or repaired
                item (naming the file, line or JSON path and what was expected).
        """
        ...
