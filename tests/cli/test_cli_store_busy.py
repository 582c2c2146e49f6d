"""Several processes on one store file: a writer holding the write lock does not stop
readers (``sessions``, ``inspect``, ``export``, a reading ``Session``), a second writer waits
its busy timeout and fails with "store busy" and exit 3, and a live ``Session`` keeps
appending while another process imports."""

from __future__ import annotations

import json
import subprocess
import sys
import threading
import time
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

import pytest
from cli_helpers import EXAMPLE, EXAMPLE_ID, cli, cli_env

from ctxengine.cli import EXIT_STORE_BUSY, main
from ctxengine.engine import Session
from ctxengine.model import Message, TextPart
from ctxengine.stores import SQLiteStore

#: How long the other process holds the write lock (seconds).
HOLD_S = 8.0

#: Holds the write lock for ``argv[2]`` seconds, and longer until a line arrives on stdin
#: (so that what runs meanwhile, however slowly a loaded machine starts it, runs under it).
HOLDER = """
import sqlite3, sys, time
conn = sqlite3.connect(sys.argv[1], isolation_level=None)
conn.execute("BEGIN IMMEDIATE")
conn.execute("INSERT INTO sessions (id, format) VALUES ('held', 'live')")
start = time.monotonic()
print("held", flush=True)
sys.stdin.readline()
time.sleep(max(0.0, float(sys.argv[2]) - (time.monotonic() - start)))
held = time.monotonic() - start
conn.execute("ROLLBACK")
print(f"released after {held:.1f} s", flush=True)
"""


def hold(db: Path, seconds: float) -> subprocess.Popen[str]:
    """Start :data:`HOLDER` on ``db``; return once it holds the lock."""
    holder = subprocess.Popen(
        [sys.executable, "-c", HOLDER, str(db), str(seconds)],
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
        text=True,
    )
    assert holder.stdout is not None
    assert holder.stdout.readline() == "held\n"
    return holder


def release(holder: subprocess.Popen[str]) -> float:
    """Let the holder go (after its minimum hold); seconds it held the lock."""
    assert holder.stdin is not None and holder.stdout is not None
    holder.stdin.write("\n")
    holder.stdin.flush()
    line = holder.stdout.readline()
    assert holder.wait(timeout=60) == 0
    return float(line.split()[2])


@pytest.fixture
def db(tmp_path: Path) -> Path:
    path = tmp_path / "s.db"
    assert main(["import", str(EXAMPLE), "--db", str(path)]) == 0
    return path


def chat(path: Path, n: int, text: str = "Step") -> Path:
    messages: list[dict[str, str]] = []
    for k in range(n):
        messages += [
            {"role": "user", "content": f"{text} {k}: rename module_{k}."},
            {"role": "assistant", "content": f"Renamed module_{k}."},
        ]
    path.write_text(json.dumps(messages), encoding="utf-8")
    return path


def test_readers_go_on_and_a_second_writer_reports_store_busy(db: Path, tmp_path: Path) -> None:
    other = chat(tmp_path / "other.json", 3)
    expected_export = cli("export", "--session", EXAMPLE_ID, "--db", db).stdout
    holder = hold(db, HOLD_S)
    held_at = time.monotonic()

    def timed(*args: str | Path) -> tuple[subprocess.CompletedProcess[str], float]:
        done = cli(*args)
        return done, time.monotonic() - held_at

    def reading_session() -> tuple[int, int, float]:
        t0 = time.monotonic()
        with SQLiteStore(db) as store:
            live = Session(128_000, store=store, session_id=EXAMPLE_ID)
            ctx = live.prepare()
            return len(live.entries), len(ctx.messages), time.monotonic() - t0

    with ThreadPoolExecutor(max_workers=5) as pool:
        sessions = pool.submit(timed, "sessions", "--db", db)
        inspect = pool.submit(timed, "inspect", "--session", EXAMPLE_ID, "--db", db, "--json")
        export = pool.submit(timed, "export", "--session", EXAMPLE_ID, "--db", db)
        writer = pool.submit(timed, "import", other, "--db", db, "--busy-timeout", "2")
        reader = pool.submit(reading_session)
        results = {
            name: f.result()
            for name, f in (
                ("sessions", sessions),
                ("inspect", inspect),
                ("export", export),
                ("writer", writer),
            )
        }
        entries, messages, read_s = reader.result()
    # everything above ran, and finished, while the lock was held
    assert release(holder) >= HOLD_S
    for name in ("sessions", "inspect", "export"):
        done, _ = results[name]
        assert (name, done.returncode, done.stderr) == (name, 0, "")
    assert results["sessions"][0].stdout.splitlines()[1].startswith(f"{EXAMPLE_ID}\t")
    assert len(results["sessions"][0].stdout.splitlines()) == 2  # the held insert is unseen
    assert json.loads(results["inspect"][0].stdout)["tokens"] == 17_926
    assert results["export"][0].stdout == expected_export
    assert (entries, messages) == (164, 164)
    assert read_s < 5.0  # never the busy timeout: a stored session opens without the lock

    done, at = results["writer"]
    assert done.returncode == EXIT_STORE_BUSY == 3
    assert done.stdout == ""
    session_id = json.loads(cli("import", other, "--db", tmp_path / "probe.db", "--json").stdout)[
        "files"
    ][0]["session_id"]
    assert done.stderr == (
        f"error: sqlite store {db}: import session {session_id!r} from {other} failed: store "
        "busy (another writer held the write lock longer than the 2 s busy timeout); "
        "nothing was written\n"
    )
    assert at >= 2.0  # it waited its busy timeout, then gave up while the lock was held

    # once the lock is free the same import goes through
    done = cli("import", other, "--db", db)
    assert done.returncode == 0, done.stderr
    assert done.stdout.endswith(": 6 entries added, 0 already stored\n")


def test_the_busy_timeout_comes_from_the_environment(db: Path, tmp_path: Path) -> None:
    other = chat(tmp_path / "other.json", 1)
    holder = hold(db, 0)
    done = cli("import", other, "--db", db, env=cli_env(CTXENGINE_BUSY_TIMEOUT="0.5"))
    release(holder)
    assert done.returncode == 3
    assert "longer than the 0.5 s busy timeout" in done.stderr


def test_a_live_session_keeps_appending_while_another_process_imports(
    db: Path, tmp_path: Path
) -> None:
    big = chat(tmp_path / "big.json", 20_000, "Task")
    store = SQLiteStore(db, busy_timeout_s=5.0)
    live = Session(128_000, store=store, session_id="live-agent")
    importer = subprocess.Popen(
        [sys.executable, "-m", "ctxengine", "import", str(big), "--db", str(db)],
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
        env=cli_env(),
    )
    appended = during = 0
    stop = threading.Event()
    while not stop.is_set():
        running = importer.poll() is None
        live.append(Message("user", (TextPart(f"note {appended}"),)))
        appended += 1
        during += running
        if not running:
            stop.set()
        time.sleep(0.01)
    out, err = importer.communicate(timeout=120)
    assert importer.returncode == 0, err
    assert out.endswith(": 40000 entries added, 0 already stored\n")
    assert during >= 10  # appends went on while the import ran
    with SQLiteStore(db, read_only=True) as reader:
        stored = reader.entries("live-agent")
        assert [e.body.text for e in stored if isinstance(e.body, Message)] == [
            f"note {k}" for k in range(appended)
        ]
        assert {s.id: s.entry_count for s in reader.sessions()}["live-agent"] == appended
    store.close()


def test_a_compact_that_finds_the_store_busy_writes_no_request(db: Path, tmp_path: Path) -> None:
    out = tmp_path / "request.json"
    holder = hold(db, 1.0)
    try:
        run = cli(
            "compact", EXAMPLE_ID, "--db", db, "--window", "16000", "--busy-timeout", "0.5",
            "-o", out,
        )  # fmt: skip
    finally:
        release(holder)
    assert run.returncode == EXIT_STORE_BUSY, run.stderr
    assert "store busy" in run.stderr
    assert not out.exists()
    with SQLiteStore(db) as store:
        assert len(store.entries(EXAMPLE_ID)) == 164  # the import only: nothing appended
