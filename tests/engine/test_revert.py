"""``Session.revert``: an append-only record that withdraws a compaction (and every
compaction and prune after it) so the context is projected as before it."""

from __future__ import annotations

import hashlib
from pathlib import Path

import orjson
import pytest

from ctxengine.engine import Session
from ctxengine.model import SupersedeRecord, assistant, system, user
from ctxengine.projection.render import render_anthropic
from ctxengine.recall import RecallQuery
from ctxengine.stores.sqlite import SQLiteStore
from hand_estimator import HandEstimator

EST = HandEstimator()


def turns(s: Session, n: int, first: int = 0) -> None:
    for k in range(first, first + n):
        s.append(user(f"request {k}: " + "word " * 40))
        s.append(assistant(f"answer {k}: " + "done " * 60))


def request_hash(s: Session) -> str:
    body = render_anthropic(s.project())
    return hashlib.sha256(orjson.dumps(body, option=orjson.OPT_SORT_KEYS)).hexdigest()


def started(store: SQLiteStore | None = None) -> Session:
    s = Session(8_000, estimator=EST, store=store, session_id="live")
    s.append(system("You are careful."))
    turns(s, 8)
    return s


def test_revert_restores_the_exact_request_of_before_the_compaction() -> None:
    s = started()
    before = request_hash(s)
    outcome = s.compact()
    assert request_hash(s) != before
    entry = s.revert(outcome.entry.id)
    assert entry.body == SupersedeRecord(
        (outcome.entry.id,), f"revert of compaction {outcome.entry.id}"
    )
    assert request_hash(s) == before
    assert s.project().compaction_id is None
    # History only grew: the compaction is still stored; withdrawn, its state is no longer
    # searched (the entries it summarized are back in the context).
    assert [e.kind for e in s.entries][-2:] == ["compaction", "supersede"]
    hits = s.recall(RecallQuery(text="request 0", summaries=True)).hits
    assert [h.kind for h in hits] == ["message"]


def test_reverting_an_older_compaction_withdraws_the_later_ones_too() -> None:
    s = started()
    first = s.compact().entry.id
    turns(s, 6, first=8)
    after_first = [m.text for m in s.project().messages]
    second = s.compact().entry.id
    s.revert(first)
    plain = Session(8_000, estimator=EST)
    for e in s.entries:
        if e.message is not None:
            plain.append(e.message)
    assert [m.text for m in s.project().messages] == [m.text for m in plain.project().messages]
    assert len(s.project().messages) == 1 + 2 * 14 > len(after_first)
    with pytest.raises(ValueError, match=f"revert: compaction '{second}' is withdrawn already"):
        s.revert(second)
    # The next compaction decides afresh.
    assert s.compact().entry.kind == "compaction"


def test_the_latest_compaction_by_default_and_errors_name_the_entry() -> None:
    s = started()
    with pytest.raises(ValueError, match="revert: the session has no compaction in force"):
        s.revert()
    first = s.compact().entry.id
    turns(s, 6, first=8)
    middle = request_hash(s)
    s.compact()
    s.revert()
    assert request_hash(s) == middle
    assert s.project().compaction_id == first
    with pytest.raises(ValueError, match="revert: no entry 'nope' in this session"):
        s.revert("nope")
    with pytest.raises(ValueError, match=r"revert: entry '.+' is a message, not a compaction"):
        s.revert(s.entries[1].id)


def test_a_revert_is_stored_and_read_back(tmp_path: Path) -> None:
    db = tmp_path / "s.db"
    s = started(SQLiteStore(db))
    before = request_hash(s)
    s.revert(s.compact().entry.id)
    again = Session(8_000, estimator=EST, store=SQLiteStore(db), session_id="live")
    assert request_hash(again) == before
    assert [e.kind for e in again.entries][-2:] == ["compaction", "supersede"]
