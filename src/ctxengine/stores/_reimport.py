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

The same holds for an *edited copy* of the transcript (a line removed or changed in the
middle, or another version of the session under the same id): it differs from the stored
history before its end, so it is stored as the session's new current version, the stored
entries from the first difference on withdrawn (``change == "edited"``, and the record's
reason says so). The log is read in seq order, so the file's entries after the difference
are stored again even where they equal withdrawn ones; the entries before it are shared. A
divergent tail holding a real user message, or more than one assistant message, is never
described as one still being written.

Every version stays stored, so importing again a file that an earlier version holds whole
(the history as it was right before a supersede record, or a start of it) adds nothing
(``change == "earlier"``): importing the same two versions in turn does not grow the store.
The current history stays the version imported last that added entries.

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
from ctxengine.model import CompactionRecord, Entry, Message, SupersedeRecord
from ctxengine.model.codec import body_from_dict, body_hash, body_json
from ctxengine.model.roles import is_real_user_message

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


#: :attr:`ImportPlan.change` values (also :attr:`~ctxengine.stores.base.ImportResult.change`):
#: ``"none"``: the file starts with the session's current history (or is all of it, or an
#: older copy of it): only its new entries are added; ``"grown"``: stored entries from the
#: end of an earlier import were read while the agent was still writing them (no real user
#: message among them) and are superseded; ``"edited"``: the file differs from the current
#: history before its end (a line removed or changed, another version): the stored entries
#: from there on are superseded and the file's follow, so the session reads as the file;
#: ``"earlier"``: the file is a version of the session stored before (the current history
#: as it was before a later import superseded part of it), so nothing is added.
CHANGES: tuple[str, ...] = ("none", "grown", "edited", "earlier")

#: ``SupersedeRecord.reason`` of the records an import of an edited copy appends.
REASON_EDITED = (
    "re-import: the transcript differs from the stored history before its end (an edited "
    "copy or another version); stored as the current version"
)


@dataclass(frozen=True, slots=True)
class ImportPlan:
    """What to store for one import into a session that has entries.

    Attributes:
        matched: entries of the import already stored (the start of the import; all of it
            for ``change == "earlier"``).
        withdrawn: ids of the stored entries to withdraw (the divergent tail), in log order.
        divergent_seq: seq of the first withdrawn entry, or ``None``.
        fresh: the entries to append after the supersede record (when ``withdrawn``), with
            stored ids, parents and references; seqs not set yet.
        change: one of :data:`CHANGES`.
        diverged_at: 0-based position in the import of its first entry that differs from
            the session's current history (``"grown"``, ``"edited"``, ``"earlier"``), else
            ``None``.
    """

    matched: int
    withdrawn: tuple[str, ...]
    divergent_seq: int | None
    fresh: list[Entry]
    change: str = "none"
    diverged_at: int | None = None

    @property
    def reason(self) -> str:
        """The ``SupersedeRecord.reason`` for :attr:`withdrawn`."""
        return REASON_EDITED if self.change == "edited" else REASON


def body_bytes(entry: Entry) -> bytes:
    """The body bytes the store keeps for ``entry``."""
    return body_json(entry.body)


class _Bodies:
    """The stored body bytes of the import's entries, serialised once; an entry whose body
    names a renamed entry (a compaction's ``first_kept_id`` or ``snapshot_id``) is
    serialised again for each id map."""

    def __init__(self, new: Sequence[Entry]) -> None:
        self.new = new
        self.plain = [body_json(e.body) for e in new]

    def at(self, i: int, ids: Mapping[str, str]) -> bytes:
        """The stored body bytes of ``new[i]`` under the id map ``ids``."""
        body = self.new[i].body
        if (
            ids
            and isinstance(body, CompactionRecord)
            and (body.first_kept_id in ids or body.snapshot_id in ids)
        ):
            return body_bytes(_as_stored(self.new[i], ids))
        return self.plain[i]


def _current(stored: Sequence[StoredEntry]) -> list[StoredEntry]:
    """``stored`` without supersede records and the entries they withdraw."""
    withdrawn = {
        i
        for s in stored
        if s.kind == "supersede"
        for i in orjson.loads(s.body).get("entry_ids", ())
    }
    return [s for s in stored if s.kind != "supersede" and s.id not in withdrawn]


def _walk(current: Sequence[StoredEntry], bodies: _Bodies) -> tuple[int, int, dict[str, str]]:
    """Walk ``current`` beside the import: ``(matched, at, ids)``: how many of the import's
    first entries are stored in it, the position in ``current`` where the walk stopped, and
    the id map (import id → stored id) of ``current``. An engine-made entry that does not
    match is passed over; the first imported one that does not stops the walk."""
    new = bodies.new
    ids = {s.import_id: s.id for s in current if s.import_id != s.id}
    at = matched = 0
    while at < len(current) and matched < len(new):
        s = current[at]
        if s.import_id == new[matched].id and s.body == bodies.at(matched, ids):
            matched += 1
        elif not s.engine_made:
            break
        at += 1
    return matched, at, ids


def _earlier_version(stored: Sequence[StoredEntry], bodies: _Bodies) -> bool:
    """Whether the import is all stored in one earlier version of the session: the current
    history as it was right before one of its supersede records (or a start of it)."""
    return any(
        _walk(_current(stored[:pos]), bodies)[0] == len(bodies.new)
        for pos, s in enumerate(stored)
        if s.kind == "supersede"
    )


def _written_at_end(entries: Sequence[StoredEntry]) -> bool:
    """Whether ``entries`` (a divergent tail) look like the reply the agent was still writing
    when the file was read: no real user message and at most one assistant message (that
    reply, with its tool results); a longer tail is an edited copy."""
    replies = 0
    for s in entries:
        if s.kind != "message":
            continue
        data = orjson.loads(s.body)
        role = data.get("role")
        if role == "assistant":
            replies += 1
            if replies > 1:
                return False
        elif role == "user":
            message = body_from_dict(data)
            if isinstance(message, Message) and is_real_user_message(message):
                return False
    return True


def plan_import(stored: Sequence[StoredEntry], new: Sequence[Entry], where: str) -> ImportPlan:
    """Compare the stored log of a session with a new import of it (see the module
    docstring). The stored entries not withdrawn are walked in order beside the import:
    an entry equal to the import's next one (same import id, same body) is matched; an
    engine-made entry that is not is passed over (a compaction appended between two
    imports); the first imported entry that is not starts the divergent tail. An import
    that ends inside the stored entries (an older copy of the file) adds nothing, and so
    does one that an earlier version of the session holds whole (a file imported before a
    later import superseded part of it: ``change == "earlier"``).

    A divergent tail holding no real user message and at most one assistant message (the
    reply being written, with its tool results), the import not shorter than the current
    history, is one the agent was still writing (``"grown"``); any other is an
    edited copy or another version (``"edited"``). Either is withdrawn and the import's
    entries from the divergence follow.

    Args:
        stored: every stored entry of the session, in seq order.
        new: the entries the import gives (unique ids).
        where: the store and operation, for errors.

    Raises:
        StoreError: the divergent tail has engine-appended messages after it.
    """
    bodies = _Bodies(new)
    current = _current(stored)
    matched, at, ids = _walk(current, bodies)
    divergent = [s for s in current[at:] if not s.engine_made]
    if matched == len(new) or not divergent:
        return ImportPlan(matched, (), None, _stored_ids(new[matched:], stored, ids))
    if _earlier_version(stored, bodies):
        return ImportPlan(len(new), (), None, [], "earlier", matched)
    first = divergent[0]
    on_top = next(
        (s for s in stored if s.seq > first.seq and s.engine_made and s.kind == "message"), None
    )
    if on_top is not None:
        raise StoreError(
            f"{where}: the transcript differs from the entries an earlier import stored "
            f"from seq {first.seq} on (entry {first.import_id!r}), and messages were "
            f"appended to the session after them (seq {on_top.seq}); nothing was imported"
        )
    imported_now = sum(1 for s in current if not s.engine_made)
    grown = _written_at_end(divergent) and len(new) >= imported_now
    for s in divergent:
        ids.pop(s.import_id, None)
    withdrawn = tuple(s.id for s in divergent)
    fresh = _stored_ids(new[matched:], stored, ids)
    return ImportPlan(matched, withdrawn, first.seq, fresh, "grown" if grown else "edited", matched)


def entries_to_store(
    session_id: str, stored: Sequence[StoredEntry], plan: ImportPlan
) -> list[Entry]:
    """The entries an import following ``plan`` appends after ``stored`` (the session's
    stored entries in seq order, as :func:`plan_import` read them): when ``plan`` withdraws
    entries, first the supersede record that withdraws them (a content-hash id after the
    last stored entry, at the next seq, with ``plan.reason``), then ``plan.fresh``."""
    if not plan.withdrawn:
        return list(plan.fresh)
    last = stored[-1]
    record = SupersedeRecord(plan.withdrawn, plan.reason)
    superseding = Entry(
        id=body_hash(record, last.id),
        session_id=session_id,
        seq=last.seq + 1,
        body=record,
        parent_id=last.id,
        created_at=datetime.now(UTC).isoformat(timespec="milliseconds"),
    )
    return [superseding, *plan.fresh]


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
