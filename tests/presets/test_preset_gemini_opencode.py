"""Gemini CLI and OpenCode: the distinctive cut, the tail-keeping prune, the skill exemption
and the exact shape of the request after a compaction."""

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

from ctxengine.errors import ProviderError
from ctxengine.model import CompactionRecord, PruneRecord
from ctxengine.projection.injection import (
    ACKNOWLEDGEMENT,
    CONTINUATION_PREFIX,
    CONTINUE_MESSAGE,
    SUMMARY_QUESTION,
)
from ctxengine.projection.transform import PRUNE_PLACEHOLDER


class TestGeminiCli:
    """Window 20,000: trigger 50 % = 10,000; the newest 30 % of the conversation's
    characters kept, cut at user messages only; state + acknowledgement."""

    def test_keeps_the_last_30_percent_of_characters_from_a_user_message(self) -> None:
        s = session("gemini-cli", 20_000)
        ids = [s.append(system(20)).id]
        for i in range(5):
            ids.append(s.append(user(f"u{i}", 501)).id)  # 2,000 chars, 505 tokens
            ids.append(s.append(assistant(f"a{i}", 1_501)).id)  # 6,000 chars, 1,505 tokens
        # 24 + 5 × 2,010 = 10,074 ≥ 10,000.
        assert s.project().tokens == 10_074
        plan = s.plan(reason="threshold")
        assert plan is not None and plan.cut is not None
        # 40,000 characters: keep 12,000. Walking back, a4 6,000 + u4 2,000 = 8,000;
        # a3 would make 14,000: the tail starts at u4 (conversation index 8), a user message.
        assert plan.attempts[0].keep_recent == 12_000
        assert (plan.cut.index, plan.cut.first_kept_id, plan.cut.splits_turn) == (
            8,
            ids[9],
            False,
        )
        ctx = s.prepare()
        record = s.entries[-1].body
        assert isinstance(record, CompactionRecord)
        assert (record.first_kept_id, record.injection) == (ids[9], "acknowledged")
        assert roles(ctx.messages) == ["system", "user", "assistant", "user", "assistant"]
        assert ctx.sources == (ids[0], None, None, ids[9], ids[10])
        assert ctx.messages[1].text.startswith(CONTINUATION_PREFIX + "\n\n<continuation-state>")
        assert ctx.messages[2].text == ACKNOWLEDGEMENT
        assert ctx.messages[2].meta == {"synthetic": "compaction_frame"}

    def test_old_function_responses_past_the_budget_keep_only_their_tail(self) -> None:
        # Protect min(50,000, 20 % of 20,000) = 4,000 tokens of the newest tool output; older
        # results keep a 1,000-token tail after their placeholder; no minimum saving.
        s = session("gemini-cli", 20_000)
        old = text_of("a", 3_999)  # 15,992 chars, 3,999 tokens (the result part: 4,000)
        msgs = (
            system(20),  # 24
            user("task", 996),  # 1,000
            calling("c1", "read_file", path="a.py"),  # 4 + 3 + 5 = 12
            answer("c1", old),  # 4 + 4,000
            calling("c2", "read_file", path="b.py"),  # 12
            answer("c2", text_of("b", 3_999)),  # 4,004
            user("next", 940),  # 944: 10,000 in all
        )
        ids = [s.append(m).id for m in msgs]
        assert s.project().tokens == 10_000
        ctx = s.prepare()
        prune = s.entries[-1].body
        # c2 (4,000) fills the protection; c1 saves 4,000 − 40 (placeholder) − 1,000 (tail).
        assert prune == PruneRecord(("c1",), 2_960, "gemini-cli")
        head = PRUNE_PLACEHOLDER.format(
            tool_name="read_file",
            short_args='{"path":"a.py"}',
            n_chars=15_992,
            n_tokens=4_000,
            entry_id=ids[3],
        )
        # The tail: 15,992 × 1,000 // 3,999 = 3,998 characters, 3,998 // 4 + 1 = 1,000 tokens.
        shown = ctx.messages[3].tool_results[0].text
        assert shown == head + "\n" + old[-3_998:]
        assert ctx.pruned == ("c1",)
        # Under the trigger after the prune: no compaction.
        assert ctx.epoch == 0
        assert ctx.tokens == 10_000 - 4_000 + 1 + EST.text(shown)
        assert [(e.step, e.tokens_before, e.tokens_after) for e in s.events] == [
            ("prune", 10_000, ctx.tokens)
        ]


class TestOpenCode:
    """Window 20,000, output cap 4,096: usable = trigger = 20,000 − min(20,000, 4,096) =
    15,904; tail 25 % of usable = 3,976 tokens (within 2,000–15,000), whole turns; prune
    protect min(40,000, 20 %) = 4,000, minimum min(20,000, 10 %) = 2,000, 2 turns."""

    def build(self) -> tuple[list[str], object]:
        s = session("opencode", 20_000)
        msgs = (
            system(20),  # 24
            user("task", 996),  # 1,000
            assistant("a1", 3_996),  # 4,000
            user("u2", 996),  # 1,000
            assistant("a2", 3_996),  # 4,000
            user("u2b", 496),  # 500
            assistant("a2b", 1_996),  # 2,000
            user("u3", 996),  # 1,000
            assistant("a3", 2_276),  # 2,280
            user("u4", 96),  # 100: 15,904 in all
        )
        return [s.append(m).id for m in msgs], s

    def test_summary_as_the_assistant_reply_then_whole_turns_then_continue(self) -> None:
        ids, s = self.build()
        assert s.project().tokens == 15_904
        plan = s.plan(reason="threshold")
        assert plan is not None and plan.cut is not None
        # Walking back 3,976: u4 100 + a3 2,280 + u3 1,000 = 3,380; a2b would make 5,380.
        assert plan.attempts[0].keep_recent == 3_976
        assert (plan.cut.index, plan.cut.first_kept_id, plan.cut.kept_tokens) == (
            6,
            ids[7],
            3_380,
        )
        assert (plan.injection, plan.continuation) == ("assistant_reply", True)
        ctx = s.prepare()
        record = s.entries[-1].body
        assert isinstance(record, CompactionRecord)
        assert (record.injection, record.continuation) == ("assistant_reply", True)
        assert roles(ctx.messages) == [
            "system",
            "user",
            "assistant",
            "user",
            "assistant",
            "user",
            "user",
        ]
        assert ctx.sources == (ids[0], None, None, ids[7], ids[8], ids[9], None)
        assert ctx.messages[1].text == SUMMARY_QUESTION
        assert ctx.messages[2].text.startswith(CONTINUATION_PREFIX + "\n\n<continuation-state>")
        assert ctx.messages[6].text == CONTINUE_MESSAGE
        # The continuation message stays where the compaction put it: a reply appended
        # later follows it, so the epoch only grows at its tail.
        reply = s.append(assistant("a4", 96))
        after = s.prepare()
        assert after.messages[: len(ctx.messages)] == ctx.messages
        assert after.sources[len(ctx.messages) :] == (reply.id,)

    def test_prune_protects_two_turns_and_the_skill_tool(self) -> None:
        s = session("opencode", 20_000)
        msgs = [system(20), user("task", 96)]  # 24 + 100
        msgs += [calling("s1", "skill", name="deploy"), answer("s1", text_of("skill", 2_996))]
        for cid in ("c2", "c3", "c4"):
            msgs += [calling(cid), answer(cid, text_of(cid, 2_996))]  # 11 + 3,001 each
        msgs += [user("u2", 96), calling("c5"), answer("c5", text_of("c5", 2_996))]
        msgs.append(user("u3", 616))  # 15,904 in all
        ids = [s.append(m).id for m in msgs]
        assert s.project().tokens == 15_904
        ctx = s.prepare()
        # The last 2 user turns (u2 …, u3) are protected; before them, newest first: c4
        # (2,997) and c3 (5,994 ≥ 4,000) fill the protection; c2 saves 2,997 − 40 = 2,957
        # ≥ 2,000; the skill result is exempt.
        assert s.entries[-1].body == PruneRecord(("c2",), 2_957, "opencode")
        assert ctx.pruned == ("c2",)
        assert ctx.messages[3].tool_results[0].text == text_of("skill", 2_996)
        assert ctx.sources[3] == ids[3]
        assert ctx.epoch == 0


class FailingModel:
    """A model summarizer whose every call fails (a provider error)."""

    def __init__(self) -> None:
        self.provider = None
        self.calls: list[object] = []

    @property
    def name(self) -> str:
        return "llm"

    def summarize(self, request: object, estimator: object, *, cancel: object = None) -> object:
        self.calls.append(request)
        raise ProviderError("the summary model is down")


def test_gemini_failure_latch_truncates_without_a_summary_until_a_manual_compaction() -> None:
    model = FailingModel()
    s = session("gemini-cli", 20_000, summarizer=model)
    assert s.breaker.threshold == 1
    s.append(system(20))
    for i in range(5):
        s.append(user(f"u{i}", 501))
        s.append(assistant(f"a{i}", 1_501))
    ctx = s.prepare()
    record = s.entries[-1].body
    # The first failure latches: this compaction and the next ones drop the prefix with a
    # marker instead of calling the model.
    assert isinstance(record, CompactionRecord) and record.summarizer == "none"
    assert s.breaker.open and len(model.calls) == 1
    assert [e.step for e in s.events] == ["fallback", "compaction"]
    assert ctx.messages[1].text.count("earlier messages of this conversation were removed") == 1
    for i in range(5, 10):
        s.append(user(f"u{i}", 501))
        s.append(assistant(f"a{i}", 1_501))
    s.prepare()
    second = s.entries[-1].body
    assert isinstance(second, CompactionRecord) and second.summarizer == "none"
    assert len(model.calls) == 1  # the latch held: no second model call
