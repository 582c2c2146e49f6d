"""``before_compact`` and ``after_compact``: a hook sees the plan before anything runs and may
veto it, change its focus or supply the summary; the stored compaction is exactly the planned
cut; events carry the plan."""

from __future__ import annotations

import pytest
from engine_helpers import EST, filler

from ctxengine.engine import CompactionOutcome, PlanDecision, Session
from ctxengine.errors import CompactionVetoed, HookError
from ctxengine.ladder.plan import CompactionPlan
from ctxengine.model import CompactionRecord, assistant, user


def session(**hooks: object) -> Session:
    """30 turns of 204 + 24 tokens (6,840 tokens) in a 12,000-token window."""
    s = Session(12_000, estimator=EST, **hooks)  # type: ignore[arg-type]
    for i in range(30):
        s.append(user(filler(f"u{i}", 200)), entry_id=f"u{i}")
        s.append(assistant(filler(f"a{i}", 20)), entry_id=f"a{i}")
    return s


def test_a_veto_stores_nothing_and_is_reported() -> None:
    seen: list[CompactionPlan] = []

    def veto(plan: CompactionPlan) -> PlanDecision:
        seen.append(plan)
        return PlanDecision(veto="a deploy is running")

    s = session(before_compact=veto)
    n = len(s.entries)
    with pytest.raises(CompactionVetoed, match="a deploy is running"):
        s.compact()
    assert len(s.entries) == n
    assert [e.step for e in s.events] == ["veto"]
    assert s.events[0].plan is seen[0]


def test_the_stored_cut_is_the_planned_cut_and_after_compact_sees_it() -> None:
    outcomes: list[CompactionOutcome] = []
    s = session(after_compact=outcomes.append)
    plan = s.plan()
    assert plan is not None and plan.cut is not None
    # Trigger 9,600, target 9,600 − 5,280 (55 %) = 4,320. The first attempt's keep-recent
    # budget is 3,000 lowered to fit the target beside the continuation message (52), a
    # summary at its base budget (1,800) and the 1 % margin (120): 2,348. Walking back
    # reaches a19 (10 turns of 228 + 24 = 2,304); the turn start u20 after it keeps 2,280,
    # at least half the budget, so 10 turns are kept.
    assert plan.attempts[0].keep_recent == 2_348
    assert (plan.cut.first_kept_id, plan.cut.kept_tokens) == ("u20", 2_280)
    outcome = s.compact()
    assert outcomes == [outcome]
    assert outcome.attempt == 0
    assert outcome.record.first_kept_id == "u20"
    assert outcome.plan == plan


def test_a_supplied_summary_is_stored_at_the_plans_cut_with_the_ledgers() -> None:
    s = session(before_compact=lambda plan: PlanDecision(summary="We refactored the parser."))
    outcome = s.compact()
    record = s.entries[-1].body
    assert isinstance(record, CompactionRecord)
    assert record.summary == "We refactored the parser."
    assert (record.summarizer, record.first_kept_id) == ("hook", "u20")
    assert outcome.notes == ("supplied:before_compact",)


def test_a_hook_may_change_the_focus() -> None:
    focuses: list[str | None] = []

    class Recording:
        name = "recording"

        def summarize(self, request, estimator):  # type: ignore[no-untyped-def]
            focuses.append(request.focus)
            from ctxengine.summarizers.extractive import ExtractiveSummarizer

            return ExtractiveSummarizer(user_messages_budget=400).summarize(request, estimator)

    s = session(before_compact=lambda plan: PlanDecision(focus="the parser"))
    s.summarizer = Recording()
    s.compact(focus="anything")
    assert focuses == ["the parser"]


def test_a_raising_hook_propagates_at_once_and_is_no_compaction_failure() -> None:
    def broken(plan: CompactionPlan) -> PlanDecision:
        raise RuntimeError("hook bug")

    s = session(before_compact=broken)
    # 6,840 + 2 × 1,504 = 9,848: over the 9,600-token trigger (each under the 2,400-token
    # truncation cap of pasted text).
    s.append(user(filler("more", 1_500)))
    s.append(user(filler("still more", 1_500)))
    for i in range(4):  # more than the breaker's 3: no CompactionLoopError
        s.append(assistant(filler(f"r{i}", 20)))
        with pytest.raises(HookError, match="the before_compact hook raised RuntimeError"):
            s.prepare(max_output_tokens=100)
    assert s.failures == 0
    assert not any(isinstance(e.body, CompactionRecord) for e in s.entries)
