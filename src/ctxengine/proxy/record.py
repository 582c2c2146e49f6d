"""Storing proxied conversations: each conversation's session log (its messages and the
ladder's compaction and prune records) as a stored session of format ``"proxy"``, so
``ctxengine sessions``, ``inspect`` and ``replay`` show it; and the prefix cache's
checkpoints, so a restarted proxy continues a conversation instead of compacting it afresh.

Writes go through one background thread (the request path only queues them); reads (a
checkpoint the memory lacks) go to the store directly. A request that does not continue the
stored log of its conversation (the client edited or regenerated an earlier message) starts a
stored session of its own, ``<key>-2``, ``<key>-3`` …: stored entries are never changed.
"""

from __future__ import annotations

import logging
import queue
import threading
from collections.abc import Sequence
from dataclasses import dataclass, replace
from typing import Any

from ctxengine.errors import CtxEngineError, SessionNotFound
from ctxengine.model import Entry
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
        store: the SQLite store (the CLI's ``--db``).
        checkpoints: also keep the prefix cache's checkpoints in the store.
    """

    def __init__(self, store: OpenedStore, *, checkpoints: bool = True) -> None:
        self.store = store
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
        return _Stored(session_id, last + 1, tail[-1].id if tail else None)

    def _write(self, key: str, log: tuple[Entry, ...], api: str, model: str | None) -> None:
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
