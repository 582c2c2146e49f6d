"""Background compaction (:mod:`ctxengine.engine.precompute`): a candidate computed off the
request path from a snapshot of the history, adopted at the trigger as exactly the
compaction a foreground run of that snapshot writes (then the entries appended since),
discarded when the tail since the snapshot outgrows the limit, cancelled without a trace in
history, and never two at once for one session.

Sizes under the hand estimator: a ``filler(label, n)`` text is ``n`` tokens and a message
adds 4, so a turn ``user(filler(200)) + assistant(filler(100))`` is 308 tokens; the system
prompt is 11. At a 10,000-token window with ``trigger_ratio=0.8`` and no reserve the trigger
is 8,000; ``precompute_ratio=0.8`` starts a candidate at 6,400; the tail limit is
``min(max(2 · 1,000, 30,000), 25 % of 8,000) = 2,000``.
"""

from __future__ import annotations

import threading
from collections.abc import Iterable
from dataclasses import replace
from pathlib import Path

import pytest
from engine_helpers import EST, call, filler, problems, result, rows

from ctxengine.engine import LadderEvent, Session
from ctxengine.engine.precompute import PRECOMPUTE_LOCK_SUFFIX, adopted_record
from ctxengine.errors import ConfigError, SummaryRejected, ThrashError
from ctxengine.model import (
    CompactionRecord,
    Message,
    ReasoningPart,
    ToolCallPart,
    assistant,
    system,
    user,
)
from ctxengine.model.codec import body_hash
from ctxengine.policy import Policy
from ctxengine.stores.sqlite import SQLiteStore
from ctxengine.summarizers.base import Summary, SummaryRequest
from ctxengine.summarizers.extractive import ExtractiveSummarizer
from ctxengine.tokens.base import Estimator

WINDOW = 10_000
POLICY = Policy(
    trigger_ratio=0.8,
    reserve_tokens=0,
    keep_recent_tokens=1_000,
    prune_enabled=False,
    precompute_ratio=0.8,
)


def turn(i: int) -> list[Message]:
    """One 308-token turn."""
    return [user(filler(f"u{i}", 200)), assistant(filler(f"a{i}", 100))]


def drive(s: Session, messages: Iterable[Message]) -> None:
    """Append ``messages`` as an agent does: ``prepare()`` before each assistant reply."""
    for m in messages:
        if m.role == "assistant":
            s.prepare()
        s.append(m)


def start(s: Session) -> int:
    """Run turns until a candidate starts; returns the turn whose reply is still to come
    (the snapshot ends with that turn's user message)."""
    s.append(system("You are a careful agent."))
    i = 0
    while True:
        s.append(turn(i)[0])
        s.prepare()
        if any(e.step == "precompute_started" for e in s.events):
            return i
        s.append(turn(i)[1])
        i += 1


def steps(s: Session) -> list[str]:
    return [e.step for e in s.events]


def event(s: Session, step: str) -> LadderEvent:
    return next(e for e in s.events if e.step == step)


def alive_precompute_threads() -> list[threading.Thread]:
    return [t for t in threading.enumerate() if t.name.startswith("ctxengine-precompute")]


#: Entries appended after the snapshot in the adoption tests: the pending reply, then a tool
#: exchange of two calls, a final reply and the next request. 104 + 304 + 18 + 405 + 305 +
#: 104 + 104 = 1,344 tokens, which take the context from 6,683 to 8,027 (the trigger is
#: 8,000) within the 2,000-token tail limit.
def since_entries(i: int) -> list[Message]:
    return [
        turn(i)[1],
        user(filler(f"u{i + 1}", 300)),
        assistant("", call("c1"), call("c2")),
        result("c1", filler("r1", 400)),
        result("c2", filler("r2", 300)),
        assistant(filler("done", 100)),
        user(filler(f"u{i + 2}", 100)),
    ]


def stale_jump(a: Session, i: int, size: int = 1_500) -> None:
    """After :func:`start`: the pending reply, a 1,004-token request, a call and its
    ``size``-token result. With 1,500: 104 + 1,004 + 11 + 1,505 = 2,624 tokens since the
    snapshot, past the 2,000 limit, and the context (9,307) past the trigger (8,000)."""
    drive(a, [turn(i)[1]])
    for m in (
        user(filler("big", 1_000)),
        assistant("", call("c1")),
        result("c1", filler("r", size)),
    ):
        a.append(m)


def foreground(a: Session, snapshot: int, policy: Policy) -> Session:
    """A session over the first ``snapshot`` entries of ``a`` that runs, in the foreground,
    the plan ``a``'s candidate ran, then appends the entries ``a`` appended after the
    snapshot."""
    b = Session(WINDOW, policy=policy, estimator=EST, entries=a.entries[:snapshot])
    plan = event(a, "precompute_adopted").plan
    assert plan is not None
    b.compactor.execute(plan, b.project())
    for e in a.entries[snapshot:]:
        if e.message is not None:
            b.append(e.message, created_at=e.created_at)
    return b


class TestAdoption:
    def test_the_adopted_compaction_is_the_foreground_one_of_the_snapshot(self) -> None:
        with Session(WINDOW, policy=POLICY, estimator=EST) as a:
            i = start(a)
            assert i == 21
            snapshot = len(a.entries)
            assert snapshot == 44
            last = a.entries[-1].id
            assert event(a, "precompute_started").detail == (
                f"context 6,683 ≥ 6,400 (80% of the trigger); version 44 entries (last {last})"
            )
            drive(a, since_entries(i))
            assert a.context_tokens(a.project()) == 8_027
            ctx = a.prepare()
            assert steps(a) == ["precompute_started", "precompute_adopted", "compaction"]
            assert event(a, "precompute_adopted").detail == (
                f"version 44 entries (last {last}); 7 entries (1,344 tokens) since ≤ tail "
                "limit 2,000"
            )
            assert len(a.entries) == 44 + 7 + 1
            adopted = a.entries[-1].body
            assert isinstance(adopted, CompactionRecord)
            assert (
                event(a, "compaction").detail == f"first kept {adopted.first_kept_id} (precomputed)"
            )

        # Its id is its content hash chained to the newest entry, as any appended entry's.
        assert a.entries[-1].id == body_hash(adopted, a.entries[-2].id)
        b = foreground(a, snapshot, POLICY)
        written = b.entries[snapshot].body
        assert isinstance(written, CompactionRecord)
        # The same record, naming the snapshot's newest entry as the last one it saw.
        assert adopted == replace(written, snapshot_id=last)
        assert written.snapshot_id is None and written.first_kept_id is not None
        # The context: the foreground compaction's, then the entries appended since.
        assert ctx.messages == b.project().messages
        assert ctx.messages[-7:] == tuple(e.message for e in a.entries[snapshot:-1])
        assert problems(ctx) == {"openai": [], "anthropic": []}
        assert alive_precompute_threads() == []

    def test_a_candidate_that_keeps_no_tail_keeps_the_entries_since(self) -> None:
        # Codex-like: nothing verbatim but the newest user messages retained before the state.
        policy = POLICY.model_copy(
            update={"keep_recent_tokens": 0, "retain_user_tokens": 400, "injection": "handoff"}
        )
        with Session(WINDOW, policy=policy, estimator=EST) as a:
            i = start(a)
            snapshot = len(a.entries)
            drive(a, since_entries(i))
            ctx = a.prepare()
            assert steps(a) == ["precompute_started", "precompute_adopted", "compaction"]
        adopted = a.entries[-1].body
        b = foreground(a, snapshot, policy)
        written = b.entries[snapshot].body
        assert isinstance(adopted, CompactionRecord) and isinstance(written, CompactionRecord)
        assert written.first_kept_id is None
        first_since = a.entries[snapshot].id
        assert adopted == replace(
            written, snapshot_id=a.entries[snapshot - 1].id, first_kept_id=first_since
        )
        assert ctx.messages == b.project().messages
        assert problems(ctx) == {"openai": [], "anthropic": []}

    def test_entries_since_keep_their_signed_reasoning_and_follow_the_continuation(self) -> None:
        # OpenCode-like: the state as an assistant reply, then a "continue" message after the
        # messages the compaction saw; replies since the snapshot carry signed thinking.
        policy = POLICY.model_copy(
            update={"injection": "assistant_reply", "continuation_message": True}
        )
        signed = ReasoningPart("thinking it over", signature="sig-1")
        with Session(WINDOW, policy=policy, estimator=EST) as a:
            i = start(a)
            snapshot = len(a.entries)
            since = since_entries(i)
            since[0] = assistant(filler(f"a{i}", 90), reasoning=signed)
            since[2] = assistant("", call("c1"), call("c2"), reasoning=signed)
            drive(a, since)
            ctx = a.prepare()
            assert steps(a) == ["precompute_started", "precompute_adopted", "compaction"]
        b = foreground(a, snapshot, policy)
        assert ctx.messages == b.project().messages
        thinking = [p for m in ctx.messages for p in m.parts if isinstance(p, ReasoningPart)]
        assert thinking == [signed, signed]
        assert problems(ctx) == {"openai": [], "anthropic": []}

    def test_adopted_record_is_unchanged_when_nothing_was_appended_since(self) -> None:
        with Session(WINDOW, policy=POLICY, estimator=EST) as a:
            start(a)
            job = a._precompute._job
            assert job is not None
            job.thread.join()
            candidate = job.candidate
            assert candidate is not None
            assert adopted_record(candidate, ()) is candidate.executed.record


class TestStale:
    def test_a_long_tail_discards_the_candidate_and_the_trigger_compacts_in_foreground(
        self,
    ) -> None:
        with Session(WINDOW, policy=POLICY, estimator=EST) as a:
            i = start(a)
            stale_jump(a, i)
            a.prepare()
            assert steps(a) == ["precompute_started", "precompute_discarded", "compaction"]
            assert event(a, "precompute_discarded").detail == (
                "stale: 4 entries (2,624 tokens) appended since the snapshot of 44 entries > "
                "tail limit 2,000"
            )
            assert len(a.entries) == 44 + 4 + 1
            record = a.entries[-1].body
            assert isinstance(record, CompactionRecord)
            assert record.snapshot_id is None
            assert "(precomputed)" not in event(a, "compaction").detail

    def test_a_manual_compaction_cancels_the_candidate(self) -> None:
        with Session(WINDOW, policy=POLICY, estimator=EST) as a:
            start(a)
            a.compact()
            assert steps(a) == ["precompute_started", "precompute_cancelled", "compaction"]
            assert event(a, "precompute_cancelled").detail == ("superseded by a manual compaction")
            assert a._precompute.threads == ()

    def test_a_failed_candidate_leaves_the_trigger_to_the_foreground(self) -> None:
        failing = FailOnce()
        with Session(WINDOW, policy=POLICY, estimator=EST, summarizer=failing) as a:
            i = start(a)
            drive(a, since_entries(i))
            a.prepare()
            assert steps(a) == ["precompute_started", "precompute_failed", "compaction"]
            assert event(a, "precompute_failed").detail == (
                "SummaryRejected: summary rejected: empty (first call)"
            )
            assert failing.calls == 2  # the candidate's, then the foreground's

    def test_a_vetoed_candidate_is_discarded_and_nothing_is_appended(self) -> None:
        from ctxengine.engine.events import PlanDecision

        with Session(
            WINDOW,
            policy=POLICY,
            estimator=EST,
            before_compact=lambda plan: PlanDecision(veto="not now"),
        ) as a:
            i = start(a)
            drive(a, since_entries(i))
            n = len(a.entries)
            a.prepare()
            assert steps(a) == ["precompute_started", "veto", "precompute_discarded"]
            assert event(a, "precompute_discarded").detail == "the before_compact hook vetoed it"
            assert len(a.entries) == n


class Counting:
    """The extractive summary, counting the summaries written."""

    def __init__(self) -> None:
        self.calls = 0
        self.inner = ExtractiveSummarizer(user_messages_budget=POLICY.user_messages_budget_tokens)

    @property
    def name(self) -> str:
        return "extractive"

    def summarize(self, request: SummaryRequest, estimator: Estimator) -> Summary:
        self.calls += 1
        return self.inner.summarize(request, estimator)


class FailOnce(Counting):
    """Rejects its first request, then writes the extractive summary."""

    def summarize(self, request: SummaryRequest, estimator: Estimator) -> Summary:
        if self.calls == 0:
            self.calls += 1
            raise SummaryRejected("empty", "first call")
        return super().summarize(request, estimator)


class Gate:
    """Waits until released, then writes the extractive summary; counts the calls running at
    once."""

    def __init__(self) -> None:
        self.release = threading.Event()
        self.entered = threading.Event()
        self.calls = 0
        self.active = 0
        self.most = 0
        self._lock = threading.Lock()
        self.inner = ExtractiveSummarizer(user_messages_budget=POLICY.user_messages_budget_tokens)

    @property
    def name(self) -> str:
        return "extractive"

    def summarize(self, request: SummaryRequest, estimator: Estimator) -> Summary:
        with self._lock:
            self.calls += 1
            self.active += 1
            self.most = max(self.most, self.active)
        self.entered.set()
        try:
            assert self.release.wait(30)
            return self.inner.summarize(request, estimator)
        finally:
            with self._lock:
                self.active -= 1


class TestCancel:
    def test_cancelling_leaves_the_stored_history_byte_identical(self, tmp_path: Path) -> None:
        db = tmp_path / "s.db"
        gate = Gate()
        with SQLiteStore(db) as store:
            a = Session(
                WINDOW, policy=POLICY, estimator=EST, store=store, session_id="s", summarizer=gate
            )
            try:
                start(a)
                assert gate.entered.wait(30)
                before, entries = rows(db), a.entries
                assert a.precomputing
                assert a.cancel_precompute() is True
                assert a.cancel_precompute() is False
                gate.release.set()
                a.close()
                assert not a.precomputing
                assert rows(db) == before
                assert a.entries == entries
                assert steps(a) == ["precompute_started", "precompute_cancelled"]
                assert event(a, "precompute_cancelled").detail == "cancelled by the caller"
            finally:
                gate.release.set()
                a.close()
        assert alive_precompute_threads() == []

    def test_close_gives_up_the_candidate_and_joins_its_thread(self) -> None:
        gate = Gate()
        a = Session(WINDOW, policy=POLICY, estimator=EST, summarizer=gate)
        start(a)
        assert gate.entered.wait(30)
        (thread,) = a._precompute.threads
        threading.Timer(0.2, gate.release.set).start()
        a.close()
        assert not thread.is_alive()
        assert steps(a) == ["precompute_started", "precompute_cancelled"]
        assert event(a, "precompute_cancelled").detail == "the session was closed"
        # Closed: no candidate starts again.
        drive(a, [turn(99)[1], user(filler("more", 50))])
        a.prepare()
        assert steps(a) == ["precompute_started", "precompute_cancelled"]


class TestNeverTwoAtOnce:
    def test_a_session_waits_out_its_given_up_candidate_before_the_next(self) -> None:
        # Candidates start at 50 % of the trigger (4,000): the first at turn 13 (4,219).
        policy = POLICY.model_copy(update={"precompute_ratio": 0.5})
        gate = Gate()
        a = Session(WINDOW, policy=policy, estimator=EST, summarizer=gate)
        try:
            i = start(a)
            assert (i, len(a.entries)) == (13, 28)
            assert gate.entered.wait(30)
            # Fresh while the tail since stays within 2,000 tokens (1,848 at turn 19's
            # request): no second candidate.
            drive(a, [turn(i)[1]])
            for k in range(i + 1, i + 7):
                drive(a, turn(k))
            assert (steps(a), gate.calls, len(a._precompute.threads)) == (
                ["precompute_started"],
                1,
                1,
            )
            # The next request takes the tail since the snapshot past the limit: the
            # candidate is discarded, and the next one waits for its thread to end.
            a.append(user(filler(f"u{i + 7}", 200)))
            done = threading.Event()

            def call_prepare() -> None:
                a.prepare()
                done.set()

            worker = threading.Thread(target=call_prepare)
            worker.start()
            assert not done.wait(0.5)
            assert gate.calls == 1
            gate.release.set()
            worker.join(30)
            assert done.is_set()
            assert steps(a) == [
                "precompute_started",
                "precompute_discarded",
                "precompute_started",
            ]
            assert event(a, "precompute_discarded").detail == (
                "stale: 14 entries (2,156 tokens) appended since the snapshot of 28 entries > "
                "tail limit 2,000"
            )
            assert a.events[-1].detail.startswith(
                "context 6,375 ≥ 4,000 (50% of the trigger); version 42 entries"
            )
            a._precompute._job.thread.join()  # type: ignore[union-attr]
            assert (gate.calls, gate.most) == (2, 1)
        finally:
            gate.release.set()
            a.close()
        assert alive_precompute_threads() == []

    def test_a_second_session_over_the_same_store_does_not_precompute_it(
        self, tmp_path: Path
    ) -> None:
        db = tmp_path / "s.db"
        gate = Gate()
        with SQLiteStore(db) as one, SQLiteStore(db) as two:
            a = Session(
                WINDOW,
                policy=POLICY,
                estimator=EST,
                store=one,
                session_id="shared",
                summarizer=gate,
            )
            b = Session(WINDOW, policy=POLICY, estimator=EST, store=two, session_id="shared")
            try:
                start(a)
                assert gate.entered.wait(30)
                # Another worker of the same stored session, on a thread of its own.
                worker = threading.Thread(target=b.prepare)
                worker.start()
                worker.join(30)
                assert steps(b) == ["precompute_skipped"]
                assert event(b, "precompute_skipped").detail == (
                    "another writer is precomputing session 'shared'"
                )
                assert not b.precomputing and b._precompute.threads == ()
                assert a.precomputing
            finally:
                gate.release.set()
                a.close()
                b.close()
            # Once the first one ended, the lock is free again.
            with two.compaction_lock("shared" + PRECOMPUTE_LOCK_SUFFIX, timeout_s=0):
                pass
        assert alive_precompute_threads() == []


class TestOff:
    def test_a_policy_without_precompute_starts_nothing(self) -> None:
        policy = POLICY.model_copy(update={"precompute_ratio": None})
        with Session(WINDOW, policy=policy, estimator=EST) as a:
            a.append(system("You are a careful agent."))
            for k in range(25):
                drive(a, turn(k))
            assert a.context_tokens(a.project()) == 11 + 25 * 308
            assert steps(a) == []
            assert a._precompute.threads == ()

    def test_a_call_awaiting_its_results_starts_no_candidate(self) -> None:
        with Session(WINDOW, policy=POLICY, estimator=EST) as a:
            a.append(system("You are a careful agent."))
            for k in range(21):
                drive(a, turn(k))
            a.append(user(filler("u21", 200)))
            a.append(assistant("", ToolCallPart("p1", "bash", '{"command": "ls"}')))
            a.prepare()  # 6,701 tokens, over 6,400, but p1 awaits its result
            assert steps(a) == []
            a.append(result("p1", "ok"))
            a.prepare()
            assert steps(a) == ["precompute_started"]


#: Blocking only at 95 % of the window (9,500 tokens here), as the Copilot SDK does.
BLOCKING = POLICY.model_copy(update={"precompute_block_ratio": 0.95})


def jump(a: Session) -> None:
    """20 turns (6,171 tokens: no candidate started), then a 2,004-token request: 8,175, past
    the trigger (8,000) in one step."""
    a.append(system("You are a careful agent."))
    for k in range(20):
        drive(a, turn(k))
    assert a.context_tokens(a.project()) == 6_171
    a.append(user(filler("big", 2_000)))


class TestBlockRatio:
    def test_the_limit_is_a_share_of_the_window_and_needs_precompute(self) -> None:
        s = Session(WINDOW, policy=BLOCKING, estimator=EST)
        assert BLOCKING.precompute_block_tokens(s.budget) == 9_500
        assert POLICY.precompute_block_tokens(s.budget) is None
        with pytest.raises(ConfigError, match="precompute_block_ratio needs precompute_ratio"):
            Policy(precompute_block_ratio=0.95)

    def test_a_trigger_holding_no_candidate_sends_its_context_and_starts_one(self) -> None:
        with Session(WINDOW, policy=BLOCKING, estimator=EST) as a:
            jump(a)
            before = a.project()
            ctx = a.prepare()
            assert ctx.messages == before.messages
            assert a.context_tokens(ctx) == 8_175
            assert steps(a) == ["precompute_started", "precompute_deferred"]
            why = (
                "context 8,175 ≥ trigger 8,000; under the block limit 9,500 (95% of the "
                "window), no candidate held"
            )
            assert event(a, "precompute_deferred").detail == (
                f"{why}: sent as it is; the next trigger waits for the candidate started now"
            )
            assert event(a, "precompute_started").detail == (
                f"{why}; version 42 entries (last {a.entries[-1].id})"
            )
            assert len(a.entries) == 42  # nothing appended
            snapshot = len(a.entries)
            drive(a, [assistant(filler("a", 100)), user(filler("u", 100))])
            ctx = a.prepare()
            assert steps(a)[2:] == ["precompute_adopted", "compaction"]
            assert len(a.entries) == 45
        b = foreground(a, snapshot, BLOCKING)
        assert ctx.messages == b.project().messages
        assert problems(ctx) == {"openai": [], "anthropic": []}
        assert alive_precompute_threads() == []

    def test_a_call_after_a_deferral_with_no_new_entries_adopts(self) -> None:
        # The deferred trigger ran nothing, so the next call is a trigger again: a request
        # that needs more room for its output gets the compaction, not the same context.
        with Session(WINDOW, policy=BLOCKING, estimator=EST) as a:
            jump(a)
            a.prepare()
            ctx = a.prepare(max_output_tokens=2_000)
            assert steps(a) == [
                "precompute_started",
                "precompute_deferred",
                "precompute_adopted",
                "compaction",
            ]
            assert a.context_tokens(ctx) + 2_000 <= WINDOW

    @pytest.mark.parametrize(
        ("ratio", "output"),
        [(0.95, None), (0.9, None), (0.95, 1_000)],  # under the limit, at it, over the window
    )
    def test_a_stale_candidate_is_adopted_late_when_the_context_after_it_stays_small(
        self, ratio: float, output: int | None
    ) -> None:
        # The candidate's compaction left 3,371 tokens; with the 2,624 since: 5,995, under
        # the 6,400 where the next candidate starts.
        policy = POLICY.model_copy(update={"precompute_block_ratio": ratio})
        with Session(WINDOW, policy=policy, estimator=EST) as a:
            i = start(a)
            snapshot = len(a.entries)
            stale_jump(a, i)  # 9,307 tokens
            ctx = a.prepare(max_output_tokens=output)
            assert steps(a) == ["precompute_started", "precompute_adopted", "compaction"]
            assert event(a, "precompute_adopted").detail == (
                f"version 44 entries (last {a.entries[snapshot - 1].id}); 4 entries (2,624 "
                "tokens) since > tail limit 2,000, adopted late: the context after it at most "
                "5,995 < 6,400, where the next background compaction starts"
            )
            assert len(a.entries) == 44 + 4 + 1
            assert a.context_tokens(ctx) == 5_995
        b = foreground(a, snapshot, policy)
        assert ctx.messages == b.project().messages

    @pytest.mark.parametrize(
        ("size", "why"),
        [
            (5_000, "; the context after it (at most 9,495) reaches 6,400"),
            (6_000, "; the messages since alone reach 6,400"),  # not waited for
        ],
    )
    def test_a_stale_candidate_that_leaves_too_much_is_discarded(self, size: int, why: str) -> None:
        with Session(WINDOW, policy=BLOCKING, estimator=EST) as a:
            i = start(a)
            stale_jump(a, i, size)
            assert a.context_tokens(a.project()) == 9_839  # the result truncated, ≥ 9,500
            a.prepare()
            assert steps(a) == ["precompute_started", "precompute_discarded", "compaction"]
            since = 104 + 1_004 + 11 + size + 5
            assert event(a, "precompute_discarded").detail == (
                f"stale: 4 entries ({since:,} tokens) appended since the snapshot of 44 "
                f"entries > tail limit 2,000{why}"
            )
            assert len(a.entries) == 44 + 4 + 1
            assert "(precomputed)" not in event(a, "compaction").detail

    def test_a_vetoing_hook_is_asked_before_a_summary_is_paid_again(self) -> None:
        from ctxengine.engine.events import PlanDecision

        counting = Counting()
        with Session(
            WINDOW,
            policy=BLOCKING,
            estimator=EST,
            summarizer=counting,
            before_compact=lambda plan: PlanDecision(veto="not now"),
        ) as a:
            jump(a)
            for k in range(4):
                drive(a, [assistant(filler(f"a{k}", 20)), user(filler(f"u{k}", 20))])
            a.prepare()
            assert steps(a) == [
                "precompute_started",
                "precompute_deferred",
                "veto",
                "precompute_discarded",
                "veto",
                "veto",
                "veto",
            ]
            assert counting.calls == 1  # the deferred candidate's only

    def test_no_deferral_once_automatic_compaction_stopped(self) -> None:
        # The thrash guard stopped automatic compaction (as a session reports it after a
        # refill): the trigger raises it again instead of sending the context and paying
        # for a summary that can never be adopted.
        stopped = ThrashError(3, (2, 2, 2), 8_100, 8_000, (), ())
        with Session(WINDOW, policy=BLOCKING, estimator=EST) as a:
            jump(a)
            a.compactor.thrashing = stopped
            with pytest.raises(ThrashError) as raised:
                a.prepare()
            assert raised.value is stopped
            assert steps(a) == []
            assert a._precompute.threads == ()

    def test_no_deferral_where_a_candidate_cannot_last_or_start(self) -> None:
        pruning = BLOCKING.model_copy(update={"prune_when": "always"})
        with Session(WINDOW, policy=pruning, estimator=EST) as a:
            jump(a)
            a.prepare()
            assert "precompute_deferred" not in steps(a)
            assert steps(a)[-1] == "compaction"
        with Session(WINDOW, policy=BLOCKING, estimator=EST) as a:
            jump(a)
            a.append(assistant("", ToolCallPart("p1", "bash", '{"command": "ls"}')))
            a.append(assistant("", ToolCallPart("p2", "bash", '{"command": "pwd"}')))
            a.append(result("p1", "ok"))
            a.prepare()  # p2 awaits its result: no snapshot is taken
            assert steps(a) == ["compaction"]
