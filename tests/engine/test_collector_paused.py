"""A compaction under a summarizer that calls no model runs with Python's cyclic garbage
collector paused, and leaves it as it found it."""

from __future__ import annotations

import gc

from engine_helpers import EST, filler

from ctxengine.engine import Session
from ctxengine.ladder.plan import CompactionPlan
from ctxengine.model import Message, TextPart


def _compacting_session(seen: list[bool]) -> Session:
    def before(plan: CompactionPlan) -> None:
        seen.append(gc.isenabled())

    return Session(2_000, estimator=EST, before_compact=before)


def _fill(session: Session) -> None:
    for n in range(40):
        session.append(Message("user", (TextPart(filler(f"ask {n}", 60)),)))
        session.append(Message("assistant", (TextPart(filler(f"answer {n}", 60)),)))
        session.prepare()


def test_the_collector_is_paused_during_the_compaction_and_enabled_after() -> None:
    seen: list[bool] = []
    session = _compacting_session(seen)
    assert gc.isenabled()
    _fill(session)
    assert len(seen) >= 2 and not any(seen)
    assert gc.isenabled()


def test_a_collector_the_caller_disabled_stays_disabled() -> None:
    seen: list[bool] = []
    session = _compacting_session(seen)
    gc.disable()
    try:
        _fill(session)
        assert seen and not any(seen)
        assert not gc.isenabled()
    finally:
        gc.enable()
