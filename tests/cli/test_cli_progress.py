"""Progress on stderr: drawn on a terminal (a pseudo-terminal here), never through a pipe,
never with ``--quiet``, never on stdout. ``CTXENGINE_PROGRESS_AFTER=0`` draws it at once
instead of after a second, so a short command shows it."""

from __future__ import annotations

import fcntl
import os
import pty
import struct
import subprocess
import sys
import termios
from pathlib import Path

import pytest
from cli_helpers import EXAMPLE, cli_env

pytestmark = pytest.mark.skipif(sys.platform == "win32", reason="pseudo-terminals are POSIX")


def on_terminal(
    *args: str | Path, stdout_tty: bool = False, **env: str
) -> tuple[int, bytes, bytes]:
    """Run ``python -m ctxengine ARGS`` with stderr (and with ``stdout_tty`` stdout too) on
    a 120-column pseudo-terminal: (exit code, stdout bytes, terminal bytes)."""
    leader, follower = pty.openpty()
    fcntl.ioctl(follower, termios.TIOCSWINSZ, struct.pack("HHHH", 40, 120, 0, 0))
    proc = subprocess.Popen(
        [sys.executable, "-m", "ctxengine", *map(str, args)],
        stdin=subprocess.DEVNULL,
        stdout=follower if stdout_tty else subprocess.PIPE,
        stderr=follower,
        env=cli_env(TERM="xterm-256color", **env),
    )
    os.close(follower)
    seen = bytearray()
    while True:
        try:
            chunk = os.read(leader, 65536)
        except OSError:  # the terminal closed: every process holding it has exited
            break
        if not chunk:
            break
        seen += chunk
    out = proc.stdout.read() if proc.stdout is not None else b""
    code = proc.wait(timeout=120)
    os.close(leader)
    return code, out, bytes(seen)


def test_progress_is_drawn_on_a_terminal_and_stdout_stays_clean(tmp_path: Path) -> None:
    code, out, terminal = on_terminal(
        "import", EXAMPLE, "--db", tmp_path / "s.db", CTXENGINE_PROGRESS_AFTER="0"
    )
    assert code == 0
    assert b"importing" in terminal or f"reading {EXAMPLE}".encode() in terminal
    assert b"\x1b[" in terminal  # drawn with terminal control sequences, then erased
    assert b"0:00:0" in terminal  # the elapsed-time column
    assert (
        out
        == (
            f"{EXAMPLE}: session 6900ea68-31eb-44fe-9d0f-8366413ede7e (claude-code): "
            "164 entries added, 0 already stored\n"
        ).encode()
    )


@pytest.mark.parametrize("command", ["compact", "replay", "export"])
def test_every_long_command_draws_it(tmp_path: Path, command: str) -> None:
    extra = ["--window", "16000"] if command != "export" else ["-o", str(tmp_path / "x.jsonl")]
    code, _, terminal = on_terminal(command, EXAMPLE, *extra, CTXENGINE_PROGRESS_AFTER="0")
    assert code == 0
    assert b"0:00:0" in terminal  # the progress display's elapsed-time column
    assert b"reading" in terminal or b"entries" in terminal or b"calls" in terminal


def test_quiet_draws_nothing(tmp_path: Path) -> None:
    code, _, terminal = on_terminal(
        "import", EXAMPLE, "--db", tmp_path / "s.db", "--quiet", CTXENGINE_PROGRESS_AFTER="0"
    )
    assert (code, terminal) == (0, b"")


def test_short_work_draws_nothing_by_default(tmp_path: Path) -> None:
    code, _, terminal = on_terminal("import", EXAMPLE, "--db", tmp_path / "s.db")
    assert (code, terminal) == (0, b"")


def test_nothing_is_drawn_through_a_pipe(tmp_path: Path) -> None:
    env = cli_env(TERM="xterm-256color", CTXENGINE_PROGRESS_AFTER="0")
    done = subprocess.run(
        [sys.executable, "-m", "ctxengine", "import", str(EXAMPLE), "--db", str(tmp_path / "s.db")],
        capture_output=True,
        env=env,
        timeout=120,
    )
    assert (done.returncode, done.stderr) == (0, b"")
    assert b"\x1b" not in done.stdout


def test_a_name_with_brackets_prints_literally_on_a_terminal(tmp_path: Path) -> None:
    name = tmp_path / "run[bold]1.jsonl"
    name.write_bytes(EXAMPLE.read_bytes())
    code, _, terminal = on_terminal("import", name, "--db", tmp_path / "s.db", stdout_tty=True)
    assert code == 0
    # a long line is folded by the terminal, never broken by a newline
    assert (
        terminal
        == (
            f"{name}: session 6900ea68-31eb-44fe-9d0f-8366413ede7e (claude-code): "
            "164 entries added, 0 already stored\r\n"
        ).encode()
    )
