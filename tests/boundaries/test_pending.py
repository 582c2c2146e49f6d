"""Pending calls: the one definition (``boundaries/pending.py``), with exact id sets."""

from __future__ import annotations

from boundary_helpers import a, r, u

from ctxengine.boundaries.pending import (
    pending_calls,
    pending_calls_newest_first,
    pending_reply_start,
)
from ctxengine.model import Message, TextPart, ToolResultPart


def _user_results(*call_ids: str, text: str = "") -> Message:
    """A user-role message holding results (Anthropic style), with optional text."""
    parts: list[ToolResultPart | TextPart] = [
        ToolResultPart(c, (TextPart("out"),)) for c in call_ids
    ]
    if text:
        parts.append(TextPart(text))
    return Message("user", tuple(parts))


class TestPendingCalls:
    def test_a_call_awaiting_its_result(self) -> None:
        msgs = [u(), a(text="plan"), u("deploy it"), a("confirm")]
        assert pending_calls(msgs) == {"confirm"}
        assert pending_reply_start(msgs) == 3

    def test_parallel_calls_with_one_still_running(self) -> None:
        msgs = [u(), a("c1", "c2", "c3"), r("c1"), r("c3")]
        assert pending_calls(msgs) == {"c2"}
        assert pending_reply_start(msgs) == 1

    def test_every_piece_of_the_newest_reply_counts(self) -> None:
        msgs = [u(), a("old"), r("old"), a(thinking=True), a("c1"), a("c2"), r("c1")]
        assert pending_calls(msgs) == {"c2"}
        assert pending_reply_start(msgs) == 3
        msgs = [u(), a(thinking=True), a("c1"), a("c2")]
        assert pending_calls(msgs) == {"c1", "c2"}
        assert pending_reply_start(msgs) == 1

    def test_results_in_a_user_role_message_count_as_results(self) -> None:
        msgs = [u(), a("c1", "c2"), _user_results("c1")]
        assert pending_calls(msgs) == {"c2"}

    def test_a_user_s_text_after_the_reply_ends_it(self) -> None:
        assert pending_calls([u(), a("c1", "c2"), _user_results("c1", text="stop")]) == set()
        assert pending_calls([u(), a("lost"), u("try again")]) == set()
        assert pending_reply_start([u(), a("lost"), u("try again")]) is None

    def test_an_earlier_reply_s_calls_are_never_pending(self) -> None:
        msgs = [u(), a("lost"), u("try again"), a("c2"), r("c2"), a()]
        assert pending_calls(msgs) == set()
        # consecutive assistant messages are one reply: a later piece does not end it
        assert pending_calls([u(), a("c1"), a(text="running it")]) == {"c1"}

    def test_answered_calls_and_empty_histories(self) -> None:
        assert pending_calls([u(), a("c1"), r("c1")]) == set()
        assert pending_reply_start([u(), a("c1"), r("c1")]) is None
        assert pending_calls([]) == set()
        assert pending_calls([r("c1")]) == set()
        assert pending_calls([u(), a(text="done")]) == set()

    def test_newest_first_reads_only_back_to_the_reply(self) -> None:
        msgs = [u(), a("c1"), r("c1"), u(), a("c2", "c3"), r("c3")]
        read: list[Message] = []

        def newest_first() -> object:
            for m in reversed(msgs):
                read.append(m)
                yield m

        assert pending_calls_newest_first(newest_first()) == {"c2"}  # type: ignore[arg-type]
        assert read == [msgs[5], msgs[4], msgs[3]]
