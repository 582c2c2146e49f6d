"""Copying a session between stores: what a store that may already hold an earlier copy of
it must add (:meth:`ctxengine.stores.base.Store.restore_session`). Pure: the stores read what
they hold and write what this returns, in one transaction."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

from ctxengine.errors import StoreError
from ctxengine.model import Entry
from ctxengine.stores.base import ImportRecord, SessionCopy


@dataclass(frozen=True, slots=True)
class RestorePlan:
    """What to store of a copy.

    Attributes:
        entries: the copy's entries the store lacks (they continue its log).
        imports: the copy's import records the store lacks (the newest ones).
        spans: the copy's imported spans the store lacks.
    """

    entries: tuple[Entry, ...]
    imports: tuple[ImportRecord, ...]
    spans: tuple[tuple[int, int], ...]


def plan_restore(
    copy: SessionCopy,
    stored: Sequence[Entry],
    stored_imports: int,
    stored_spans: Sequence[tuple[int, int]],
    where: str,
) -> RestorePlan:
    """What the store must add of ``copy`` when it holds the entries ``stored``,
    ``stored_imports`` import records and the spans ``stored_spans`` of the session.

    Raises:
        StoreError: ``stored`` is not a start of ``copy.entries`` (the session in this store
            was changed apart from the source), naming the first seq that differs.
    """
    for have, want in zip(stored, copy.entries, strict=False):
        if have != want:
            raise StoreError(
                f"{where}: the stored session differs from the source at seq {have.seq} "
                f"(entry {have.id!r} here, {want.id!r} there); nothing was copied"
            )
    if len(stored) > len(copy.entries):
        extra = stored[len(copy.entries)]
        raise StoreError(
            f"{where}: the stored session holds entries the source lacks (from seq "
            f"{extra.seq}, entry {extra.id!r}); nothing was copied"
        )
    spans = set(stored_spans)
    return RestorePlan(
        tuple(copy.entries[len(stored) :]),
        tuple(copy.imports[stored_imports:]),
        tuple(s for s in copy.imported_spans if s not in spans),
    )


def clip_spans(spans: Sequence[tuple[int, int]], last_seq: int) -> tuple[tuple[int, int], ...]:
    """``spans`` in seq order, without seqs after ``last_seq``."""
    return tuple((a, min(b, last_seq)) for a, b in sorted(spans) if a <= last_seq)
