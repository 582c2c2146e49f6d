"""The sanitizer: repairs of call/result pairing broken in the source."""

import pytest
from projection_helpers import call, result, tool

from ctxengine.boundaries.sanitize import SYNTHETIC_RESULT_TEXT, SanitizeReport, sanitize
from ctxengine.model import Message, TextPart, ToolResultPart, assistant, user


def synthetic(cid: str, name: str = "bash") -> Message:
    return Message(
        "tool",
        (ToolResultPart(cid, (TextPart(SYNTHETIC_RESULT_TEXT),), is_error=True, name=name),),
    )


def ids(n: int) -> list[str | None]:
    return [f"e{i}" for i in range(n)]


class TestSanitize:
    def test_a_well_formed_history_comes_back_unchanged(self) -> None:
        msgs = [
            user("go"),
            assistant("", call("a"), call("b")),
            tool(result("a", "A")),
            tool(result("b", "B")),
            assistant("done"),
        ]
        out, sources, report = sanitize(msgs, ids(5))
        assert out == tuple(msgs)
        assert all(x is y for x, y in zip(out, msgs, strict=True))
        assert sources == ("e0", "e1", "e2", "e3", "e4")
        assert report == SanitizeReport()
        assert not report.changed

    def test_a_call_that_never_got_a_result_gets_a_synthetic_error_after_the_other_results(
        self,
    ) -> None:
        msgs = [
            user("go"),
            assistant("", call("a"), call("b")),
            tool(result("b", "B")),
            user("next"),
            assistant("ok"),
        ]
        out, sources, report = sanitize(msgs, ids(5))
        assert out == (msgs[0], msgs[1], msgs[2], synthetic("a"), msgs[3], msgs[4])
        assert sources == ("e0", "e1", "e2", None, "e3", "e4")
        assert report == SanitizeReport(synthetic_results=("a",))
        assert SYNTHETIC_RESULT_TEXT == (
            "[no result recorded: the tool call was interrupted before it returned]"
        )

    def test_trailing_pending_calls_are_left_without_a_result(self) -> None:
        msgs = [user("go"), assistant("", call("a"), call("b")), tool(result("a", "A"))]
        out, _, report = sanitize(msgs, ids(3))
        assert out == tuple(msgs)
        assert report == SanitizeReport()

    def test_a_result_whose_call_is_missing_is_dropped(self) -> None:
        msgs = [tool(result("x", "X")), user("go"), assistant("hi")]
        out, sources, report = sanitize(msgs, ids(3))
        assert out == (msgs[1], msgs[2])
        assert sources == ("e1", "e2")
        assert report == SanitizeReport(dropped_results=("x",))

    def test_a_result_before_its_call_is_dropped_and_the_call_gets_a_synthetic_result(
        self,
    ) -> None:
        msgs = [user("go"), tool(result("a", "A")), assistant("", call("a")), user("more")]
        out, _, report = sanitize(msgs, ids(4))
        assert out == (msgs[0], msgs[2], synthetic("a"), msgs[3])
        assert report == SanitizeReport(synthetic_results=("a",), dropped_results=("a",))

    def test_parallel_results_are_never_duplicated(self) -> None:
        msgs = [
            user("go"),
            assistant("", call("a"), call("b")),
            tool(result("a", "A"), result("b", "B")),
            tool(result("a", "A again"), result("b", "B again")),
            assistant("done"),
        ]
        out, sources, report = sanitize(msgs, ids(5))
        assert out == (msgs[0], msgs[1], msgs[2], msgs[4])
        assert sources == ("e0", "e1", "e2", "e4")
        assert report == SanitizeReport(duplicate_results=("a", "b"))

    def test_results_written_after_an_interleaved_user_message_are_moved_up(self) -> None:
        msgs = [
            user("go"),
            assistant("", call("a")),
            user("also check the tests"),
            tool(result("a", "A")),
            assistant("ok"),
        ]
        out, sources, report = sanitize(msgs, ids(5))
        assert out == (msgs[0], msgs[1], msgs[3], msgs[2], msgs[4])
        assert sources == ("e0", "e1", "e3", "e2", "e4")
        assert report == SanitizeReport(moved_results=("a",))

    def test_a_result_arriving_after_a_later_model_response_is_too_late(self) -> None:
        msgs = [
            user("go"),
            assistant("", call("a")),
            user("stop"),
            assistant("stopped"),
            tool(result("a", "A")),
            user("again"),
        ]
        out, sources, report = sanitize(msgs, ids(6))
        assert out == (msgs[0], msgs[1], synthetic("a"), msgs[2], msgs[3], msgs[5])
        assert sources == ("e0", "e1", None, "e2", "e3", "e5")
        assert report == SanitizeReport(synthetic_results=("a",), dropped_results=("a",))

    def test_one_reply_written_as_two_assistant_messages_gets_each_result_after_its_call(
        self,
    ) -> None:
        msgs = [
            user("go"),
            assistant("", call("a")),
            assistant("", call("b")),
            tool(result("a", "A")),
            tool(result("b", "B")),
        ]
        out, sources, report = sanitize(msgs, ids(5))
        assert out == (msgs[0], msgs[1], msgs[3], msgs[2], msgs[4])
        assert sources == ("e0", "e1", "e3", "e2", "e4")
        assert report == SanitizeReport(moved_results=("a",))

    def test_results_inside_a_user_message_are_taken_out_into_a_tool_message(self) -> None:
        mixed = Message("user", (result("a", "A"), TextPart("and now?")))
        msgs = [user("go"), assistant("", call("a")), mixed]
        out, sources, report = sanitize(msgs, ids(3))
        assert out == (
            msgs[0],
            msgs[1],
            Message("tool", (result("a", "A"),)),
            Message("user", (TextPart("and now?"),)),
        )
        assert sources == ("e0", "e1", "e2", "e2")
        assert report == SanitizeReport()

    def test_a_tool_message_answering_two_assistant_messages_is_split(self) -> None:
        msgs = [
            user("go"),
            assistant("", call("a")),
            assistant("", call("b")),
            tool(result("a", "A"), result("b", "B")),
        ]
        out, sources, _ = sanitize(msgs, ids(4))
        assert out == (msgs[0], msgs[1], tool(result("a", "A")), msgs[2], tool(result("b", "B")))
        assert sources == ("e0", "e1", "e3", "e2", "e3")

    def test_sources_of_a_different_length_are_refused(self) -> None:
        with pytest.raises(ValueError, match="2 messages but 1 sources"):
            sanitize([user("a"), user("b")], ["e0"])


class TestPendingCalls:
    def test_only_the_last_piece_of_a_reply_can_hold_pending_calls(self) -> None:
        msgs = [user("go"), assistant("", call("a")), assistant("", call("b"))]
        out, _, report = sanitize(msgs, ids(3))
        assert out == (msgs[0], msgs[1], synthetic("a"), msgs[2])
        assert report == SanitizeReport(synthetic_results=("a",))

    def test_results_in_a_user_role_message_leave_the_rest_pending(self) -> None:
        results_only = Message("user", (result("a", "A"),))
        msgs = [user("go"), assistant("", call("a"), call("b")), results_only]
        out, _, report = sanitize(msgs, ids(3))
        assert out == (msgs[0], msgs[1], Message("tool", (result("a", "A"),)))
        assert report == SanitizeReport()

    def test_a_user_s_text_after_the_reply_ends_it_and_the_call_gets_a_stand_in(self) -> None:
        mixed = Message("user", (result("a", "A"), TextPart("stop")))
        msgs = [user("go"), assistant("", call("a"), call("b")), mixed]
        out, _, report = sanitize(msgs, ids(3))
        assert out == (
            msgs[0],
            msgs[1],
            Message("tool", (result("a", "A"),)),
            synthetic("b"),
            Message("user", (TextPart("stop"),)),
        )
        assert report == SanitizeReport(synthetic_results=("b",))
