"""Re-importing a transcript into a session that already holds an earlier import of it.

A live agent keeps writing its transcript, so a file imported twice is usually the same file,
grown. What the earlier import stored must then be the start of what the file gives now, and
only the rest is new. It is not when the earlier import read entries whose source was still
being written: a Claude Code reply logged one content block per line (its later blocks came
after the import), a Codex reply whose usage count was logged after it, a compaction record
whose summary line came later. Those stored entries differ from the entries the file gives
now (another id, or the same id with another body).

History is append-only (DESIGN invariant 1), so the stored entries are never changed.
:func:`plan_import` finds the first imported entry that differs; the stored imported entries
from there on (the *divergent tail*) are withdrawn by a
:class:`~ctxengine.model.SupersedeRecord` appended to the log, followed by the file's entries
from that point. Every projection, replay and breakdown honours the record
(:func:`~ctxengine.model.current_entries`), so the session reads as a fresh import of the
file would, and the withdrawn entries stay stored. Nothing is duplicated in the current log
and nothing is lost from the store.

Which stored entries came from imports: every batch an import commits records the seqs it
stored (table ``imported_seqs``); entries appended by the engine (compaction, prune and pin
records, agent turns) lie outside them.

Ids: an entry appended after a supersede record may carry the id of a withdrawn entry (a
tool result whose reply grew keeps its own id). Stored ids are unique per session, so it is
stored as ``"<id>~2"`` (``~3`` …) with its import id in ``meta["import_id"]``; references
to it (the next entry's ``parent_id``, a compaction's ``first_kept_id``) are rewritten the
same way, and later imports compare by import id.

Refused (``StoreError``, nothing stored): a divergent tail with messages the engine appended
after it (agent turns written on top of the imported session; the file's new entries cannot
be placed before them). Compaction, prune and pin records on top are kept: they stay in the
log, and the file's entries follow them.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, replace
from datetime import UTC, datetime
from typing import Any

import orjson

from ctxengine.errors import StoreError
from ctxengine.model import CompactionRecord, Entry, SupersedeRecord
from ctxengine.model.codec import body_hash, body_json

#: Entry meta key holding the id an import gave an entry stored under another id.
IMPORT_ID = "import_id"
#: ``SupersedeRecord.reason`` of the records a re-import appends.
REASON = "re-import: the transcript no longer matches what an earlier import stored from it"


@dataclass(frozen=True, slots=True)
class StoredEntry:
    """A stored entry as the comparison needs it.

    Attributes:
        seq / id / kind: as stored.
        body: the stored body bytes (orjson of ``codec.body_to_dict``).
        meta: the stored entry meta.
        engine_made: the entry is not from an import.
    """

    seq: int
    id: str
    kind: str
    body: bytes
    meta: Mapping[str, Any]
    engine_made: bool

    @property
    def import_id(self) -> str:
        """The id the import gave this entry."""
        value = self.meta.get(IMPORT_ID)
        return value if isinstance(value, str) else self.id


@dataclass(frozen=True, slots=True)
class ImportPlan:
    """What to store for one import into a session that has entries.

    Attributes:
        matched: entries of the import already stored (the start of the import).
        withdrawn: ids of the stored entries to withdraw (the divergent tail), in log order.
        divergent_seq: seq of the first withdrawn entry, or ``None``.
        fresh: the entries to append after the supersede record (when ``withdrawn``), with
            stored ids, parents and references; seqs not set yet.
    """

    matched: int
    withdrawn: tuple[str, ...]
    divergent_seq: int | None
    fresh: list[Entry]


def body_bytes(entry: Entry) -> bytes:
    """The body bytes the store keeps for ``entry``."""
    return body_json(entry.body)


def plan_import(stored: Sequence[StoredEntry], new: Sequence[Entry], where: str) -> ImportPlan:
    """Compare the stored log of a session with a new import of it (see the module
    docstring). The stored entries not withdrawn are walked in order beside the import:
    an entry equal to the import's next one (same import id, same body) is matched; an
    engine-made entry that is not is passed over (a compaction appended between two
    imports); the first imported entry that is not starts the divergent tail. An import
    that ends inside the stored entries (an older copy of the file) adds nothing.

    Args:
        stored: every stored entry of the session, in seq order.
        new: the entries the import gives (unique ids).
        where: the store and operation, for errors.

    Raises:
        StoreError: the divergent tail has engine-appended messages after it.
    """
    withdrawn_before = {
        i
        for s in stored
        if s.kind == "supersede"
        for i in orjson.loads(s.body).get("entry_ids", ())
    }
    current = [s for s in stored if s.kind != "supersede" and s.id not in withdrawn_before]
    ids = {s.import_id: s.id for s in current if s.import_id != s.id}
    at = matched = 0
    while at < len(current) and matched < len(new):
        s, n = current[at], new[matched]
        if s.import_id == n.id and s.body == body_bytes(_as_stored(n, ids)):
            matched += 1
        elif not s.engine_made:
            break
        at += 1
    divergent = [s for s in current[at:] if not s.engine_made]
    if matched == len(new) or not divergent:
        return ImportPlan(matched, (), None, _stored_ids(new[matched:], stored, ids))
    first = divergent[0]
    on_top = next(
        (s for s in stored if s.seq > first.seq and s.engine_made and s.kind == "message"), None
    )
    if on_top is not None:
        raise StoreError(
            f"{where}: the transcript no longer matches the entries an earlier import stored "
            f"from seq {first.seq} on (entry {first.import_id!r}: it was still being "
            f"written), and messages were appended to the session after them (seq "
            f"{on_top.seq}); nothing was imported"
        )
    for s in divergent:
        ids.pop(s.import_id, None)
    withdrawn = tuple(s.id for s in divergent)
    return ImportPlan(matched, withdrawn, first.seq, _stored_ids(new[matched:], stored, ids))


def supersede_entry(
    session_id: str, withdrawn: tuple[str, ...], parent: str | None, seq: int
) -> Entry:
    """The supersede record entry appended at ``seq`` after ``parent`` (content-hash id)."""
    record = SupersedeRecord(withdrawn, REASON)
    return Entry(
        id=body_hash(record, parent),
        session_id=session_id,
        seq=seq,
        body=record,
        parent_id=parent,
        created_at=datetime.now(UTC).isoformat(timespec="milliseconds"),
    )


def _stored_ids(
    tail: Sequence[Entry], stored: Sequence[StoredEntry], ids: dict[str, str]
) -> list[Entry]:
    """``tail`` with ids free in the session (``"<id>~2"`` … when taken, the import id in
    meta), parents and compaction ``first_kept_id`` rewritten to stored ids."""
    taken = {s.id for s in stored}
    out: list[Entry] = []
    for entry in tail:
        own = entry.id
        if own in taken:
            n = 2
            while f"{own}~{n}" in taken:
                n += 1
            ids[own] = f"{own}~{n}"
        else:
            ids.pop(own, None)
        stored_entry = _as_stored(entry, ids)
        taken.add(stored_entry.id)
        out.append(stored_entry)
    return out


def _as_stored(entry: Entry, ids: Mapping[str, str]) -> Entry:
    """``entry`` with its id, parent and compaction ``first_kept_id`` and ``snapshot_id``
    mapped by ``ids`` (import id → stored id); an entry whose id changes keeps its import id
    in meta."""
    if not ids:
        return entry
    body = entry.body
    if isinstance(body, CompactionRecord):
        kept, seen = body.first_kept_id, body.snapshot_id
        if kept is not None and kept in ids:
            body = replace(body, first_kept_id=ids[kept])
        if seen is not None and seen in ids:
            body = replace(body, snapshot_id=ids[seen])
    own = ids.get(entry.id, entry.id)
    parent = entry.parent_id
    meta = entry.meta if own == entry.id else {**entry.meta, IMPORT_ID: entry.id}
    return replace(
        entry,
        id=own,
        parent_id=ids.get(parent, parent) if parent is not None else None,
        body=body,
        meta=meta,
    )


def stored_entries(
    rows: Sequence[tuple[int, str, str, bytes, bytes | None]],
    imported: Sequence[tuple[int, int]],
) -> list[StoredEntry]:
    """:class:`StoredEntry` values of ``(seq, id, kind, body, meta)`` rows; ``imported``: the
    ``(first_seq, last_seq)`` spans imports stored (the other entries are engine-made)."""
    spans = sorted(imported)
    out: list[StoredEntry] = []
    at = 0
    for seq, entry_id, kind, body, meta in rows:
        while at < len(spans) and spans[at][1] < seq:
            at += 1
        inside = at < len(spans) and spans[at][0] <= seq
        out.append(
            StoredEntry(seq, entry_id, kind, body, orjson.loads(meta) if meta else {}, not inside)
        )
    return out
