"""Storing proxied conversations: each conversation's session log (its messages and the
ladder's compaction and prune records) as a stored session of format ``"proxy"``, so
``ctxengine sessions``, ``inspect`` and ``replay`` show it; and the prefix cache's
checkpoints, so a restarted proxy continues a conversation instead of compacting it afresh.

Writes go through one background thread (the request path only queues them); reads (a
checkpoint the memory lacks) go to the store directly. A request that does not continue the
stored log of its conversation (the client edited or regenerated an earlier message, or sent
variants of one conversation side by side) starts a stored session of its own, ``<key>-2``,
``<key>-3`` …, also when the client named the conversation (``X-Ctxengine-Session``): stored
entries are never changed, and a stored session is one linear log (a checkout cannot return
to a branch it left, which alternating variants would need). Each such branch is logged
(``ctxengine.proxy`` logger, warning): "conversation K stored as K-2 …".

**Shared** (``shared=True``: several proxy processes, ``ctxengine serve --workers N``, on one
store): the next request of a conversation may reach any process, so what decides its
context is in the store before the reply goes back, not only in the memory of the process
that served it: checkpoints are written at once (not queued), and so are the usage anchors
of the replies (:meth:`Recorder.save_usage`). :meth:`Recorder.conversation_lock` serialises
the requests of one conversation across processes (the store's compaction lock of
``proxy-conversation:<key>``), so two processes never compact the same range. The session
logs stay queued: each write re-reads the stored log first, skips what another process stored
already and appends the rest.
"""

from __future__ import annotations

import logging
import queue
import threading
from collections.abc import Sequence
from contextlib import AbstractContextManager, nullcontext
from dataclasses import asdict, dataclass, replace
from typing import Any

import orjson

from ctxengine.errors import CtxEngineError, SessionNotFound, StoreConflict
from ctxengine.model import Entry, Usage
from ctxengine.policy.defaults import APPEND_RETRIES, DEFAULT_COMPACTION_LOCK_TIMEOUT_S
from ctxengine.stores.base import SessionInfo, StoredCheckpoint
from ctxengine.stores.location import OpenedStore

__all__ = ["FORMAT", "Recorder"]

#: The ``format`` of a stored proxied conversation.
FORMAT = "proxy"

_log = logging.getLogger("ctxengine.proxy")


@dataclass(slots=True)
class _Stored:
    """Where a conversation's log is stored: the session id, its entries and the last id."""

    session_id: str
    count: int
    last_id: str | None
    branches: int = 1


class _Checkpoints:
    """The store's checkpoint methods, saves queued to the writer thread."""

    def __init__(self, recorder: Recorder) -> None:
        self._recorder = recorder

    def save_checkpoint(self, checkpoint: StoredCheckpoint) -> None:
        if self._recorder.shared:
            self._recorder.store.save_checkpoint(checkpoint)
        else:
            self._recorder._queue.put(("checkpoint", checkpoint))

    def longest_checkpoint(self, config: str, prefixes: Sequence[str]) -> str | None:
        return self._recorder.store.longest_checkpoint(config, prefixes)

    def checkpoint_chain(self, config: str, prefix: str) -> list[StoredCheckpoint]:
        return self._recorder.store.checkpoint_chain(config, prefix)


class Recorder:
    """Stores proxied conversations in ``store`` from a background thread (see the module
    docstring). Close it to write what is queued and stop the thread; the store is closed
    with it.

    Args:
        store: the store (the CLI's ``--db``).
        checkpoints: also keep the prefix cache's checkpoints in the store.
        shared: other processes serve the same conversations through ``store`` (see the
            module docstring).
    """

    def __init__(
        self, store: OpenedStore, *, checkpoints: bool = True, shared: bool = False
    ) -> None:
        self.store = store
        self.shared = shared
        self.checkpoints = _Checkpoints(self) if checkpoints else None
        self._queue: queue.Queue[tuple[str, Any] | None] = queue.Queue()
        self._stored: dict[str, _Stored] = {}
        self.failures = 0
        self._thread = threading.Thread(target=self._run, name="ctxengine-recorder", daemon=True)
        self._thread.start()

    def record(self, key: str, log: Sequence[Entry], *, api: str, model: str | None) -> None:
        """Queue the session log of conversation ``key`` after one request: the entries the
        stored session lacks are appended."""
        self._queue.put(("log", (key, tuple(log), api, model)))

    def conversation_lock(self, key: str) -> AbstractContextManager[None]:
        """Held while one request of conversation ``key`` is decided: across every process
        of the store when shared, else nothing (the proxy's own lock suffices).

        Raises:
            StoreLockTimeout: another process held it for
                :data:`~ctxengine.policy.defaults.DEFAULT_COMPACTION_LOCK_TIMEOUT_S`.
        """
        if not self.shared:
            return nullcontext()
        return self.store.compaction_lock(
            f"proxy-conversation:{key}", timeout_s=DEFAULT_COMPACTION_LOCK_TIMEOUT_S
        )

    def save_usage(self, key: str, signature: Sequence[str], usage: Usage) -> None:
        """Keep the usage of a reply of conversation ``key`` in the store (shared only)."""
        if self.shared:
            self.store.save_usage_anchor(
                key, orjson.dumps(list(signature)).decode(), orjson.dumps(asdict(usage))
            )

    def usage(self, key: str, signature: Sequence[str]) -> Usage | None:
        """The usage of a reply another process kept (shared only), else ``None``."""
        if not self.shared:
            return None
        raw = self.store.usage_anchor(key, orjson.dumps(list(signature)).decode())
        return None if raw is None else Usage(**orjson.loads(raw))

    def flush(self) -> None:
        """Wait until everything queued so far is written."""
        done = threading.Event()
        self._queue.put(("flush", done))
        done.wait()

    def close(self) -> None:
        """Write what is queued, stop the thread and close the store. Closing twice is
        allowed."""
        if self._thread.is_alive():
            self._queue.put(None)
            self._thread.join()
        self.store.close()

    def _run(self) -> None:
        while True:
            job = self._queue.get()
            if job is None:
                return
            kind, payload = job
            try:
                if kind == "flush":
                    assert isinstance(payload, threading.Event)
                    payload.set()
                elif kind == "checkpoint":
                    assert isinstance(payload, StoredCheckpoint)
                    self.store.save_checkpoint(payload)
                else:
                    self._write(*payload)
            except CtxEngineError as exc:
                self.failures += 1
                _log.error("ctxengine proxy: could not store %s: %s", kind, exc)

    def _open(self, session_id: str, api: str, model: str | None) -> _Stored:
        """The stored state of ``session_id``, created when new."""
        try:
            last = self.store.last_seq(session_id)
        except SessionNotFound:
            meta = {"api": api, **({"model": model} if model else {})}
            self.store.create_session(SessionInfo(session_id, FORMAT, meta=meta))
            return _Stored(session_id, 0, None)
        tail = self.store.entries(session_id, after_seq=last - 1) if last >= 0 else []
        # tail[0] is the entry at seq ``last`` (another process may have appended since)
        return _Stored(session_id, last + 1, tail[0].id if tail else None)

    def _write(self, key: str, log: tuple[Entry, ...], api: str, model: str | None) -> None:
        if not self.shared:
            self._write_alone(key, log, api, model)
            return
        for _ in range(APPEND_RETRIES):
            try:
                self._write_shared(key, log, api, model)
            except StoreConflict:
                continue  # another process appended meanwhile: read again
            return
        raise CtxEngineError(
            f"conversation {key!r}: other processes kept appending first {APPEND_RETRIES} times"
        )

    def _write_shared(self, key: str, log: tuple[Entry, ...], api: str, model: str | None) -> None:
        """Append what the stored log of ``key`` (or of its current branch) lacks of ``log``,
        reading it first: another process may have stored this log, or a longer one."""
        known = self._stored.get(key)
        sid = known.session_id if known is not None else key
        branches = known.branches if known is not None else 1
        stored = self._open(sid, api, model)
        if stored.count >= len(log) and log:
            at = self.store.entries(sid, after_seq=len(log) - 2)[0].id
            if at == log[-1].id:
                self._stored[key] = replace(stored, branches=branches)
                return  # stored already, by this process or another
        if stored.count > len(log) or (stored.count and log[stored.count - 1].id != stored.last_id):
            while True:  # a branch: a stored session of its own
                branches += 1
                stored = self._open(f"{key}-{branches}", api, model)
                if stored.count == 0:
                    break
            _branched(key, stored.session_id)
        stored.branches = branches
        self._stored[key] = stored
        new = log[stored.count :]
        if new:
            sid = stored.session_id
            self.store.append(
                sid,
                [replace(e, session_id=sid) for e in new],
                expect_last_seq=stored.count - 1,
            )
            stored.count = len(log)
            stored.last_id = log[-1].id

    def _write_alone(self, key: str, log: tuple[Entry, ...], api: str, model: str | None) -> None:
        stored = self._stored.get(key)
        if stored is None:
            stored = self._stored[key] = self._open(key, api, model)
        if stored.count > len(log) or (stored.count and log[stored.count - 1].id != stored.last_id):
            branches = stored.branches
            while True:  # a branch: a stored session of its own
                branches += 1
                fresh = self._open(f"{key}-{branches}", api, model)
                if fresh.count == 0:
                    break
            fresh.branches = branches
            stored = self._stored[key] = fresh
            _branched(key, fresh.session_id)
        new = log[stored.count :]
        if not new:
            return
        sid = stored.session_id
        self.store.append(
            sid,
            [replace(e, session_id=sid) for e in new],
            expect_last_seq=stored.count - 1,
        )
        stored.count = len(log)
        stored.last_id = log[-1].id


def _branched(key: str, session_id: str) -> None:
    """Log that conversation ``key`` goes on as the stored session ``session_id``."""
    _log.warning(
        "conversation %s stored as %s: this request does not continue its stored log (an "
        "earlier message differs)",
        key,
        session_id,
    )
