"""Checks shared by the drift tests of every importer: a file is read tolerantly with an
exact report, and refused at the same place under ``strict``."""

from __future__ import annotations

from pathlib import Path

import pytest

from ctxengine.errors import TranscriptError
from ctxengine.importers import read_transcript
from ctxengine.importers.base import ImportedSession


def tolerated(path: Path, format: str, summary: str, strict: str) -> ImportedSession:
    """Import ``path`` as ``format``: the report's summary must be ``summary``; a strict
    import must raise ``TranscriptError`` whose text is ``f"{path}{strict}"`` (``strict``
    starts with ``":<line>: "`` or ``" at <json path>: "``). Returns the tolerant session."""
    session = read_transcript(path, format)
    found = session.report.summary()
    assert found == summary, f"summary {found!r} != {summary!r}"
    with pytest.raises(TranscriptError) as info:
        read_transcript(path, format, strict=True)
    error = str(info.value)
    assert error == f"{path}{strict}", f"strict error {error!r} != {path}{strict!r}"
    return session


#: A tool-result text with a lone high surrogate escape (a string cut inside an emoji), as
#: it appears in the JSON text of a line.
LONE_SURROGATE_JSON = "ok \\ud83d"
#: What that text becomes.
LONE_SURROGATE_TEXT = "ok \ufffd"
#: The strict error of a lone surrogate (after ``path:line: ``).
LONE_SURROGATE_ERROR = (
    "expected paired UTF-16 surrogate escapes (a lone surrogate such as \\ud83d found)"
)
