"""``TailGuard`` (engine/view.py): within one epoch key successive contexts only grow at
the tail; a provisional context is checked but never becomes the baseline."""

from __future__ import annotations

import pytest
from engine_helpers import call

from ctxengine.engine.view import EpochKey, TailGuard
from ctxengine.errors import InvariantError
from ctxengine.model import Message, assistant, system, tool_result, user
from ctxengine.projection.context import Context

SYS = system("be brief")
U1 = user("fix the build")
A1 = assistant("", call("c1"))
STAND_IN = tool_result("c1", "(no result yet)")
RESULT = tool_result("c1", "build ok")
A2 = assistant("done")

EPOCH: EpochKey = (None, 0)
MESSAGE = "projection changed before its tail within one epoch"


def ctx(*messages: Message) -> Context:
    return Context(messages, tuple(f"e{k}" for k in range(len(messages))))


def guard(*messages: Message, key: EpochKey = EPOCH) -> TailGuard:
    g = TailGuard()
    g.check(ctx(*messages), key, provisional=False)
    return g


class TestSameEpoch:
    def test_growing_at_the_tail_passes_and_becomes_the_baseline(self) -> None:
        g = guard(SYS, U1)
        g.check(ctx(SYS, U1, A1), EPOCH, provisional=False)
        g.check(ctx(SYS, U1, A1, RESULT), EPOCH, provisional=False)
        # the baseline is now 4 messages long: dropping the newest one fails
        with pytest.raises(InvariantError, match=MESSAGE):
            g.check(ctx(SYS, U1, A1), EPOCH, provisional=False)

    def test_an_identical_context_passes(self) -> None:
        g = guard(SYS, U1)
        g.check(ctx(system("be brief"), user("fix the build")), EPOCH, provisional=False)

    def test_a_message_changed_before_the_tail_raises(self) -> None:
        g = guard(SYS, U1, A2)
        with pytest.raises(InvariantError, match=MESSAGE):
            g.check(ctx(SYS, user("fix the tests"), A2, U1), EPOCH, provisional=False)

    def test_a_shorter_context_raises(self) -> None:
        g = guard(SYS, U1, A2)
        with pytest.raises(InvariantError, match=MESSAGE):
            g.check(ctx(SYS, U1), EPOCH, provisional=False)

    def test_a_failed_check_keeps_the_old_baseline(self) -> None:
        g = guard(SYS, U1)
        with pytest.raises(InvariantError):
            g.check(ctx(SYS, A2), EPOCH, provisional=False)
        g.check(ctx(SYS, U1, A2), EPOCH, provisional=False)


class TestAcrossEpochs:
    @pytest.mark.parametrize("key", [("c1", 0), (None, 1), ("c1", 1)])
    def test_another_key_may_differ_anywhere(self, key: EpochKey) -> None:
        # a compaction (new compaction id) or a prune (one more prune record) starts afresh
        g = guard(SYS, U1, A1, RESULT, A2)
        summary = user("<continuation-state>…</continuation-state>")
        g.check(ctx(SYS, summary, A2), key, provisional=False)

    def test_the_new_key_becomes_the_baseline(self) -> None:
        g = guard(SYS, U1, A2)
        g.check(ctx(SYS, A2), ("c1", 0), provisional=False)
        with pytest.raises(InvariantError, match=MESSAGE):
            g.check(ctx(SYS, U1), ("c1", 0), provisional=False)

    def test_returning_to_an_older_key_compares_nothing(self) -> None:
        # only the latest baseline is kept: its key differs, so nothing is compared
        g = guard(SYS, U1, A2)
        g.check(ctx(SYS, A2), ("c1", 0), provisional=False)
        g.check(ctx(SYS, A1), EPOCH, provisional=False)


class TestProvisional:
    def test_a_provisional_context_is_not_the_baseline(self) -> None:
        # A call awaits its result: the sanitizer's stand-in is shown; the real result later
        # takes its place, which is not a change before the tail of the last baseline.
        g = guard(SYS, U1)
        g.check(ctx(SYS, U1, A1, STAND_IN), EPOCH, provisional=True)
        g.check(ctx(SYS, U1, A1, RESULT), EPOCH, provisional=False)

    def test_the_same_context_as_a_baseline_would_fail(self) -> None:
        g = guard(SYS, U1)
        g.check(ctx(SYS, U1, A1, STAND_IN), EPOCH, provisional=False)
        with pytest.raises(InvariantError, match=MESSAGE):
            g.check(ctx(SYS, U1, A1, RESULT), EPOCH, provisional=False)

    def test_a_provisional_context_is_still_checked(self) -> None:
        g = guard(SYS, U1, A2)
        with pytest.raises(InvariantError, match=MESSAGE):
            g.check(ctx(SYS, user("fix the tests"), A2, A1), EPOCH, provisional=True)

    def test_a_first_provisional_context_leaves_no_baseline(self) -> None:
        g = TailGuard()
        g.check(ctx(SYS, U1, A1, STAND_IN), EPOCH, provisional=True)
        g.check(ctx(SYS, A2), EPOCH, provisional=False)
