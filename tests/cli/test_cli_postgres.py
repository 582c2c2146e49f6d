"""The CLI on a PostgreSQL store: ``--db postgresql://…`` and ``CTXENGINE_DB`` choose it,
``sqlite:///`` URLs still choose SQLite, and ``ctxengine migrate`` copies every session from
SQLite to PostgreSQL with its entries byte for byte, once, with progress on a terminal."""

from __future__ import annotations

import hashlib
import json
import sys
from pathlib import Path
from typing import Any

import pytest
from cli_helpers import EXAMPLE, EXAMPLE_ID, cli, cli_env, validate

from ctxengine.importers.base import ImportedSession
from ctxengine.model import Entry, Message, TextPart
from ctxengine.stores import SessionInfo, SessionLink, SQLiteStore
from ctxengine.stores.location import open_store, redact

pytest.importorskip("sqlalchemy")
pytest.importorskip("psycopg")


def entry(sid: str, seq: int, text: str) -> Entry:
    body = Message("user" if seq % 2 == 0 else "assistant", (TextPart(text),))
    return Entry(f"{sid}-{seq}", sid, seq, body, f"{sid}-{seq - 1}" if seq else None, "2026-01-01")


def hashes(location: str) -> list[tuple[str, int, str, str, str | None]]:
    """(session, seq, id, sha256 of the body bytes, of the meta bytes) of every stored entry,
    read by a raw connection."""
    if location.startswith("postgresql"):
        import psycopg

        with psycopg.connect(location) as conn:
            rows = conn.execute(
                "SELECT session_id, seq, id, body, meta FROM entries ORDER BY 1, 2"
            ).fetchall()
    else:
        import sqlite3

        with sqlite3.connect(location) as conn:
            rows = conn.execute(
                "SELECT session_id, seq, id, body, meta FROM entries ORDER BY 1, 2"
            ).fetchall()
    return [
        (
            s,
            int(q),
            i,
            hashlib.sha256(bytes(b)).hexdigest(),
            None if m is None else hashlib.sha256(bytes(m)).hexdigest(),
        )
        for s, q, i, b, m in rows
    ]


def run_json(*args: str | Path, **env: str) -> Any:
    done = cli(*args, "--json", env=cli_env(**env))
    assert done.returncode == 0, done.stderr
    return json.loads(done.stdout)


class TestChoosingTheStore:
    def test_db_and_the_environment_choose_postgres(self, pg_url: str) -> None:
        imported = run_json("import", EXAMPLE, "--db", pg_url)
        validate(imported, "import")
        assert imported["store"] == redact(pg_url)
        assert [f["session_id"] for f in imported["files"]] == [EXAMPLE_ID]
        listed = run_json("sessions", CTXENGINE_DB=pg_url)
        validate(listed, "sessions")
        assert listed["store"] == redact(pg_url)
        assert [s["id"] for s in listed["sessions"]] == [EXAMPLE_ID]
        with open_store(pg_url) as store:
            stored = store.entries(EXAMPLE_ID)
        assert listed["sessions"][0]["entries"] == len(stored) > 10
        inspected = run_json("inspect", "--session", EXAMPLE_ID[:8], "--db", pg_url)
        assert inspected["session_id"] == EXAMPLE_ID

    def test_a_sqlite_url_is_a_sqlite_file(self, tmp_path: Path) -> None:
        db = tmp_path / "ctx.db"
        imported = run_json("import", EXAMPLE, "--db", f"sqlite:///{db}")
        assert imported["store"] == str(db)
        with SQLiteStore(db) as store:
            assert [s.id for s in store.sessions()] == [EXAMPLE_ID]

    def test_an_unknown_scheme_is_refused_naming_it(self) -> None:
        done = cli("sessions", "--db", "mysql://u:pw@h/db")
        assert done.returncode == 2
        assert done.stderr.strip() == (
            "error: 'mysql://u:***@h/db': unknown store URL scheme 'mysql' (expected a file "
            "path, sqlite:///path or postgresql://user@host/database)"
        )


def fill_sqlite(db: Path) -> None:
    """Three sessions: an imported transcript, a live one, and a hand-off child of it."""
    with SQLiteStore(db) as store:
        log = tuple(entry("imp", i, f"imported {i}") for i in range(6))
        store.import_session(ImportedSession("imp", "test", "t.jsonl", log, "t", {"cwd": "/w"}))
        store.create_session(SessionInfo("live", "ctxengine", created_at="2026-02-01T00:00:00Z"))
        store.append("live", [entry("live", i, f"live {i}") for i in range(4)])
        link = SessionLink("child", "live", "live-3", "handoff", "2026-02-02T00:00:00+00:00")
        store.create_session(
            SessionInfo("child", "ctxengine", created_at="2026-02-02T00:00:00+00:00"),
            link=link,
            entries=[entry("child", 0, "continued")],
        )


class TestMigrate:
    def test_sessions_are_copied_unchanged_once(self, tmp_path: Path, pg_url: str) -> None:
        db = tmp_path / "ctx.db"
        fill_sqlite(db)
        first = run_json("migrate", "--from", f"sqlite:///{db}", "--to", pg_url)
        validate(first, "migrate")
        assert first == {
            "from": str(db),
            "to": redact(pg_url),
            "sessions": [
                {"id": "imp", "status": "copied", "added": 6, "entries": 6, "imports": 1,
                 "error": None},
                {"id": "live", "status": "copied", "added": 4, "entries": 4, "imports": 0,
                 "error": None},
                {"id": "child", "status": "copied", "added": 1, "entries": 1, "imports": 0,
                 "error": None},
            ],
            "copied": 3, "extended": 0, "unchanged": 0, "failed": 0,
        }  # fmt: skip
        assert hashes(pg_url) == hashes(str(db))
        assert len(hashes(pg_url)) == 11
        with SQLiteStore(db) as src, open_store(pg_url) as dst:
            assert dst.sessions() == src.sessions()
            for sid in ("imp", "live", "child"):
                assert dst.export_session(sid) == src.export_session(sid)
            assert dst.session_link("child") == src.session_link("child")
            assert dst.children("live") == src.children("live")
            assert dst.import_reports("imp") == src.import_reports("imp")
            assert dst.export_session("imp").imported_spans == ((0, 5),)
        again = run_json("migrate", "--from", str(db), "--to", pg_url)
        assert [(s["status"], s["added"]) for s in again["sessions"]] == [("unchanged", 0)] * 3
        assert hashes(pg_url) == hashes(str(db))

    def test_a_session_that_grew_gets_its_new_entries_and_a_re_import_stays_exact(
        self, tmp_path: Path, pg_url: str
    ) -> None:
        db = tmp_path / "ctx.db"
        fill_sqlite(db)
        run_json("migrate", "--from", str(db), "--to", pg_url)
        with SQLiteStore(db) as store:
            store.append("live", [entry("live", 4, "live 4"), entry("live", 5, "live 5")])
            grown = tuple(entry("imp", i, f"imported {i}") for i in range(8))
            store.import_session(ImportedSession("imp", "test", "t.jsonl", grown, "t", {}))
        out = run_json("migrate", "--from", str(db), "--to", pg_url)
        assert [(s["id"], s["status"], s["added"], s["imports"]) for s in out["sessions"]] == [
            ("imp", "extended", 2, 1),
            ("live", "extended", 2, 0),
            ("child", "unchanged", 0, 0),
        ]
        assert hashes(pg_url) == hashes(str(db))
        # The copied spans let PostgreSQL re-import the transcript as SQLite would.
        with open_store(pg_url) as dst:
            again = dst.import_session(ImportedSession("imp", "test", "t.jsonl", grown, "t", {}))
            assert (again.added, again.skipped, again.superseded) == (0, 8, 0)

    def test_a_session_changed_apart_is_reported_and_left_alone(
        self, tmp_path: Path, pg_url: str
    ) -> None:
        db = tmp_path / "ctx.db"
        fill_sqlite(db)
        with open_store(pg_url) as dst:
            dst.create_session(SessionInfo("live", "ctxengine"))
            dst.append("live", [entry("live", 0, "something else")])
        done = cli("migrate", "--from", str(db), "--to", pg_url, "--json")
        assert done.returncode == 2
        out = json.loads(done.stdout)
        message = (
            f"postgresql store {redact(pg_url)}: copy session 'live': the stored session "
            "differs from the source at seq 0 (entry 'live-0' here, 'live-0' there); "
            "nothing was copied"
        )
        assert [(s["id"], s["status"], s["error"]) for s in out["sessions"]] == [
            ("imp", "copied", None),
            ("live", "failed", message),
            ("child", "failed", out["sessions"][2]["error"]),
        ]
        assert out["sessions"][2]["error"] == (
            "session 'child' not copied: the session it was started from, 'live', was not copied"
        )
        assert (out["copied"], out["failed"]) == (1, 2)
        assert f"error: {message}" in done.stderr
        with open_store(pg_url) as dst:
            assert [e.body for e in dst.entries("live")] == [
                entry("live", 0, "something else").body
            ]

    def test_the_same_store_twice_is_refused(self, tmp_path: Path) -> None:
        db = tmp_path / "ctx.db"
        done = cli("migrate", "--from", str(db), "--to", f"sqlite:///{db}")
        assert done.returncode == 2
        assert done.stderr.strip() == f"error: --from and --to name the same store ({db})"

    @pytest.mark.skipif(sys.platform == "win32", reason="pseudo-terminals are POSIX")
    def test_progress_shows_on_a_terminal_and_one_line_per_session_on_stdout(
        self, tmp_path: Path, pg_url: str
    ) -> None:
        from test_cli_progress import on_terminal

        db = tmp_path / "ctx.db"
        fill_sqlite(db)
        code, out, terminal = on_terminal(
            "migrate", "--from", db, "--to", pg_url, CTXENGINE_PROGRESS_AFTER="0"
        )
        assert code == 0
        assert b"copying" in terminal and b"\x1b[" in terminal
        assert out.decode().splitlines() == [
            "imp: copied: 6 entries added (6 in the session), 1 imports",
            "live: copied: 4 entries added (4 in the session), 0 imports",
            "child: copied: 1 entries added (1 in the session), 0 imports",
            "3 sessions: 3 copied, 0 extended, 0 unchanged, 0 failed",
        ]


def test_serve_workers_without_a_store_is_refused() -> None:
    done = cli("serve", "--upstream", "http://127.0.0.1:9", "--workers", "2", "--no-store")
    assert done.returncode == 2
    assert done.stderr.strip() == (
        "error: --workers needs the store the workers share: drop --no-store"
    )
