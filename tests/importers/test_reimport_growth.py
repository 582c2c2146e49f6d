"""A live session imported while the agent was writing it, then imported again once it grew:
the stored session reads as a fresh import of the grown file (same current entries, same
projection), with exact counts, for Claude Code (a reply spread over lines sharing its
``message.id``) and Codex (a reply grouping consecutive calls, its usage logged after it)."""

from __future__ import annotations

import contextlib
from dataclasses import replace
from pathlib import Path

import pytest

from corpus import require_corpus
from ctxengine.engine import Session
from ctxengine.errors import TranscriptError
from ctxengine.importers import read_transcript
from ctxengine.importers._build import LogBuilder
from ctxengine.importers.base import ImportedSession
from ctxengine.model import Entry, SupersedeRecord, current_entries
from ctxengine.model.codec import body_to_dict
from ctxengine.stores import SQLiteStore

WINDOW = 200_000


def cut(source: Path, dest: Path, lines: int, extra_bytes: int = 0) -> Path:
    """The first ``lines`` lines of ``source`` (and ``extra_bytes`` of the next one: a line
    still being written) written to ``dest``."""
    data = source.read_bytes().splitlines(keepends=True)
    dest.write_bytes(b"".join(data[:lines]) + data[lines][:extra_bytes])
    return dest


def grow(store: SQLiteStore, source: Path, live: Path, lines: int, extra: int = 0) -> list[int]:
    """Import the first ``lines`` lines of ``source`` as ``live``, then the whole file under
    the same name; ``[added, added, skipped, superseded]``."""
    first = store.import_session(read_transcript(cut(source, live, lines, extra)))
    live.write_bytes(source.read_bytes())
    second = store.import_session(read_transcript(live))
    return [first.added, second.added, second.skipped, second.superseded]


def same_log(stored: list[Entry], fresh: tuple[Entry, ...]) -> None:
    """The current stored log holds the fresh import's entries: same import ids (an id
    taken by a withdrawn entry is stored as ``<id>~2``), same bodies."""
    current = current_entries(stored)
    assert [e.meta.get("import_id", e.id) for e in current] == [e.id for e in fresh]
    assert [body_to_dict(e.body) for e in current] == [body_to_dict(e.body) for e in fresh]


def projected(entries: list[Entry] | tuple[Entry, ...]) -> list[dict[str, object]]:
    ctx = Session(WINDOW, entries=entries).project()
    return [body_to_dict(m) for m in ctx.messages]


class TestClaudeCode:
    def test_a_reply_cut_after_its_thinking_line(self, tmp_path: Path) -> None:
        source = require_corpus("claude-code", "spotter-short.jsonl")
        with SQLiteStore(tmp_path / "ctx.db") as store:
            assert grow(store, source, tmp_path / "live.jsonl", 6) == [2, 4, 1, 1]
            (info,) = store.sessions()
            stored = store.entries(info.id)
        fresh = read_transcript(source)
        assert len(fresh.entries) == 5
        assert len(stored) == 7
        [record] = [e.body for e in stored if isinstance(e.body, SupersedeRecord)]
        reply = fresh.entries[1]
        # lines 5 and 6 hold the reply's first two blocks; lines 7 and 8 its two calls
        assert record.entry_ids == (stored[1].id,)
        assert stored[1].id.split("..")[0] == reply.id.split("..")[0]
        assert stored[1].id != reply.id
        same_log(stored, fresh.entries)
        assert projected(stored) == projected(fresh.entries)
        message = reply.message
        assert message is not None and len(message.tool_calls) == 2

    def test_a_reply_cut_inside_a_line_still_being_written(self, tmp_path: Path) -> None:
        source = require_corpus("claude-code", "spotter-short.jsonl")
        with SQLiteStore(tmp_path / "ctx.db") as store:
            assert grow(store, source, tmp_path / "live.jsonl", 6, 300) == [2, 4, 1, 1]
            stored = store.entries(store.sessions()[0].id)
        same_log(stored, read_transcript(source).entries)

    @pytest.mark.parametrize("name", ["spotter-short.jsonl", "spotter-tool-heavy.jsonl"])
    def test_every_cut_between_lines_reads_as_a_fresh_import(
        self, tmp_path: Path, name: str
    ) -> None:
        source = require_corpus("claude-code", name)
        fresh = read_transcript(source)
        total = len(source.read_bytes().splitlines())
        for lines in range(1, total):
            with SQLiteStore(tmp_path / f"ctx{lines}.db") as store:
                live = tmp_path / "live.jsonl"
                cut(source, live, lines)
                # a head without any message is refused: then the whole file is the first
                with contextlib.suppress(TranscriptError):
                    store.import_session(read_transcript(live))
                live.write_bytes(source.read_bytes())
                store.import_session(read_transcript(live))
                again = store.import_session(read_transcript(live))
                stored = store.entries(fresh.session_id)
            assert (again.added, again.skipped) == (0, len(fresh.entries)), lines
            same_log(stored, fresh.entries)
            assert projected(stored) == projected(fresh.entries), lines


class TestCodex:
    def test_a_reply_cut_between_its_two_calls(self, tmp_path: Path) -> None:
        source = require_corpus("live-agents", "codex-0.169.0", "rollout.jsonl")
        with SQLiteStore(tmp_path / "ctx.db") as store:
            assert grow(store, source, tmp_path / "live.jsonl", 18) == [7, 45, 6, 1]
            stored = store.entries(store.sessions()[0].id)
        fresh = read_transcript(source)
        assert (len(fresh.entries), len(stored)) == (51, 53)
        [record] = [e for e in stored if isinstance(e.body, SupersedeRecord)]
        assert record.seq == 7
        withdrawn = stored[6].message
        assert withdrawn is not None and len(withdrawn.tool_calls) == 1
        grown = current_entries(stored)[6].message
        assert grown is not None and len(grown.tool_calls) == 2
        same_log(stored, fresh.entries)
        assert projected(stored) == projected(fresh.entries)

    def test_every_fifth_cut_reads_as_a_fresh_import(self, tmp_path: Path) -> None:
        source = require_corpus("live-agents", "codex-0.169.0", "rollout.jsonl")
        fresh = read_transcript(source)
        fresh_projection = projected(fresh.entries)
        total = len(source.read_bytes().splitlines())
        superseded: list[int] = []
        for lines in range(5, total, 5):
            with SQLiteStore(tmp_path / f"ctx{lines}.db") as store:
                counts = grow(store, source, tmp_path / "live.jsonl", lines, 40)
                stored = store.entries(fresh.session_id)
            superseded.append(lines) if counts[3] else None
            same_log(stored, fresh.entries)
            assert projected(stored) == fresh_projection, lines
        # lines 55 and 140 end with a reply whose token_count is logged after it (57, 142):
        # the reply stored without usage is superseded by the one with it
        assert superseded == [55, 140]


def body_hash_ids(session: ImportedSession) -> ImportedSession:
    """``session`` with the ids an import hashing each entry's body gave its entries
    (:meth:`LogBuilder.add`), as importers without source ids did before they hashed the
    source lines."""
    builder = LogBuilder(session.session_id)
    for e in session.entries:
        builder.add(e.body, created_at=e.created_at, meta=e.meta)
    return replace(session, entries=tuple(builder.entries))


class TestIdSchemeChange:
    def test_a_codex_session_stored_with_body_hash_ids_reads_as_a_fresh_import(
        self, tmp_path: Path
    ) -> None:
        source = require_corpus("codex", "codex-cpolar-connect-2025-09-16-a.jsonl")
        fresh = read_transcript(source)
        old = body_hash_ids(fresh)
        n = len(fresh.entries)
        assert n == 115
        assert not {e.id for e in old.entries} & {e.id for e in fresh.entries}
        with SQLiteStore(tmp_path / "ctx.db") as store:
            first = store.import_session(old)
            second = store.import_session(read_transcript(source))
            third = store.import_session(read_transcript(source))
            stored = store.entries(fresh.session_id)
            sessions = store.sessions()
        assert (first.added, first.superseded) == (n, 0)
        assert (second.added, second.skipped, second.superseded) == (n, 0, n)
        assert (third.added, third.skipped, third.superseded) == (0, n, 0)
        assert [s.id for s in sessions] == [fresh.session_id]
        assert len(stored) == 2 * n + 1
        [record] = [e.body for e in stored if isinstance(e.body, SupersedeRecord)]
        assert record.entry_ids == tuple(e.id for e in old.entries)
        current = current_entries(stored)
        assert len(current) == n
        assert len({e.id for e in current}) == n
        same_log(stored, fresh.entries)
        assert projected(stored) == projected(fresh.entries)
