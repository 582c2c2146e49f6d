"""``ctxengine compact SESSION`` run by several processes at once on one stored session:
one compaction is stored, the others find it and hand off its request; ``--plan`` refuses
options that would write."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from corpus import require_corpus
from ctxengine.cli import main
from ctxengine.model import CompactionRecord
from ctxengine.stores.sqlite import SQLiteStore


def test_three_concurrent_compactions_of_a_stored_session_store_one(tmp_path: Path) -> None:
    path = require_corpus("codex", "codex-cpolar-connect-2025-09-16-a.jsonl")
    db = tmp_path / "s.db"
    assert main(["import", str(path), "--db", str(db)]) == 0
    with SQLiteStore(db) as store:
        (info,) = store.sessions()
    argv = [sys.executable, "-m", "ctxengine", "compact", info.id, "--db", str(db)]
    procs = [
        subprocess.Popen(
            [*argv, "--window", "8000", "-o", str(tmp_path / f"r{k}.json"), "--report-json"],
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            text=True,
            # PYTHONPATH passed on: the processes run the sources under test
            env={
                "PATH": "",
                "CTXENGINE_DB": str(db),
                "PYTHONPATH": os.environ.get("PYTHONPATH", ""),
            },
        )
        for k in range(3)
    ]
    results = [p.communicate(timeout=120) for p in procs]
    assert [p.returncode for p in procs] == [0, 0, 0], [e for _o, e in results]
    with SQLiteStore(db) as store:
        stored = [e for e in store.entries(info.id) if isinstance(e.body, CompactionRecord)]
    assert len(stored) == 1
    notes = sorted(json.loads(o)["note"] for o, _e in results)
    assert notes == ["", *["already compacted: no new entries since the last compaction"] * 2]
    bodies = {(tmp_path / f"r{k}.json").read_text() for k in range(3)}
    assert len(bodies) == 1  # every process hands off the same compacted request


def test_plan_refuses_an_output_file(capsys: pytest.CaptureFixture[str], tmp_path: Path) -> None:
    path = tmp_path / "chat.json"
    path.write_text(json.dumps([{"role": "user", "content": "hi"}]), encoding="utf-8")
    assert main(["compact", str(path), "--plan", "-o", str(tmp_path / "x.json")]) == 2
    assert "--plan" in capsys.readouterr().err
    assert not (tmp_path / "x.json").exists()


@pytest.mark.parametrize("flag", ["--json", "--report-json"])
def test_plan_with_json_prints_the_plan_document(
    capsys: pytest.CaptureFixture[str], tmp_path: Path, flag: str
) -> None:
    path = tmp_path / "chat.json"
    path.write_text(json.dumps([{"role": "user", "content": "hi"}]), encoding="utf-8")
    assert main(["compact", str(path), "--plan", flag]) == 0
    found = json.loads(capsys.readouterr().out)
    assert found["note"] == ""
    assert found["plan"]["requirement"]["reason"] == "manual"
    assert found["plan"]["cut"] is None  # one message: nothing to summarize
