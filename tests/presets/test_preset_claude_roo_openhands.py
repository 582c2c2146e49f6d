"""Claude Code, Roo Code, OpenHands and the baselines: no-tail compactions with re-injected
durable state, the sliding-window fallback, the event-count trigger with messages kept
first, keep-last-n and observation masking."""

from __future__ import annotations

import pytest
from presets_helpers import (
    answer,
    assistant,
    calling,
    fill_to,
    roles,
    session,
    system,
    text_of,
    user,
)

from ctxengine.errors import ContextOverflow, NothingToCompact, ProviderError
from ctxengine.ladder.recover import OverflowLatch, recovery_target
from ctxengine.ladder.reinject import (
    FILE_EDITED_NOTE,
    FILE_ITEM,
    FILE_PATH_ITEM,
    PLAN_ITEM,
    TODO_ITEM,
)
from ctxengine.model import CompactionRecord, Message, TextPart
from ctxengine.policy.presets import preset
from ctxengine.summarizers.base import Summary, SummaryRequest
from ctxengine.summarizers.calls import SummaryCall
from ctxengine.summarizers.drop import DROPPED_MARKER
from ctxengine.tokens.base import Estimator

RULES = (
    "<system-reminder>\nContents of /repo/CLAUDE.md (project instructions):\n"
    "Always run the tests before committing.\n</system-reminder>"
)
TODOS = {"todos": [{"content": "fix the parser", "status": "in_progress"}]}
TODO_TEXT = TODO_ITEM.format(
    tool="TodoWrite", open=1, total=1, done="", items="- [in_progress] fix the parser"
)


class TestClaudeCode:
    """Window 100,000: trigger 100,000 − 20,000 − 13,000 = 67,000; nothing kept verbatim;
    rules, the todo list, the plan and the 5 most recent files re-injected after the
    state."""

    def test_no_tail_and_the_durable_state_reinjected(self) -> None:
        s = session("claude-code", 100_000)
        contents = {p: text_of(p, 200) for p in "abdef"}
        contents["c"] = text_of("c", 6_000)  # over 5,000 tokens: comes back as a path
        msgs = [
            system(20),
            Message("user", (TextPart(RULES),)),
            user("task", 96),
            calling("p1", "TodoWrite", **TODOS),
            answer("p1", "ok"),
            calling("x1", "ExitPlanMode", plan="1. parse\n2. test"),
            answer("x1", "ok"),
        ]
        for name in "abcdef":
            msgs += [
                calling(f"r{name}", "Read", file_path=f"/repo/{name}.py"),
                answer(f"r{name}", contents[name]),
            ]
        msgs += [calling("e1", "Edit", file_path="/repo/b.py"), answer("e1", "edited")]
        ids = [s.append(m).id for m in msgs]
        fill_to(s, 66_999)
        assert s.plan(reason="threshold") is None
        s.append(assistant("one more", 3))  # 7 tokens: 67,006
        ctx = s.prepare()
        record = s.entries[-1].body
        assert isinstance(record, CompactionRecord)
        assert record.first_kept_id is None
        plan = s.events[-1].plan
        assert plan is not None and plan.tokens_before == 67_006
        # Newest first: b.py (edited after its read), f, e, d, c (6,000 tokens: a path);
        # a.py is the sixth and left out.
        assert record.reinjected == (
            RULES,
            TODO_TEXT,
            PLAN_ITEM.format(tool="ExitPlanMode", plan="1. parse\n2. test"),
            FILE_ITEM.format(path="/repo/b.py", content=contents["b"]) + FILE_EDITED_NOTE,
            FILE_ITEM.format(path="/repo/f.py", content=contents["f"]),
            FILE_ITEM.format(path="/repo/e.py", content=contents["e"]),
            FILE_ITEM.format(path="/repo/d.py", content=contents["d"]),
            FILE_PATH_ITEM.format(path="/repo/c.py"),
        )
        assert roles(ctx.messages) == ["system"] + ["user"] * 9
        assert ctx.sources == (ids[0],) + (None,) * 9
        assert [m.text for m in ctx.messages[2:]] == list(record.reinjected)
        assert {m.meta.get("synthetic") for m in ctx.messages[2:]} == {"reinjected"}

    def test_the_breaker_opens_after_three_failures(self) -> None:
        p = preset("claude-code")
        assert (p.max_consecutive_failures, p.breaker_threshold) == (3, 3)
        assert session("claude-code", 100_000).breaker.threshold == 3


class FailingModel:
    """A model summarizer whose every call fails (a provider error)."""

    def __init__(self) -> None:
        self.provider = None
        self.calls: list[SummaryCall] = []

    @property
    def name(self) -> str:
        return "llm"

    def summarize(
        self, request: SummaryRequest, estimator: Estimator, *, cancel: object = None
    ) -> Summary:
        raise ProviderError("the summary model is down")


class TestRooCode:
    """Window 20,000: trigger 0.9 × 20,000 − 4,096 = 13,904; a fresh start (nothing kept
    verbatim); when the summary fails, the sliding window: the first message and the newer
    half of the messages, the rest dropped without a summary."""

    def test_fresh_start(self) -> None:
        s = session("roo-code", 20_000)
        first = s.append(system(20))
        fill_to(s, 13_904, size=1_000)
        ctx = s.prepare()
        record = s.entries[-1].body
        assert isinstance(record, CompactionRecord) and record.first_kept_id is None
        assert roles(ctx.messages) == ["system", "user"]
        assert ctx.sources == (first.id, None)

    def test_a_failed_summary_falls_back_to_the_sliding_window(self) -> None:
        s = session("roo-code", 20_000, summarizer=FailingModel(), fallback="on_failure")
        ids = [s.append(system(20)).id]
        for i in range(5):
            ids.append(s.append(user(f"u{i}", 996)).id)
            ids.append(s.append(assistant(f"a{i}", 1_596)).id)
        # 24 + 5 × 2,600 = 13,024; the sixth user message brings it to 13,904.
        ids.append(s.append(user("u5", 876)).id)
        assert s.project().tokens == 13_904
        ctx = s.prepare()
        record = s.entries[-1].body
        assert isinstance(record, CompactionRecord)
        # 11 messages: keep 5 (u3 … u5, from conversation index 6, a user message), retain
        # the first (u0); a0 … a2 (5 messages) are dropped with the marker.
        assert (record.summarizer, record.first_kept_id, record.retained_ids) == (
            "none",
            ids[7],
            (ids[1],),
        )
        assert roles(ctx.messages) == [
            "system",
            "user",
            "user",
            "user",
            "assistant",
            "user",
            "assistant",
            "user",
        ]
        assert ctx.sources == (ids[0], ids[1], None, *ids[7:])
        assert DROPPED_MARKER.format(count=5) in ctx.messages[2].text
        assert [e.step for e in s.events] == ["fallback", "compaction"]

    def test_overflow_recovery_three_times_at_75_percent(self) -> None:
        latch = OverflowLatch(limit=preset("roo-code").overflow_retries)
        assert [latch.try_recover() for _ in range(4)] == [True, True, True, False]
        # The forced reduction: 75 % of the 16,000 tokens that overflowed.
        target = recovery_target(
            ContextOverflow(16_000, 0),
            trigger=13_904,
            window=20_000,
            tokens=16_000,
            fixed=24,
            output=4_096,
            just_compacted=False,
            shrink=preset("roo-code").overflow_shrink_ratio,
        )
        assert target == 12_000


class TestOpenHands:
    """80 messages (``max_size``) trigger a soft compaction; the system prompt and the 3
    messages after it stay first, the summary follows them, then the newest
    ``80 // 2 − 4`` = 36 messages."""

    def build(self, exchanges: int) -> tuple[list[str], object]:
        s = session("openhands", 40_000)
        ids = [s.append(system(20)).id, s.append(user("task", 96)).id]
        for i in range(1, exchanges + 1):
            ids.append(s.append(calling(f"c{i}")).id)
            ids.append(s.append(answer(f"c{i}", "ok")).id)
        return ids, s

    def test_compacts_at_80_messages(self) -> None:
        _, under = self.build(38)  # 1 + 1 + 76 = 78 messages
        under.append(calling("c39"))  # 79
        assert under.plan(reason="threshold") is None
        ids, s = self.build(39)  # 80 messages, 570 tokens
        assert len(s.project().messages) == 80
        plan = s.plan(reason="threshold")
        assert plan is not None and plan.cut is not None
        assert plan.requirement.detail == "context holds 80 messages ≥ 80"
        assert plan.requirement.level == "soft"
        # Conversation of 79: keep 36 → the cut at index 43 (the call c22); the first 3
        # (task, c1, its result) are retained, so the summary covers indexes 3 … 42.
        cut = plan.cut
        assert (cut.index, cut.first_kept_id, cut.summarize_from) == (43, ids[44], 3)
        assert cut.retained == tuple(ids[1:4])

    def test_the_summary_sits_after_the_messages_kept_first(self) -> None:
        ids, s = self.build(39)
        ctx = s.prepare()
        record = s.entries[-1].body
        assert isinstance(record, CompactionRecord)
        assert record.retained_ids == tuple(ids[1:4])
        assert len(ctx.messages) == 1 + 3 + 1 + 36
        assert ctx.sources[:5] == (*ids[:4], None)
        assert roles(ctx.messages)[:6] == [
            "system",
            "user",
            "assistant",
            "tool",
            "user",
            "assistant",
        ]
        assert ctx.sources[5:] == tuple(ids[44:])
        # The next compaction keeps the same first messages.
        for i in range(40, 60):
            s.append(calling(f"c{i}"))
            s.append(answer(f"c{i}", "ok"))
        ctx = s.prepare()
        second = s.entries[-1].body
        assert isinstance(second, CompactionRecord) and second is not record
        assert second.retained_ids == tuple(ids[1:4])
        assert ctx.sources[:5] == (*ids[:4], None)
        assert len(ctx.messages) == 1 + 3 + 1 + 36


class TestBaselines:
    def test_none_never_compacts_and_lets_an_overflow_stand(self) -> None:
        s = session("none", 20_000)
        fill_to(s, 25_000)
        with pytest.raises(NothingToCompact, match="policy 'none' never compacts"):
            s.compact()
        with pytest.raises(ContextOverflow, match="policy 'none' never compacts"):
            s.on_overflow(ContextOverflow(25_000, 20_000))

    def test_keep_last_n_keeps_20_messages_and_drops_the_rest(self) -> None:
        s = session("keep-last-n", 40_000)
        first = s.append(system(20))
        fill_to(s, 32_000, size=1_000)  # 31 messages of 1,000 and a pad: 32 after the head
        ids = [e.id for e in s.entries]
        ctx = s.prepare()
        record = s.entries[-1].body
        assert isinstance(record, CompactionRecord)
        assert (record.summarizer, record.first_kept_id) == ("none", ids[13])
        assert len(ctx.messages) == 1 + 1 + 20
        assert ctx.sources == (first.id, None, *ids[13:33])
        assert DROPPED_MARKER.format(count=12) in ctx.messages[1].text

    def test_observation_masking_masks_all_but_the_newest_10_results_every_call(self) -> None:
        s = session("observation-masking", 40_000)
        s.append(system(20))
        s.append(user("task", 96))
        for i in range(1, 13):
            s.append(calling(f"c{i}"))
            s.append(answer(f"c{i}", text_of(f"out{i}", 100)))
        ctx = s.prepare()  # far under the trigger
        assert (ctx.pruned, ctx.epoch) == (("c1", "c2"), 0)
        s.append(calling("c13"))
        s.append(answer("c13", text_of("out13", 100)))
        ctx = s.prepare()
        assert ctx.pruned == ("c1", "c2", "c3")
        assert [(e.step, e.detail) for e in s.events] == [
            ("prune", "2 tool results"),
            ("prune", "1 tool results"),
        ]


def test_reinjection_fills_the_room_left_after_the_rules_and_the_todo_list() -> None:
    # The rules (37 tokens as a message) and the todo list (43) are never dropped; then, in
    # order, each that still fits the room: the plan (26), the file (218) or its path (34).
    from presets_helpers import EST

    from ctxengine.ladder.reinject import durable_items, reinjected_texts

    content = text_of("a", 200)
    messages = [
        Message("user", (TextPart(RULES),)),
        calling("p1", "TodoWrite", **TODOS),
        answer("p1", "ok"),
        calling("x1", "ExitPlanMode", plan="1. parse"),
        answer("x1", "ok"),
        calling("r1", "Read", file_path="/repo/a.py"),
        answer("r1", content),
    ]
    rules, todos = RULES, TODO_TEXT
    plan = PLAN_ITEM.format(tool="ExitPlanMode", plan="1. parse")
    file_a = FILE_ITEM.format(path="/repo/a.py", content=content)
    path_a = FILE_PATH_ITEM.format(path="/repo/a.py")
    policy = preset("claude-code")
    items = durable_items(messages, policy, EST)
    assert [(i.kind, i.text, i.tokens, i.short, i.short_tokens) for i in items] == [
        ("rules", rules, 37, None, 0),
        ("todos", todos, 43, None, 0),
        ("plan", plan, 26, None, 0),
        ("files", file_a, 218, path_a, 34),
    ]
    assert reinjected_texts(messages, policy, EST) == (rules, todos, plan, file_a)
    assert reinjected_texts(messages, policy, EST, 26 + 218) == (rules, todos, plan, file_a)
    assert reinjected_texts(messages, policy, EST, 26 + 217) == (rules, todos, plan, path_a)
    assert reinjected_texts(messages, policy, EST, 26 + 33) == (rules, todos, plan)
    assert reinjected_texts(messages, policy, EST, 34) == (rules, todos, plan)
    assert reinjected_texts(messages, policy, EST, 25) == (rules, todos)
    assert reinjected_texts(messages, policy, EST, 0) == (rules, todos)
    # reinject_max_tokens counts the required items: 37 + 43 + 26 = 106, 33 left: no path.
    tight = policy.model_copy(update={"reinject_max_tokens": 106 + 33})
    assert reinjected_texts(messages, tight, EST) == (rules, todos, plan)
