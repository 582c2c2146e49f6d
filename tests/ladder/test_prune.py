"""``plan_prune()`` (ladder/prune.py): which old tool results become placeholders.

Sizes come from :data:`~ladder_helpers.EST`: a tool result part holding ``filler(n)`` costs
``1 + n`` tokens; a pruned one is replaced by a placeholder of
:data:`~ctxengine.policy.defaults.PRUNE_PLACEHOLDER_TOKENS` (40), so it saves ``cost − 40``.

The conversation (three real user turns)::

    index  message                            result cost   saving
    0      user u1
    1      assistant call e (bash)
    2      result e                                 40          0 (never worth it)
    3      assistant call a (bash)
    4      result a                                500        460
    5      assistant call b (skill)
    6      result b                                500        460
    7      assistant call c (bash)
    8      result c                                300        260
    9      user u2
    10     assistant call d (bash)
    11     result d                                600        560
    12     user u3
    13     assistant "done"

With the default ``protect_turns`` of 2 the turns of u2 and u3 (index 9 on) are never
pruned; the walk goes c, b, a, e (newest first).
"""

from __future__ import annotations

from collections.abc import Collection, Sequence

import pytest
from ladder_helpers import EST, call, filler

from ctxengine.ladder.prune import PrunePlan, plan_prune
from ctxengine.model import Message, TextPart, ToolResultPart, assistant, tool_result, user
from ctxengine.policy import DEFAULT_POLICY
from ctxengine.policy.defaults import DEFAULT_PRUNE_EXEMPT_TOOLS, PRUNE_PLACEHOLDER_TOKENS

P = PRUNE_PLACEHOLDER_TOKENS  # 40


def exchange(cid: str, name: str, cost: int) -> tuple[Message, Message]:
    """A call of ``name`` and its result of ``cost`` tokens (1 + the text)."""
    return assistant("", call(cid, name)), tool_result(cid, filler(f"out {cid}", cost - 1))


MESSAGES: tuple[Message, ...] = (
    user(filler("u1", 20)),
    *exchange("e", "bash", 40),
    *exchange("a", "bash", 500),
    *exchange("b", "skill", 500),
    *exchange("c", "bash", 300),
    user(filler("u2", 20)),
    *exchange("d", "bash", 600),
    user(filler("u3", 20)),
    assistant("done"),
)


def prune(
    messages: Sequence[Message] = MESSAGES,
    *,
    protect_tokens: int = 0,
    minimum_tokens: int = 0,
    protect_turns: int = 2,
    exempt_tools: Collection[str] = (),
    already_pruned: Collection[str] = (),
) -> PrunePlan | None:
    return plan_prune(
        messages,
        EST,
        protect_tokens=protect_tokens,
        minimum_tokens=minimum_tokens,
        protect_turns=protect_turns,
        exempt_tools=exempt_tools,
        already_pruned=already_pruned,
    )


def test_the_result_costs() -> None:
    costs = {r.call_id: EST.part(r) for m in MESSAGES for r in m.tool_results}
    assert costs == {"e": 40, "a": 500, "b": 500, "c": 300, "d": 600}
    assert P == 40


class TestExemptTools:
    def test_the_default_list_is_the_policys(self) -> None:
        assert DEFAULT_POLICY.prune_exempt_tools == DEFAULT_PRUNE_EXEMPT_TOOLS
        assert set(DEFAULT_PRUNE_EXEMPT_TOOLS) == {"skill", "Skill", "update_plan", "TodoWrite"}

    def test_a_default_exempt_tool_is_never_chosen(self) -> None:
        # c (300) fills the 200 protected tokens; b is a skill; a saves 500 − 40; e saves 0.
        got = prune(protect_tokens=200, exempt_tools=DEFAULT_PRUNE_EXEMPT_TOOLS)
        assert got == PrunePlan(("a",), 500 - P)

    def test_without_protection_only_the_exempt_one_stays(self) -> None:
        got = prune(exempt_tools=DEFAULT_PRUNE_EXEMPT_TOOLS)
        assert got == PrunePlan(("a", "c"), (500 - P) + (300 - P))

    def test_exempt_output_does_not_count_as_protected_output(self) -> None:
        # protect 301: c (300) leaves it 1 short; the skill result b is skipped before
        # counting (OpenCode skips protected tools first), so a (500) fills the protection
        # and only e (40, no saving) is left: nothing to prune.
        assert prune(protect_tokens=301, exempt_tools=DEFAULT_PRUNE_EXEMPT_TOOLS) is None
        # protect 300: c fills it exactly; b skipped; a is chosen.
        got = prune(protect_tokens=300, exempt_tools=DEFAULT_PRUNE_EXEMPT_TOOLS)
        assert got == PrunePlan(("a",), 500 - P)

    def test_a_custom_list_replaces_the_default(self) -> None:
        # bash exempt: only the skill result b is left to prune.
        assert prune(exempt_tools=("bash",)) == PrunePlan(("b",), 500 - P)

    def test_the_name_on_the_result_counts_when_the_call_is_gone(self) -> None:
        # Results whose calls were compacted away: the result's own name decides.
        orphans = (
            user(filler("u1", 20)),
            Message("tool", (ToolResultPart("s", (TextPart(filler("s", 499)),), name="skill"),)),
            Message("tool", (ToolResultPart("y", (TextPart(filler("y", 499)),), name="bash"),)),
        )
        got = prune(orphans, protect_turns=0, exempt_tools=DEFAULT_PRUNE_EXEMPT_TOOLS)
        assert got == PrunePlan(("y",), 500 - P)


class TestProtectedTurns:
    def test_the_last_two_turns_are_never_pruned(self) -> None:
        # d (600) is in u2's turn: not chosen even with nothing else protected.
        assert prune() == PrunePlan(("a", "b", "c"), (500 - P) + (500 - P) + (300 - P))

    def test_one_protected_turn_exposes_d(self) -> None:
        # (500 − 40) + (500 − 40) + (300 − 40) + (600 − 40) = 1,740
        got = prune(protect_turns=1)
        assert got == PrunePlan(("a", "b", "c", "d"), 1_740)

    def test_no_protected_turn_exposes_everything(self) -> None:
        assert prune(protect_turns=0) == PrunePlan(("a", "b", "c", "d"), 1_740)

    def test_protecting_every_turn_leaves_nothing(self) -> None:
        assert prune(protect_turns=3) is None

    @pytest.mark.parametrize("turns", [4, 10])
    def test_more_protected_turns_than_turns_is_none(self, turns: int) -> None:
        assert prune(protect_turns=turns) is None

    def test_results_in_user_messages_do_not_open_turns(self) -> None:
        # Results carried by user messages (the Anthropic shape) are not real user turns:
        # protect_turns 2 still protects from u2 on.
        as_user = tuple(Message("user", m.parts) if m.tool_results else m for m in MESSAGES)
        assert prune(as_user) == PrunePlan(("a", "b", "c"), 1_180)


class TestProtectTokens:
    def test_the_newest_tool_output_is_protected(self) -> None:
        # protect 300: c (300) reaches it; b and a are chosen.
        assert prune(protect_tokens=300) == PrunePlan(("a", "b"), 2 * (500 - P))

    def test_the_result_that_crosses_the_limit_is_protected_whole(self) -> None:
        # protect 301: c (300) leaves 1 token short, so b (500) is protected too.
        assert prune(protect_tokens=301) == PrunePlan(("a",), 500 - P)

    def test_protecting_all_old_output_leaves_nothing(self) -> None:
        # c, b and a (300 + 500 + 500 = 1,300) are protected; e saves nothing.
        assert prune(protect_tokens=1_300) is None
        # c and b (800) fill a limit of 800, a is chosen; at 801 a is protected whole.
        assert prune(protect_tokens=800) == PrunePlan(("a",), 500 - P)
        assert prune(protect_tokens=801) is None


class TestMinimum:
    def test_a_saving_at_the_minimum_is_worth_it(self) -> None:
        # (500 − 40) × 2 + (300 − 40) = 1,180
        assert prune(minimum_tokens=1_180) == PrunePlan(("a", "b", "c"), 1_180)

    def test_a_saving_below_the_minimum_is_none(self) -> None:
        assert prune(minimum_tokens=1_181) is None

    def test_a_result_no_larger_than_its_placeholder_is_never_chosen(self) -> None:
        # e costs exactly 40: replacing it saves nothing, even with everything exposed.
        got = prune(protect_turns=0)
        assert got is not None and "e" not in got.call_ids


class TestAlreadyPruned:
    def test_already_pruned_results_are_skipped(self) -> None:
        assert prune(already_pruned={"a", "c"}) == PrunePlan(("b",), 500 - P)

    def test_they_do_not_count_as_protected_output(self) -> None:
        # protect 200 without c: b (500) is the newest unpruned output and is protected.
        assert prune(protect_tokens=200, already_pruned={"c"}) == PrunePlan(("a",), 500 - P)
        # with c unpruned, c (300) takes the protection and b is chosen.
        assert prune(protect_tokens=200) == PrunePlan(("a", "b"), 2 * (500 - P))

    def test_everything_pruned_already_is_none(self) -> None:
        assert prune(protect_turns=0, already_pruned={"a", "b", "c", "d"}) is None
