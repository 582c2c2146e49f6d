"""The extractive summarizer: exact continuation state for small histories of each agent,
carry-over across compactions, the items chosen by value within the token budget, the goal
and the next step, and the ledger block the hybrid summarizer appends."""

from __future__ import annotations

from dataclasses import replace

import pytest
from summarizer_helpers import (
    QuarterEstimator,
    call,
    calls,
    claude_code_history,
    codex_history,
    openhands_history,
    pi_history,
    results,
    swe_agent_history,
)

from ctxengine.errors import SummaryRejected
from ctxengine.model import (
    CompactionRecord,
    ErrorFact,
    FileFact,
    IdentifierFact,
    Ledgers,
    Message,
    RuleFact,
    assistant,
    user,
)
from ctxengine.summarizers import (
    ExtractiveSummarizer,
    Summarizer,
    SummaryRequest,
    ledger_block,
    real_user_texts,
)
from ctxengine.summarizers.extractive_state import (
    CURRENT_WORK_HEAD_CHARS,
    MODIFIED_GROUP_SHARE,
    _quoted_entry,
    current_work_items,
)
from ctxengine.summarizers.items import VALUES
from ctxengine.summarizers.prompts import LEDGER_INTRO

EST = QuarterEstimator()
#: The next step when nothing after the goal names what to do.
CHECK_STEP = (
    "No later request. Next: check the goal above against Done and Current work, and do "
    "what is not done yet."
)
SUMMARIZER = ExtractiveSummarizer(user_messages_budget=200)


def _summarize(
    messages: tuple[Message, ...], budget: int = 2_000, **kwargs: object
) -> tuple[str, int]:
    goal = real_user_texts(messages)[0] if real_user_texts(messages) else ""
    request = SummaryRequest(messages, None, goal, budget, **kwargs)  # type: ignore[arg-type]
    summary = SUMMARIZER.summarize(request, EST)
    assert summary.summarizer == "extractive"
    assert summary.tokens == EST.text(summary.text)
    return summary.text, summary.tokens


def test_it_is_a_summarizer() -> None:
    assert isinstance(SUMMARIZER, Summarizer)
    assert SUMMARIZER.name == "extractive"


class TestEachAgentsVocabulary:
    def test_claude_code(self) -> None:
        text, tokens = _summarize(claude_code_history())
        assert text == (
            "## Goal\nFix the login bug in src/auth.py. Don't touch the database schema.\n\n"
            "## Constraints\n- Don't touch the database schema.\n\n"
            "## Done\n- edited /repo/src/auth.py\n- created /repo/tests/test_auth.py\n"
            "- ran `pytest -q tests/test_auth.py` (succeeded)\n\n"
            "## Files modified\n- /repo/src/auth.py\n- /repo/tests/test_auth.py\n\n"
            "## Errors\n- open: <tool_use_error>String to replace not found in file. — "
            "`Edit(/repo/src/db.py)`\n\n"
            "## Commands run\n- pytest -q tests/test_auth.py\n\n"
            "## Current work\nFixed: login now returns the user. The test passes.\n\n"
            "## Next step\nThe goal above was answered before this point (see Current work).\n"
            "Open errors to resolve: 1 (listed under Errors).\n"
            "Go on with the messages after this summary."
        )
        assert tokens == 175

    def test_codex(self) -> None:
        text, _ = _summarize(codex_history())
        assert text == (
            "## Goal\nAdd a --verbose flag to the CLI. Only change cli.py and its tests.\n\n"
            "## Constraints\n- Only change cli.py and its tests.\n\n"
            "## Done\n- edited /repo/src/tool/cli.py\n- created /repo/tests/test_cli.py\n"
            "- ran `pytest -q` (succeeded)\n\n"
            "## Files modified\n- /repo/src/tool/cli.py\n- /repo/tests/test_cli.py\n\n"
            "## Errors\n"
            "- fixed: FAILED tests/test_cli.py::test_verbose - AssertionError: assert 0 == 1"
            " — `pytest -q`\n\n"
            "## Commands run\n- sed -n '1,120p' src/tool/cli.py\n- pytest -q\n\n"
            "## Current work\nThe flag is in place and both tests pass.\n\n"
            "## Next step\nThe goal above was answered before this point (see Current work).\n"
            "Go on with the messages after this summary."
        )

    def test_pi(self) -> None:
        text, _ = _summarize(pi_history())
        assert text == (
            "## Goal\nPort the theme loader. Never use chalk directly; always go through theme.ts."
            "\n\n## Constraints\n- Never use chalk directly; always go through theme.ts.\n\n"
            "## Done\n- wrote src/theme/loader.ts\n- edited src/tui/app.ts\n"
            "- ran `npm run check` (succeeded)\n\n"
            "## Files modified\n- src/theme/loader.ts\n- src/tui/app.ts\n\n"
            "## Files read\n- src/theme/theme.ts\n\n"
            "## Errors\n- fixed: Could not find the exact text in src/tui/app.ts.\n"
            "- fixed: src/tui/app.ts(3,1): error TS2304: Cannot find name 'chalk'."
            " — `npm run check`\n\n"
            "## Commands run\n- npm run check\n\n"
            "## Current work\nThe loader is ported and the check is clean.\n\n"
            "## Next step\nThe goal above was answered before this point (see Current work).\n"
            "Go on with the messages after this summary."
        )

    def test_openhands(self) -> None:
        text, _ = _summarize(openhands_history())
        assert text == (
            "## Goal\nCreate a 2048 game in /workspace/game.py. "
            "Make sure it runs without a display.\n\n"
            "## Constraints\n- Make sure it runs without a display.\n\n"
            "## Done\n- created /workspace/game.py\n- edited /workspace/game.py\n"
            "- ran `python3 -m pytest -q /workspace` (succeeded)\n\n"
            "## Files modified\n- /workspace/game.py\n\n"
            "## Errors\n- open: ModuleNotFoundError: No module named 'keyboard'"
            ' — at File "/workspace/game.py", line 2, in <module>'
            " — `python3 /workspace/game.py --headless`\n\n"
            "## Commands run\n- python3 /workspace/game.py --headless\n"
            "- python3 -m pytest -q /workspace\n\n"
            "## Next step\nNo later request. Next: resolve the latest open error: "
            "ModuleNotFoundError: No module named 'keyboard'\n"
            "Open errors to resolve: 1 (listed under Errors)."
        )

    def test_swe_agent(self) -> None:
        text, _ = _summarize(swe_agent_history())
        assert text == (
            "## Goal\nTimeDelta serialization rounds down. You must not change the public API.\n\n"
            "## Constraints\n- You must not change the public API.\n\n"
            "## Done\n- created reproduce.py\n- edited reproduce.py\n"
            "- edited src/marshmallow/fields.py\n- deleted reproduce.py\n\n"
            "## Files modified\n- src/marshmallow/fields.py\n\n"
            "## Scratch files (backups, temporary files, helper scripts)\n- reproduce.py\n\n"
            "## Errors\n- fixed: - E999 IndentationError: unexpected indent — "
            "`edit(src/marshmallow/fields.py)`\n\n"
            "## Commands run\n- python reproduce.py\n- rm reproduce.py\n\n"
            "## Next step\n" + CHECK_STEP
        )

    def test_a_failed_edit_is_not_listed_as_done_or_modified(self) -> None:
        text, _ = _summarize(claude_code_history())
        # named only by its error, whose line says not which file
        assert [line for line in text.splitlines() if "/repo/src/db.py" in line] == [
            "- open: <tool_use_error>String to replace not found in file. — `Edit(/repo/src/db.py)`"
        ]


def _first_range() -> tuple[Message, ...]:
    return (
        user("Task A: migrate module X to the new API. Never edit vendor/."),
        calls(call("a1", "Edit", file_path="src/x.py", old_string="old", new_string="new")),
        results(("a1", "The file src/x.py has been updated.")),
        user("Also rename helper() to assist(). 必须保留旧名字作为别名。"),
        assistant("Renamed; the old name stays as an alias."),
    )


def _second_range() -> tuple[Message, ...]:
    return (
        user("Now update the docs."),
        calls(call("b1", "Write", file_path="docs/x.md", content="# X")),
        results(("b1", "File created successfully at: docs/x.md")),
        assistant("Docs updated."),
    )


class TestCarryOver:
    def test_ledgers_and_user_messages_survive_a_second_compaction(self) -> None:
        first = _first_range()
        goal = first[0].text
        s1 = SUMMARIZER.summarize(SummaryRequest(first, None, goal, 2_000), EST)
        record = CompactionRecord(
            s1.text, "kept-1", 900, 300, "default", s1.summarizer, ledgers=s1.ledgers
        )
        # the second range starts at entry 5 of the history: its facts' sources count from it
        request = SummaryRequest(
            _second_range(),
            record,
            goal,
            2_000,
            prior_user_messages=real_user_texts(first),
            range_start=5,
            covered=(0, 8),
        )
        s2 = SUMMARIZER.summarize(request, EST)
        assert s2.text == (
            "## Goal\nTask A: migrate module X to the new API. Never edit vendor/.\n\n"
            "## User messages (newest first)\n"
            "- Also rename helper() to assist(). 必须保留旧名字作为别名。\n\n"
            "## Constraints\n- Never edit vendor/.\n- 必须保留旧名字作为别名。\n\n"
            "## Done\n- edited src/x.py\n- created docs/x.md\n\n"
            "## Files modified\n- src/x.py\n- docs/x.md\n\n"
            "## Current work\nDocs updated.\n\n"
            "## Next step\n"
            "Latest user request (answered before this point, see Current work): "
            "Now update the docs.\n"
            "Go on with the messages after this summary."
        )
        assert s2.ledgers == Ledgers(
            goal=goal,
            files_modified=("src/x.py", "docs/x.md"),
            constraints=("Never edit vendor/.", "必须保留旧名字作为别名。"),
            done=("edited src/x.py", "created docs/x.md"),
            files=(
                FileFact("src/x.py", "modified", 2, "edited"),
                FileFact("docs/x.md", "modified", 7, "created", True),
            ),
            rules=(
                RuleFact("Never edit vendor/.", "active", 0, "edit vendor", head="edit vendor"),
                RuleFact(
                    "必须保留旧名字作为别名。",
                    "active",
                    3,
                    "为别 作为 保留 别名 名字 字作 旧名 留旧",
                    head="为别 作为 保留 别名 名字 字作 旧名 留旧",
                ),
            ),
        )

    def test_without_prior_user_messages_the_ledgers_still_carry_over(self) -> None:
        first = _first_range()
        s1 = SUMMARIZER.summarize(SummaryRequest(first, None, first[0].text, 2_000), EST)
        record = CompactionRecord(s1.text, "k", 9, 3, "default", "extractive", ledgers=s1.ledgers)
        s2 = SUMMARIZER.summarize(SummaryRequest(_second_range(), record, "", 2_000), EST)
        assert s2.ledgers.goal == first[0].text
        assert "## User messages" not in s2.text
        assert "- src/x.py\n" in s2.text
        assert "- 必须保留旧名字作为别名。\n" in s2.text


class TestUserMessages:
    MESSAGES = tuple(
        user(t)
        for t in ("goal", "a" * 40, "continue", "b" * 40, "a" * 40, "c" * 40, "yes", "latest")
    )

    def test_newest_first_once_each_without_acknowledgements(self) -> None:
        # "a" × 40 is shown at its newest place only; "continue" and "yes" are left out;
        # "latest" is the next step
        summarizer = ExtractiveSummarizer(user_messages_budget=28)
        summary = summarizer.summarize(SummaryRequest(self.MESSAGES, None, "goal", 500), EST)
        assert summary.text == (
            "## Goal\ngoal\n\n"
            "## User messages (newest first)\n"
            "- " + "c" * 40 + "\n"
            "- " + "a" * 40 + "\n"
            "- " + "b" * 40 + "\n\n"
            "## Next step\nLatest user request (in progress): latest"
        )

    def test_those_that_do_not_fit_are_counted_in_the_closing_note(self) -> None:
        # 40 tokens: a 42-character line is 11 tokens, the heading 9: none fits beside the
        # closing note
        summarizer = ExtractiveSummarizer(user_messages_budget=28)
        request = SummaryRequest(self.MESSAGES, None, "goal", 40, covered=(0, 7))
        summary = summarizer.summarize(request, EST)
        assert summary.text == (
            "## Goal\ngoal\n\n"
            "## Next step\nLatest user request (in progress): latest\n\n"
            "## Not shown (no room left)\n- 3 user messages: entries 0–7 of the history"
        )
        assert summary.tokens == 36
        assert summary.notes == ("user_messages: 3 not shown",)


class TestBudget:
    GOAL = "Make the build green. Run the suite."

    @staticmethod
    def _history() -> tuple[Message, ...]:
        msgs: list[Message] = [user(TestBudget.GOAL)]
        for i in range(12):
            msgs += [
                calls(call(f"c{i}", "Bash", command=f"ls dir{i:02d}")),
                results((f"c{i}", "x")),
            ]
        msgs += [
            calls(
                call("r", "Read", file_path="src/a.py"),
                call("e", "Edit", file_path="src/b.py", old_string="a", new_string="b"),
            ),
            results(("r", "x"), ("e", "ok")),
        ]
        return tuple(msgs)

    def _summary(self, budget: int) -> tuple[str, int, tuple[str, ...]]:
        request = SummaryRequest(self._history(), None, self.GOAL, budget, covered=(1, 27))
        summary = SUMMARIZER.summarize(request, EST)
        assert summary.tokens == EST.text(summary.text) <= budget
        return summary.text, summary.tokens, summary.notes

    def test_with_room_everything_is_listed_and_nothing_said_left_out(self) -> None:
        text, tokens, notes = self._summary(99)
        assert text == (
            "## Goal\nMake the build green. Run the suite.\n\n"
            "## Done\n- edited src/b.py\n\n"
            "## Files modified\n- src/b.py\n\n"
            "## Files read\n- src/a.py\n\n"
            "## Commands run\n"
            + "\n".join(f"- ls dir{i:02d}" for i in range(12))
            + "\n\n## Next step\n"
            + CHECK_STEP
        )
        assert (tokens, notes) == (99, ())

    def test_commands_go_first_keeping_the_newest(self) -> None:
        text, tokens, notes = self._summary(98)
        assert text == (
            "## Goal\nMake the build green. Run the suite.\n\n"
            "## Done\n- edited src/b.py\n\n"
            "## Files modified\n- src/b.py\n\n"
            "## Files read\n- src/a.py\n\n"
            "## Commands run\n"
            + "\n".join(f"- ls dir{i:02d}" for i in range(8, 12))
            + "\n\n## Next step\n"
            + CHECK_STEP
            + "\n\n"
            "## Not shown (no room left)\n- 8 more commands run: entries 1–27 of the history"
        )
        assert (tokens, notes) == (97, ("commands: 8 not shown",))

    def test_every_command_before_the_read_file_and_the_done_step(self) -> None:
        text, tokens, notes = self._summary(84)
        assert text == (
            "## Goal\nMake the build green. Run the suite.\n\n"
            "## Done\n- edited src/b.py\n\n"
            "## Files modified\n- src/b.py\n\n"
            "## Files read\n- src/a.py\n\n"
            "## Next step\n" + CHECK_STEP + "\n\n"
            "## Not shown (no room left)\n- 12 commands run: entries 1–27 of the history"
        )
        assert (tokens, notes) == (81, ("commands: 12 not shown",))

    def test_when_the_required_items_cannot_fit_it_is_rejected_with_what_they_need(
        self,
    ) -> None:
        # goal, modified path, next step and the closing note: 74 tokens at any budget below
        for budget in (73, 40):
            request = SummaryRequest(self._history(), None, self.GOAL, budget, covered=(1, 27))
            with pytest.raises(SummaryRejected) as info:
                SUMMARIZER.summarize(request, EST)
            assert (info.value.reason, info.value.tokens_after) == ("over_budget", 74)
        text, tokens, _ = self._summary(74)
        assert text == (
            "## Goal\nMake the build green. Run the suite.\n\n"
            "## Files modified\n- src/b.py\n\n"
            "## Next step\n" + CHECK_STEP + "\n\n"
            "## Not shown (no room left)\n"
            "- 1 done step, 1 file read, 12 commands run: entries 1–27 of the history"
        )
        assert tokens == 74

    def test_a_goal_larger_than_the_budget_keeps_its_first_part_and_says_what_was_cut(
        self,
    ) -> None:
        goal = "".join(f"{i:04d} " for i in range(400))  # 2,000 characters
        summary = SUMMARIZER.summarize(SummaryRequest((user(goal),), None, goal, 215), EST)
        assert summary.text == (
            f"## Goal\n{goal[:694]}\n[… 1,306 more characters not shown]\n\n"
            "## Next step\n" + CHECK_STEP
        )  # cut after "0138", at a word's end
        assert summary.tokens == 215
        assert summary.notes == ("goal: 1,306 characters cut",)

    def test_a_goal_shown_cut_names_the_history_entry_that_holds_it_whole(self) -> None:
        goal = "".join(f"{i:04d} " for i in range(400))
        request = SummaryRequest(
            (user(goal),), None, goal, 225, text_entries=(("other", "e-1"), (goal, "e-7"))
        )
        summary = SUMMARIZER.summarize(request, EST)
        assert summary.text == (
            f"## Goal\n{goal[:694]}\n[… 1,306 more characters not shown; full text kept in "
            "history as entry e-7]\n\n## Next step\n" + CHECK_STEP
        )  # the note's 10 tokens more than without the entry: the budget is 225, not 215
        assert summary.tokens == 225

    REPORT = "Report:\n" + "\n".join(f"line {i} done" for i in range(200))  # 2,697 chars
    #: an earlier reply of 8,000 tokens: the range summarized is about 8,700 tokens
    EARLIER = "Looked at every module. " * 1_334

    def _work(self, budget: int, *earlier: Message) -> str:
        request = SummaryRequest(
            (user("Fix the parser."), *earlier, assistant(self.REPORT)),
            None,
            "Fix the parser.",
            budget,
            text_entries=(("Fix the parser.", "e-1"), (self.REPORT, "e-2")),
        )
        text = SUMMARIZER.summarize(request, EST).text
        return text.split("## Current work\n", 1)[1].split("\n\n## ", 1)[0]

    def test_a_current_work_cut_in_its_middle_names_the_entry_of_the_message(self) -> None:
        # 675 tokens, over a quarter of the budget (500; a tenth of the range is 869): as
        # many characters as 500 tokens hold at 2,697 / 675 characters per token, 1,997,
        # head and tail 998 each
        assert self._work(2000, assistant(self.EARLIER)) == (
            self.REPORT[:998]
            + "\n[… 701 characters omitted; full text kept in history as entry e-2 …]\n"
            + self.REPORT[-998:]
        )

    def test_a_current_work_is_shown_whole_while_its_room_holds_it(self) -> None:
        # a quarter of the budget is 675 tokens, a tenth of the range 869
        assert self._work(2700, assistant(self.EARLIER)) == self.REPORT

    def test_a_short_range_keeps_its_current_work_to_1200_characters(self) -> None:
        # a tenth of the range (the request and the report, 687 tokens) is 68 tokens
        assert self._work(2700) == (
            self.REPORT[:600]
            + "\n[… 1,497 characters omitted; full text kept in history as entry e-2 …]\n"
            + self.REPORT[-600:]
        )

    def test_a_request_resolved_from_an_acknowledgement_names_the_request_s_entry(
        self,
    ) -> None:
        ask = "Follow the next steps of the plan. " * 20
        sentence = f'"Please continue.", to go on with: {ask}'
        texts = (ask, "Please continue.")
        entries = {ask: "e-4", "Please continue.": "e-9"}
        assert _quoted_entry(sentence, texts, entries) == "e-4"
        assert _quoted_entry("No later request.", texts, entries) == ""

    def test_the_first_500_characters_of_the_goal_and_the_next_step_always_survive(
        self,
    ) -> None:
        goal = "".join(f"{i:04d} " for i in range(400))
        with pytest.raises(SummaryRejected) as info:
            SUMMARIZER.summarize(SummaryRequest((user(goal),), None, goal, 100), EST)
        assert info.value.tokens_after == 166
        # at the 166 tokens they need, the goal's head (its first 500 characters ended at a
        # space: 499) and the whole next step
        summary = SUMMARIZER.summarize(SummaryRequest((user(goal),), None, goal, 166), EST)
        assert summary.text == (
            f"## Goal\n{goal[:499]}\n[… 1,501 more characters not shown]\n\n"
            "## Next step\n" + CHECK_STEP
        )
        assert summary.tokens == 166

    def test_modified_paths_are_grouped_by_directory_as_a_last_resort(self) -> None:
        msgs: list[Message] = [user("Ship it.")]
        for i in range(6):
            msgs += [
                calls(call(f"w{i}", "Write", file_path=f"src/pkg/m{i}.py", content="")),
                results((f"w{i}", "ok")),
            ]
        summary = SUMMARIZER.summarize(SummaryRequest(tuple(msgs), None, "Ship it.", 63), EST)
        assert summary.text == (
            "## Goal\nShip it.\n\n"
            "## Files modified\n- src/pkg/: m0.py, m1.py, m2.py, m3.py, m4.py, m5.py\n\n"
            "## Next step\n" + CHECK_STEP + "\n\n"
            "## Not shown (no room left)\n- 6 done steps"
        )
        assert summary.notes == ("done: 6 not shown", "files_modified: grouped by directory")


class TestOtherSections:
    def test_turn_context_pinned_and_focus(self) -> None:
        before = (user("Fix the bug."), assistant("Fixed."))
        prefix = (
            user("Now add a test. Don't use mocks."),
            calls(call("t", "Write", file_path="t.py", content="")),
            results(("t", "ok")),
            assistant("Wrote the test; running it next."),
        )
        request = SummaryRequest(
            before,
            None,
            "Fix the bug.",
            1_000,
            focus="the test",
            turn_prefix=prefix,
            pinned=("Release on Friday",),
        )
        summary = SUMMARIZER.summarize(request, EST)
        # the last message states the plan: it is the next step's, not repeated as current work
        assert summary.text == (
            "## Goal\nFix the bug.\n\n"
            "## Constraints\n- Don't use mocks.\n\n"
            "## Done\n- wrote t.py\n\n"
            "## Files modified\n- t.py\n\n"
            "## Next step\nLatest user request (in progress): Now add a test. Don't use mocks.\n"
            "The agent's stated plan: Wrote the test; running it next.\n\n"
            "## Turn context\n"
            "The verbatim messages after this summary continue a turn that began before it.\n"
            "That turn answers the request under Next step.\n"
            "Already done in that turn: wrote t.py.\n\n"
            "## Pinned\n- Release on Friday\n\n"
            "## Focus\nthe test"
        )
        assert summary.ledgers.pinned == ("Release on Friday",)

    def test_decisions_and_the_agent_s_findings_are_kept_exactly(self) -> None:
        messages = (
            user("Fix the refund job.\nvs code terminal:\n- it hangs"),
            assistant(
                "Found it: `fetch_user_v2` swallows the cache miss. I'll use an advisory lock "
                "rather than a Redis lock, because the job already holds a connection."
            ),
            user("ok"),
        )
        text, _ = _summarize(messages)
        assert text == (
            "## Goal\nFix the refund job.\nvs code terminal:\n- it hangs\n\n"
            "## Decisions\n- agent: I'll use an advisory lock rather than a Redis lock, because "
            "the job already holds a connection.\n\n"
            "## Identifiers\n- symbol: fetch_user_v2\n\n"
            '## Next step\nLatest user request (in progress): "ok", accepting the agent\'s '
            "proposal: Found it: `fetch_user_v2` swallows the cache miss. I'll use an advisory "
            "lock rather than a Redis lock, because the job already holds a connection."
        )

    def test_a_user_message_that_is_one_rule_or_one_decision_is_listed_once(self) -> None:
        messages = (
            user("Fix the bug."),
            assistant("Looking."),
            user("Never push to main."),
            assistant("Noted."),
            user("Let's use SQLite rather than Postgres."),
            assistant("Noted."),
            user("Also check the logs."),
            assistant("Checking."),
            user("continue"),
        )
        text, _ = _summarize(messages)
        assert text.startswith(
            "## Goal\nFix the bug.\n\n"
            "## User messages (newest first)\n- Also check the logs.\n\n"
            "## Constraints\n- Never push to main.\n\n"
            "## Decisions\n- user: Let's use SQLite rather than Postgres.\n\n"
        )

    def test_a_long_current_work_gives_way_before_identifiers_and_errors(self) -> None:
        report = "\n".join(
            f"- step {i}: " + "checked the module carefully; " * 3 + "done." for i in range(10)
        )
        messages = (
            user("Fix the bug in PAY-42."),
            calls(call("a", "Bash", command="pytest -q")),
            results(("a", "E   KeyError: 'token'\n1 failed in 0.1s", True)),
            assistant(report),
        )
        (head, rest) = current_work_items(report)
        assert (head.kind, rest.kind) == ("current_work", "current_work.more")
        assert len(head.text) <= CURRENT_WORK_HEAD_CHARS
        assert head.text + "\n" + rest.text == report
        assert VALUES["current_work.more"] < VALUES["error.fixed"] < VALUES["current_work"]
        text, tokens = _summarize(messages, budget=260)
        assert tokens <= 260
        # the error line and the ticket stay; the report keeps its head and says what it cut
        assert "- open: E   KeyError: 'token' — `pytest -q`" in text
        assert "- ticket: PAY-42" in text
        shown = text.split("## Current work\n", 1)[1].split("\n\n", 1)[0]
        assert shown.startswith(head.text)
        body, note = shown.rsplit("\n", 1)
        cut = len(rest.text) - len(body.removeprefix(head.text + "\n"))
        assert note == f"[… {cut:,} more characters not shown]"

    def test_many_deep_modified_paths_are_grouped_by_directory(self) -> None:
        root = "/home/dev/projects/payments-service/src/payments/handlers"
        paths = [f"{root}/handler_{i}.py" for i in range(8)]
        edits = tuple(
            m
            for i, p in enumerate(paths)
            for m in (
                calls(call(f"e{i}", "Write", file_path=p, content="x = 1\n")),
                results((f"e{i}", "File created successfully")),
            )
        )
        text, _ = _summarize((user("Add the handlers."), *edits), budget=900)
        names = ", ".join(f"handler_{i}.py" for i in range(8))
        assert f"## Files modified\n- {root}/: {names}\n" in text
        # with room to spare they stay one per line
        text, _ = _summarize((user("Add the handlers."), *edits), budget=4_000)
        assert f"## Files modified\n- {paths[0]}\n- {paths[1]}\n" in text
        assert MODIFIED_GROUP_SHARE == 0.15

    def test_the_later_lines_of_a_quoted_message_are_indented(self) -> None:
        messages = (
            user("Fix the bug."),
            assistant("Looking."),
            user("It fails here:\nvs code terminal:\n\n## not a heading"),
            assistant("Noted."),
            user("continue"),
        )
        text, _ = _summarize(messages)
        assert (
            "## User messages (newest first)\n- It fails here:\n    vs code terminal:\n\n"
            "    ## not a heading\n\n" in text
        )

    def test_nothing_to_summarize_is_rejected(self) -> None:
        with pytest.raises(SummaryRejected) as info:
            SUMMARIZER.summarize(SummaryRequest((), None, "goal", 100), EST)
        assert info.value.reason == "empty"

    def test_a_non_positive_budget_is_refused(self) -> None:
        with pytest.raises(ValueError, match="budget_tokens"):
            SummaryRequest((), None, "", 0)


class TestGoalAndNextStep:
    def test_an_acknowledgement_is_never_the_goal(self) -> None:
        messages = (
            user("Can we continue from where we left off?"),
            assistant("Yes: the parser is half done."),
            user("Finish the parser, then add its tests."),
            assistant("Parser finished.\n\nShall I add the tests now?"),
            user("yes please"),
            calls(call("t", "Write", file_path="tests/test_parser.py", content="")),
            results(("t", "ok")),
        )
        request = SummaryRequest(messages, None, "Can we continue from where we left off?", 500)
        summary = SUMMARIZER.summarize(request, EST)
        assert summary.ledgers.goal == "Finish the parser, then add its tests."
        assert summary.text == (
            "## Goal\nFinish the parser, then add its tests.\n\n"
            "## Done\n- wrote tests/test_parser.py\n\n"
            "## Files modified\n- tests/test_parser.py\n\n"
            "## Current work\nParser finished.\n\nShall I add the tests now?\n\n"
            '## Next step\nLatest user request (in progress): "yes please", accepting the '
            "agent's proposal: Shall I add the tests now?"
        )

    def test_a_command_that_failed_after_it_passed_is_not_shown_as_succeeded(self) -> None:
        messages = (
            user("Keep the suite green."),
            calls(call("a", "Bash", command="pytest -q")),
            results(("a", "3 passed in 0.1s")),
            calls(call("b", "Edit", file_path="src/m.py", old_string="a", new_string="b")),
            results(("b", "ok")),
            calls(call("c", "Bash", command="pytest -q")),
            results(
                ("c", "FAILED tests/test_m.py::test_a - KeyError: 'x'\n1 failed in 0.1s", True)
            ),
        )
        summary = SUMMARIZER.summarize(SummaryRequest(messages, None, "", 500), EST)
        assert summary.ledgers.done == ("ran `pytest -q` (succeeded)", "edited src/m.py")
        assert "## Done\n- ran `pytest -q` (succeeded, then failed again later: see Errors)\n" in (
            summary.text
        )
        assert "(succeeded)\n" not in summary.text


def test_an_injected_block_passed_as_goal_or_prior_message_is_ignored() -> None:
    env = "<environment_context>\n  <cwd>/repo</cwd>\n</environment_context>"
    msgs = (user("Add a flag."), assistant("Added."))
    request = SummaryRequest(msgs, None, env, 500, prior_user_messages=(env,))
    summary = SUMMARIZER.summarize(request, EST)
    assert summary.ledgers.goal == "Add a flag."
    assert summary.text == (
        "## Goal\nAdd a flag.\n\n## Current work\nAdded.\n\n"
        "## Next step\nThe goal above was answered before this point (see Current work).\n"
        "Go on with the messages after this summary."
    )


@pytest.mark.parametrize("budget", [146, 200, 400, 1_000])
def test_the_default_estimator_budget_is_respected(budget: int) -> None:
    from ctxengine.tokens import HeuristicEstimator

    estimator = HeuristicEstimator()
    msgs = codex_history() + pi_history()
    request = SummaryRequest(msgs, None, real_user_texts(msgs)[0], budget)
    summary = SUMMARIZER.summarize(request, estimator)
    assert summary.tokens == estimator.text(summary.text)
    assert summary.tokens <= budget
    for path in ("src/tool/cli.py", "tests/test_cli.py", "src/theme/loader.ts", "src/tui/app.ts"):
        assert path in summary.text


def test_under_the_default_estimator_the_required_items_need_146_tokens() -> None:
    from ctxengine.tokens import HeuristicEstimator

    msgs = codex_history() + pi_history()
    request = SummaryRequest(msgs, None, real_user_texts(msgs)[0], 145)
    with pytest.raises(SummaryRejected) as info:
        SUMMARIZER.summarize(request, HeuristicEstimator())
    # the goal, the four modified paths (absolute under the Codex session's working
    # directory /repo), the next step and the closing note of what is left out: 146 tokens
    # by the estimate (o200k_base counts 132, cl100k_base 130; the goal's word in capitals
    # "CLI" costs 0.6 on top)
    assert (info.value.reason, info.value.tokens_after) == ("over_budget", 146)


def _fact_ledgers() -> Ledgers:
    return Ledgers(
        goal="Fix it.",
        files_modified=("/r/a.py", "old.py"),
        constraints=("Never push.",),
        errors=("Exit code 1",),
        error_facts=(
            ErrorFact("KeyError: 'x'", "open", 4, "python t.py", where='File "/r/a.py", line 3'),
            ErrorFact("FAILED t.py::a - x", "fixed", 2, "Edit(/r/a.py)", "t.py::a"),
        ),
        files=(
            FileFact("/r/a.py", "modified", 6, "edited"),
            FileFact("/r/fix.py", "scratch", 2, "wrote", True),
            FileFact("/r/b.py", "read", 1, "read"),
        ),
        identifiers=(IdentifierFact("localhost:8080", "port", "8080", 1),),
        rules=(
            RuleFact("Always target Python 3.8.", "superseded", 0, "python target"),
            RuleFact("Use tabs.", "active", 0, "tabs"),
        ),
        pinned=("keep me",),
    )


def test_the_ledger_block_shows_rule_error_file_and_identifier_facts() -> None:
    block, notes = ledger_block(_fact_ledgers(), 500, EST, intro=LEDGER_INTRO)
    assert block == (
        f"{LEDGER_INTRO}\n\n"
        "## First user request (verbatim)\nFix it.\n\n"
        "## Constraints\n- (superseded) Always target Python 3.8.\n- Never push.\n- Use tabs.\n\n"
        "## Files modified\n- old.py\n- /r/a.py\n\n"
        "## Scratch files (backups, temporary files, helper scripts)\n- /r/fix.py\n\n"
        "## Files read\n- /r/b.py\n\n"
        "## Errors\n- Exit code 1\n- fixed: FAILED t.py::a - x — `Edit(/r/a.py)`\n"
        "- open: KeyError: 'x' — at File \"/r/a.py\", line 3 — `python t.py`\n\n"
        "## Identifiers\n- port: localhost:8080\n\n"
        "## Pinned\n- keep me"
    )
    assert notes == ()


def test_a_short_ledger_block_keeps_the_required_items_and_says_what_it_left_out() -> None:
    block, notes = ledger_block(_fact_ledgers(), 60, EST, intro=LEDGER_INTRO, covered=(0, 9))
    assert block == (
        f"{LEDGER_INTRO}\n\n"
        "## First user request (verbatim)\nFix it.\n\n"
        "## Files modified\n- old.py\n- /r/a.py\n\n"
        "## Not shown (no room left)\n- 3 constraints, 1 scratch file, 1 file read, 3 errors, "
        "1 identifier, 1 pinned item: entries 0–9 of the history"
    )
    assert notes == (
        "constraints: 3 not shown",
        "files_scratch: 1 not shown",
        "files_read: 1 not shown",
        "errors: 3 not shown",
        "identifiers: 1 not shown",
        "pinned: 1 not shown",
    )
    assert ledger_block(Ledgers(), 60, EST, intro=LEDGER_INTRO) == ("", ())


def test_a_first_request_cut_in_the_ledger_block_names_its_entry() -> None:
    goal = "".join(f"{i:04d} " for i in range(400))  # 2,000 characters
    ledgers = replace(_fact_ledgers(), goal=goal)
    block, notes = ledger_block(
        ledgers, 200, EST, intro=LEDGER_INTRO, covered=(0, 9), goal_entry="e-3"
    )
    assert block.startswith(
        f"{LEDGER_INTRO}\n\n## First user request (verbatim)\n{goal[:499]}\n[… 1,501 more "
        "characters not shown; full text kept in history as entry e-3]\n\n## Files modified\n"
    )
    assert notes[0] == "goal: 1,501 characters cut"


def test_a_short_budget_drops_identifiers_and_fixed_errors_before_open_ones() -> None:
    facts = tuple(
        ErrorFact(f"E{i}: boom number {i}", "fixed" if i < 3 else "open", i, "make")
        for i in range(5)
    )
    ids = tuple(IdentifierFact(f"ABC-{i}", "ticket", f"ABC-{i}", i) for i in range(20))
    previous = CompactionRecord(
        "x",
        "k",
        9,
        3,
        "default",
        "extractive",
        ledgers=Ledgers(goal="Ship it.", error_facts=facts, identifiers=ids),
    )
    request = SummaryRequest(
        (user("Ship it."), assistant("ok")), previous, "Ship it.", 120, covered=(0, 11)
    )
    summary = SUMMARIZER.summarize(request, EST)
    assert summary.notes == ("errors: 3 not shown", "identifiers: 16 not shown")
    assert summary.text == (
        "## Goal\nShip it.\n\n"
        "## Errors\n- open: E3: boom number 3 — `make`\n- open: E4: boom number 4 — `make`\n\n"
        "## Identifiers\n"
        + "\n".join(f"- ticket: ABC-{i}" for i in range(16, 20))
        + "\n\n## Current work\nok\n\n"
        "## Next step\nThe goal above was answered before this point (see Current work).\n"
        "Open errors to resolve: 2 (listed under Errors).\n"
        "Go on with the messages after this summary.\n\n"
        "## Not shown (no room left)\n- 3 more errors, 16 more identifiers: "
        "entries 0–11 of the history"
    )
    assert summary.tokens == 118


class TestFocusAndErrorCount:
    def test_the_focus_ranks_matching_items_first_and_keeps_the_stated_identifiers(self) -> None:
        messages: list[Message] = [
            user("Fix the tag reader. Ticket TAG-7, the service runs on port 8123.")
        ]
        for k in range(6):
            messages += [
                calls(call(f"c{k}", "Bash", command=f"cat docs/part{k}.md")),
                results((f"c{k}", "ok")),
                calls(call(f"n{k}", "Bash", command=f"nfc-probe --slot {k}")),
                results((f"n{k}", "ok")),
            ]
        messages.append(assistant("The reader works again; next I will update the spool docs."))
        text, tokens = _summarize(tuple(messages), 150, covered=(0, 30), focus="NFC spool")
        assert text == (
            "## Goal\nFix the tag reader. Ticket TAG-7, the service runs on port 8123.\n\n"
            "## Identifiers\n- ticket: TAG-7\n- port: port 8123\n\n"
            "## Commands run\n"
            + "".join(f"- nfc-probe --slot {k}\n" for k in range(6))
            + "\n## Next step\n"
            "The goal above was answered before this point (see Current work).\n"
            "The agent's last message ended with: The reader works again; next I will update "
            "the spool docs.\n"
            "Go on with the messages after this summary.\n\n"
            "## Focus\nNFC spool\n\n"
            "## Not shown (no room left)\n"
            "- 6 files read, 6 more commands run: entries 0–30 of the history"
        )
        assert tokens == 150

    def test_the_open_error_count_says_how_many_are_listed_and_where_the_rest_are(self) -> None:
        messages: list[Message] = [user("Make the build pass.")]
        for k in range(5):
            output = f"Exit code 2\nsrc/mod{k}.c:{k + 1}:3: error: unknown type name 'w{k}_t'"
            messages += [
                calls(call(f"c{k}", "Bash", command=f"make target{k}")),
                results((f"c{k}", output, True)),
            ]
        messages.append(assistant("Five targets fail."))
        text, tokens = _summarize(tuple(messages), 140, covered=(10, 40))
        assert text == (
            "## Goal\nMake the build pass.\n\n"
            "## Errors\n"
            "- open: src/mod2.c:3:3: error: unknown type name 'w2_t' — `make target2`\n"
            "- open: src/mod3.c:4:3: error: unknown type name 'w3_t' — `make target3`\n"
            "- open: src/mod4.c:5:3: error: unknown type name 'w4_t' — `make target4`\n\n"
            "## Next step\n"
            "The goal above was answered before this point (see Current work).\n"
            "Open errors to resolve: 5 (3 listed under Errors; 2 more in history entries "
            "10–40).\n"
            "Go on with the messages after this summary.\n\n"
            "## Not shown (no room left)\n"
            "- 2 more errors, 5 commands run: entries 10–40 of the history"
        )
        assert tokens == 140
        # with room for all of them, the count needs no note
        text, _ = _summarize(tuple(messages), 400, covered=(10, 40))
        assert "Open errors to resolve: 5 (listed under Errors).\n" in text
        assert text.count("\n- open: ") == 5


class TestUserMessagesShownElsewhere:
    def test_a_superseded_rule_or_the_request_the_next_step_quotes_is_not_repeated(self) -> None:
        messages = (
            user("Fix the parser."),
            assistant("Looking."),
            user("Always target Python 3.8."),
            assistant("Noted."),
            user("From now on you must target Python 3.11."),
            assistant("Noted."),
            user("Add a test for the tokenizer."),
            calls(call("t", "Bash", command="ls tests")),
            results(("t", "test_parser.py")),
            user("continue"),
        )
        text, _ = _summarize(messages)
        assert text == (
            "## Goal\nFix the parser.\n\n"
            "## Constraints\n- (superseded) Always target Python 3.8.\n"
            "- From now on you must target Python 3.11.\n\n"
            "## Identifiers\n- version: Python 3.11\n\n"
            "## Commands run\n- ls tests\n\n"
            "## Current work\nNoted.\n\n"
            "## Next step\n"
            'Latest user request (in progress): "continue", to go on with: Add a test for the '
            "tokenizer."
        )


def test_a_rule_the_kept_messages_replace_is_shown_superseded() -> None:
    messages = (
        user("Add retries to the client."),
        assistant("Will do."),
        user("Use axios for every HTTP call in the client."),
        assistant("Noted."),
    )
    later = ("Actually, use fetch instead of axios for the HTTP calls.",)
    request = SummaryRequest(
        messages, None, "Add retries to the client.", 400, later_user_messages=later
    )
    summary = SUMMARIZER.summarize(request, EST)
    constraints = summary.text.split("## Constraints\n", 1)[1].split("\n\n", 1)[0]
    # The replacing rule is not repeated: it is in the messages the state is sent with.
    assert constraints == "- (superseded) Use axios for every HTTP call in the client."
    assert [(r.text, r.status) for r in summary.ledgers.rules] == [
        ("Use axios for every HTTP call in the client.", "superseded")
    ]
    alone = SUMMARIZER.summarize(replace(request, later_user_messages=()), EST)
    assert "- Use axios for every HTTP call in the client." in alone.text
