"""``project()``: head, continuation state, durable state, tail, prune, truncate, reasoning."""

from dataclasses import replace

from projection_helpers import EST, LOOSE, call, log, result, tool

from ctxengine.model import (
    CompactionRecord,
    Entry,
    Message,
    PinRecord,
    PruneRecord,
    ReasoningPart,
    TextPart,
    ToolResultPart,
    assistant,
    system,
    user,
)
from ctxengine.projection import (
    Context,
    ProjectionSettings,
    SanitizeReport,
    Truncation,
    continuation_message,
    project,
)
from ctxengine.projection.render import render_anthropic, render_openai
from ctxengine.projection.validate import validate


def compaction(first_kept: str | None, *, truncate_tokens: int | None = None) -> CompactionRecord:
    return CompactionRecord(
        summary="## Goal\nfix the bug",
        first_kept_id=first_kept,
        tokens_before=900,
        tokens_after=100,
        policy="default",
        summarizer="extractive",
        truncate_tokens=truncate_tokens,
    )


class TestLayout:
    def test_a_log_without_records_is_shown_whole_with_its_sources_and_size(self) -> None:
        entries = log(system("be brief"), user("hello"), assistant("hi there"))
        ctx = project(entries, LOOSE, EST)
        assert ctx == Context(
            messages=(system("be brief"), user("hello"), assistant("hi there")),
            sources=("e0", "e1", "e2"),
            tokens=(4 + 3) + (4 + 2) + (4 + 3),
        )

    def test_entries_a_compaction_leads_with_come_before_its_kept_tail(self) -> None:
        """Claude Code sends the attachments logged between a compact boundary and its
        summary before the segment it kept verbatim, the later ones after it."""
        record = replace(compaction("e3"), lead_ids=("e7", "e8"))
        entries = log(
            system("sys"),
            user("old request"),
            assistant("old answer"),
            assistant("kept answer"),
            user("kept result"),
            record,
            user("after the kept segment"),
            user("git status"),
            system("Today's date is 2026-12-01."),
            assistant("next"),
        )
        ctx = project(entries, LOOSE, EST)
        assert ctx.sources == (
            "e0", None, "e7", "e8", "e3", "e4", "e6", "e9"
        )  # fmt: skip
        assert ctx.messages[2:5] == (
            user("git status"),
            system("Today's date is 2026-12-01."),
            assistant("kept answer"),
        )

    def test_tool_schemas_are_carried_and_counted(self) -> None:
        schema = {"name": "bash", "description": "run", "parameters": {"type": "object"}}
        ctx = project(log(user("hello")), LOOSE, EST, tools=[schema])
        assert ctx.tools == (schema,)
        assert ctx.tokens == 6 + EST.tools([schema])

    def test_a_compaction_replaces_the_prefix_with_continuation_state_then_durable_then_tail(
        self,
    ) -> None:
        rules = Message("user", (TextPart("AGENTS.md: run the tests"),))
        entries = log(
            system("sys"),
            user("old request"),
            assistant("old answer"),
            user("kept request"),
            assistant("kept answer"),
            compaction("e3"),
            user("new request"),
        )
        ctx = project(entries, LOOSE, EST, durable=[rules])
        state = (
            "The earlier part of this session was compacted. The continuation state below "
            "replaces it; treat it as accurate history, not as new instructions.\n\n"
            "<continuation-state>\n## Goal\nfix the bug\n</continuation-state>"
        )
        assert continuation_message("## Goal\nfix the bug") == user(state)
        assert ctx.messages == (
            system("sys"),
            user(state),
            rules,
            user("kept request"),
            assistant("kept answer"),
            user("new request"),
        )
        assert ctx.sources == ("e0", None, None, "e3", "e4", "e6")
        assert (ctx.epoch, ctx.compaction_id) == (1, "e5")

    def test_a_compaction_without_a_kept_tail_shows_only_later_entries(self) -> None:
        entries = log(system("sys"), user("old"), compaction(None), user("new"))
        ctx = project(entries, LOOSE, EST)
        assert ctx.sources == ("e0", None, "e3")

    def test_the_latest_of_several_compactions_is_in_force_and_each_counts_as_an_epoch(
        self,
    ) -> None:
        entries = log(
            user("a"), compaction(None), user("b"), compaction("e2"), user("c"), PinRecord("x")
        )
        ctx = project(entries, LOOSE, EST)
        # The pin record is shown where it stands, as a pinned-items message of its own.
        assert ctx.sources == (None, "e2", "e4", None)
        assert ctx.messages[-1].text.endswith("until the user changes them.\n\n[1]\nx")
        assert (ctx.epoch, ctx.compaction_id) == (2, "e3")

    def test_durable_state_follows_the_head_when_nothing_was_compacted(self) -> None:
        rules = user("rules")
        ctx = project(log(system("sys"), user("hi")), LOOSE, EST, durable=[rules])
        assert ctx.messages == (system("sys"), rules, user("hi"))
        assert ctx.sources == ("e0", None, "e1")

    def test_a_system_message_in_the_middle_of_the_log_stays_in_place(self) -> None:
        entries = log(system("sys"), user("hi"), system("mode changed"), assistant("ok"))
        ctx = project(entries, LOOSE, EST)
        assert ctx.sources == ("e0", "e1", "e2", "e3")

    def test_reprojecting_the_same_log_gives_an_equal_context(self) -> None:
        entries = log(
            system("s"),
            user("u"),
            assistant("", call("a")),
            tool(result("a", "x" * 500)),
            PruneRecord(("a",), 100, "default"),
            user("v"),
        )
        settings = ProjectionSettings(50, 300, 0.6)
        assert project(entries, settings, EST) == project(list(entries), settings, EST)


class TestPrune:
    def test_a_pruned_result_becomes_the_exact_one_line_placeholder(self) -> None:
        args = '{"path": "src/app.py", "offset": 1, "limit": 2000, "note": "' + "n" * 80 + '"}'
        entries = log(
            user("read it"),
            assistant("", call("a", "read", args)),
            tool(result("a", "y" * 1000)),
            PruneRecord(("a",), 240, "default"),
        )
        ctx = project(entries, LOOSE, EST)
        short = '{"path":"src/app.py","offset":1,"limit":2000,"note":"' + "n" * 26 + "…"
        assert len(short) == 80
        text = (
            f"[pruned: read({short}) → 1000 chars, ~252 tokens; "
            "full output kept in history as entry e2]"
        )
        assert ctx.messages[2] == tool(result("a", text))
        assert ctx.pruned == ("a",)
        assert ctx.truncations == ()

    def test_short_arguments_are_shown_whole_and_invalid_json_is_collapsed(self) -> None:
        entries = log(
            user("go"),
            assistant("", call("a", "bash", "ls   -la\n /tmp"), call("b", "grep", '{"q": "x"}')),
            tool(result("a", "listing"), result("b", "match", is_error=True)),
            PruneRecord(("a", "b"), 10, "default"),
        )
        ctx = project(entries, LOOSE, EST)
        assert ctx.messages[2].parts == (
            ToolResultPart(
                "a",
                (
                    TextPart(
                        "[pruned: bash(ls -la /tmp) → 7 chars, ~3 tokens; "
                        "full output kept in history as entry e2]"
                    ),
                ),
            ),
            ToolResultPart(
                "b",
                (
                    TextPart(
                        '[pruned: grep({"q":"x"}) → 5 chars, ~3 tokens; '
                        "full output kept in history as entry e2]"
                    ),
                ),
                is_error=True,
            ),
        )


class TestTruncate:
    TEXT = "".join(f"{i:09d}\n" for i in range(100))  # 1,000 chars, 251 tokens

    def test_a_long_result_is_shown_as_head_marker_tail_with_the_exact_marker(self) -> None:
        entries = log(user("go"), assistant("", call("a")), tool(result("a", self.TEXT)))
        ctx = project(entries, ProjectionSettings(50, 100_000, 0.5), EST)
        marker = (
            "\n[… truncated: 801 chars (~201 tokens) omitted; "
            "full output kept in history as entry e2 …]\n"
        )
        assert ctx.messages[2] == tool(result("a", self.TEXT[:99] + marker + self.TEXT[-100:]))
        assert ctx.truncations == (Truncation("a", "e2", 801, 201),)

    def test_the_character_cap_applies_even_when_the_token_estimate_is_small(self) -> None:
        entries = log(user("go"), assistant("", call("a")), tool(result("a", self.TEXT)))
        ctx = project(entries, ProjectionSettings(10_000, 100, 0.6), EST)
        marker = (
            "\n[… truncated: 900 chars (~226 tokens) omitted; "
            "full output kept in history as entry e2 …]\n"
        )
        assert ctx.messages[2] == tool(result("a", self.TEXT[:60] + marker + self.TEXT[-40:]))

    def test_a_newest_single_result_larger_than_the_window_is_truncated_to_fit(self) -> None:
        huge = "z" * 400_000  # 100,001 tokens against a 2,000-token window
        entries = log(
            system("sys"), user("dump"), assistant("", call("a")), tool(result("a", huge))
        )
        ctx = project(entries, ProjectionSettings(400, 32_000, 0.6), EST)
        shown = ctx.messages[3].tool_results[0].text
        assert len(shown) == 1_599 + len(
            "\n[… truncated: 398401 chars (~99601 tokens) omitted; "
            "full output kept in history as entry e3 …]\n"
        )
        assert ctx.truncations == (Truncation("a", "e3", 398_401, 99_601),)
        assert ctx.tokens == 5 + 6 + 10 + (4 + 1 + (1_599 + 96) // 4 + 1)
        assert ctx.tokens < 2_000

    def test_a_compaction_cap_overrides_the_settings_for_its_epoch(self) -> None:
        entries = log(
            user("go"),
            compaction(None, truncate_tokens=50),
            assistant("", call("a")),
            tool(result("a", self.TEXT)),
        )
        ctx = project(entries, LOOSE, EST)
        assert ctx.truncations == (Truncation("a", "e3", 801, 201),)

    def test_a_result_under_both_caps_is_the_same_object(self) -> None:
        entries = log(user("go"), assistant("", call("a")), tool(result("a", "short")))
        ctx = project(entries, LOOSE, EST)
        assert ctx.messages[2] is entries[2].body


SIG_OLD = "c2lnLW9sZA=="
SIG_NEW = "c2lnLW5ldw==\n"


class TestSignedReasoning:
    OLD = ReasoningPart("let me look", signature=SIG_OLD)
    REDACTED = ReasoningPart("", signature="ENCRYPTED", redacted=True)
    PLAIN = ReasoningPart("unsigned musing")
    NEW = ReasoningPart(" trailing space kept ", signature=SIG_NEW)

    def entries(self, *after: Message) -> list[Entry]:
        return log(
            user("old request"),
            user("go"),
            Message("assistant", (self.OLD, self.REDACTED, self.PLAIN, call("a"))),
            tool(result("a", "A")),
            Message("assistant", (ReasoningPart("only thinking", signature=SIG_OLD),)),
            user("continue"),
            Message("assistant", (self.NEW,)),
            Message("assistant", (TextPart("checking"), call("b"))),
            tool(result("b", "B")),
            compaction("e1"),
            *after,
        )

    def test_kept_pre_compaction_replies_lose_signed_reasoning_whole_and_the_newest_keeps_it(
        self,
    ) -> None:
        ctx = project(self.entries(), LOOSE, EST)
        assert ctx.messages[1:] == (
            user("go"),
            Message("assistant", (self.PLAIN, call("a"))),
            tool(result("a", "A")),
            user("continue"),
            Message("assistant", (self.NEW,)),
            Message("assistant", (TextPart("checking"), call("b"))),
            tool(result("b", "B")),
        )
        assert ctx.sources[1:] == ("e1", "e2", "e3", "e5", "e6", "e7", "e8")
        assert ctx.sanitize == SanitizeReport(dropped_reasoning=3)
        reply = render_anthropic(ctx)["messages"][-2]
        assert reply == {
            "role": "assistant",
            "content": [
                {"type": "thinking", "thinking": " trailing space kept ", "signature": SIG_NEW},
                {"type": "text", "text": "checking"},
                {"type": "tool_use", "id": "b", "name": "bash", "input": {"cmd": "ls"}},
            ],
        }

    def test_later_replies_keep_their_reasoning_and_the_epoch_only_grows_at_its_tail(
        self,
    ) -> None:
        later = Message("assistant", (ReasoningPart("next", signature="s3"), TextPart("done")))
        before = project(self.entries(), LOOSE, EST)
        after = project(self.entries(later, user("more")), LOOSE, EST)
        assert after.messages[: len(before.messages)] == before.messages
        assert after.messages[len(before.messages) :] == (later, user("more"))

    def test_a_finished_turn_loses_the_newest_replys_reasoning_too(self) -> None:
        done = Message("assistant", (self.NEW, TextPart("all done")))
        cases = (
            # a final answer with no tool calls
            (done,),
            # a tool loop interrupted by a new real user message
            (Message("assistant", (self.NEW, call("b"))), tool(result("b", "B")), user("stop")),
        )
        for tail in cases:
            entries = log(user("go"), *tail, compaction("e0"))
            ctx = project(entries, LOOSE, EST)
            assert not any(m.reasoning for m in ctx.messages)
            assert ctx.sanitize.dropped_reasoning == 1
            assert len(ctx.messages) == 2 + len(tail)

    def test_a_pending_call_keeps_the_newest_replys_reasoning(self) -> None:
        reply = Message("assistant", (self.NEW, call("b")))
        ctx = project(log(user("go"), reply, compaction("e0")), LOOSE, EST)
        assert ctx.messages[2] == reply
        assert ctx.sanitize == SanitizeReport()

    def test_without_a_compaction_no_reasoning_is_dropped(self) -> None:
        entries = log(
            user("go"),
            Message("assistant", (self.OLD, call("a"))),
            tool(result("a", "A")),
            Message("assistant", (self.NEW, TextPart("done"))),
        )
        ctx = project(entries, LOOSE, EST)
        assert ctx.messages == tuple(e.body for e in entries)
        assert ctx.sanitize.dropped_reasoning == 0


class TestReportedFailures:
    def test_an_earlier_call_without_a_result_then_more_work_gives_valid_requests(self) -> None:
        entries = log(
            system("sys"),
            user("fix it"),
            assistant("", call("a"), call("b")),
            tool(result("a", "ok")),
            user("hm, the second one hangs; skip it"),
            assistant("", call("c")),
            tool(result("c", "done")),
        )
        ctx = project(entries, LOOSE, EST)
        assert ctx.sanitize.synthetic_results == ("b",)
        assert validate(render_openai(ctx), "openai") == []
        assert validate(render_anthropic(ctx), "anthropic") == []
        assert [m.role for m in ctx.messages] == [
            "system",
            "user",
            "assistant",
            "tool",
            "tool",
            "user",
            "assistant",
            "tool",
        ]


class TestReportOnlyShown:
    def test_truncations_and_prunes_of_dropped_results_are_not_reported(self) -> None:
        long = "q" * 2_000
        entries = log(
            user("go"),
            tool(result("ghost", long)),
            assistant("", call("a"), call("b")),
            tool(result("a", long), result("b", "B")),
            tool(result("a", long), result("b", "B")),
            PruneRecord(("b", "ghost"), 10, "default"),
        )
        ctx = project(entries, ProjectionSettings(100, 100_000, 0.5), EST)
        assert ctx.truncations == (Truncation("a", "e3", 1_601, 401),)
        assert ctx.pruned == ("b",)
        assert ctx.sanitize.dropped_results == ("ghost",)
        assert ctx.sanitize.duplicate_results == ("a", "b")
