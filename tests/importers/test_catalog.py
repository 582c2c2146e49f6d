"""The README format table: generated from the importers' ignore tables, naming every
registered importer and every file refused on purpose, and covering what the corpus imports
actually skip."""

from __future__ import annotations

from fnmatch import fnmatchcase
from pathlib import Path

import pytest

from corpus import CORPUS, require_corpus
from ctxengine.errors import TranscriptError
from ctxengine.importers import _refusals as refused
from ctxengine.importers import formats, read_transcript, unsupported
from ctxengine.importers.catalog import END, ROWS, START, markdown_table

README = Path(__file__).resolve().parents[2] / "README.md"


def test_the_readme_holds_the_generated_table() -> None:
    text = README.read_text(encoding="utf-8")
    start, end = text.index(START) + len(START) + 1, text.index(END)
    assert text[start:end] == markdown_table() + "\n"


def test_every_registered_importer_has_one_row() -> None:
    named = [r.format for r in ROWS if r.format is not None]
    assert sorted(named) == sorted(formats())
    assert len(formats()) == 22


def test_every_refusal_of_an_agent_file_has_a_row() -> None:
    """OpenCode storage pieces are named in the OpenCode row; a model-request log is no
    agent's file."""
    rows = {r.reads for r in ROWS if r.format is None}
    kinds = {name for name, _ in unsupported.FORMATS}
    assert rows == kinds - {refused.OPENCODE_STORAGE_FILE, refused.REQUEST_LOG}
    assert "Antigravity" in {r.agent for r in ROWS if r.format is None}


def test_the_claude_code_row_lists_its_ignore_table() -> None:
    [row] = [r for r in ROWS if r.format == "claude-code"]
    assert {"progress", "file-history-snapshot", "api-request", "atis-latch"} <= set(row.skipped)
    assert "| `progress`" not in markdown_table()  # lists are joined with ", "
    assert "`queue-operation`, `summary`" in markdown_table()


def corpus_files() -> list[str]:
    if not CORPUS.exists():
        return ["(corpus missing)"]
    return sorted(
        str(p.relative_to(CORPUS))
        for p in CORPUS.rglob("*")
        if p.is_file() and p.name not in ("SOURCES.md", "LICENSE")
    )


@pytest.mark.parametrize("rel", corpus_files())
def test_what_an_import_skips_is_in_its_row(rel: str) -> None:
    path = require_corpus(*rel.split("/"))
    try:
        session = read_transcript(path)
    except TranscriptError:
        return  # refused: named by the refusal tests
    [row] = [r for r in ROWS if r.format == session.format]
    ignored = session.report.counts("ignored")
    missing = [k for k in ignored if not any(fnmatchcase(k, p) for p in row.skipped)]
    assert missing == [], (rel, session.format)
