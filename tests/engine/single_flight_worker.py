"""A worker for the cross-process single-flight test: it opens its own store and session on
a shared store (a SQLite file, a PostgreSQL database) and prepares the next request past
the trigger.

Module level so that ``multiprocessing`` (spawn) can import it in a child process.
"""

from __future__ import annotations

import hashlib
import json
import os
from dataclasses import dataclass
from pathlib import Path

from engine_helpers import EST

from ctxengine.engine import Session
from ctxengine.projection.render import render_openai
from ctxengine.stores.location import open_store
from ctxengine.summarizers.base import Summary, SummaryRequest
from ctxengine.summarizers.extractive import ExtractiveSummarizer
from ctxengine.tokens.base import Estimator

WINDOW = 4_000
SESSION = "shared"


@dataclass
class CountingSummarizer:
    """The extractive summarizer, counting its calls as lines of ``calls_file`` (one line per
    call, written with O_APPEND so that processes never interleave)."""

    calls_file: Path

    @property
    def name(self) -> str:
        return "extractive"

    def summarize(self, request: SummaryRequest, estimator: Estimator) -> Summary:
        fd = os.open(self.calls_file, os.O_WRONLY | os.O_APPEND | os.O_CREAT)
        try:
            os.write(fd, f"{os.getpid()}\n".encode())
        finally:
            os.close(fd)
        return ExtractiveSummarizer(user_messages_budget=400).summarize(request, estimator)


def open_session(db: str | Path, calls_file: Path) -> Session:
    """A session on the shared store (a SQLite file or a PostgreSQL URL), with the counting
    summarizer."""
    return Session(
        WINDOW,
        estimator=EST,
        store=open_store(str(db)),
        session_id=SESSION,
        summarizer=CountingSummarizer(calls_file),
    )


def body_hash(session: Session) -> str:
    """Hash of the OpenAI body of the session's current context."""
    body = render_openai(session.project())
    return hashlib.sha256(json.dumps(body, sort_keys=True).encode()).hexdigest()


def prepare_in_process(db: str, calls_file: str, barrier: object, out: object) -> None:
    """Open a session, wait for the others, prepare, and report the context's hash."""
    session = open_session(db, Path(calls_file))
    barrier.wait()  # type: ignore[attr-defined]
    session.prepare()
    out.put(body_hash(session))  # type: ignore[attr-defined]
