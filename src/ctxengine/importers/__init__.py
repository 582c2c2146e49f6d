"""Transcript importers, registered in one place.

``detect(path)`` sniffs the format; ``read_transcript(path, format=None)`` imports it;
``formats()`` lists the names ``format`` accepts (``ctxengine`` reads back an export).
Formats that ctxengine recognises but does not import yet raise ``UnsupportedFormatError``.
"""

from __future__ import annotations

from ctxengine.importers.registry import (
    IMPORTERS,
    detect,
    formats,
    get_importer,
    read_transcript,
)

__all__ = ["IMPORTERS", "detect", "formats", "get_importer", "read_transcript"]
