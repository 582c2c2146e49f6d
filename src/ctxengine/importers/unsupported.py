"""Agent formats ctxengine recognises but does not import yet.

Sniffing finds them, so ``read_transcript`` can say which format a file is instead of
"unrecognised"; :meth:`UnsupportedImporter.read` always raises
:class:`~ctxengine.errors.UnsupportedFormatError` naming it. Recognised:

* OpenHands event streams: a JSON list (or JSONL) of events with ``source`` and
  ``action`` / ``observation``, and evaluation outputs whose lines hold a ``history`` of
  such events (``instance_id`` / ``issue_type`` …).
* Gemini CLI ``/chat share`` Markdown (``## USER`` / ``## MODEL`` sections).
* aider chat history Markdown (``.aider.chat.history.md``, ``# aider chat started at``).
* OpenCode storage JSON (``ses_…`` session, ``msg_…`` message and ``prt_…`` part files, and
  ``opencode export`` documents).
* Files refused on purpose, the reason in the name (:mod:`ctxengine.importers._refusals`).
"""

from __future__ import annotations

import re
from collections.abc import Callable
from pathlib import Path

from ctxengine.errors import TranscriptError, UnsupportedFormatError
from ctxengine.importers import _refusals as refused
from ctxengine.importers.base import SNIFF_BYTES, ImportedSession
from ctxengine.importers.report import ImportReport

OPENHANDS = "OpenHands events"
GEMINI_CLI = "Gemini CLI chat share (Markdown)"
AIDER = "aider chat history (Markdown)"
OPENCODE = "OpenCode storage JSON"

_OH_SOURCE = re.compile(rb'"source"\s*:\s*"(?:agent|user|environment)"')
_OH_KIND = re.compile(
    rb'"(?:action|observation)"\s*:\s*"(?:message|run|run_ipython|read|write|edit|browse|'
    rb"browse_interactive|think|finish|reject|delegate|recall|system|condensation|"
    rb'change_agent_state|agent_state_changed|error|null|mcp|task_tracking)"'
)
_OH_EVAL = re.compile(rb'"(?:instance_id|issue_type)"\s*:')
_GEMINI_USER = re.compile(rb"^(?:\xf0\x9f\xa7\x91\xe2\x80\x8d\xf0\x9f\x92\xbb )?## USER\s*$", re.M)
_GEMINI_MODEL = re.compile(rb"^(?:\xe2\x9c\xa8 )?## MODEL\s*$", re.M)
_AIDER = re.compile(rb"^# aider chat started at ", re.M)
_OPENCODE_ID = re.compile(rb'"id"\s*:\s*"(?:ses|msg|prt)_[0-9A-Za-z]+"')
_OPENCODE_KEYS = re.compile(rb'"(?:sessionID|messageID|projectID)"\s*:')


def _openhands(path: Path, head: bytes) -> bool:
    start = head.lstrip()[:1]
    if start not in (b"[", b"{") or _OH_KIND.search(head) is None:
        return False
    if _OH_SOURCE.search(head) is not None:
        return True
    return start == b"{" and b'"history"' in head and _OH_EVAL.search(head) is not None


def _gemini(path: Path, head: bytes) -> bool:
    return _GEMINI_USER.search(head) is not None and (
        _GEMINI_MODEL.search(head) is not None or head.lstrip().startswith(b"\xf0\x9f\xa7\x91")
    )


def _aider(path: Path, head: bytes) -> bool:
    return path.name.endswith(".aider.chat.history.md") or _AIDER.search(head) is not None


def _opencode(path: Path, head: bytes) -> bool:
    return (
        head.lstrip().startswith(b"{")
        and _OPENCODE_ID.search(head) is not None
        and _OPENCODE_KEYS.search(head) is not None
    )


#: (format name, detector) in checking order.
FORMATS: tuple[tuple[str, Callable[[Path, bytes], bool]], ...] = (
    (OPENHANDS, _openhands),
    (GEMINI_CLI, _gemini),
    (AIDER, _aider),
    (OPENCODE, _opencode),
    (refused.ANTIGRAVITY_STEPS, refused.antigravity_steps),
    (refused.ANTIGRAVITY_BRAIN, refused.antigravity_brain),
    (refused.GROK_SUMMARY, refused.grok_summary),
    (refused.KIMI_STATE, refused.kimi_state),
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
        if name is None:
            known = ", ".join(n for n, _ in FORMATS)
            raise TranscriptError(str(path), f"expected one of: {known}")
        raise UnsupportedFormatError(str(path), name)


IMPORTER = UnsupportedImporter()
