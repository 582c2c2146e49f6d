"""Fixtures of the store tests: each test taking ``backend`` or ``store`` runs once per store
kind (SQLite file, SQLite in memory where it applies, PostgreSQL)."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest
from backends import Backend, Store


@pytest.fixture(params=["sqlite", "postgres"])
def backend(request: pytest.FixtureRequest, tmp_path: Path) -> Backend:
    """A store location of each kind (nothing opened yet)."""
    if request.param == "sqlite":
        return Backend("sqlite", str(tmp_path / "ctx.db"))
    return Backend("postgres", request.getfixturevalue("pg_url"))


@pytest.fixture(params=["sqlite", "memory", "postgres"])
def any_backend(request: pytest.FixtureRequest, tmp_path: Path) -> Backend:
    """A store location of each kind, SQLite's ``:memory:`` included."""
    if request.param == "sqlite":
        return Backend("sqlite", str(tmp_path / "ctx.db"))
    if request.param == "memory":
        return Backend("memory", ":memory:")
    return Backend("postgres", request.getfixturevalue("pg_url"))


@pytest.fixture
def store(any_backend: Backend) -> Iterator[Store]:
    """An open store of each kind, closed after the test."""
    with any_backend.open() as s:
        yield s
