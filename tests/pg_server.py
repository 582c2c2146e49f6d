"""A throwaway PostgreSQL server for the tests and the store benchmark: ``initdb`` into a
temporary folder, ``pg_ctl start`` listening on a Unix socket in that folder only (no TCP
port, so runs beside each other never collide), removed on :meth:`PgServer.stop`.

The binaries are looked up in ``pg_config --bindir``, then ``/usr/lib/postgresql/*/bin``
(Debian's ``postgresql`` package, newest first), then ``PATH``. ``initdb`` refuses to run as
root: as root the server runs as the ``postgres`` user (else ``nobody``) through ``runuser``,
and its folder is given to that user.

No pytest here: ``tests/conftest.py`` wraps it in fixtures, ``benchmarks/store_concurrency.py``
uses it directly.
"""

from __future__ import annotations

import contextlib
import glob
import os
import pwd
import shutil
import subprocess
import tempfile
from pathlib import Path
from urllib.parse import quote

#: Server settings for a disposable database: no durability (nothing survives a crash of a
#: test server anyway), enough connections for 8 benchmark processes with their pools.
SERVER_OPTIONS = (
    "-c listen_addresses='' -c fsync=off -c synchronous_commit=off -c full_page_writes=off "
    "-c max_connections=300"
)
#: The superuser ``initdb`` creates (trust authentication on the socket).
SUPERUSER = "postgres"


class PgUnavailable(Exception):
    """PostgreSQL cannot be started here; the message says why."""


def find_bindir() -> Path | None:
    """The folder holding ``initdb``, ``pg_ctl`` and ``postgres``, else ``None``."""
    candidates: list[Path] = []
    pg_config = shutil.which("pg_config")
    if pg_config:
        try:
            out = subprocess.run(
                [pg_config, "--bindir"], capture_output=True, text=True, check=True, timeout=30
            ).stdout.strip()
            candidates.append(Path(out))
        except (OSError, subprocess.SubprocessError):
            pass
    candidates += [
        Path(p)
        for p in sorted(
            glob.glob("/usr/lib/postgresql/*/bin"),
            key=lambda p: int(Path(p).parent.name) if Path(p).parent.name.isdigit() else 0,
            reverse=True,
        )
    ]
    initdb = shutil.which("initdb")
    if initdb:
        candidates.append(Path(os.path.realpath(initdb)).parent)
    for folder in candidates:
        if all((folder / name).is_file() for name in ("initdb", "pg_ctl", "postgres")):
            return folder
    return None


def _server_user() -> str | None:
    """The user the server runs as when this process is root (``None``: this user)."""
    if os.geteuid() != 0:
        return None
    for name in ("postgres", "nobody"):
        try:
            pwd.getpwnam(name)
        except KeyError:
            continue
        return name
    raise PgUnavailable("running as root and neither a 'postgres' nor a 'nobody' user exists")


class PgServer:
    """One running throwaway server (see the module docstring).

    Attributes:
        root: its temporary folder (data in ``root/data``, the socket in ``root``).
        url: a ``postgresql://`` URL of its ``postgres`` database.
    """

    def __init__(self, root: Path, bindir: Path, user: str | None) -> None:
        self.root = root
        self.bindir = bindir
        self.user = user
        self.url = f"postgresql://{SUPERUSER}@/postgres?host={quote(str(root), safe='')}"

    @classmethod
    def start(cls) -> PgServer:
        """``initdb`` and start a server.

        Raises:
            PgUnavailable: no binaries, or initdb or the start failed (with their output).
        """
        bindir = find_bindir()
        if bindir is None:
            raise PgUnavailable(
                "PostgreSQL not found (no initdb/pg_ctl in pg_config --bindir, "
                "/usr/lib/postgresql/*/bin or PATH): install the Debian package postgresql"
            )
        user = _server_user()
        root = Path(tempfile.mkdtemp(prefix="ctxpg-"))
        server = cls(root, bindir, user)
        try:
            if user is not None:
                info = pwd.getpwnam(user)
                os.chown(root, info.pw_uid, info.pw_gid)
            server._run(
                "initdb", "-D", str(root / "data"), "-A", "trust", "-U", SUPERUSER,
                "-E", "UTF8", "--locale=C", "-N",
            )  # fmt: skip
            server._run(
                "pg_ctl", "-D", str(root / "data"), "-l", str(root / "server.log"), "-w",
                "-t", "60", "-o", f"-k {root} {SERVER_OPTIONS}", "start",
            )  # fmt: skip
        except PgUnavailable:
            server.stop()
            raise
        return server

    def _run(self, program: str, *args: str) -> None:
        command = [str(self.bindir / program), *args]
        if self.user is not None:
            command = ["runuser", "-u", self.user, "--", *command]
        try:
            done = subprocess.run(
                command, capture_output=True, text=True, timeout=120, cwd=self.root
            )
        except (OSError, subprocess.SubprocessError) as exc:
            raise PgUnavailable(f"{program} could not run: {exc}") from exc
        if done.returncode != 0:
            log = self.root / "server.log"
            tail = log.read_text(errors="replace")[-2000:] if log.exists() else ""
            raise PgUnavailable(
                f"{program} failed ({done.returncode}): {done.stderr.strip()[-2000:]} {tail}"
            )

    def url_for_schema(self, schema: str) -> str:
        """The URL of this server with ``schema`` first on the search path (the schema must
        exist)."""
        return f"{self.url}&options={quote(f'-csearch_path={schema}', safe='')}"

    def stop(self) -> None:
        """Stop the server (immediate shutdown) and remove its folder."""
        if (self.root / "data" / "postmaster.pid").exists():
            with contextlib.suppress(PgUnavailable):
                self._run("pg_ctl", "-D", str(self.root / "data"), "-m", "immediate", "stop")
        shutil.rmtree(self.root, ignore_errors=True)
