"""The ``Store`` protocol: an append-only home for session logs, and its values.

A store holds sessions and their entries. It can add a session and append entries; it has no
way to change or remove a stored entry (DESIGN invariant 1). Entries are keyed twice: by
``(session_id, seq)``, their position in the log, and by ``(session_id, id)``, their source
id or content address. Appending an entry whose id is already stored skips it, so importing
the same transcript twice adds nothing, and re-importing a transcript that grew adds only its
new tail (numbered after whatever the log already holds; stored entries the grown file holds
otherwise are withdrawn by an appended supersede record, never changed).

Several writers (threads, processes) may share one store. Two tools keep them from
overwriting each other's view: a compare-and-append (:meth:`Store.append` with
``expect_last_seq``) that refuses to append on top of a log the writer has not fully seen, and
a per-session lock (:meth:`Store.compaction_lock`) that lets one writer at a time compact.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from contextlib import AbstractContextManager
from dataclasses import dataclass, field
from types import TracebackType
from typing import Any, Protocol, Self

from ctxengine.model import Entry


def _no_meta() -> dict[str, Any]:
    return {}


@dataclass(frozen=True, slots=True)
class SessionInfo:
    """A stored session (without its entries).

    Attributes:
        id: the session id (the source's own id, or a content hash of the file).
        format: importer name (``"claude-code"``, ``"codex"`` …) or ``"live"`` for a session
            built by the engine.
        source_path: the transcript file it was imported from, or ``None``.
        title: a short human label, or ``None``.
        created_at: ISO-8601 time: the first entry's time when the source has one, else the
            time the session was stored (UTC).
        entry_count: number of stored entries (ignored by :meth:`Store.create_session`).
        meta: source facts kept with the session (model, cwd, version …).
        updated_at: ISO-8601 time of the newest entry (as its source recorded it), else of
            the newest import, but never before ``created_at`` (a child session whose
            newest entries are copies was last changed when it was stored); ``None`` when
            neither is known (ignored by :meth:`Store.create_session`).
    """

    id: str
    format: str
    source_path: str | None = None
    title: str | None = None
    created_at: str | None = None
    entry_count: int = 0
    meta: Mapping[str, Any] = field(default_factory=_no_meta, compare=False)
    updated_at: str | None = None


#: How a child session relates to its parent: ``"fork"`` (a copy of the parent's history up
#: to an entry), ``"spawn"`` (a fresh context: the parent's stable head and a task packet),
#: ``"handoff"`` (a fresh session continuing the parent from its continuation state).
RELATIONS: tuple[str, ...] = ("fork", "spawn", "handoff")


@dataclass(frozen=True, slots=True)
class SessionLink:
    """A session started from another one (a subagent's context, a hand-off).

    Attributes:
        session_id: the child session.
        parent_id: the session it was started from.
        parent_entry_id: the parent's entry it starts from: the fork point, or the parent's
            newest entry when it was spawned or handed off; ``None`` for an empty parent.
        relation: one of :data:`RELATIONS`.
        created_at: ISO-8601 time the link was stored (UTC); ``None`` before it is stored.
    """

    session_id: str
    parent_id: str
    parent_entry_id: str | None
    relation: str
    created_at: str | None = None


@dataclass(frozen=True, slots=True)
class ImportResult:
    """What one :meth:`Store.import_session` call did.

    Attributes:
        session_id: the session written to.
        added: entries of the transcript newly stored.
        skipped: entries of the transcript already stored, left as they were.
        superseded: stored entries an earlier import took from the transcript that it no
            longer holds as they were, withdrawn by a
            :class:`~ctxengine.model.SupersedeRecord` appended before the added entries;
            0 when none.
        change: how the transcript relates to the session's current history
            (:data:`ctxengine.stores._reimport.CHANGES`): ``"none"`` (new, the same, an
            older copy, or grown at its end), ``"grown"`` (stored entries were read while
            the agent was still writing them: superseded), ``"edited"`` (the file differs
            before its end, an edited copy or another version: stored as the current
            version, the stored entries from the divergence on superseded), ``"earlier"``
            (a version stored before, superseded since: nothing added).
        diverged_at: 0-based position in the transcript of its first entry that differs
            from the current history (``"grown"``, ``"edited"``, ``"earlier"``), else
            ``None``.
    """

    session_id: str
    added: int
    skipped: int
    superseded: int = 0
    change: str = "none"
    diverged_at: int | None = None


@dataclass(frozen=True, slots=True)
class ImportRecord:
    """One stored import of a transcript (:meth:`Store.import_reports`).

    Attributes:
        session_id: the session imported into.
        imported_at: ISO-8601 time of the import (UTC).
        source_path: the file it was read from, or ``None``.
        format: the importer's name.
        added: entries of the transcript the import added.
        report: what the importer skipped, repaired and ignored, as
            ``ctxengine.importers.report.ImportReport.to_dict()`` gives it.
    """

    session_id: str
    imported_at: str
    source_path: str | None
    format: str
    added: int
    report: Mapping[str, Any] = field(default_factory=_no_meta)


@dataclass(frozen=True, slots=True)
class SessionCopy:
    """Everything a store keeps of one session, read in one snapshot, to be stored in another
    store unchanged (:meth:`Store.export_session`, :meth:`Store.restore_session`).

    Attributes:
        info: the session (``entry_count`` and ``updated_at`` as read; not written).
        link: its link to the session it was started from, or ``None``.
        entries: its whole log, in seq order.
        imports: every stored import of it, oldest first.
        imported_spans: the ``(first_seq, last_seq)`` spans imports stored (what later
            re-imports compare against, :mod:`ctxengine.stores._reimport`), in seq order.
    """

    info: SessionInfo
    link: SessionLink | None
    entries: tuple[Entry, ...]
    imports: tuple[ImportRecord, ...]
    imported_spans: tuple[tuple[int, int], ...]


@dataclass(frozen=True, slots=True)
class RestoreResult:
    """What one :meth:`Store.restore_session` call stored.

    Attributes:
        session_id: the session.
        created: the session was new to this store.
        added: entries appended (0: the store already held all of them).
        imports: import records added.
    """

    session_id: str
    created: bool
    added: int
    imports: int


class ReportData(Protocol):
    """What a store keeps of an import report: its JSON form."""

    def to_dict(self) -> dict[str, Any]:
        """The report as JSON-compatible data."""
        ...


class ImportedLog(Protocol):
    """What :meth:`Store.import_session` reads from an imported transcript.

    ``ctxengine.importers.ImportedSession`` has this shape; stores do not import importers.
    """

    @property
    def session_id(self) -> str:
        """The session id."""
        ...

    @property
    def format(self) -> str:
        """The transcript format name."""
        ...

    @property
    def source_path(self) -> str:
        """The file it was read from."""
        ...

    @property
    def entries(self) -> tuple[Entry, ...]:
        """The session log, in order."""
        ...

    @property
    def title(self) -> str | None:
        """A short label, or ``None``."""
        ...

    @property
    def meta(self) -> Mapping[str, Any]:
        """Source facts kept with the session."""
        ...

    @property
    def report(self) -> ReportData:
        """What the importer skipped, repaired and ignored."""
        ...


class Store(Protocol):
    """An append-only store of session logs. There is no update or delete.

    Every method raises ``StoreError`` (with the store location and the operation) when the
    underlying storage fails. Stores are context managers: leaving the ``with`` block closes
    them. A store may be used from any thread of the process that opened it.
    """

    def create_session(
        self,
        info: SessionInfo,
        *,
        link: SessionLink | None = None,
        entries: Sequence[Entry] = (),
    ) -> bool:
        """Store a new session, with its ``link`` to the session it was started from and its
        first ``entries`` (seqs 0, 1, …), in one transaction. Returns ``False`` (and changes
        nothing) when a session with ``info.id`` already exists. ``info.entry_count`` is
        ignored.

        Raises:
            StoreError: ``link`` names another session than ``info.id``, a parent session
                that is not stored, or an unknown relation; ``entries`` do not belong to
                ``info.id`` or do not number from seq 0. Nothing is stored.
        """
        ...

    def session_link(self, session_id: str) -> SessionLink | None:
        """The link of a session started from another one, else ``None``.

        Raises:
            SessionNotFound: no session ``session_id``.
        """
        ...

    def children(self, session_id: str) -> list[SessionLink]:
        """The links of the sessions started from this one, in the order they were stored.

        Raises:
            SessionNotFound: no session ``session_id``.
        """
        ...

    def append(
        self,
        session_id: str,
        entries: Sequence[Entry],
        *,
        expect_last_seq: int | None = None,
    ) -> int:
        """Append ``entries`` to the session's log in one transaction.

        Entries whose id is already stored in the session are skipped. The others must belong
        to ``session_id`` and carry consecutive seqs that continue the log (the first one is
        :meth:`last_seq` + 1); the store never renumbers them.

        Args:
            session_id: the session appended to.
            entries: the new entries, in order.
            expect_last_seq: compare-and-append: the seq of the last entry the caller has
                seen (``-1``: it has seen an empty log). The append happens only if the
                stored log still ends there; the check and the insert are one transaction,
                so of several writers expecting the same seq exactly one succeeds. ``None``
                (the default) checks nothing beyond the seqs of ``entries``.

        Returns:
            the number of entries added.

        Raises:
            StoreConflict: the stored log does not end at ``expect_last_seq``; or, without it,
                the first new entry's seq is already taken (another writer appended first).
                Nothing is stored. ``conflict.actual`` is the stored last seq: read
                ``entries(session_id, after_seq=conflict.expected)``, adopt them, rebuild
                the entries on top (new seqs and parent) and append again.
            SessionNotFound: no session ``session_id``.
            StoreError: a seq leaves a gap, an id repeats within ``entries``, an entry
                belongs to another session, or an entry cannot be serialised. Nothing of the
                call is stored.
        """
        ...

    def entries(self, session_id: str, *, after_seq: int | None = None) -> list[Entry]:
        """The session's entries in seq order; only those with ``seq > after_seq`` when given
        (the way to catch up on what other writers appended: the cost follows the entries
        returned, not the length of the log).

        Raises:
            SessionNotFound: no session ``session_id``.
        """
        ...

    def last_seq(self, session_id: str) -> int:
        """Seq of the session's newest entry, ``-1`` when it has none.

        Raises:
            SessionNotFound: no session ``session_id``.
        """
        ...

    def sessions(self) -> list[SessionInfo]:
        """Every stored session with its entry count, in the order they were first stored."""
        ...

    def session(self, session_id: str) -> SessionInfo:
        """The session with this id, or with the only id starting with this prefix.

        Raises:
            SessionNotFound: nothing matches.
            StoreError: the prefix matches several sessions (the message lists them).
        """
        ...

    def import_session(self, imported: ImportedLog) -> ImportResult:
        """Store an imported transcript: the session (when new) and every entry not stored
        yet (a store may commit a large import in batches, each continuing the log).
        Importing the same file twice adds nothing.

        The entries earlier imports stored must be the start of ``imported.entries`` (same
        ids, same bodies); only the rest is appended, in file order, with seqs that continue
        the stored log (:meth:`last_seq` + 1, + 2 …): a stored seq is the position in the
        stored log, not in the file. So a transcript that grew can be re-imported after the
        engine appended its own entries (a compaction record) to the imported session; the
        file's new tail follows them. Ids, parents, bodies and meta are stored as the
        importer gave them.

        When the stored imported entries end with entries the file no longer holds as they
        were (they were read while the agent was still writing them, or the file is an
        edited copy: a line removed or changed), a
        :class:`~ctxengine.model.SupersedeRecord` withdrawing them is appended first, then
        the file's entries from that point: the current log reads as a fresh import of the
        file, and nothing stored is changed (see :mod:`ctxengine.stores._reimport`, which
        also says how an id already taken is stored). A file that a version stored before
        holds whole (imported, then superseded by another import) adds nothing.

        Every call also stores an :class:`ImportRecord` (time, file, entries added and
        ``imported.report``) with its last write.

        Raises:
            StoreError: an id repeats within ``imported.entries``, an entry belongs to another
                session or cannot be serialised, or the divergent stored entries have
                messages the engine appended after them; these are found before anything of
                the import is stored.
        """
        ...

    def import_reports(self, session_id: str) -> list[ImportRecord]:
        """Every stored import of the session, oldest first.

        Raises:
            SessionNotFound: no session ``session_id``.
        """
        ...

    def export_session(self, session_id: str) -> SessionCopy:
        """The whole session (row, link, entries, imports, imported spans) read in one
        snapshot: nothing another writer commits meanwhile is half in it.

        Raises:
            SessionNotFound: no session ``session_id``.
        """
        ...

    def restore_session(self, copy: SessionCopy) -> RestoreResult:
        """Store a session read from another store (:meth:`export_session`) unchanged, in one
        transaction: the session row (its creation time and meta as they were), its link,
        its entries with their ids, seqs and bodies, its import records and imported spans.
        A session this store already holds must hold a start of ``copy.entries`` (an earlier
        copy of it): only the rest is appended, with the import records and spans it lacks,
        so copying again adds nothing.

        Raises:
            StoreError: the stored session differs from ``copy`` (an entry another than the
                copy's at the same seq), or the parent of its link is not stored; nothing is
                stored.
        """
        ...

    def compaction_lock(self, session_id: str, *, timeout_s: float) -> AbstractContextManager[None]:
        """A context manager holding the session's compaction lock: one holder at a time
        across every thread and process sharing the store. A holder that dies (process
        killed) releases it at once; a live holder is waited for up to ``timeout_s`` seconds.
        The lock holds no storage lock: appends and reads of every session go on meanwhile.
        Not re-entrant.

        Single-flight compaction: every writer that finds the session past its compaction
        trigger does this, so that exactly one compaction of a range is stored and the others
        use it::

            with store.compaction_lock(session_id, timeout_s=...):
                # 1. catch up: what other writers stored since this writer's last seq
                new = store.entries(session_id, after_seq=local_last_seq)
                adopt(new)                                   # local_last_seq moves on
                # 2. re-check: if a compaction record among ``new`` already covers the
                #    range (the context is back under the trigger), use it; stop here
                # 3. compact: plan and summarize on the caught-up log (may take minutes)
                # 4. store with the parent it was built on
                store.append(session_id, [record_entry], expect_last_seq=local_last_seq)
                #    StoreConflict here means a plain (unlocked) append landed meanwhile:
                #    read entries(after_seq=conflict.expected), adopt them, rebuild the
                #    record entry on top (seq, parent; re-plan if the cut moved) and append
                #    again, still holding the lock
            # 5. leaving the block releases the lock

        Ordinary appends do not take the lock; they use ``expect_last_seq`` and, on
        ``StoreConflict``, catch up and retry.

        Raises:
            StoreLockTimeout: still held by another holder after ``timeout_s`` seconds.
            StoreError: this thread already holds it, or the lock cannot be created.
        """
        ...

    def close(self) -> None:
        """Release the store; further calls raise ``StoreError``. Closing twice is allowed."""
        ...

    def __enter__(self) -> Self: ...

    def __exit__(
        self,
        exc_type: type[BaseException] | None,
        exc: BaseException | None,
        tb: TracebackType | None,
    ) -> None: ...


@dataclass(frozen=True, slots=True)
class StoredCheckpoint:
    """One stateless call as a store keeps it (see :mod:`ctxengine.engine.stateless`).

    Attributes:
        config: hex hash of the configuration the call ran under (window, policy, tools,
            estimator and summarizer kinds).
        prefix: hex rolling content hash of the request's messages (the configuration first).
        parent: ``prefix`` of the checkpoint the call continued from, or ``None`` when it
            compacted from scratch.
        messages: messages in the request (> 0).
        tail: the log entries the call appended after its parent's, encoded by the engine
            (orjson bytes).
        state: the session's ladder state after the call, encoded by the engine (orjson
            bytes).
    """

    config: str
    prefix: str
    parent: str | None
    messages: int
    tail: bytes
    state: bytes


class CheckpointStore(Protocol):
    """Where stateless calls keep their checkpoints beside the in-memory cache, so that
    another process (a restarted proxy, another worker) continues a conversation instead of
    compacting it from scratch. Rows are only added: a checkpoint is never changed.

    Every method raises ``StoreError`` (with the store location and the operation) when the
    underlying storage fails.
    """

    def save_checkpoint(self, checkpoint: StoredCheckpoint) -> None:
        """Store ``checkpoint``; one already stored under its ``(config, prefix)`` is kept
        as it is (the same request gives the same checkpoint)."""
        ...

    def longest_checkpoint(self, config: str, prefixes: Sequence[str]) -> str | None:
        """Of ``prefixes`` (the rolling hashes of one request's first 1, 2, … messages, in
        that order), the last one stored under ``config``, or ``None``."""
        ...

    def checkpoint_chain(self, config: str, prefix: str) -> list[StoredCheckpoint]:
        """The checkpoint ``prefix`` and every one it continued from, oldest first (the
        first has no parent); ``[]`` when ``prefix`` is not stored or a parent is missing."""
        ...


class UsageAnchorStore(Protocol):
    """Where a proxy keeps the provider usage of the replies it passed back (the usage
    anchor of the next request), so that every process serving a conversation attaches the
    same usage to the same assistant message. Keyed by the conversation and the reply's
    signature (a JSON text); a later reply of the same signature replaces the row.

    Every method raises ``StoreError`` (with the store location and the operation) when the
    underlying storage fails.
    """

    def save_usage_anchor(self, conversation: str, signature: str, usage: bytes) -> None:
        """Keep ``usage`` (orjson bytes of the usage's fields) for the reply ``signature``
        of ``conversation``."""
        ...

    def usage_anchor(self, conversation: str, signature: str) -> bytes | None:
        """The usage kept for the reply ``signature`` of ``conversation``, else ``None``."""
        ...
