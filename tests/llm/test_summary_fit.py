"""Fitting a summary request's input: budget, degrade, chunk, shrink (pure planners)."""

from __future__ import annotations

from llm_helpers import QuarterEstimator, call, calls, result

from ctxengine.model import Message, ReasoningPart, user
from ctxengine.summarizers.fit import SHRINK_RATIOS, input_budget, plan_input, shrink_budget
from ctxengine.summarizers.transcript import serialize_transcript

EST = QuarterEstimator()


def history(n: int = 3, output_chars: int = 4_000, user_chars: int = 0) -> tuple[Message, ...]:
    out: list[Message] = []
    for k in range(n):
        out += [
            user(f"request {k}: look at file {k}" + " please" * (user_chars // 7)),
            calls(call(f"c{k}", "Read", path=f"src/f{k}.py"), text=f"reading f{k}"),
            result(f"c{k}", f"line of f{k}\n" * (output_chars // 12)),
        ]
    return tuple(out)


class TestInputBudget:
    def test_budget_is_window_minus_output_prompt_and_margin(self) -> None:
        assert input_budget(32_768, 8_192, 1_500, 1_638) == 21_438

    def test_shrink_steps_are_85_70_50_35_percent_of_the_rejected_size(self) -> None:
        assert SHRINK_RATIOS == (0.85, 0.70, 0.50, 0.35)
        assert [shrink_budget(10_000, k) for k in range(5)] == [8_500, 7_000, 5_000, 3_500, None]

    def test_reported_numbers_ask_for_a_deeper_cut_when_needed(self) -> None:
        # the provider counted 20,000 tokens against a 10,000 limit: 0.9 × 0.5 = 45 %
        assert shrink_budget(10_000, 0, reported_tokens=20_000, reported_limit=10_000) == 4_500
        assert shrink_budget(10_000, 0, reported_tokens=10_500, reported_limit=10_000) == 8_500


class TestPlanInput:
    def test_full_mode_when_it_fits(self) -> None:
        messages = history(output_chars=400)
        plan = plan_input(messages, EST, 10_000)
        assert plan is not None and not plan.chunked
        [piece] = plan.pieces
        assert (piece.mode, piece.start, piece.end) == ("full", 0, 9)
        assert piece.text == serialize_transcript(messages)
        assert piece.tokens == EST.text(piece.text)

    def test_degrades_one_step_at_a_time(self) -> None:
        messages = history(output_chars=4_000)
        sizes = {
            m: EST.text(serialize_transcript(messages, mode=m))
            for m in ("full", "tool_head_tail", "no_tool_output", "user_only")
        }
        assert sizes["full"] > sizes["tool_head_tail"] > sizes["no_tool_output"]
        assert sizes["no_tool_output"] > sizes["user_only"]
        for mode, budget in (
            ("tool_head_tail", sizes["full"] - 1),
            ("no_tool_output", sizes["tool_head_tail"] - 1),
        ):
            plan = plan_input(messages, EST, budget)
            assert plan is not None and [p.mode for p in plan.pieces] == [mode]

    def test_user_only_before_chunks(self) -> None:
        messages = history(n=40, output_chars=400)
        user_only = EST.text(serialize_transcript(messages, mode="user_only"))
        no_output = EST.text(serialize_transcript(messages, mode="no_tool_output"))
        plan = plan_input(messages, EST, user_only)
        assert user_only < no_output
        assert plan is not None and [p.mode for p in plan.pieces] == ["user_only"]

    def test_chunks_oldest_first_each_within_the_budget(self) -> None:
        messages = history(n=6, output_chars=4_000, user_chars=1_400)
        assert EST.text(serialize_transcript(messages, mode="user_only")) > 700
        plan = plan_input(messages, EST, 700)
        assert plan is not None and plan.chunked
        assert {p.mode for p in plan.pieces} == {"tool_head_tail"}
        assert all(p.tokens <= 700 for p in plan.pieces)
        assert [(p.start, p.end) for p in plan.pieces] == [
            (0, 3),
            (3, 6),
            (6, 9),
            (9, 12),
            (12, 15),
            (15, 18),
        ]
        assert "request 0" in plan.pieces[0].text and "request 5" in plan.pieces[-1].text

    def test_an_exchange_larger_than_the_budget_is_cut_head_and_tail(self) -> None:
        messages = (user("x" * 40_000),)
        plan = plan_input(messages, EST, 1_000)
        assert plan is not None
        [piece] = plan.pieces
        assert piece.tokens <= 1_000 and piece.cut_chars > 0
        assert "characters omitted" in piece.text and piece.text.startswith("[user wrote]")

    def test_nothing_to_send_gives_no_plan(self) -> None:
        thinking_only = (Message("assistant", (ReasoningPart("private", "sig"),)),)
        assert plan_input(thinking_only, EST, 10_000) is None

    def test_a_budget_below_the_minimum_gives_no_plan(self) -> None:
        assert plan_input(history(), EST, 255) is None
