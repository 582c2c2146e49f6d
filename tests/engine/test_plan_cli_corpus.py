"""``ctxengine compact --plan --json`` on every corpus transcript that imports, at an 8,000-token
window: the plan is printed and nothing else happens.

For each file:

- ``compact FILE --plan --json`` exits 0 and prints ``{"plan": …, "note": ""}``, the plan a
  manual compaction of the file would run (or ``plan`` null with the reason in ``note``);
- imported into a fresh SQLite store, ``compact SESSION --db DB --plan --json`` prints the same
  plan and leaves the store byte for byte as it was (the same ``entries`` rows, the same
  database file, nothing in its write-ahead log);
- the real ``compact SESSION --db DB --report-json`` that follows runs that very plan and
  stores one compaction whose ``first_kept_id`` is the cut of the attempt its outcome reports:
  the plan's own cut when the first attempt fits, a later attempt's cut when it does not.

No summary model is configured (``CTXENGINE_SUMMARY_MODEL`` removed): the extractive
summarizer writes, and no model is called.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
from engine_helpers import rows

from corpus import CORPUS, require_corpus, transcript_files
from ctxengine.cli import main
from ctxengine.errors import UnsupportedFormatError
from ctxengine.importers import read_transcript
from ctxengine.model import CompactionRecord
from ctxengine.model.codec import body_to_dict
from ctxengine.providers.profiles import ProfileTable
from ctxengine.replay.compare import recorded_model
from ctxengine.stores.sqlite import SQLiteStore

WINDOW = "8000"

#: Files whose stored compaction is not the plan's cut: how many attempts after the first one
#: with a cut the executor kept, and why (the first attempt did not shrink the context).
#: swe-agent-function-calling-simple.traj was one at a 40 % headroom (its first attempt, keep-
#: recent 1,354, cut at message 1 and summarized only the task); at 55 % (target 2,880) that
#: budget is 2,880 − 33 (head) − 54 (continuation message) − 2,319 (the base 1,200 plus the
#: 1,119-token task) − 80 (margin) = 394, floored at a quarter of 2,000: 500, which cuts at
#: message 7 and shrinks the context to 1,749 tokens.
LATER_ATTEMPT: dict[str, tuple[int, str]] = {
    "aider/aider-dev-chat-history-first-sessions.aider.chat.history.md": (
        1,
        "1,604 tokens, 6 messages: the first attempt's keep-recent budget, 2,880 (target) − 54 "
        "(continuation message) − 1,200 (state) − 80 (margin) = 1,546, cuts at message 1 and "
        "keeps 1,074 tokens: 1,707 measured, not fewer than before; the second (773, cut at "
        "message 3, 110 kept) gives 1,353. At a 40 % headroom the first attempt kept 2,000, "
        "everything, and had no cut",
    ),
}

#: Keys of ``CompactionPlan.to_dict()``.
PLAN_KEYS = {
    "requirement",
    "policy",
    "focus",
    "prune",
    "cut",
    "budget",
    "target",
    "tokens_before",
    "expected_tokens",
    "fixed_tokens",
    "floor",
    "conversation_messages",
    "attempts",
}


def _files() -> list[str]:
    if not CORPUS.exists():
        return ["(corpus missing)"]
    return [str(p.relative_to(CORPUS)) for p in transcript_files()]


@pytest.fixture(autouse=True)
def _no_summary_model(monkeypatch: pytest.MonkeyPatch) -> None:
    """The extractive summarizer, whatever the environment configures."""
    monkeypatch.delenv("CTXENGINE_SUMMARY_MODEL", raising=False)


def _importable(rel: str) -> Path:
    path = require_corpus(rel)
    try:
        read_transcript(path)
    except UnsupportedFormatError as exc:
        pytest.skip(f"no importer yet: {exc}")
    return path


def _json_of(capsys: pytest.CaptureFixture[str], argv: list[str]) -> Any:
    code = main(argv)
    captured = capsys.readouterr()
    assert code == 0, captured.err
    return json.loads(captured.out)


def _counter(path: Path) -> str:
    """The counter ``--tokenizer auto`` takes for a transcript: the calibrated estimate of the
    tokenizer family of the model it records (by the shipped profiles), else ``estimate``."""
    model = recorded_model(read_transcript(path).entries)
    profile = ProfileTable.load().lookup(model) if model else None
    family = profile.tokenizer if profile is not None else None
    return "estimate" if family is None else f"estimate:{family}"


def _check_plan(printed: dict[str, Any], path: Path) -> dict[str, Any] | None:
    """The plan of a ``--plan --json`` output of ``path``, checked for shape; ``None`` with a
    note."""
    assert set(printed) == {"plan", "note", "tokenizer"}
    assert printed["tokenizer"] == _counter(path)
    plan: dict[str, Any] | None = printed["plan"]
    if plan is None:
        assert printed["note"]
        return None
    assert printed["note"] == ""
    assert set(plan) == PLAN_KEYS
    assert plan["requirement"]["reason"] == "manual"
    assert plan["requirement"]["level"] == "soft"
    assert plan["budget"]["window"] == int(WINDOW)
    assert plan["target"] == plan["budget"]["trigger"] - plan["budget"]["headroom"]
    assert plan["prune"] is None  # a manual compaction plans no prune
    cuts = [a["cut"] for a in plan["attempts"] if a["cut"] is not None]
    assert plan["cut"] == (cuts[0] if cuts else None)
    if plan["cut"] is None:
        assert plan["expected_tokens"] == plan["tokens_before"]
    floor = plan["floor"]
    assert floor["tokens"] == sum(floor["parts"].values())
    assert (
        floor["parts"].get("system prompt", 0) + floor["parts"].get("tool schemas", 0)
        == plan["fixed_tokens"]
    )
    for attempt in plan["attempts"]:
        assert all(n > 0 for n in attempt["reinjected"].values())
    return plan


def _entry_count(db: Path, session_id: str) -> int:
    with SQLiteStore(db) as store:
        return store.session(session_id).entry_count


def _db_files(db: Path) -> dict[str, bytes]:
    """The database file and its write-ahead log (empty when absent)."""
    wal = db.with_name(db.name + "-wal")
    return {"db": db.read_bytes(), "wal": wal.read_bytes() if wal.exists() else b""}


@pytest.mark.parametrize("rel", _files())
def test_plan_of_a_transcript_file(rel: str, capsys: pytest.CaptureFixture[str]) -> None:
    path = _importable(rel)
    printed = _json_of(capsys, ["compact", str(path), "--plan", "--json", "--window", WINDOW])
    _check_plan(printed, path)


@pytest.mark.parametrize("rel", _files())
def test_a_stored_plan_writes_nothing_and_is_what_compact_runs(
    rel: str, capsys: pytest.CaptureFixture[str], tmp_path: Path
) -> None:
    path = _importable(rel)
    db = tmp_path / "store.db"
    assert main(["import", str(path), "--db", str(db)]) == 0
    capsys.readouterr()
    with SQLiteStore(db) as store:
        [info] = store.sessions()
    before_rows, before_files = rows(db), _db_files(db)
    assert len(before_rows) == info.entry_count

    from_file = _json_of(capsys, ["compact", str(path), "--plan", "--json", "--window", WINDOW])
    printed = _json_of(
        capsys, ["compact", info.id, "--db", str(db), "--plan", "--json", "--window", WINDOW]
    )
    plan = _check_plan(printed, path)
    assert printed == from_file  # the stored log plans as the file does
    assert _db_files(db) == before_files
    assert before_files["wal"] == b""
    assert rows(db) == before_rows
    assert _entry_count(db, info.id) == info.entry_count

    report = _json_of(
        capsys, ["compact", info.id, "--db", str(db), "--window", WINDOW, "--report-json"]
    )
    assert report["summarizer"]["kind"] == "extractive"
    assert report["summarizer"]["calls"] == 0
    after = rows(db)
    if plan is None or plan["cut"] is None:
        # nothing to compact: the run says why and stores nothing
        assert report["outcome"] is None and report["note"]
        assert after == before_rows
        return
    outcome = report["outcome"]
    assert outcome["plan"] == plan  # the plan printed is the plan run
    assert outcome["summarizer"] == "extractive" and outcome["fallback"] is None
    # exactly one row more: the compaction, at the cut of the attempt kept
    assert after[: len(before_rows)] == before_rows
    assert len(after) == len(before_rows) + 1
    assert _entry_count(db, info.id) == info.entry_count + 1
    with SQLiteStore(db) as store:
        newest = store.entries(info.id)[-1]
    assert isinstance(newest.body, CompactionRecord)
    assert newest.id == outcome["entry_id"]
    assert report["compaction"] == json.loads(json.dumps(body_to_dict(newest.body)))
    kept = plan["attempts"][outcome["attempt"]]["cut"]
    assert kept is not None
    assert newest.body.first_kept_id == outcome["first_kept_id"] == kept["first_kept_id"]
    assert newest.body.splits_turn == kept["splits_turn"]
    first = next(n for n, a in enumerate(plan["attempts"]) if a["cut"] is not None)
    later, _why = LATER_ATTEMPT.get(rel, (0, ""))
    assert outcome["attempt"] == first + later
    if not later:
        assert newest.body.first_kept_id == plan["cut"]["first_kept_id"]
    else:
        assert newest.body.first_kept_id != plan["cut"]["first_kept_id"]
