"""``ctxengine serve --workers 4 --db postgresql://…``: one tool-using conversation through the
openai SDK, a new connection per request so that the four worker processes take turns; its
stored log is the very log one proxy process stores for the same conversation (every
compaction once, at the same cut), whichever worker served each request."""

from __future__ import annotations

import itertools
import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import httpx
import openai
import pytest
from harness import ProxyServer, ToolModel, drive_chat, upstream_with

from ctxengine.model import CompactionRecord, Entry
from ctxengine.proxy.app import WORKER_HEADER
from ctxengine.proxy.core import ProxyCore
from ctxengine.proxy.record import Recorder
from ctxengine.stores.location import open_store
from ctxengine.stores.sqlite import SQLiteStore

pytest.importorskip("sqlalchemy")
pytest.importorskip("psycopg")

WINDOW = 6_000
TURNS = 30
WORKERS = 4


def client(base: str, served_by: list[str]) -> openai.OpenAI:
    """An SDK client that opens a new connection for every request and notes the worker
    header of every reply."""

    def note(response: httpx.Response) -> None:
        served_by.append(response.headers.get(WORKER_HEADER, "-"))

    http = httpx.Client(
        limits=httpx.Limits(max_keepalive_connections=0),
        event_hooks={"response": [note]},
        timeout=60,
    )
    return openai.OpenAI(base_url=base + "/v1", api_key="k", max_retries=0, http_client=http)


def start_serve(upstream: str, db: str) -> tuple[subprocess.Popen[bytes], str]:
    argv = [
        sys.executable, "-m", "ctxengine", "serve", "--upstream", upstream + "/v1",
        "--port", "0", "--db", db, "--window", str(WINDOW), "--workers", str(WORKERS),
    ]  # fmt: skip
    env = {**os.environ, "PYTHONUNBUFFERED": "1"}
    proc = subprocess.Popen(argv, stdout=subprocess.PIPE, stderr=subprocess.PIPE, env=env)
    assert proc.stdout is not None
    first = proc.stdout.readline().decode()
    assert first.endswith(f" -> {upstream}/v1 ({WORKERS} workers)\n"), first
    base = first.split(" on ")[1].split(" ->")[0]
    # Wait until the workers answer (a passed-through request, 404 upstream), most of them.
    deadline = time.monotonic() + 120
    pids: set[str] = set()
    while len(pids) < WORKERS and time.monotonic() < deadline:
        try:
            pids.add(httpx.get(base + "/v1/not-a-route", timeout=5).headers[WORKER_HEADER])
        except httpx.TransportError:
            time.sleep(0.2)
    assert pids, "no worker answered"
    return proc, base


def compactions(log: list[Entry]) -> list[tuple[int, str | None]]:
    return [(e.seq, e.body.first_kept_id) for e in log if isinstance(e.body, CompactionRecord)]


def test_four_workers_serve_one_conversation_with_one_compaction_per_range(
    tmp_path: Path, pg_url: str
) -> None:
    served_by: list[str] = []
    model = ToolModel()
    with upstream_with(model) as upstream:
        proc, base = start_serve(upstream.url, pg_url)
        try:
            requests = drive_chat(client(base, served_by), TURNS)
        finally:
            proc.send_signal(signal.SIGTERM)
            _, err = proc.communicate(timeout=120)
        assert proc.returncode == 0, err.decode()[-3000:]
    assert len(served_by) == requests == len(model.seen)
    assert all(not seen.problems and seen.tokens <= WINDOW for seen in model.seen)
    workers = set(served_by)
    switches = sum(a != b for a, b in itertools.pairwise(served_by))
    assert len(workers) >= 2, served_by
    assert switches >= 1
    # The same conversation through one proxy process on its own store.
    reference_model = ToolModel()
    with (
        upstream_with(reference_model) as upstream,
        ProxyServer(
            ProxyCore(window=WINDOW, recorder=Recorder(SQLiteStore(tmp_path / "one.db"))),
            upstream.url,
        ) as proxy,
    ):
        alone: list[str] = []
        assert drive_chat(client(proxy.url, alone), TURNS) == requests
        proxy.core.recorder.flush()  # type: ignore[union-attr]
    assert [s.body for s in model.seen] == [s.body for s in reference_model.seen]
    with open_store(pg_url) as shared, SQLiteStore(tmp_path / "one.db") as single:
        assert [s.id for s in shared.sessions()] == [s.id for s in single.sessions()]
        (info,) = single.sessions()
        mine, theirs = shared.entries(info.id), single.entries(info.id)
    assert [e.id for e in mine] == [e.id for e in theirs]
    assert compactions(mine) == compactions(theirs)
    assert len(compactions(mine)) >= 2
    kept = [k for _, k in compactions(mine)]
    assert len(set(kept)) == len(kept)
