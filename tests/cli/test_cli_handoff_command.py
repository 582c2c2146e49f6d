"""``ctxengine handoff``: a stored session continued in a new stored session linked to it,
its request body declaring the recall tool; JSON report against schemas/handoff.json."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest
from cli_helpers import EXAMPLE, EXAMPLE_ID, cli, cli_env, validate

from ctxengine.cli import main
from ctxengine.cli.commands import handoff as handoff_command
from ctxengine.projection.injection import RECALL_NOTE
from ctxengine.projection.render import render_openai  # noqa: F401  (before validate: cycle)
from ctxengine.projection.validate import validate as validate_body
from ctxengine.stores import SessionInfo, SessionLink
from ctxengine.stores.sqlite import SQLiteStore


def stored(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> Path:
    db = tmp_path / "store.db"
    assert main(["import", str(EXAMPLE), "--db", str(db)]) == 0
    capsys.readouterr()
    return db


def test_handoff_stores_a_linked_session_and_writes_its_request(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    db = stored(tmp_path, capsys)
    out = tmp_path / "request.json"
    argv = ["handoff", EXAMPLE_ID, "--db", str(db), "--window", "16000", "-o", str(out), "--json"]
    assert main(argv) == 0
    report = json.loads(capsys.readouterr().out)
    validate(report, "handoff")
    new = f"handoff-1.{EXAMPLE_ID}"
    body = json.loads(out.read_text())
    assert validate_body(body, "openai") == []
    with SQLiteStore(db, read_only=True) as store:
        old_entries = store.entries(EXAMPLE_ID)
        link = store.session_link(new)
        new_entries = store.entries(new)
    assert len(old_entries) == 164  # the old session is left as it was
    assert link is not None
    assert (link.parent_id, link.parent_entry_id, link.relation) == (
        EXAMPLE_ID,
        old_entries[-1].id,
        "handoff",
    )
    assert report["new_session_id"] == new
    assert report["parent_entry_id"] == old_entries[-1].id
    assert report["entries"] == len(new_entries) < len(old_entries)
    assert report["compaction_id"] == new_entries[-1].id
    assert report["summarized"] is True
    assert report["messages"] == len(body["messages"])
    assert report["tokens_after"] < report["tokens_before"]
    names = [t["function"]["name"] for t in body["tools"]]
    assert "recall" in names and report["tools"] == sorted(names)
    assert any(RECALL_NOTE in json.dumps(m["content"]) for m in body["messages"][:3])
    # Recall in the new session reaches the old history (the first request, summarized away).
    assert main(["recall", new, "tallyho split 100 3", "--db", str(db), "--json"]) == 0
    found = json.loads(capsys.readouterr().out)
    validate(found, "recall")
    hits = found["hits"]
    assert found["session_id"] == new
    assert {h["session_id"] for h in hits} == {EXAMPLE_ID}  # each hit names its session
    assert old_entries[0].id in {h["entry_id"] for h in hits}
    assert old_entries[0].id not in {e.id for e in new_entries}
    assert {h["entry_id"] for h in hits} <= {e.id for e in old_entries}
    # A second hand-off of the same session gets the next number.
    assert main(["handoff", EXAMPLE_ID, "--db", str(db), "--window", "16000", "--json"]) == 0
    assert json.loads(capsys.readouterr().out)["new_session_id"] == f"handoff-2.{EXAMPLE_ID}"


def test_an_anthropic_body_ends_with_the_next_user_message(tmp_path: Path) -> None:
    db = tmp_path / "store.db"
    assert cli("import", EXAMPLE, "--db", db).returncode == 0
    out = tmp_path / "request.json"
    run = cli(
        "handoff",
        EXAMPLE_ID,
        "--db",
        db,
        "--window",
        "16000",
        "--provider",
        "anthropic",
        "--model",
        "claude-sonnet-4-5",
        "--user",
        "Carry on with the tests.",
        "-o",
        out,
    )
    assert run.returncode == 0, run.stderr
    assert run.stdout.startswith(f"handed off {EXAMPLE_ID} to handoff-1.{EXAMPLE_ID}: ")
    body = json.loads(out.read_text())
    assert validate_body(body, "anthropic", strict=True) == []
    assert body["messages"][-1]["content"][-1]["text"] == "Carry on with the tests."
    assert "recall" in [t["name"] for t in body["tools"]]


def test_refusals_exit_2_and_store_nothing(tmp_path: Path) -> None:
    db = tmp_path / "store.db"
    assert cli("import", EXAMPLE, "--db", db).returncode == 0
    run = cli("handoff", EXAMPLE, "--db", db)
    assert run.returncode == 2
    assert "handoff stores a new session linked to a stored one; import the file first" in (
        run.stderr
    )
    run = cli("handoff", EXAMPLE_ID, "--db", db, "--new-id", EXAMPLE_ID)
    assert run.returncode == 2
    assert f"session {EXAMPLE_ID!r} exists already: give another --new-id" in run.stderr
    with SQLiteStore(db, read_only=True) as store:
        assert [s.id for s in store.sessions()] == [EXAMPLE_ID]


def test_hand_offs_at_once_each_get_the_next_free_id(tmp_path: Path) -> None:
    db = tmp_path / "store.db"
    assert cli("import", EXAMPLE, "--db", db).returncode == 0
    argv = [sys.executable, "-m", "ctxengine", "handoff", EXAMPLE_ID, "--db", str(db), "--json"]
    procs = [
        subprocess.Popen(argv, env=cli_env(), stdout=subprocess.PIPE, stderr=subprocess.PIPE)
        for _ in range(4)
    ]
    outs = [p.communicate(timeout=120) for p in procs]
    assert [p.returncode for p in procs] == [0] * 4, [err for _, err in outs]
    made = sorted(json.loads(out)["new_session_id"] for out, _ in outs)
    assert made == [f"handoff-{k}.{EXAMPLE_ID}" for k in range(1, 5)]
    with SQLiteStore(db, read_only=True) as store:
        links = store.children(EXAMPLE_ID)
        assert sorted(x.session_id for x in links) == made
        for x in links:  # every entry stored under the id its session got
            assert {e.session_id for e in store.entries(x.session_id)} == {x.session_id}


def test_a_default_id_taken_during_the_hand_off_gives_the_next_one(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    db = stored(tmp_path, capsys)
    chosen: list[str] = []
    first_free = handoff_command._new_id

    def new_id(store: SQLiteStore, session_id: str, wanted: str | None) -> str:
        picked = first_free(store, session_id, wanted)
        chosen.append(picked)
        if len(chosen) == 1:  # another writer stores a session of that id meanwhile
            with SQLiteStore(db) as other:
                other.create_session(
                    SessionInfo(id=picked, format="ctxengine"),
                    link=SessionLink(picked, session_id, None, "handoff"),
                )
        return picked

    monkeypatch.setattr(handoff_command, "_new_id", new_id)
    assert main(["handoff", EXAMPLE_ID, "--db", str(db), "--window", "16000", "--json"]) == 0
    report = json.loads(capsys.readouterr().out)
    new = f"handoff-2.{EXAMPLE_ID}"
    assert chosen == [f"handoff-1.{EXAMPLE_ID}", new]
    assert report["new_session_id"] == new
    with SQLiteStore(db, read_only=True) as store:
        entries = store.entries(new)
        assert store.entries(f"handoff-1.{EXAMPLE_ID}") == []
    assert len(entries) == report["entries"] > 0
    assert {e.session_id for e in entries} == {new}
    assert entries[-1].id == report["compaction_id"]
