"""Recall over a chain of sessions: a session handed off from another (and that one from
another …) searches every ancestor's history up to its hand-off point, then its own, as one
log; each hit names the session its entry belongs to.

A :class:`ChainIndex` is a :class:`~ctxengine.recall.search.HistoryIndex` fed the chain's
entries oldest session first (so a newest-first search lists the newest session's hits
first, then its parent's, …), with the same budget rule across the whole chain. Its hits are
:class:`SessionHit` values: a :class:`~ctxengine.recall.search.RecallHit` with the
``session_id`` of the entry (``Entry.session_id``), whose :meth:`SessionHit.label` starts
with ``session <id>``.

Entry numbers are per session: a hit's ``seq`` is the entry's position in its own session,
and a query's ``first_seq``/``last_seq`` (the tool's ``from_seq``/``to_seq``) select by that
number in every session of the chain (``first_seq=5, last_seq=9`` gives entries 5 to 9 of
each session, each hit naming its session).

Pure: no I/O.
"""

from __future__ import annotations

from collections.abc import Collection, Sequence
from dataclasses import dataclass, fields, replace
from typing import Any

from ctxengine.model import Entry
from ctxengine.tokens.base import Estimator

from .search import HistoryIndex, RecallHit, RecallQuery, RecallResult


@dataclass(frozen=True, slots=True)
class SessionHit(RecallHit):
    """A :class:`~ctxengine.recall.search.RecallHit` of a chain of sessions.

    Attributes:
        session_id: the session the hit's entry belongs to (its ``seq`` numbers the entry
            in that session).
    """

    session_id: str = ""

    def label(self) -> str:
        """``session codex20 · e41 · seq 41 · tool result of Bash``."""
        return f"session {self.session_id} · {RecallHit.label(self)}"


class ChainIndex(HistoryIndex):
    """A :class:`~ctxengine.recall.search.HistoryIndex` over the entries of several
    sessions, given oldest session first; its hits are :class:`SessionHit` values (see the
    module docstring).

    Args:
        estimator: sizes the excerpts, in tokens.
    """

    def __init__(self, estimator: Estimator) -> None:
        super().__init__(estimator)
        #: (entry id, seq) → session id of every entry indexed (a later session's entry
        #: wins should two sessions hold the same id at the same seq).
        self._sessions: dict[tuple[str, int], str] = {}

    def update(self, entries: Sequence[Entry], hidden: Collection[int] = ()) -> int:
        """Index ``entries[entries_seen:]`` as :meth:`HistoryIndex.update
        <ctxengine.recall.search.HistoryIndex.update>` does, noting each one's session."""
        for i in range(self.entries_seen, len(entries)):
            if i not in hidden:
                e = entries[i]
                self._sessions[(e.id, e.seq)] = e.session_id
        return super().update(entries, hidden)

    def search(self, query: RecallQuery, **options: Any) -> RecallResult:
        """:meth:`HistoryIndex.search <ctxengine.recall.search.HistoryIndex.search>` (same
        options, same errors), each hit a :class:`SessionHit`."""
        result = super().search(query, **options)
        hits = tuple(self._named(h) for h in result.hits)
        return replace(result, hits=hits)

    def _named(self, hit: RecallHit) -> SessionHit:
        values = {f.name: getattr(hit, f.name) for f in fields(hit)}
        values["session_id"] = self._sessions.get((hit.entry_id, hit.seq), "")
        return SessionHit(**values)
