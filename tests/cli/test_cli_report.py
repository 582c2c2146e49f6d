"""The ``compact --report-json`` report: its keys, ``events`` (every ladder event of the run),
and a run that compacts nothing."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from ctxengine.cli import main
from ctxengine.cli.commands.compact import measured_by_us
from ctxengine.cli.load import load_target
from ctxengine.engine import Session
from ctxengine.importers import read_transcript
from ctxengine.model import CompactionRecord
from ctxengine.projection.render import called_tool_schemas

EXAMPLE = Path(__file__).resolve().parents[2] / "examples" / "session.jsonl"


@pytest.fixture(autouse=True)
def _no_summary_model(monkeypatch: pytest.MonkeyPatch) -> None:
    """The extractive summarizer, whatever the environment configures."""
    monkeypatch.delenv("CTXENGINE_SUMMARY_MODEL", raising=False)


def report_of(capsys: pytest.CaptureFixture[str], *argv: str) -> dict[str, object]:
    assert main(["compact", *argv, "--report-json"]) == 0
    data: dict[str, object] = json.loads(capsys.readouterr().out)
    return data


def test_events_are_the_ladder_events_of_the_run(capsys: pytest.CaptureFixture[str]) -> None:
    report = report_of(capsys, str(EXAMPLE), "--window", "16000")
    # The CLI sizes another agent's transcript by our estimate (its usage is left out),
    # declares every tool it calls and hands the summarizer the working directory the
    # transcript records.
    target = load_target(str(EXAMPLE), db=None, format=None)
    entries = measured_by_us(target)
    called = called_tool_schemas(m for e in entries if (m := e.message) is not None)
    session = Session(16_000, entries=entries, tools=called, cwd=target.cwd)
    outcome = session.compact()
    record = outcome.entry.body
    assert isinstance(record, CompactionRecord)
    assert report["events"] == [e.to_dict(with_plan=False) for e in session.events]
    assert report["outcome"] == json.loads(json.dumps(outcome.report()))
    plan = outcome.plan
    assert plan is not None and plan.cut is not None
    assert report["outcome"]["plan"]["cut"]["first_kept_id"] == record.first_kept_id
    assert [e.step for e in session.events] == ["compaction"]
    assert report["cut"] == {
        "first_kept_id": record.first_kept_id,
        "splits_turn": record.splits_turn,
    }
    assert "summarized_events" not in report


def test_a_run_that_compacts_nothing_says_why_and_has_no_compaction(
    capsys: pytest.CaptureFixture[str], tmp_path: Path
) -> None:
    path = tmp_path / "chat.json"
    path.write_text(
        json.dumps(
            [{"role": "user", "content": "fix the build"}, {"role": "assistant", "content": "ok"}]
        ),
        encoding="utf-8",
    )
    report = report_of(capsys, str(path))
    tokens = Session(128_000, entries=read_transcript(path).entries).project().tokens
    assert (report["tokens_before"], report["tokens_after"]) == (tokens, tokens)
    assert (report["window"], report["messages"]) == (128_000, 2)
    assert report["note"] == "no valid cut point leaves anything to summarize"
    assert (report["events"], report["closed_pending_calls"]) == ([], [])
    assert "compaction" not in report and "cut" not in report
    assert report["summarizer"] == {
        "kind": "extractive",
        "model": None,
        "calls": 0,
        "input_tokens": 0,
        "output_tokens": 0,
        "instructions_from": [],
        "fallback": None,
        "notes": [],
    }
