"""``ctxengine revert``: undo a stored compaction (append-only), as text and as JSON
(schemas/revert.json); a file or a session without a compaction exits 2."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from cli_helpers import EXAMPLE, EXAMPLE_ID, cli, validate

from ctxengine.cli import main


def stored(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> Path:
    db = tmp_path / "store.db"
    assert main(["import", str(EXAMPLE), "--db", str(db)]) == 0
    capsys.readouterr()
    return db


def inspect_tokens(db: Path, capsys: pytest.CaptureFixture[str]) -> int:
    assert main(["inspect", EXAMPLE_ID, "--db", str(db), "--json"]) == 0
    return int(json.loads(capsys.readouterr().out)["epochs"][-1]["tokens"])


def test_revert_undoes_the_stored_compaction(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    db = stored(tmp_path, capsys)
    out = tmp_path / "request.json"
    argv = ["compact", EXAMPLE_ID, "--db", str(db), "--window", "16000", "-o", str(out), "--json"]
    assert main(argv) == 0
    compaction = json.loads(capsys.readouterr().out)["outcome"]["entry_id"]
    # inspect names it, as revert --help says.
    assert main(["inspect", EXAMPLE_ID, "--db", str(db), "--json"]) == 0
    epochs = json.loads(capsys.readouterr().out)["epochs"]
    assert [ep["closed_by"]["entry_id"] for ep in epochs[:-1]] == [compaction]
    assert main(["revert", EXAMPLE_ID, "--db", str(db), "--json"]) == 0
    report = json.loads(capsys.readouterr().out)
    validate(report, "revert")
    assert report["withdrawn"] == [compaction]
    assert report["compaction_in_force"] is None
    assert report["tokens_after"] > report["tokens_before"]
    # A second revert finds nothing left to undo.
    run = cli("revert", EXAMPLE_ID, "--db", db)
    assert run.returncode == 2
    assert "revert: the session has no compaction in force" in run.stderr


def test_plain_text_names_the_compaction(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    db = stored(tmp_path, capsys)
    out = tmp_path / "request.json"
    argv = ["compact", EXAMPLE_ID, "--db", str(db), "--window", "16000", "-o", str(out), "--json"]
    assert main(argv) == 0
    compaction = json.loads(capsys.readouterr().out)["outcome"]["entry_id"]
    run = cli("revert", "--session", EXAMPLE_ID, "--compaction", compaction, "--db", db)
    assert run.returncode == 0, run.stderr
    assert run.stdout.startswith(f"reverted compaction {compaction}: the context is ")
    assert run.stdout.rstrip().endswith("compaction in force: none")


def test_a_file_is_refused_with_what_to_do() -> None:
    run = cli("revert", EXAMPLE)
    assert run.returncode == 2
    assert "revert changes a stored session; import the file first" in run.stderr
