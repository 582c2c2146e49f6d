"""A summary model that accepts the connection and never answers: ``--timeout`` and
``--deadline`` bound the wait, the CLI exits 2 and writes nothing (no ``-o`` file, no entry in
the store). A real server on 127.0.0.1, driven through the official OpenAI SDK."""

from __future__ import annotations

import json
import os
import socket
import subprocess
import sys
import threading
import time
from collections.abc import Iterator
from pathlib import Path

import pytest

from ctxengine.cli import main
from ctxengine.stores import SQLiteStore

ROOT = Path(__file__).resolve().parents[2]


class StalledServer:
    """Accepts connections, reads what is sent, never writes a byte back."""

    def __init__(self) -> None:
        self.sock = socket.socket()
        self.sock.bind(("127.0.0.1", 0))
        self.sock.listen(16)
        self.port = self.sock.getsockname()[1]
        self.requests = 0
        self._open: list[socket.socket] = []
        self._stop = threading.Event()
        self._thread = threading.Thread(target=self._serve, daemon=True)
        self._thread.start()

    def _serve(self) -> None:
        self.sock.settimeout(0.1)
        while not self._stop.is_set():
            try:
                conn, _ = self.sock.accept()
            except TimeoutError:
                continue
            except OSError:
                return
            conn.settimeout(0.5)
            try:
                if b"POST" in conn.recv(65536):
                    self.requests += 1
            except TimeoutError:
                pass
            self._open.append(conn)  # held open, unanswered

    def close(self) -> None:
        self._stop.set()
        self._thread.join(timeout=5)
        for conn in self._open:
            conn.close()
        self.sock.close()


@pytest.fixture
def stalled() -> Iterator[StalledServer]:
    server = StalledServer()
    yield server
    server.close()


def transcript(path: Path) -> Path:
    messages: list[dict[str, object]] = [{"role": "user", "content": "Migrate module X."}]
    for k in range(12):
        call = {
            "id": f"call_{k}",
            "type": "function",
            "function": {"name": "read_file", "arguments": json.dumps({"path": f"m{k}.py"})},
        }
        messages += [
            {"role": "assistant", "content": f"Reading m{k}.", "tool_calls": [call]},
            {"role": "tool", "tool_call_id": f"call_{k}", "content": f"def f{k}():\n" * 150},
        ]
    path.write_text(json.dumps(messages), encoding="utf-8")
    return path


def compact(cwd: Path, server: StalledServer, *args: str) -> tuple[int, str, float]:
    env = {
        k: v
        for k, v in os.environ.items()
        if not k.startswith(("OPENAI_", "ANTHROPIC_", "CTXENGINE_"))
    }
    env["PYTHONPATH"] = os.pathsep.join(
        [str(ROOT / "src"), *([os.environ["PYTHONPATH"]] if "PYTHONPATH" in os.environ else [])]
    )
    argv = [
        sys.executable,
        "-m",
        "ctxengine",
        "compact",
        *args,
        "--summarizer",
        "llm",
        "--summary-model",
        "openai:gpt-4o-mini",
        "--base-url",
        f"http://127.0.0.1:{server.port}/v1",
        "--window",
        "8000",
        "--keep-recent",
        "600",
    ]
    t0 = time.monotonic()
    done = subprocess.run(argv, cwd=cwd, env=env, capture_output=True, text=True, timeout=120)
    return done.returncode, " ".join(done.stderr.split()), time.monotonic() - t0


def test_timeout_2_returns_within_10_s_and_writes_nothing(
    stalled: StalledServer, tmp_path: Path
) -> None:
    transcript(tmp_path / "session.json")
    code, stderr, took = compact(
        tmp_path, stalled, "session.json", "--timeout", "2", "-o", "out.json"
    )
    assert code == 2
    assert took < 10.0
    assert stalled.requests == 1  # a request that used its whole timeout is not sent again
    assert stderr.startswith("summary model failed: ")
    assert "timed out" in stderr.lower()
    assert not (tmp_path / "out.json").exists()
    assert sorted(p.name for p in tmp_path.iterdir()) == ["session.json"]


def test_the_deadline_bounds_the_whole_compaction_and_the_store_is_unchanged(
    stalled: StalledServer, tmp_path: Path
) -> None:
    src = transcript(tmp_path / "session.json")
    db = tmp_path / "s.db"
    assert main(["import", str(src), "--db", str(db)]) == 0
    with SQLiteStore(db, read_only=True) as store:
        (info,) = store.sessions()
    code, stderr, took = compact(
        tmp_path,
        stalled,
        "--session",
        info.id,
        "--db",
        str(db),
        "--timeout",
        "60",
        "--deadline",
        "2",
        "-o",
        "out.json",
    )
    assert code == 2
    assert took < 10.0
    assert stderr == (
        "summary model failed: openai:gpt-4o-mini did not finish the summary within the 2 s "
        "deadline (--deadline); the call was cancelled and nothing was written"
    )
    assert not (tmp_path / "out.json").exists()
    with SQLiteStore(db, read_only=True) as store:
        assert store.sessions()[0].entry_count == info.entry_count
