"""Turn and tool-exchange segmentation."""

from __future__ import annotations

from boundary_helpers import a, r, u

from ctxengine.boundaries import ToolExchange, Turn, segment_turns, tool_exchanges, turn_starts
from ctxengine.boundaries.turns import match_results, reply_starts
from ctxengine.model import Message, TextPart, ToolResultPart

HISTORY = [
    u(),  # 0
    a("c1", "c2"),  # 1
    r("c1"),  # 2
    r("c2"),  # 3
    a(text="done"),  # 4
    u(),  # 5
    a(thinking=True),  # 6  reasoning-only chunk of the next reply
    a("c3"),  # 7
    r("c3"),  # 8
    a(text="fixed"),  # 9
]


class TestTurns:
    def test_a_turn_is_a_user_message_and_what_answers_it(self) -> None:
        assert segment_turns(HISTORY) == (Turn(0, 5), Turn(5, 10))
        assert turn_starts(HISTORY) == {0, 5}

    def test_messages_before_the_first_user_form_a_leading_turn(self) -> None:
        msgs = [a(text="resumed"), r("x"), u(), a()]
        assert segment_turns(msgs) == (Turn(0, 2, has_user=False), Turn(2, 4))
        assert segment_turns([a(), a()]) == (Turn(0, 2, has_user=False),)
        assert segment_turns([]) == ()

    def test_a_user_message_holding_tool_results_does_not_start_a_turn(self) -> None:
        result_as_user = Message("user", (ToolResultPart("c1", (TextPart("x"),)), TextPart("and")))
        msgs = [u(), a("c1"), result_as_user, a()]
        assert segment_turns(msgs) == (Turn(0, 4),)

    def test_injected_user_role_messages_belong_to_the_turn_they_were_written_into(self) -> None:
        reminder = u("<system-reminder>The file changed.</system-reminder>")
        meta = Message("user", (TextPart("Caveat: local command"),), meta={"isMeta": True})
        msgs = [u(), a("c1"), r("c1"), reminder, meta, a(), u("next"), a()]
        assert turn_starts(msgs) == {0, 6}
        assert segment_turns(msgs) == (Turn(0, 6), Turn(6, 8))


class TestExchanges:
    def test_parallel_calls_and_their_results_are_one_exchange(self) -> None:
        assert tool_exchanges(HISTORY) == (
            ToolExchange(1, 4, ("c1", "c2")),
            ToolExchange(6, 9, ("c3",)),
        )

    def test_consecutive_assistant_messages_are_one_reply(self) -> None:
        assert reply_starts(HISTORY) == (0, 1, 2, 3, 4, 5, 6, 6, 8, 9)
        split = [u(), a("c1"), a("c2"), r("c2"), r("c1")]
        assert tool_exchanges(split) == (ToolExchange(1, 5, ("c1", "c2")),)

    def test_unanswered_calls_are_reported(self) -> None:
        msgs = [u(), a("c1", "c2"), r("c2"), u(), a("c3")]
        assert tool_exchanges(msgs) == (
            ToolExchange(1, 3, ("c1", "c2"), unanswered=("c1",)),
            ToolExchange(4, 5, ("c3",), unanswered=("c3",)),
        )

    def test_a_result_answers_the_nearest_earlier_call_with_its_id(self) -> None:
        msgs = [u(), a("dup"), r("dup"), u(), a("dup"), r("dup"), r("orphan")]
        assert match_results(msgs) == ((1, 2), (4, 5))
        assert tool_exchanges(msgs) == (ToolExchange(1, 3, ("dup",)), ToolExchange(4, 6, ("dup",)))
