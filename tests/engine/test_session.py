"""``Session``: trigger, cut, guards, failure breaker, pending calls, truncation, ledgers,
usage anchor and the store round trip, with exact values.

Sizes come from :class:`~engine_helpers.LinearEstimator`. Under the default policy a
4,000-token window resolves to: reserve 800, trigger 3,200, target 1,440 (the trigger less
its 55 % headroom, 1,760), keep-recent 1,000, truncate cap 800, prune protect 800 / minimum
400, summary budget 600. A compaction's first attempt lowers the keep-recent budget so that
the tail fits the target beside the head, the continuation message and a summary at its base
budget: with the 20-token system prompt, :data:`FIRST_KEEP`.
"""

from __future__ import annotations

from collections.abc import Sequence
from itertools import pairwise
from pathlib import Path

import pytest
from engine_helpers import (
    EST,
    BloatedSummarizer,
    RaisingSummarizer,
    call,
    filler,
    problems,
    result,
    rows,
    without_plans,
)

from ctxengine.engine import LadderEvent, Session
from ctxengine.errors import (
    CompactionLoopError,
    ConfigError,
    ContextFloorError,
    NothingToCompact,
    SummaryRejected,
)
from ctxengine.ladder.plan import Cut
from ctxengine.model import CompactionRecord, Entry, Message, Usage, assistant, system, user
from ctxengine.policy import DEFAULT_POLICY, Policy
from ctxengine.projection import ProjectionSettings, project
from ctxengine.projection.project import continuation_message
from ctxengine.stores.sqlite import SQLiteStore

WINDOW = 4_000
TRIGGER = 3_200
KEEP = 1_000
#: The first attempt's keep-recent budget behind the 20-token system prompt: 1,440 (target)
#: − 20 (head) − 52 (continuation message) − 600 (summary budget) − 40 (1 % margin).
FIRST_KEEP = 728
NO_PRUNE = DEFAULT_POLICY.model_copy(update={"prune_enabled": False})


def chat(session: Session, turns: int, *, first: int = 0) -> None:
    """Append ``turns`` turns ``u{k}`` (60 tokens) + ``a{k}`` (180 tokens): 240 each."""
    for k in range(first, first + turns):
        session.append(user(filler(f"request {k}", 56)), entry_id=f"u{k}")
        session.append(assistant(filler(f"answer {k}", 176)), entry_id=f"a{k}")


def new_session(turns: int = 13, **kwargs: object) -> Session:
    """A session with a 20-token system prompt ``sys`` and ``turns`` chat turns."""
    s = Session(WINDOW, estimator=EST, **kwargs)  # type: ignore[arg-type]
    s.append(system(filler("system", 16)), entry_id="sys")
    chat(s, turns)
    return s


def message_tokens(messages: Sequence[Message]) -> int:
    return sum(EST.message(m) for m in messages)


def expected_first_kept(entries: Sequence[Entry], keep: int) -> str:
    """Walk back whole turns (a real user message and what follows it) from the newest
    while they fit ``keep`` tokens; the first kept entry is the oldest fitting turn's start."""
    turns: list[list[Entry]] = []
    for e in entries:
        m = e.message
        if m is None or m.role == "system":
            continue
        if m.role == "user" and not m.tool_results:
            turns.append([])
        turns[-1].append(e)
    kept, first = 0, None
    for turn in reversed(turns):
        size = message_tokens([e.body for e in turn if isinstance(e.body, Message)])
        if kept + size > keep:
            break
        kept += size
        first = turn[0].id
    assert first is not None
    return first


def compactions(session: Session) -> list[Entry]:
    return [e for e in session.entries if isinstance(e.body, CompactionRecord)]


def record_of(entry: Entry) -> CompactionRecord:
    assert isinstance(entry.body, CompactionRecord)
    return entry.body


class TestConfiguration:
    def test_a_reserve_as_large_as_the_window_is_a_config_error_at_construction(self) -> None:
        with pytest.raises(ConfigError) as info:
            Session(WINDOW, policy=Policy(reserve_tokens=WINDOW))
        assert str(info.value) == "reserve of 4000 tokens leaves no room in a 4000-token window"
        with pytest.raises(ConfigError, match="reserve of 5000 tokens"):
            Session(WINDOW, policy=Policy(reserve_tokens=5_000))

    def test_the_default_policy_resolves_a_4000_token_window_as_the_tests_assume(self) -> None:
        b = Session(WINDOW).budget
        assert (b.reserve, b.trigger, b.keep_recent, b.truncate_tokens) == (800, 3200, 1000, 800)
        assert (b.prune_protect, b.prune_minimum, b.summary_max) == (800, 400, 600)
        assert (b.headroom, b.target) == (1_760, 1_440)


class TestTrigger:
    def test_below_the_trigger_prepare_returns_the_plain_projection_and_appends_nothing(
        self,
    ) -> None:
        s = new_session(13)
        before = s.entries
        ctx = s.prepare()
        assert ctx.tokens == 20 + 13 * 240 == 3_140
        assert ctx.messages == tuple(e.body for e in before)
        assert ctx.sources == tuple(e.id for e in before)
        assert ctx == s.project()
        assert ctx.epoch == 0 and ctx.compaction_id is None
        assert s.entries == before
        assert s.events == [] and s.failures == 0

    def test_crossing_the_trigger_appends_exactly_one_compaction_at_the_expected_cut(
        self,
    ) -> None:
        s = new_session(13)
        s.append(user(filler("request 13", 56)), entry_id="u13")
        assert s.context_tokens(s.project()) == 3_200  # exactly the trigger
        n = len(s.entries)
        ctx = s.prepare()

        assert len(s.entries) == n + 1
        comp = s.entries[-1]
        rec = record_of(comp)
        first_kept = expected_first_kept(s.entries[:n], FIRST_KEEP)
        assert first_kept == "u11"  # u13 + two 240-token turns = 540 ≤ 728 < 780
        assert rec.first_kept_id == first_kept
        assert rec.tokens_before == 3_200
        tail = [e.message for e in s.entries[2 * 11 + 1 : n]]  # u11 … u13
        summary_msg = continuation_message(rec.summary)
        assert rec.tokens_after == 20 + EST.message(summary_msg) + 540
        assert ctx.tokens == rec.tokens_after
        assert ctx.messages == (s.entries[0].body, summary_msg, *tail)
        assert ctx.sources == ("sys", None, "u11", "a11", "u12", "a12", "u13")
        assert (rec.policy, rec.summarizer, rec.reason, rec.splits_turn) == (
            "default",
            "extractive",
            "threshold",
            False,
        )
        assert without_plans(s.events) == [
            LadderEvent(
                "compaction",
                comp.id,
                3_200,
                rec.tokens_after,
                "first kept u11",
                n + 1,
                # The state's 1,000-token budget (below) holds everything it has: nothing cut.
                (),
            )
        ]
        plan = s.events[0].plan
        assert plan is not None
        # The plan names the stored cut before the summarizer ran: 22 messages summarized,
        # 540 tokens kept (walking back 728 tokens reaches a10 at 720; the turn start u11
        # after it keeps 540, at least half the budget, so the cut does not split turn 10).
        # The summary budget grows from 600 into the room left under the state's target
        # (the target 1,440 plus half the 1,760 headroom, 2,320): 2,320 − 20 (head) − 540
        # (tail) − 52 (continuation message) − 40 (1 % margin) = 1,668, capped at 25 % of the
        # window (1,000). The state needs 834 of it.
        assert plan.attempts[0].keep_recent == FIRST_KEEP
        assert plan.cut == Cut(22, "u11", 22, 0, False, 540)
        assert (plan.requirement.level, plan.requirement.reason) == ("soft", "threshold")
        assert plan.attempts[0].summary_tokens == 1_000
        assert EST.text(rec.summary) == 834
        assert plan.attempts[0].expected_tokens == 20 + 52 + 1_000 + 540
        assert s.failures == 0
        assert problems(ctx) == {"openai": [], "anthropic": []}

    def test_the_usage_anchor_can_cross_the_trigger_when_the_estimate_does_not(self) -> None:
        s = new_session(5)  # 1,220 tokens estimated
        s.record(assistant("checked", usage=Usage(input_tokens=3_100, output_tokens=150)))
        s.append(user("go on"), entry_id="go")
        ctx = s.project()
        assert ctx.tokens == 1_220 + EST.message(assistant("checked")) + EST.message(user("go on"))
        assert s.context_tokens(ctx) == 3_250 + EST.message(user("go on"))
        s.prepare()
        assert [e.kind for e in s.entries[-2:]] == ["message", "compaction"]


class TestGuards:
    def test_prepare_twice_without_new_entries_compacts_once(self) -> None:
        s = new_session(13)
        s.append(user(filler("request 13", 56)), entry_id="u13")
        first = s.prepare()
        second = s.prepare()
        assert second == first
        assert len(compactions(s)) == 1
        with pytest.raises(NothingToCompact, match="no new entries since the last compaction"):
            s.compact()
        assert len(compactions(s)) == 1

    def test_a_compaction_that_leaves_the_context_over_the_trigger_is_kept_but_counts_as_a_failure(
        self,
    ) -> None:
        # A 2,904-token system prompt is always sent: no cut can bring 3,924 under 3,200.
        # (An automatic compaction is refused before it runs, ContextFloorError: the floor
        # leaves less than the free room under the trigger; a manual one runs.)
        s = Session(WINDOW, estimator=EST)
        s.append(system(filler("system", 2_900)), entry_id="sys")
        chat(s, 4)
        s.append(user(filler("request 4", 56)), entry_id="u4")
        with pytest.raises(ContextFloorError, match="largest parts: system prompt 2,904"):
            s.prepare()
        s.events.clear()
        s.compact()
        ctx = s.project()
        rec = record_of(s.entries[-1])
        assert rec.tokens_before == 2_904 + 4 * 240 + 60 == 3_924
        # Every attempt stays over the trigger; the smallest one (keep-recent halved down to
        # 125 tokens: only u4 kept) is stored.
        assert rec.first_kept_id == "u4"
        assert rec.tokens_after == 2_904 + EST.message(continuation_message(rec.summary)) + 60
        assert ctx.tokens == rec.tokens_after >= TRIGGER
        assert ctx.sources == ("sys", None, "u4")
        assert without_plans(s.events) == [
            LadderEvent("compaction", s.entries[-1].id, 3_924, ctx.tokens, "first kept u4", 11),
            LadderEvent(
                "failure",
                None,
                ctx.tokens,
                ctx.tokens,
                f"context still {ctx.tokens} tokens after compaction",
                11,
            ),
        ]
        assert s.failures == 1
        # The next prepare, still over the trigger, is refused before any summary: nothing
        # appended.
        with pytest.raises(ContextFloorError):
            s.prepare()
        assert len(s.entries) == 11 and [e.step for e in s.events] == [
            "compaction",
            "failure",
            "failure",
        ]

    def test_a_compaction_that_frees_nothing_counts_as_a_failure_and_stores_nothing(self) -> None:
        bloated = BloatedSummarizer(3_200)
        s = new_session(13, summarizer=bloated)
        s.append(user(filler("request 13", 56)), entry_id="u13")
        before = s.entries
        ctx = s.prepare()
        assert s.entries == before
        assert ctx == s.project() and ctx.compaction_id is None
        assert bloated.calls == 4  # the keep-recent budget is halved three times
        assert s.failures == 1
        assert without_plans(s.events) == [
            LadderEvent("failure", None, 3_200, 3_200, "summary rejected: inflated", len(before))
        ]


class TestSummarizerFailure:
    def test_a_rejected_summary_leaves_the_stored_history_byte_identical_and_three_trip_the_breaker(
        self, tmp_path: Path
    ) -> None:
        db = tmp_path / "ctx.db"
        bad = RaisingSummarizer(SummaryRejected("length", "stopped at max_tokens"))
        s = new_session(13, summarizer=bad, store=SQLiteStore(db), session_id="live")
        s.append(user(filler("request 13", 56)), entry_id="u13")
        stored = rows(db)
        assert len(stored) == 28

        ctx = s.prepare()
        assert rows(db) == stored
        assert ctx == s.project() and ctx.tokens == 3_200
        assert s.failures == 1 and bad.calls == 1
        assert without_plans(s.events) == [
            LadderEvent(
                "failure",
                None,
                3_200,
                3_200,
                "summary rejected: length (stopped at max_tokens)",
                28,
            )
        ]

        chat(s, 1, first=14)
        stored = rows(db)
        s.prepare()
        assert rows(db) == stored and s.failures == 2

        chat(s, 1, first=15)
        stored = rows(db)
        with pytest.raises(CompactionLoopError) as info:
            s.prepare()
        assert (info.value.failures, info.value.tokens, info.value.threshold) == (3, 3_680, 3_200)
        assert str(info.value) == (
            "3 consecutive compactions failed to bring the context (3680 tokens) "
            "under the trigger (3200 tokens)"
        )
        assert rows(db) == stored
        assert bad.calls == 3

    def test_a_summarizer_crash_leaves_the_stored_history_byte_identical(
        self, tmp_path: Path
    ) -> None:
        db = tmp_path / "ctx.db"
        bad = RaisingSummarizer(RuntimeError("summarizer crashed"))
        s = new_session(13, summarizer=bad, store=SQLiteStore(db), session_id="live")
        s.append(user(filler("request 13", 56)), entry_id="u13")
        stored = rows(db)
        with pytest.raises(RuntimeError, match="summarizer crashed"):
            s.prepare()
        assert rows(db) == stored
        assert len(s.entries) == 28 and not compactions(s)
        with pytest.raises(RuntimeError, match="summarizer crashed"):
            s.compact()
        assert rows(db) == stored

    def test_a_summarizer_crash_propagates_but_counts_and_three_in_a_row_trip_the_breaker(
        self,
    ) -> None:
        bad = RaisingSummarizer(RuntimeError("summarizer crashed"))
        s = new_session(13, summarizer=bad)
        s.append(user(filler("request 13", 56)), entry_id="u13")
        for k in (14, 15):
            with pytest.raises(RuntimeError, match="summarizer crashed"):
                s.prepare()
            chat(s, 1, first=k)
        assert s.failures == 2
        assert [e.detail for e in s.events] == ["RuntimeError: summarizer crashed"] * 2
        with pytest.raises(CompactionLoopError) as info:
            s.prepare()
        assert (info.value.failures, info.value.tokens, info.value.threshold) == (3, 3_680, 3_200)
        assert isinstance(info.value.__cause__, RuntimeError)
        assert bad.calls == 3 and not compactions(s)


class TestEpochs:
    def test_within_an_epoch_successive_prepare_results_only_grow_at_the_tail(self) -> None:
        s = Session(WINDOW, estimator=EST)
        s.append(system(filler("system", 16)), entry_id="sys")
        contexts = []
        for k in range(40):
            s.append(user(filler(f"request {k}", 56)), entry_id=f"u{k}")
            contexts.append(s.prepare())
            s.append(assistant(filler(f"answer {k}", 176)), entry_id=f"a{k}")
        # 13 calls fill the first epoch. Each compaction keeps the newest request and two
        # turns (540 tokens of the 728-token first keep) and a continuation state that may
        # grow to its 1,000-token cap (25 % of the window), inside the 1,668 tokens free under
        # the state's target (1,440 + half the 1,760 headroom): the first state needs 834
        # (1,445 tokens after it); later ones, carrying the earlier state, take the whole
        # 1,000 (1,611 after). The answer (180) and 6 more turns then bring the context to
        # 1,611 + 180 + 60 + 6 × 240 = 3,291 ≥ 3,200 (after the first: 7 turns, 3,365): one
        # compaction every 7 turns from the second on.
        assert [c.epoch for c in contexts] == ([0] * 13 + [1] * 8 + [2] * 7 + [3] * 7 + [4] * 5)
        records = [record_of(e) for e in compactions(s)]
        assert [r.first_kept_id for r in records] == ["u11", "u19", "u26", "u33"]
        assert [r.tokens_before for r in records] == [3_200, 3_365, 3_291, 3_291]
        assert [r.tokens_after for r in records] == [1_445, 1_611, 1_611, 1_611]
        for prev, cur in pairwise(contexts):
            if cur.compaction_id == prev.compaction_id:
                n = len(prev.messages)
                assert cur.messages[:n] == prev.messages
                assert cur.sources[:n] == prev.sources
            else:
                assert cur.epoch == prev.epoch + 1

    def test_reprojecting_the_log_gives_the_same_context(self) -> None:
        s = new_session(13)
        s.append(user(filler("request 13", 56)), entry_id="u13")
        ctx = s.prepare()
        settings = ProjectionSettings(800, DEFAULT_POLICY.truncate_max_chars, 0.6)
        again = project(list(s.entries), settings, EST)
        assert again.messages == ctx.messages and again.sources == ctx.sources


class TestPendingCalls:
    KEEP_600 = NO_PRUNE.model_copy(update={"keep_recent_tokens": 600})

    def _awaiting(self, *, split_reply: bool) -> Session:
        """11 chat turns, then a request whose reply asks for approval (``ask``, no result
        yet) and reads a 585-token log (``log``, answered): 3,296 tokens in all."""
        s = Session(WINDOW, estimator=EST, policy=self.KEEP_600)
        s.append(system(filler("system", 16)), entry_id="sys")
        chat(s, 11)
        s.append(user("Deploy to production once I approve."), entry_id="deploy")
        ask = call("ask", "AskUserQuestion", question="Deploy now?")
        read = call("read", "Read", file_path="deploy.log")
        if split_reply:  # one reply written as two assistant messages
            s.append(assistant("I will ask for approval first.", ask), entry_id="ask")
            s.append(assistant("", read), entry_id="ask+read")
        else:
            s.append(assistant("I will ask for approval first.", ask, read), entry_id="ask")
        s.append(result("read", filler("deploy log", 585)), entry_id="log")
        return s

    def test_a_call_awaiting_confirmation_stays_in_the_kept_tail_until_its_result_arrives(
        self,
    ) -> None:
        s = self._awaiting(split_reply=False)
        assert s.project().tokens == 20 + 11 * 240 + 14 + 32 + 590 == 3_296
        ctx = s.prepare()
        first = record_of(s.entries[-1])
        # The 590-token log fits the 600-token budget but cannot be kept without its call;
        # the call's message is where the kept tail must start (inside the deploy turn).
        assert (first.first_kept_id, first.splits_turn) == ("ask", True)
        assert ctx.sources == ("sys", None, "ask", "log")
        assert ctx.messages[2] == s.entries[24].body
        # Awaiting its result, the request is not sendable yet: exactly that is reported.
        assert problems(ctx) == {
            "openai": ["messages[2]: tool calls ['ask'] not answered (the request ends)"],
            "anthropic": ["messages[2]: tool_use ['ask'] of the previous message not answered"],
        }

        s.append(result("ask", "approved"), entry_id="approved")
        ctx = s.prepare()
        assert ctx.sources == ("sys", None, "ask", "log", "approved")
        assert problems(ctx) == {"openai": [], "anthropic": []}

        # Once answered, the exchange may be compacted like any other.
        s.append(assistant("Deploying now."), entry_id="go")
        for k in range(11, 20):
            s.append(user(filler(f"request {k}", 56)), entry_id=f"u{k}")
            ctx = s.prepare()
            s.append(assistant(filler(f"answer {k}", 176)), entry_id=f"a{k}")
        # The first compaction left 1,553 tokens; with the result, "Deploying now." and u11,
        # 1,629; the trigger is reached at u18 (1,629 + 7 × 240 = 3,309), where walking back
        # the 600-token budget keeps u16 … u18 (540 tokens).
        assert record_of(compactions(s)[0]).tokens_after == 1_553
        second = record_of(compactions(s)[1])
        assert (second.tokens_before, second.first_kept_id) == (3_309, "u16")
        assert ctx.sources[:3] == ("sys", None, "u16")
        assert problems(ctx) == {"openai": [], "anthropic": []}

    def test_a_result_arriving_for_an_earlier_piece_of_the_reply_does_not_break_prepare(
        self,
    ) -> None:
        s = self._awaiting(split_reply=True)
        ctx = s.prepare()
        assert record_of(s.entries[-1]).first_kept_id == "ask"
        # The piece after ``ask`` needs a result in front of it: a synthetic one for now.
        assert ctx.sources == ("sys", None, "ask", None, "ask+read", "log")
        s.append(result("ask", "approved"), entry_id="approved")
        ctx = s.prepare()
        assert ctx.sources == ("sys", None, "ask", "approved", "ask+read", "log")
        assert problems(ctx) == {"openai": [], "anthropic": []}


class TestOversizedResult:
    def test_a_newest_tool_result_larger_than_the_window_is_truncated_not_a_failure(
        self,
    ) -> None:
        s = Session(WINDOW, estimator=EST)
        s.append(system(filler("system", 16)), entry_id="sys")
        s.append(user("Show me the build log."), entry_id="ask")
        s.append(assistant("", call("c1", "bash", command="cat build.log")), entry_id="cat")
        text = filler("build log", 10_001)  # 40,000 chars: 2.5 windows
        assert len(text) == 40_000
        s.append(result("c1", text), entry_id="log")
        ctx = s.prepare()
        # Cap 800 tokens: keep 40,000 × 800 // 10,001 = 3,199 chars, 60 % from the head.
        (t,) = ctx.truncations
        assert (t.call_id, t.entry_id, t.omitted_chars, t.omitted_tokens) == (
            "c1",
            "log",
            36_801,
            9_201,
        )
        shown = ctx.messages[-1].tool_results[0].text
        assert shown.startswith(text[:1_919] + "\n[… truncated: 36801 chars (~9201 tokens)")
        assert shown.endswith("…]\n" + text[-1_280:])
        assert ctx.tokens < TRIGGER
        assert s.events == [] and s.failures == 0
        assert len(s.entries) == 4
        assert problems(ctx) == {"openai": [], "anthropic": []}


class TestLedgers:
    def _edits(self, s: Session) -> None:
        s.append(user("Fix the parser. You must never touch the lexer."), entry_id="goal")
        edit = call("e1", "Edit", file_path="src/parser.py", old_string="a", new_string="b")
        s.append(assistant("Editing the parser.", edit), entry_id="edit")
        s.append(result("e1", "The file src/parser.py has been updated."), entry_id="edited")
        write = call("w1", "Write", file_path="src/lexer.py", content="x = 1")
        s.append(assistant("", write), entry_id="write")
        s.append(result("w1", "Error: permission denied", is_error=True), entry_id="denied")

    def test_steps_done_before_a_compaction_appear_as_done_in_the_continuation_state(
        self,
    ) -> None:
        """The state's text is read, so the scenario needs room for the ledgers beside the
        eight 60-token user messages, which rank with the rules (they are within
        ``user_messages_budget_tokens``). It was written for a 40 % headroom: target 1,920,
        state budget 848. At the default 55 % (target 1,440) the state gets 608 tokens, and
        the ranking rightly gives them to the user messages, leaving out the done step and
        the error; so this test names the 40 % headroom."""
        s = Session(WINDOW, estimator=EST, policy=Policy(headroom_ratio=0.4))
        s.append(system(filler("system", 16)), entry_id="sys")
        self._edits(s)
        chat(s, 13)
        ctx = s.prepare()
        rec = record_of(s.entries[-1])
        assert rec.ledgers.done == ("edited src/parser.py",)
        assert rec.ledgers.files_modified == ("src/parser.py",)
        assert rec.ledgers.errors == ("Error: permission denied",)
        assert rec.ledgers.constraints == ("You must never touch the lexer.",)
        state = ctx.messages[1].text
        assert "## Done\n- edited src/parser.py\n" in state
        assert "## Files modified\n- src/parser.py\n" in state
        assert "src/lexer.py" not in state.split("## Errors")[0]

    def test_ledgers_carry_over_across_two_compactions(self) -> None:
        s = Session(WINDOW, estimator=EST)
        s.append(system(filler("system", 16)), entry_id="sys")
        self._edits(s)
        chat(s, 13)
        s.prepare()
        first = record_of(compactions(s)[0])
        s.append(user("Always run the tests before committing."), entry_id="rule")
        edit = call("e2", "Edit", file_path="src/ast.py", old_string="c", new_string="d")
        s.append(assistant("", edit), entry_id="edit2")
        s.append(result("e2", "The file src/ast.py has been updated."), entry_id="edited2")
        chat(s, 12, first=13)
        s.prepare()
        assert len(compactions(s)) == 2
        second = record_of(compactions(s)[1])
        assert second.first_kept_id not in {"goal", "edit", "rule", "edit2"}
        assert second.ledgers.files_modified == ("src/parser.py", "src/ast.py")
        assert second.ledgers.done == ("edited src/parser.py", "edited src/ast.py")
        assert second.ledgers.constraints == (
            "You must never touch the lexer.",
            "Always run the tests before committing.",
        )
        assert second.ledgers.errors == ("Error: permission denied",)
        for name in ("files_read", "files_modified", "constraints", "errors", "commands", "done"):
            old, new = getattr(first.ledgers, name), getattr(second.ledgers, name)
            assert new[: len(old)] == old, name
        assert (
            second.ledgers.goal
            == first.ledgers.goal
            == ("Fix the parser. You must never touch the lexer.")
        )
        assert "- src/parser.py" in second.summary and "- src/ast.py" in second.summary


class TestUsageAnchor:
    def test_only_usage_after_the_latest_compaction_from_a_finished_reply_is_an_anchor(
        self,
    ) -> None:
        s = new_session(6)  # 1,460 tokens estimated
        s.record(assistant("ok", usage=Usage(1_000, 200, cache_read_tokens=1_000)))
        s.append(user("next"), entry_id="next")
        assert s.context_tokens(s.project()) == 2_200 + EST.message(user("next"))

        # An aborted reply's usage is no anchor, and neither is an all-zero one.
        aborted = Message(
            "assistant", assistant("half").parts, usage=Usage(9_000, 10), stop_reason="aborted"
        )
        s.record(aborted)
        s.record(assistant("empty", usage=Usage()))
        s.append(user("again"), entry_id="again")
        after_anchor = [user("next"), aborted, assistant("empty"), user("again")]
        assert s.context_tokens(s.project()) == 2_200 + message_tokens(after_anchor)

        s.compact()
        ctx = s.project()
        assert ctx.epoch == 1
        assert s.context_tokens(ctx) == ctx.tokens  # earlier usage measured another context

        s.record(assistant("fresh", usage=Usage(500, 100)))
        s.append(user("more"), entry_id="more")
        assert s.context_tokens(s.project()) == 600 + EST.message(user("more"))


class TestStore:
    def test_a_session_reopened_from_its_sqlite_file_projects_the_same_context(
        self, tmp_path: Path
    ) -> None:
        db = tmp_path / "ctx.db"
        s = new_session(13, store=SQLiteStore(db), session_id="live")
        s.append(user(filler("request 13", 56)), entry_id="u13")
        ctx = s.prepare()
        assert ctx.epoch == 1
        assert s.store is not None
        s.store.close()

        with SQLiteStore(db) as store:
            again = Session(WINDOW, estimator=EST, store=store, session_id="live")
            assert again.entries == s.entries
            assert again.project() == ctx
            assert again.prepare() == ctx
            assert len(rows(db)) == 29
