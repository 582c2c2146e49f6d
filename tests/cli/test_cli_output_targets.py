"""``-o`` onto what is not a regular file: a device or a named pipe is written to, never
replaced by a file; a symbolic link is followed and kept."""

from __future__ import annotations

import os
import stat
import threading
from pathlib import Path

from ctxengine.cli.output import write_output


def test_a_named_pipe_is_written_to_not_replaced(tmp_path: Path) -> None:
    fifo = tmp_path / "out.pipe"
    os.mkfifo(fifo)
    got: list[bytes] = []
    reader = threading.Thread(target=lambda: got.append(fifo.read_bytes()), daemon=True)
    reader.start()
    write_output(str(fifo), b'{"a": 1}\n')
    reader.join(timeout=10)
    assert got == [b'{"a": 1}\n']
    assert stat.S_ISFIFO(fifo.lstat().st_mode)
    assert sorted(p.name for p in tmp_path.iterdir()) == ["out.pipe"]  # no temporary left


def test_a_symbolic_link_is_followed_and_kept(tmp_path: Path) -> None:
    real = tmp_path / "real.json"
    real.write_bytes(b"old\n")
    link = tmp_path / "link.json"
    link.symlink_to(real)
    write_output(str(link), b"new\n")
    assert link.is_symlink()
    assert real.read_bytes() == b"new\n"
    assert sorted(p.name for p in tmp_path.iterdir()) == ["link.json", "real.json"]


def test_a_regular_file_is_replaced_whole(tmp_path: Path) -> None:
    out = tmp_path / "request.json"
    out.write_bytes(b"old\n")
    write_output(str(out), b"new\n")
    assert out.read_bytes() == b"new\n"
    assert sorted(p.name for p in tmp_path.iterdir()) == ["request.json"]
