"""Defects of the decision fixed with the plan: the usage anchor rule, caps that relax when
room returns, and a provider's reported limit that stays in force. Sizes by the hand
estimator (``EST``: 4 tokens per message plus ``len(text) // 4 + 1`` per text)."""

from __future__ import annotations

import pytest
from engine_helpers import EST, filler, result

from ctxengine.engine import Session
from ctxengine.errors import ContextFloorError, ContextOverflow
from ctxengine.model import (
    CompactionRecord,
    Ledgers,
    Message,
    TextPart,
    ToolCallPart,
    Usage,
    assistant,
    user,
)
from ctxengine.summarizers.extractive_state import minimum_state_tokens


def twenty_turns(last_usage: Usage | None) -> Session:
    """20 turns of a 600-token user message and a 30-token reply (12,600 tokens) in a
    12,000-token window; the last reply carries ``last_usage``."""
    s = Session(12_000, estimator=EST)
    for i in range(20):
        s.append(user(filler(f"u{i}", 596)), entry_id=f"u{i}")
        reply = assistant(filler(f"a{i}", 26))
        if i == 19 and last_usage is not None:
            reply = Message("assistant", reply.parts, last_usage)
        s.append(reply, entry_id=f"a{i}")
    return s


class TestUsageAnchor:
    def test_an_output_only_usage_is_no_anchor_and_compacts_as_no_usage_does(self) -> None:
        output_only, no_usage = twenty_turns(Usage(output_tokens=50)), twenty_turns(None)
        # Reserve 2,400 (20 % of 12,000), trigger 9,600: 20 × 630 = 12,600 is over it.
        for s in (output_only, no_usage):
            assert s.context_tokens(s.project()) == 12_600
            assert (s.budget.trigger, s.budget.keep_recent) == (9_600, 3_000)
        a, b = output_only.prepare(), no_usage.prepare()
        # Target 9,600 − 5,280 (55 %) = 4,320. The first attempt's keep-recent budget, 3,000
        # lowered to fit the target beside the continuation message (52), a state at its base
        # budget (1,800) and the 120-token margin, is 2,348: walking back reaches a16 (3
        # turns + 30 = 1,920), and the turn start u17 after it keeps 3 turns (1,890), at
        # least half the budget. The continuation state grows into the room under the
        # state's target (4,320 + 2,640, half the headroom: 6,960 − 1,890 − 52 − 120 =
        # 4,898) up to its cap (25 % of the window, 3,000), which it fills with the earlier
        # user messages, their heads first: 52 + 2,999 + 1,890.
        assert a.sources[1:3] == b.sources[1:3] == ("u17", "a17")
        assert a.tokens == b.tokens == 4_942
        assert output_only.context_tokens(a) == no_usage.context_tokens(b) == 4_942
        assert [m.parts for m in a.messages] == [m.parts for m in b.messages]

    def test_a_usage_with_prompt_tokens_anchors_the_size(self) -> None:
        s = twenty_turns(Usage(input_tokens=11_000, output_tokens=50))
        assert s.context_tokens(s.project()) == 11_050


def squeezed_record(first_kept: str) -> CompactionRecord:
    return CompactionRecord(
        summary="earlier work",
        first_kept_id=first_kept,
        tokens_before=0,
        tokens_after=0,
        policy="default",
        summarizer="extractive",
        reason="threshold",
        ledgers=Ledgers(),
        truncate_tokens=64,
    )


class TestCapsRelax:
    def test_a_compaction_after_a_squeezed_one_starts_from_the_budgets_cap(self) -> None:
        # Each turn: a short request, a call and its 205-token result, a 24-token answer (a
        # person's text is never truncated: the tool result carries what the cap squeezes).
        s = Session(12_000, estimator=EST)
        s.append(user(filler("task", 200)), entry_id="u0")
        s.append(assistant(filler("a0", 20)), entry_id="a0")
        s.append(squeezed_record("a0"))
        for i in range(1, 31):
            s.append(user(filler(f"u{i}", 4)), entry_id=f"u{i}")
            s.append(Message("assistant", (ToolCallPart(f"c{i}", "read", "{}"),)), entry_id=f"c{i}")
            s.append(result(f"c{i}", filler(f"r{i}", 200)), entry_id=f"r{i}")
            s.append(assistant(filler(f"a{i}", 20)), entry_id=f"a{i}")
        plan = s.plan()
        assert plan is not None
        # Budget cap 2,400 (20 % of the window): attempts 1-2 use it (None), 3-4 halve it.
        assert s.budget.truncate_tokens == 2_400
        assert [a.truncate_tokens for a in plan.attempts] == [None, None, 1_200, 600]
        # The squeezed epoch shows every 205-token result cut to 64 tokens (92 with the
        # marker): 131 tokens a turn, 4,009 in all with the 55-token state and the first
        # answer. The first attempt's keep-recent budget is 3,000 lowered to fit the
        # 4,320-token target (9,600 − 55 %) beside the continuation message (52), the base
        # 1,800-token state and the 120-token margin: 2,348, halved by each attempt; measured
        # on the squeezed turns they keep 17, 8, 4 and 2 turns. With the budget's cap the kept
        # results regrow to 205 tokens (244 a turn), so the first attempt (17 turns, 4,148
        # tokens) would not shrink the context; the second (8 turns) does. Before, the
        # schedule started from the inherited 64-token cap and never left it.
        assert [a.keep_recent for a in plan.attempts] == [2_348, 1_174, 587, 293]
        kept = [a.cut.first_kept_id if a.cut is not None else None for a in plan.attempts]
        assert kept == ["u14", "u23", "u27", "u29"]
        assert s.project().tokens == 4_009
        outcome = s.compact()
        assert (outcome.attempt, outcome.record.truncate_tokens) == (1, None)
        assert outcome.record.first_kept_id == "u23"
        # The state's message (398 tokens) and the 8 kept turns at full size: 398 + 8 × 244.
        assert outcome.tokens_after == 2_350


class TestLearnedLimit:
    def test_a_reported_limit_stays_in_force_until_a_window_is_set(self) -> None:
        s = Session(10_000, estimator=EST)
        for i in range(12):
            s.append(user(filler(f"u{i}", 296)), entry_id=f"u{i}")
            s.append(assistant(filler(f"a{i}", 16)), entry_id=f"a{i}")
        assert (s.budget.window, s.budget.trigger) == (10_000, 8_000)
        s.on_overflow(ContextOverflow(3_840, 6_000, "prompt is too long"))
        # Reserve 1,200 (20 % of 6,000), trigger 4,800: later requests are sized for it.
        assert (s.learned_limit, s.window) == (6_000, 10_000)
        assert (s.budget.window, s.budget.trigger) == (6_000, 4_800)
        for i in range(12, 30):
            s.append(user(filler(f"u{i}", 296)), entry_id=f"u{i}")
            s.append(assistant(filler(f"a{i}", 16)), entry_id=f"a{i}")
            ctx = s.prepare()
            assert s.context_tokens(ctx) < 4_800 + 320
        # The same window again: the limit stays (the provider said so under it).
        s.set_window(10_000)
        assert (s.learned_limit, s.budget.window) == (6_000, 6_000)
        # A larger window forgets it: reserve 2,400, trigger 9,600.
        s.set_window(12_000)
        assert s.learned_limit is None
        assert (s.budget.window, s.budget.trigger) == (12_000, 9_600)


class TestFloorErrorSaysWhy:
    def test_a_head_over_the_trigger_fails_once_naming_it(self) -> None:
        # Window 4,000: trigger 3,200. A 3,300-token system prompt cannot be compacted: the
        # first prepare over the trigger says so, before any summary is written.
        s = Session(4_000, estimator=EST)
        s.append(Message("system", (TextPart(filler("sys", 3_296)),)), entry_id="sys")
        for i in range(6):
            s.append(user(filler(f"u{i}", 96)), entry_id=f"u{i}")
            s.append(assistant(filler(f"a{i}", 16)), entry_id=f"a{i}")
        s.append(user(filler("u6", 96)), entry_id="u6")
        with pytest.raises(ContextFloorError) as info:
            s.prepare()
        overhead = s.compactor.continuation_overhead
        # The smallest state for the 380-character goal u0 (entries 1–14): 195 tokens; the
        # newest user message u6 (100 tokens), awaiting its answer, is kept whole; the
        # margin: 1 % of the window; 176 tokens (10 % of the 1,760 headroom) left free.
        state = minimum_state_tokens(filler("u0", 96), EST, (14, 14))
        assert state == 195
        assert (info.value.floor, info.value.trigger, info.value.window, info.value.free) == (
            3_300 + state + overhead + 100 + 40,
            3_200,
            4_000,
            176,
        )
        assert info.value.parts == (
            ("system prompt", 3_300),
            ("continuation state", state),
            ("newest user message", 100),
            ("continuation message", overhead),
            ("margin", 40),
        )
        assert str(info.value).startswith(
            "no compaction can bring the context under the trigger of 3,200 tokens with 176 "
            f"tokens to spare (window 4,000): what every compaction keeps is "
            f"{3_300 + state + overhead + 100 + 40:,} tokens already (largest parts: system "
            "prompt 3,300, continuation state 195, newest user message 100); shorten these"
        )
        assert [(e.step, e.detail) for e in s.events] == [("failure", str(info.value))]
        assert not any(e.kind == "compaction" for e in s.entries) and s.failures == 0

    def test_a_newest_user_message_that_cannot_fit_is_named_by_prepare_and_compact(self) -> None:
        # Window 8,000 (trigger 6,400): an 8,000-token request, never truncated nor
        # summarized before it is answered, cannot fit whatever is compacted before it.
        s = Session(8_000, estimator=EST)
        s.append(Message("system", (TextPart("sys"),)), entry_id="sys")
        for i in range(4):
            s.append(user(filler(f"u{i}", 296)), entry_id=f"u{i}")
            s.append(assistant(filler(f"a{i}", 16)), entry_id=f"a{i}")
        s.append(user(filler("big", 7_996)), entry_id="big")
        parts = (
            ("newest user message", 8_000),
            ("continuation state", 223),
            ("margin", 80),
            ("continuation message", 52),
            ("system prompt", 5),
        )
        expected = (
            "no compaction can bring the context under the trigger of 6,400 tokens with 352 "
            "tokens to spare (window 8,000): what every compaction keeps is 8,360 tokens "
            "already (largest parts: newest user message 8,000, continuation state 223, margin "
            "80); the newest user message is never cut nor summarized before it is answered: "
            "send a shorter one, or use a model with a larger window"
        )
        # A manual compaction runs, and its too-large result is explained by the floor.
        with pytest.raises(ContextFloorError) as manual:
            s.compact()
        assert (manual.value.parts, str(manual.value)) == (parts, expected)
        assert str(manual.value.__cause__) == (
            "summary rejected: too_large (the compacted context would be 9,256 tokens, over the "
            "8,000-token window)"
        )
        with pytest.raises(ContextFloorError) as automatic:
            s.prepare()
        assert (automatic.value.parts, str(automatic.value)) == (parts, expected)
        assert not any(e.kind == "compaction" for e in s.entries)
