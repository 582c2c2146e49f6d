"""What only the SQLite store has: its file (WAL, pragmas, errors), the default path, the
busy timeout as SQLite's, the cost of a catch-up read. What every store does is in
``test_store.py``."""

from __future__ import annotations

import sqlite3
import sys
import threading
import time
from pathlib import Path
from typing import Any

import pytest
from test_store import imported, make_log

from ctxengine.errors import (
    ConfigError,
    StoreBusy,
    StoreError,
)
from ctxengine.policy.defaults import DEFAULT_STORE_BUSY_TIMEOUT_S
from ctxengine.stores import DB_ENV_VAR, SessionInfo, SQLiteStore, default_db_path
from ctxengine.stores.sqlite import BUSY_TIMEOUT_S


def pragmas(store: SQLiteStore, names: tuple[str, ...]) -> list[Any]:
    """The values of ``PRAGMA name`` on the calling thread's connection of ``store``."""
    with store._connections.use() as conn:
        return [conn.execute(f"PRAGMA {name}").fetchone()[0] for name in names]


@pytest.fixture
def db(tmp_path: Path) -> Path:
    return tmp_path / "ctx.db"


class TestDatabaseFile:
    def test_a_file_database_uses_wal_normal_sync_and_foreign_keys(self, db: Path) -> None:
        names = ("journal_mode", "synchronous", "foreign_keys", "busy_timeout")
        with SQLiteStore(db, busy_timeout_s=1.25) as store:
            here = pragmas(store, names)
            seen: list[list[Any]] = []
            worker = threading.Thread(target=lambda: seen.append(pragmas(store, names)))
            worker.start()
            worker.join()
        assert here == ["wal", 1, 1, 1250]
        assert seen == [["wal", 1, 1, 1250]]
        with sqlite3.connect(db) as conn:
            assert conn.execute("PRAGMA journal_mode").fetchone()[0] == "wal"

    def test_an_in_memory_database_keeps_its_own_journal(self) -> None:
        with SQLiteStore(":memory:") as store:
            assert pragmas(store, ("journal_mode",)) == ["memory"]

    def test_a_file_that_is_not_a_database_is_a_store_error(self, tmp_path: Path) -> None:
        path = tmp_path / "notes.db"
        path.write_text("not sqlite at all, just some text that is long enough" * 40)
        with pytest.raises(StoreError) as info:
            SQLiteStore(path)
        assert str(info.value) == f"sqlite store {path}: open failed: file is not a database"

    def test_a_missing_directory_is_a_store_error(self, tmp_path: Path) -> None:
        path = tmp_path / "absent" / "ctx.db"
        with pytest.raises(StoreError) as info:
            SQLiteStore(path)
        assert str(info.value) == (
            f"sqlite store {path}: open failed: unable to open database file"
        )

    def test_a_closed_store_raises_store_error(self, db: Path) -> None:
        store = SQLiteStore(db)
        store.close()
        store.close()
        with pytest.raises(StoreError, match="list sessions failed: Cannot operate on a closed"):
            store.sessions()


class TestDefaultPath:
    def test_the_environment_variable_wins(
        self, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
    ) -> None:
        monkeypatch.setenv(DB_ENV_VAR, str(tmp_path / "sub" / "my.db"))
        assert default_db_path() == tmp_path / "sub" / "my.db"
        assert (tmp_path / "sub").is_dir()

    @pytest.mark.skipif(sys.platform != "linux", reason="XDG_DATA_HOME is read on Linux only")
    def test_otherwise_the_user_data_directory_is_used(
        self, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
    ) -> None:
        monkeypatch.delenv(DB_ENV_VAR, raising=False)
        monkeypatch.setenv("XDG_DATA_HOME", str(tmp_path / "data"))
        assert default_db_path() == tmp_path / "data" / "ctxengine" / "ctxengine.db"
        with SQLiteStore() as store:
            assert store.path == str(tmp_path / "data" / "ctxengine" / "ctxengine.db")
        assert (tmp_path / "data" / "ctxengine" / "ctxengine.db").is_file()


class TestCatchUpCost:
    def test_reading_the_newest_entries_costs_the_same_for_a_short_and_a_long_log(
        self, db: Path
    ) -> None:
        with SQLiteStore(db) as store:
            store.import_session(imported("short", make_log("short", 300)))
            store.import_session(imported("long", make_log("long", 6000)))
            steps = []
            for sid, last in (("short", 299), ("long", 5999)):
                counted = [0]

                def tick(counted: list[int] = counted) -> int:
                    counted[0] += 1
                    return 0

                with store._connections.use() as conn:
                    conn.set_progress_handler(tick, 1)
                    newest = store.entries(sid, after_seq=last - 3)
                    conn.set_progress_handler(None, 1)
                assert [e.seq for e in newest] == [last - 2, last - 1, last]
                steps.append(counted[0])
        # Progress-handler calls (about one per SQLite loop step): the same, give or take a
        # B-tree seek, for 300 and 6,000 entries. A walk over the log would add thousands.
        assert abs(steps[0] - steps[1]) <= 2
        assert steps[1] < 100


class TestBusyTimeout:
    def test_the_default_is_the_policy_default(self, db: Path) -> None:
        with SQLiteStore(db) as store:
            assert store.busy_timeout_s == BUSY_TIMEOUT_S == DEFAULT_STORE_BUSY_TIMEOUT_S
            assert pragmas(store, ("busy_timeout",)) == [5000]

    @pytest.mark.parametrize("bad", [-1, float("nan"), float("inf"), "5"])
    def test_a_timeout_that_is_not_a_finite_non_negative_number_is_refused(
        self, db: Path, bad: object
    ) -> None:
        with pytest.raises(ConfigError) as info:
            SQLiteStore(db, busy_timeout_s=bad)  # type: ignore[arg-type]
        assert str(info.value) == (
            f"busy_timeout_s must be a finite number of seconds >= 0, got {bad!r}"
        )
        assert not db.exists()

    def test_a_write_waits_the_configured_time_for_another_writer(self, db: Path) -> None:
        with SQLiteStore(db, busy_timeout_s=0.3) as store:
            store.create_session(SessionInfo("s1", "live"))
            raw = sqlite3.connect(db, isolation_level=None)
            raw.execute("BEGIN IMMEDIATE")
            t0 = time.monotonic()
            with pytest.raises(StoreBusy, match="store busy"):
                store.append("s1", make_log("s1", 1))
            waited = time.monotonic() - t0
            assert store.entries("s1") == []
            raw.execute("ROLLBACK")
            raw.close()
            assert store.append("s1", make_log("s1", 1)) == 1
        assert 0.3 <= waited < 3
