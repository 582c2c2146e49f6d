"""Helpers for Markdown transcripts read whole (aider, Gemini CLI chat shares): decoding
their text, and the session id of a file already read."""

from __future__ import annotations

import hashlib

from ctxengine.importers.report import ImportReport


def decode_text(raw: bytes, report: ImportReport, *, first_line: int = 1) -> str:
    """``raw`` (whose first line is line ``first_line`` of its file) as UTF-8 text. Each line
    holding bytes that are not UTF-8 is decoded with U+FFFD in their place and counted
    (``report.repair("invalid UTF-8", …)`` at its 1-based line).

    Raises:
        TranscriptError: in strict mode, at the first such line.
    """
    try:
        return raw.decode("utf-8")
    except UnicodeDecodeError:
        pass
    lines = raw.split(b"\n")
    for number, line in enumerate(lines, start=first_line):
        try:
            line.decode("utf-8")
        except UnicodeDecodeError:
            report.repair(
                "invalid UTF-8", "expected UTF-8 text (bytes that are not UTF-8 found)", line=number
            )
    return raw.decode("utf-8", errors="replace")


def bytes_digest(data: bytes) -> str:
    """:func:`~ctxengine.importers._build.file_digest` of a file whose bytes are ``data``,
    without reading it again."""
    return "f:" + hashlib.blake2b(data, digest_size=8).hexdigest()
