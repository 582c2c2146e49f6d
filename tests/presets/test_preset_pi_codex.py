"""pi and Codex: the distinctive cut and the exact shape of the request after a compaction."""

from __future__ import annotations

from presets_helpers import (
    EST,
    answer,
    assistant,
    calling,
    roles,
    session,
    system,
    text_of,
    user,
)

from ctxengine.model import CompactionRecord
from ctxengine.projection.injection import CONTINUATION_PREFIX, HANDOFF_PREFIX
from ctxengine.projection.transform import TRUNCATION_MARKER


class TestPi:
    """Window 40,000: trigger 40,000 − 16,384 = 23,616; keep-recent 20,000 capped at 25 % of
    the window = 10,000 tokens; a cut may split a turn."""

    def build(self, last_note: int) -> tuple[list[str], object]:
        s = session("pi", 40_000)
        ids = [
            s.append(m).id
            for m in (
                system(20),  # 24
                user("task", 996),  # 1,000
                assistant("a1", 7_000),  # 7,004
                user("u2", 96),  # 100
                assistant("note", last_note),  # last_note + 4
                user("u3", 96),  # 100
                calling("c1"),  # 4 + 2 (name) + 5 (arguments) = 11
                answer("c1", text_of("out1", 7_000)),  # 4 + 1 + 7,000 = 7,005
                calling("c2"),  # 11
                answer("c2", text_of("out2", 6_000)),  # 6,005
            )
        ]
        return ids, s

    def test_compacts_at_window_less_16384(self) -> None:
        # 24 + 1,000 + 7,004 + 100 + 100 + 11 + 7,005 + 11 + 6,005 = 21,260 without the note
        _, under = self.build(2_351)  # 2,355: 23,615
        assert under.project().tokens == 23_615
        assert under.plan(reason="threshold") is None
        ids, s = self.build(2_352)  # 2,356: 23,616
        assert s.project().tokens == 23_616
        plan = s.plan(reason="threshold")
        assert plan is not None and plan.cut is not None
        # Walking back: r2 6,005 + c2 11 = 6,016 ≤ 10,000; + r1 7,005 > 10,000: the budget
        # ends inside the last turn (u3 … r2), so the cut splits it at c2 (conversation
        # index 7), summarizing u1 … a(note) and the turn prefix u3, c1, r1 apart.
        cut = plan.cut
        assert plan.attempts[0].keep_recent == 10_000
        assert (cut.index, cut.first_kept_id, cut.splits_turn) == (7, ids[8], True)
        assert (cut.summarize, cut.turn_prefix, cut.kept_tokens) == (4, 3, 6_016)

    def test_the_request_after_is_system_state_then_the_split_tail(self) -> None:
        ids, s = self.build(2_352)
        ctx = s.prepare()
        record = s.entries[-1].body
        assert isinstance(record, CompactionRecord)
        assert (record.first_kept_id, record.splits_turn, record.policy) == (ids[8], True, "pi")
        assert (record.injection, record.retained_ids, record.reinjected) == (None, None, None)
        assert roles(ctx.messages) == ["system", "user", "assistant", "tool"]
        assert ctx.sources[0] == ids[0] and ctx.sources[1] is None
        assert ctx.sources[2:] == (ids[8], ids[9])
        assert ctx.messages[1].text.startswith(CONTINUATION_PREFIX + "\n\n<continuation-state>\n")


class TestCodex:
    """Window 20,000: trigger 90 % = 18,000; no verbatim tail; user messages newest first up
    to min(20,000, 25 % of the window) = 5,000 tokens kept before the summary, which comes last
    with the hand-off prefix; tool output cut to 10,240 characters, half head, half tail."""

    def build(self, total: int) -> tuple[list[str], object, str]:
        s = session("codex", 20_000)
        output = "".join(f"line {i:05d} of the build log\n" for i in range(1_200))  # 33,600 chars
        msgs = (
            system(20),  # 24
            user("task", 1_496),  # 1,500
            assistant("a1", 2_496),  # 2,500
            user("u2", 1_496),  # 1,500
            calling("c1"),  # 11
            answer("c1", output),
            assistant("a2", 2_496),  # 2,500
            user("u3", 1_496),  # 1,500
            assistant("a3", 2_496),  # 2,500
            user("u4", 996),  # 1,000
        )
        ids = [s.append(m).id for m in msgs]
        pad = total - s.project().tokens - 4
        ids.append(s.append(assistant("pad", pad)).id)
        assert s.project().tokens == total
        return ids, s, output

    def test_tool_output_is_cut_to_10240_characters_head_and_tail(self) -> None:
        ids, s, output = self.build(17_999)
        shown = s.project().messages[5].tool_results[0].text
        assert len(output) == 33_600
        marker = TRUNCATION_MARKER.format(
            omitted_chars=33_600 - 10_240,
            omitted_tokens=(33_600 - 10_240) // 4 + 1,
            entry_id=ids[5],
        )
        assert shown == output[:5_120] + marker + output[-5_120:]

    def test_compacts_at_90_percent(self) -> None:
        _, under, _ = self.build(17_999)
        assert under.plan(reason="threshold") is None
        _, s, _ = self.build(18_000)
        plan = s.plan(reason="threshold")
        assert plan is not None and plan.cut is not None
        assert plan.tokens_before == 18_000

    def test_the_request_after_is_the_newest_users_then_the_handoff_summary(self) -> None:
        ids, s, _ = self.build(18_000)
        ctx = s.prepare()
        record = s.entries[-1].body
        assert isinstance(record, CompactionRecord)
        # Nothing kept verbatim: the cut is at the end of the conversation.
        assert record.first_kept_id is None
        # Newest first: u4 1,000, u3 1,500 (2,500), u2 1,500 (4,000); the task (1,500 more:
        # 5,500) does not fit 5,000. Shown in log order before the summary.
        assert record.retained_ids == (ids[3], ids[7], ids[9])
        assert record.injection == "handoff"
        assert roles(ctx.messages) == ["system", "user", "user", "user", "user"]
        assert ctx.sources == (ids[0], ids[3], ids[7], ids[9], None)
        last = ctx.messages[-1]
        assert last.text.startswith(HANDOFF_PREFIX + "\n\n<continuation-state>\n")
        assert last.text.endswith("\n</continuation-state>")
        assert last.meta == {"synthetic": "compaction_frame"}
        assert ctx.tokens == sum(EST.message(m) for m in ctx.messages)
