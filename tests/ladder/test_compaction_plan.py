"""``plan_compaction()`` and its parts (ladder/compaction.py) on hand-built conversations:
the cut of every attempt, the keep-recent and truncate schedules, the summary budget, the
size expected after, ``first_keep()``, ``conversation_of()`` and ``CompactionPlan.to_dict()``.

Sizes come from :data:`~engine_helpers.EST`: 4 tokens per message plus ``len // 4 + 1`` per
text, so a message holding ``filler(label, n)`` costs ``n + 4`` tokens.

The budget (built by hand): window 10,000, trigger 8,000, headroom 3,000 → target 5,000;
keep-recent 800; truncate cap 200; summary budget 600; goal cap 3,000. The summary margin is
``int(10,000 × SUMMARY_ROOM_MARGIN_RATIO 0.01)`` = 100. A plan whose context is over the
target grows the summary budget into the room left, up to 2,500 (25 % of the window); the
plans here start at 1,450 tokens, under the target, unless a test says otherwise.
"""

from __future__ import annotations

from typing import Any

import pytest
from ladder_helpers import EST, call, filler

from ctxengine.ladder.compaction import (
    Conversation,
    DurableFn,
    base_summary_budget,
    conversation_of,
    cut_of,
    first_keep,
    plan_compaction,
    summary_budget,
    summary_cap,
    without_stand_ins,
)
from ctxengine.ladder.plan import Attempt, CompactionPlan, Cut, Requirement
from ctxengine.ladder.prune import PrunePlan
from ctxengine.ladder.reinject import DurableItem, DurableState
from ctxengine.model import Message, assistant, system, tool_result, user
from ctxengine.policy import Budget, Policy
from ctxengine.policy.defaults import (
    MIN_TRUNCATE_TOKENS,
    SUMMARY_GROWTH_MAX_RATIO,
    SUMMARY_GROWTH_MAX_TOKENS,
    SUMMARY_ROOM_MARGIN_RATIO,
)
from ctxengine.projection.context import Context

BUDGET = Budget(
    window=10_000,
    reserve=2_000,
    trigger=8_000,
    keep_recent=800,
    truncate_tokens=200,
    prune_protect=2_000,
    prune_minimum=1_000,
    summary_max=600,
    goal_max=3_000,
    headroom=3_000,
)
TARGET = 5_000  # trigger 8,000 − headroom 3,000
MARGIN = 100  # int(10,000 × 0.01)
OVERHEAD = 50  # tokens of the continuation message around its summary (given by the caller)
MANUAL = Requirement("soft", "manual", "requested by the caller", 1_450)

# Three whole turns and a short last one: 1,300 tokens.
#   index  id  role       tokens   suffix (tokens from here to the end)
#   0      m0  user         100    1,300
#   1      m1  assistant    300    1,200
#   2      m2  user         100      900
#   3      m3  assistant    300      800
#   4      m4  user         100      500
#   5      m5  assistant    200      400
#   6      m6  user          50      200
#   7      m7  assistant    150      150
SIZES = (100, 300, 100, 300, 100, 200, 50, 150)
IDS = tuple(f"m{k}" for k in range(8))
MESSAGES = tuple(
    (user if k % 2 == 0 else assistant)(filler(f"m{k}", n - 4)) for k, n in enumerate(SIZES)
)


def conversation(fixed: int = 150) -> Conversation:
    """:data:`MESSAGES` after a head of ``fixed`` tokens (one system message: start 1)."""
    return Conversation(MESSAGES, IDS, 1, fixed)


def plan(
    conv: Conversation | None = None,
    *,
    goal: int = 100,
    budget: Budget = BUDGET,
    policy: Policy | None = None,
    cap: int | None = None,
    tokens_before: int = 1_450,
    focus: str | None = None,
    prune: PrunePlan | None = None,
    durable: DurableFn | None = None,
) -> CompactionPlan:
    return plan_compaction(
        conv or conversation(),
        EST,
        requirement=MANUAL,
        budget=budget,
        policy=policy or Policy(),
        tokens_before=tokens_before,
        continuation_overhead=OVERHEAD,
        goal_tokens=goal,
        cap=cap,
        focus=focus,
        prune=prune,
        durable=durable,
    )


def test_the_sizes_are_what_the_table_says() -> None:
    assert [EST.message(m) for m in MESSAGES] == list(SIZES)
    assert int(BUDGET.window * SUMMARY_ROOM_MARGIN_RATIO) == MARGIN
    assert BUDGET.target == TARGET == BUDGET.trigger - BUDGET.headroom


class TestSchedule:
    def test_every_attempt_of_a_small_goal(self) -> None:
        # first_keep: summary 600 (goal 100 + 600 // 2 ≤ 600); 5,000 − 150 − 50 − 600 − 100
        # = 4,100 ≥ 800: the keep-recent budget is not lowered.
        # keep 800: the walk back reaches index 3 (suffix 800 ≤ 800, 900 > 800); index 3 is an
        #   assistant message, the turn start 4 keeps 500 ≥ 800 × 0.5: cut at 4.
        # keep 400: reaches 5 (400); turn start 6 keeps 200 ≥ 200: cut at 6.
        # keep 200: reaches 6 (200), a turn start: cut at 6.
        # keep 100: the newest message alone (150) is over it: the cut slides back to the
        #   latest valid point, 7, inside the turn that starts at 6: a split turn.
        # Summary 600 each (small goal); expected = 150 + 50 + 600 + kept.
        # Truncate: None, None, then 200 // 2 = 100, then max(64, 50) = 64.
        p = plan()
        assert p.attempts == (
            Attempt(800, None, Cut(4, "m4", 4, 0, False, 500), 600, 1_300),
            Attempt(400, None, Cut(6, "m6", 6, 0, False, 200), 600, 1_000),
            Attempt(200, 100, Cut(6, "m6", 6, 0, False, 200), 600, 1_000),
            Attempt(100, MIN_TRUNCATE_TOKENS, Cut(7, "m7", 6, 1, True, 150), 600, 950),
        )
        assert MIN_TRUNCATE_TOKENS == 64
        assert (p.target, p.tokens_before, p.fixed_tokens, p.conversation) == (
            TARGET,
            1_450,
            150,
            8,
        )
        assert p.first is p.attempts[0]
        assert p.cut == Cut(4, "m4", 4, 0, False, 500)
        assert p.expected_tokens == 1_300
        assert (p.reason, p.policy, p.budget) == ("manual", "default", BUDGET)

    def test_a_larger_goal_raises_the_summary_budget_within_the_room(self) -> None:
        # goal 500: 500 + 300 > 600, so the budget is max(600, min(room, 500 + 600)) = 1,100
        # (room 5,000 − 150 − kept − 50 − 100 ≥ 4,550 − 500 = 4,200 at every attempt).
        p = plan(goal=500)
        assert [a.summary_tokens for a in p.attempts] == [1_100] * 4
        # expected = 150 + 50 + 1,100 + kept (500, 200, 200, 150)
        assert [a.expected_tokens for a in p.attempts] == [1_800, 1_500, 1_500, 1_450]

    @pytest.mark.parametrize(
        ("budget_cap", "cap", "expected"),
        [
            # the budget's own cap: None twice, then 1,000 // 2, then 500 // 2
            (1_000, None, [None, None, 500, 250]),
            (2_000, None, [None, None, 1_000, 500]),
            # a cap given by the caller (an overflow recovery): it, it, then halved
            (2_000, 1_000, [1_000, 1_000, 500, 250]),
            # halving stops at MIN_TRUNCATE_TOKENS (100 // 2 = 50 → 64)
            (2_000, 100, [100, 100, 64, 64]),
        ],
    )
    def test_the_truncate_cap_schedule(
        self, budget_cap: int, cap: int | None, expected: list[int | None]
    ) -> None:
        budget = BUDGET.model_copy(update={"truncate_tokens": budget_cap})
        p = plan(budget=budget, cap=cap)
        assert [a.truncate_tokens for a in p.attempts] == expected
        assert [a.keep_recent for a in p.attempts] == [800, 400, 200, 100]

    def test_without_split_turns_the_last_attempt_keeps_the_whole_turn(self) -> None:
        # keep 100 slides back past 7 (not a turn start) to the turn start 6: kept 200.
        p = plan(policy=Policy(name="whole-turns", split_turn=False))
        assert [a.cut for a in p.attempts] == [
            Cut(4, "m4", 4, 0, False, 500),
            Cut(6, "m6", 6, 0, False, 200),
            Cut(6, "m6", 6, 0, False, 200),
            Cut(6, "m6", 6, 0, False, 200),
        ]
        assert p.policy == "whole-turns"


class TestFirstKeep:
    @pytest.mark.parametrize(
        ("fixed", "goal", "keep"),
        [
            # summary 600: 5,000 − 150 − 50 − 600 − 100 = 4,100 → the whole 800
            (150, 100, 800),
            # goal 3,000: summary min(5,000, 3,000 + 600) = 3,600;
            # 5,000 − 1,000 − 50 − 3,600 − 100 = 250 → lowered to 250
            (1_000, 3_000, 250),
            # a goal over goal_max (3,000) counts as 3,000: the same 250
            (1_000, 9_000, 250),
            # 5,000 − 1,200 − 50 − 3,600 − 100 = 50 < 800 // 4: the floor, 200
            (1_200, 3_000, 200),
        ],
    )
    def test_the_first_keep_recent_budget(self, fixed: int, goal: int, keep: int) -> None:
        assert first_keep(BUDGET, fixed, OVERHEAD, goal) == keep

    def test_base_summary_budget_rule(self) -> None:
        assert base_summary_budget(BUDGET, 300, 10_000) == 600  # 300 + 300 ≤ 600: the base
        assert base_summary_budget(BUDGET, 301, 10_000) == 901  # 301 + 600
        assert base_summary_budget(BUDGET, 3_000, 2_000) == 2_000  # the room caps it
        assert base_summary_budget(BUDGET, 3_000, 100) == 600  # never below the base

    def test_summary_budget_grows_into_the_room_up_to_the_cap(self) -> None:
        # cap: min(20,000, 25 % of 10,000) = 2,500
        assert (SUMMARY_GROWTH_MAX_RATIO, SUMMARY_GROWTH_MAX_TOKENS) == (0.25, 20_000)
        assert summary_cap(BUDGET) == 2_500
        assert summary_budget(BUDGET, 300, 10_000) == 2_500  # room 10,000: the cap
        assert summary_budget(BUDGET, 300, 1_000) == 1_000  # the room, over the base 600
        assert summary_budget(BUDGET, 300, 100) == 600  # never below the base
        assert summary_budget(BUDGET, 3_000, 10_000) == 3_600  # a larger goal's 3,000 + 600
        # a window whose 25 % is over 20,000 stops there; summary_max is the floor
        big = BUDGET.model_copy(update={"window": 200_000, "summary_max": 8_000})
        assert summary_cap(big) == 20_000
        small = BUDGET.model_copy(update={"window": 2_000})
        assert summary_cap(small) == 600  # 25 % of 2,000 is 500 < summary_max 600

    def test_over_the_target_the_summary_grows_into_the_room_left(self) -> None:
        # tokens before 6,000 > target 5,000: each attempt's summary grows into the room
        # under the state's target 5,000 + 3,000 × 0.5 = 6,500: room = 6,500 − 150 − kept −
        # 50 − 100, up to the 2,500 cap: 5,700 (kept 500), 6,000 (kept 200), 6,050 (kept
        # 150): the cap each time.
        # expected = 150 + 50 + 2,500 + kept.
        p = plan(tokens_before=6_000)
        assert [a.summary_tokens for a in p.attempts] == [2_500] * 4
        assert [a.expected_tokens for a in p.attempts] == [3_200, 2_900, 2_900, 2_850]
        # fixed 2,500: first keep 5,000 − 2,500 − 50 − 600 − 100 = 1,750 → 800 (cut at 4,
        # kept 500); room 6,500 − 2,500 − 500 − 50 − 100 = 3,350, over the 2,500 cap: the
        # summary takes the cap and the context is expected at 2,500 + 50 + 2,500 + 500 =
        # 5,550, between the target and the state's target less the margin (6,400).
        p = plan(conversation(fixed=2_500), tokens_before=6_000)
        assert (p.attempts[0].summary_tokens, p.attempts[0].expected_tokens) == (2_500, 5_550)
        # fixed 4,000: keep falls to the floor 200 (cut at 6, kept 200); room 6,500 − 4,000 −
        # 200 − 50 − 100 = 2,150 < the cap: the summary takes it and the context is expected
        # at the state's target less the margin, 6,400: past the target, under the trigger.
        p = plan(conversation(fixed=4_000), tokens_before=6_000)
        assert (p.attempts[0].summary_tokens, p.attempts[0].expected_tokens) == (2_150, 6_400)

    def test_a_lowered_first_budget_halves_from_there(self) -> None:
        # fixed 1,000, goal 3,000: keep 250, 125, 62, 31.
        # keep 250 reaches 6 (200 ≤ 250, 400 > 250), a turn start: cut at 6, kept 200.
        # keep 125 and below: the newest message (150) is over it: split at 7, kept 150.
        # Summary: min(room, 3,600) with room 5,000 − 1,000 − kept − 50 − 100: 3,650 and
        # 3,700, so 3,600; expected 1,000 + 50 + 3,600 + kept.
        p = plan(conversation(fixed=1_000), goal=3_000, tokens_before=2_300)
        assert p.attempts == (
            Attempt(250, None, Cut(6, "m6", 6, 0, False, 200), 3_600, 4_850),
            Attempt(125, None, Cut(7, "m7", 6, 1, True, 150), 3_600, 4_800),
            Attempt(62, 100, Cut(7, "m7", 6, 1, True, 150), 3_600, 4_800),
            Attempt(31, 64, Cut(7, "m7", 6, 1, True, 150), 3_600, 4_800),
        )

    def test_at_the_floor_the_summary_takes_the_room_left_under_the_target(self) -> None:
        # fixed 1,200, goal 3,000: keep 200 (the floor), 100, 50, 25.
        # room = 5,000 − 1,200 − kept − 50 − 100: 3,450 (kept 200), 3,500 (kept 150), both
        # under 3,600: the summary gets the room, and the expected size is the target less
        # the margin, 4,900.
        p = plan(conversation(fixed=1_200), goal=3_000, tokens_before=2_500)
        assert p.attempts == (
            Attempt(200, None, Cut(6, "m6", 6, 0, False, 200), 3_450, 4_900),
            Attempt(100, None, Cut(7, "m7", 6, 1, True, 150), 3_500, 4_900),
            Attempt(50, 100, Cut(7, "m7", 6, 1, True, 150), 3_500, 4_900),
            Attempt(25, 64, Cut(7, "m7", 6, 1, True, 150), 3_500, 4_900),
        )
        assert p.expected_tokens == TARGET - MARGIN


class TestCut:
    # A turn with two tool exchanges: 1,450 tokens.
    #   index  id  role                          tokens   suffix
    #   0      t0  user                            100    1,450
    #   1      t1  assistant                       200    1,350
    #   2      t2  user                             50    1,150
    #   3      t3  assistant 89 + call c1 (7)      100    1,100
    #   4      t4  tool result c1 (1 + 395)        400    1,000
    #   5      t5  assistant 89 + call c2 (7)      100      600
    #   6      t6  tool result c2 (1 + 395)        400      500
    #   7      t7  assistant                       100      100
    # A call part costs text("bash") 2 + text('{"command": "ls"}') 17 // 4 + 1 = 5: 7 tokens.
    TOOLS = (
        user(filler("t0", 96)),
        assistant(filler("t1", 196)),
        user(filler("t2", 46)),
        assistant(filler("t3", 89), call("c1")),
        tool_result("c1", filler("out1", 395)),
        assistant(filler("t5", 89), call("c2")),
        tool_result("c2", filler("out2", 395)),
        assistant(filler("t7", 96)),
    )
    TOOL_IDS = tuple(f"t{k}" for k in range(8))

    def conv(self) -> Conversation:
        return Conversation(self.TOOLS, self.TOOL_IDS, 0, 0)

    def test_the_sizes(self) -> None:
        assert [EST.message(m) for m in self.TOOLS] == [100, 200, 50, 100, 400, 100, 400, 100]

    def test_a_split_turn_summarizes_the_turn_prefix_separately(self) -> None:
        # keep 700: the walk reaches 5 (600 ≤ 700, 1,000 > 700). Candidates 5 and 7 (6 would
        # separate call c2 from its result); 5 is no turn start and no later one exists: the
        # cut splits the turn that starts at 2. Summarized: 0-1; turn prefix: 2-4 (3).
        got = cut_of(self.conv(), EST, 700, allow_split_turn=True)
        assert got == Cut(5, "t5", 2, 3, True, 600)

    def test_without_splitting_the_cut_slides_back_to_the_turn_start(self) -> None:
        got = cut_of(self.conv(), EST, 700, allow_split_turn=False)
        assert got == Cut(2, "t2", 2, 0, False, 1_150)

    def test_a_synthetic_first_kept_message_is_no_cut(self) -> None:
        # keep 200 cuts at m6 (see TestSchedule); with m6 synthetic there is no cut.
        assert cut_of(conversation(), EST, 200, allow_split_turn=True) == Cut(
            6, "m6", 6, 0, False, 200
        )
        synthetic = Conversation(MESSAGES, (*IDS[:6], None, IDS[7]), 1, 150)
        assert cut_of(synthetic, EST, 200, allow_split_turn=True) is None


class TestNoValidCut:
    def test_a_conversation_that_fits_every_budget_has_no_cut(self) -> None:
        # One 100-token message: it fits keep 800, 400, 200 and 100 (100 ≤ 100).
        conv = Conversation(MESSAGES[:1], IDS[:1], 1, 150)
        p = plan(conv, tokens_before=250)
        assert p.attempts == (
            Attempt(800, None, None, 0, 250),
            Attempt(400, None, None, 0, 250),
            Attempt(200, 100, None, 0, 250),
            Attempt(100, 64, None, 0, 250),
        )
        assert (p.first, p.cut, p.expected_tokens) == (None, None, 250)
        assert p.to_dict()["cut"] is None
        assert p.to_dict()["expected_tokens"] == 250


class TestConversationOf:
    # context: sys (20) · u1 (100) · a1 (200) · u2 (50) · a2 call p1 (11) · stand-in for p1 ·
    # a3 call p2 (11) · stand-in for p2. a2 and a3 are one assistant reply whose calls are
    # still running; the sanitizer gave p1 a synthetic result so that a3 can follow it.
    TOOLS_SCHEMA = ({"name": "bash"},)  # '{"name": "bash"}': 16 // 4 + 1 = 5 tokens

    @staticmethod
    def stand_in(cid: str) -> Message:
        return tool_result(cid, "(pending)")  # 4 + 1 + 9 // 4 + 1 = 8 tokens

    def context(self, *, compacted: bool = False) -> Context:
        head: tuple[Message, ...] = (system(filler("sys", 16)),)
        head_ids: tuple[str | None, ...] = ("sys",)
        if compacted:
            head += (user("<continuation-state>earlier work</continuation-state>"),)
            head_ids += (None,)
        messages = (
            *head,
            user(filler("u1", 96)),
            assistant(filler("a1", 196)),
            user(filler("u2", 46)),
            assistant("", call("p1")),
            self.stand_in("p1"),
            assistant("", call("p2")),
            self.stand_in("p2"),
        )
        sources = (*head_ids, "u1", "a1", "u2", "a2", None, "a3", None)
        return Context(
            messages, sources, tools=self.TOOLS_SCHEMA, compaction_id="c1" if compacted else None
        )

    def test_the_stand_ins_of_pending_calls_are_left_out(self) -> None:
        ctx = self.context()
        conv = conversation_of(ctx, EST, self.TOOLS_SCHEMA, frozenset({"p1", "p2"}))
        kept = (1, 2, 3, 4, 6)
        assert conv == Conversation(
            tuple(ctx.messages[k] for k in kept),
            ("u1", "a1", "u2", "a2", "a3"),
            1,
            20 + 5,
            tools_tokens=5,
        )
        # The cut sees a2 and a3 unanswered and keeps them: keep 20 reaches a3 (11 ≤ 20,
        # 22 > 20), which the pending reply forbids; it slides back to a2.
        assert cut_of(conv, EST, 20, allow_split_turn=True) == Cut(3, "a2", 2, 1, True, 22)

    def test_with_the_stand_ins_the_cut_would_summarize_a_pending_call(self) -> None:
        ctx = self.context()
        assert [EST.message(m) for m in ctx.messages] == [20, 100, 200, 50, 11, 8, 11, 8]
        raw = Conversation(ctx.messages[1:], ctx.sources[1:], 1, 25)
        # a3 + its stand-in = 19 ≤ 20: the cut falls at a3, handing a2's call to the summary.
        assert cut_of(raw, EST, 20, allow_split_turn=True) == Cut(5, "a3", 2, 3, True, 19)

    def test_the_continuation_state_and_the_tools_are_not_conversation(self) -> None:
        ctx = self.context(compacted=True)
        conv = conversation_of(ctx, EST, (), frozenset({"p1", "p2"}))
        assert conv.start == 2
        assert conv.sources == ("u1", "a1", "u2", "a2", "a3")
        assert conv.fixed == 20  # no tools given: the system prompt only

    def test_nothing_is_left_out_without_pending_calls(self) -> None:
        ctx = self.context()
        conv = conversation_of(ctx, EST, (), frozenset())
        assert (conv.messages, conv.sources, conv.start, conv.fixed) == (
            ctx.messages[1:],
            ctx.sources[1:],
            1,
            20,
        )

    def test_only_synthetic_results_of_pending_calls_go(self) -> None:
        real = tool_result("p1", "done")
        orphan_stand_in = self.stand_in("x")
        note = user("synthetic note")
        messages = (real, self.stand_in("p1"), orphan_stand_in, note)
        sources = ("r1", None, None, None)
        got = without_stand_ins(messages, sources, frozenset({"p1"}))
        assert got == ((real, orphan_stand_in, note), ("r1", None, None))


def test_to_dict_of_one_plan() -> None:
    prune = PrunePlan(("c1", "c2"), 920)
    d = plan(focus="the build", prune=prune).to_dict()
    cut4: dict[str, Any] = {
        "index": 4,
        "first_kept_id": "m4",
        "summarize_messages": 4,
        "turn_prefix_messages": 0,
        "splits_turn": False,
        "kept_tokens": 500,
    }
    cut6 = cut4 | {"index": 6, "first_kept_id": "m6", "summarize_messages": 6, "kept_tokens": 200}
    cut7 = cut6 | {
        "index": 7,
        "first_kept_id": "m7",
        "turn_prefix_messages": 1,
        "splits_turn": True,
        "kept_tokens": 150,
    }
    assert d == {
        "requirement": {
            "level": "soft",
            "reason": "manual",
            "detail": "requested by the caller",
            "tokens": 1_450,
            "limit": 0,
        },
        "policy": "default",
        "focus": "the build",
        "prune": {"call_ids": ["c1", "c2"], "tokens_saved": 920},
        "cut": cut4,
        "budget": {
            "window": 10_000,
            "reserve": 2_000,
            "trigger": 8_000,
            "keep_recent": 800,
            "truncate_tokens": 200,
            "prune_protect": 2_000,
            "prune_minimum": 1_000,
            "summary_max": 600,
            "goal_max": 3_000,
            "headroom": 3_000,
            "pins_max": 0,
        },
        "target": 5_000,
        "tokens_before": 1_450,
        "expected_tokens": 1_300,
        "fixed_tokens": 150,
        # Nothing is kept past the newest valid cut point (the end) and nothing re-injected.
        "floor": {
            "tokens": 300,
            "limit": 7_700,
            "parts": {"system prompt": 150, "margin": 100, "continuation message": 50},
        },
        "conversation_messages": 8,
        "attempts": [
            {
                "keep_recent": 800,
                "truncate_tokens": None,
                "summary_tokens": 600,
                "expected_tokens": 1_300,
                "reinjected": {},
                "cut": cut4,
            },
            {
                "keep_recent": 400,
                "truncate_tokens": None,
                "summary_tokens": 600,
                "expected_tokens": 1_000,
                "reinjected": {},
                "cut": cut6,
            },
            {
                "keep_recent": 200,
                "truncate_tokens": 100,
                "summary_tokens": 600,
                "expected_tokens": 1_000,
                "reinjected": {},
                "cut": cut6,
            },
            {
                "keep_recent": 100,
                "truncate_tokens": 64,
                "summary_tokens": 600,
                "expected_tokens": 950,
                "reinjected": {},
                "cut": cut7,
            },
        ],
    }


class TestDurableState:
    """The durable state a compaction re-injects is part of the plan's arithmetic: the items
    never cut (rules 200) come out of the summary's room and count in every attempt's
    expected size; the others (a file of 300, or its path line of 30) fill what the summary
    leaves under the trigger."""

    RULES = DurableItem("rules", "R", 200)
    FILE = DurableItem("files", "F", 300, "P", 30)

    def durable(self, *items: DurableItem) -> tuple[DurableFn, list[str | None]]:
        asked: list[str | None] = []

        def at(first_kept: str | None) -> tuple[DurableItem, ...]:
            asked.append(first_kept)
            return items

        return at, asked

    def test_expected_sizes_include_the_reinjected_state(self) -> None:
        fn, asked = self.durable(self.RULES, self.FILE)
        p = plan(durable=fn)
        state = DurableState(("R", "F"), ("rules", "files"), (200, 300))
        # Without durable state: 1,300 / 1,000 / 1,000 / 950; now + 200 + 300 each. The
        # summary keeps its 600: the room under the trigger is 8,000 − 150 − kept − 200 − 50
        # − 100 ≥ 6,850.
        assert [(a.summary_tokens, a.expected_tokens, a.durable) for a in p.attempts] == [
            (600, 1_800, state),
            (600, 1_500, state),
            (600, 1_500, state),
            (600, 1_450, state),
        ]
        # Once with nothing kept (the floor and the first keep), once per distinct cut.
        assert asked == [None, "m4", "m6", "m7"]
        # The floor: the rules, the head, the margin the summary's room keeps (1 % of the
        # 10,000-token window) and the continuation message.
        assert p.floor == (
            ("re-injected rules", 200),
            ("system prompt", 150),
            ("margin", 100),
            ("continuation message", 50),
        )
        assert p.floor_tokens == 500
        assert p.to_dict()["attempts"][0]["reinjected"] == {"rules": 200, "files": 300}

    def test_the_summary_gets_what_the_rules_leave_under_the_trigger(self) -> None:
        # Rules of 7,000 leave no room for the keep-recent budget under the target: the first
        # keep is a quarter of 800, 200 (cut at m6, 200 kept). The room under the trigger
        # less the free room (10 % of the 3,000 headroom) is then 8,000 − 300 − 150 − 200 −
        # 7,000 − 50 − 100 = 200: the summary's budget, and nothing is left for the file (not
        # even its 30-token path). Later attempts keep m7 (150): the summary gets 250. Every
        # attempt expects 7,600, 400 under the trigger.
        big = DurableItem("rules", "R", 7_000)
        fn, _ = self.durable(big, self.FILE)
        p = plan(durable=fn)
        state = DurableState(("R",), ("rules",), (7_000,))
        assert [
            (a.keep_recent, a.cut.first_kept_id if a.cut else None, a.summary_tokens)
            for a in p.attempts
        ] == [(200, "m6", 200), (100, "m7", 250), (50, "m7", 250), (25, "m7", 250)]
        assert {(a.expected_tokens, a.durable) for a in p.attempts} == {(7_600, state)}
        assert p.floor_free == 300
        assert p.floor_tokens == 7_000 + 150 + 100 + 50 < p.floor_limit == 7_700

    def test_a_floor_over_the_trigger_is_in_the_plan(self) -> None:
        fn, _ = self.durable(DurableItem("rules", "R", 7_900))
        p = plan(durable=fn)
        assert p.floor == (
            ("re-injected rules", 7_900),
            ("system prompt", 150),
            ("margin", 100),
            ("continuation message", 50),
        )
        assert p.floor_tokens == 8_200 >= p.floor_limit == 7_700
        assert p.to_dict()["floor"] == {
            "tokens": 8_200,
            "limit": 7_700,
            "parts": {
                "re-injected rules": 7_900,
                "system prompt": 150,
                "margin": 100,
                "continuation message": 50,
            },
        }

    def test_the_tail_no_cut_can_drop_is_in_the_floor(self) -> None:
        # The newest reply (m7, 150 tokens, then a call whose result has not come) cannot
        # be cut inside nor after: it is in every tail.
        pending = Message("assistant", (call("p1"),))
        conv = Conversation((*MESSAGES, pending), (*IDS, "m8"), 1, 150)
        p = plan(conv)
        assert EST.message(pending) == 11
        assert dict(p.floor)["kept tail"] == 150 + 11
