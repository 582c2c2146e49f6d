"""Test configuration: this directory is on ``sys.path`` so tests can ``import corpus``.

PostgreSQL fixtures: ``pg_server`` starts one throwaway server for the whole run
(:mod:`pg_server`) the first time a test asks for it; ``pg_url`` gives each test a schema of
its own on it (dropped afterwards). Where PostgreSQL or the ``postgres`` extra is missing
those tests skip saying why, except under CI (``CI=true``), where that is a failure.
"""

from __future__ import annotations

import itertools
import os
from collections.abc import Iterator

import pytest

from pg_server import PgServer, PgUnavailable

_schemas = itertools.count()


def pg_unavailable(reason: str) -> None:
    """Skip the test for ``reason``, or fail it under CI, where PostgreSQL is required."""
    if os.environ.get("CI", "").lower() == "true":
        pytest.fail(f"{reason} (the PostgreSQL tests must run under CI)")
    pytest.skip(reason)


@pytest.fixture(scope="session")
def pg_server() -> Iterator[PgServer]:
    """One throwaway PostgreSQL server for the run."""
    try:
        import psycopg  # noqa: F401
        import sqlalchemy  # noqa: F401
    except ImportError as exc:
        pg_unavailable(f"the postgres extra is not installed (pip install -e '.[dev]'): {exc}")
    try:
        server = PgServer.start()
    except PgUnavailable as exc:
        pg_unavailable(str(exc))
    yield server
    server.stop()


def _admin(server: PgServer, sql: str) -> None:
    import psycopg

    with psycopg.connect(server.url, autocommit=True) as conn:
        conn.execute(sql)


@pytest.fixture
def pg_url(pg_server: PgServer) -> Iterator[str]:
    """The URL of a fresh, empty schema of the test server (dropped after the test, with the
    connections still using it)."""
    name = f"t{os.getpid()}_{next(_schemas)}"
    _admin(pg_server, f"CREATE SCHEMA {name}")
    yield pg_server.url_for_schema(name)
    _admin(
        pg_server,
        "SELECT pg_terminate_backend(pid) FROM pg_stat_activity "
        "WHERE pid <> pg_backend_pid() AND backend_type = 'client backend'",
    )
    _admin(pg_server, f"DROP SCHEMA {name} CASCADE")


@pytest.fixture(params=["sqlite", "postgres"])
def store_location(request: pytest.FixtureRequest, tmp_path: os.PathLike[str]) -> str:
    """Where a store lives, once per kind: a SQLite file, a PostgreSQL schema."""
    if request.param == "sqlite":
        return os.path.join(tmp_path, "ctx.db")
    url: str = request.getfixturevalue("pg_url")
    return url
