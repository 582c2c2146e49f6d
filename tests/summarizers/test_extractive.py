"""The extractive summarizer: exact continuation state for small histories of each agent,
carry-over across compactions, and the token budget."""

from __future__ import annotations

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
    ledger_sections,
    real_user_texts,
)
from ctxengine.summarizers.sections import render

EST = QuarterEstimator()
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
            "## Errors\n- open: <tool_use_error>String to replace not found in file.\n\n"
            "## Commands run\n- pytest -q tests/test_auth.py\n\n"
            "## Current work\nFixed: login now returns the user. The test passes.\n\n"
            "## Next step\nNo later request: continue with the goal above."
        )
        assert tokens == 141

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
            " — `pytest -q`\n"
            "- fixed: 1 failed, 1 passed in 0.05s — `pytest -q`\n\n"
            "## Commands run\n- sed -n '1,120p' src/tool/cli.py\n- pytest -q\n\n"
            "## Current work\nThe flag is in place and both tests pass.\n\n"
            "## Next step\nNo later request: continue with the goal above."
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
            "## Next step\nNo later request: continue with the goal above."
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
            "## Next step\nNo later request: continue with the goal above."
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
            "## Errors\n- fixed: - E999 IndentationError: unexpected indent\n\n"
            "## Commands run\n- python reproduce.py\n- rm reproduce.py\n\n"
            "## Next step\nNo later request: continue with the goal above."
        )

    def test_a_failed_edit_is_not_listed_as_done_or_modified(self) -> None:
        text, _ = _summarize(claude_code_history())
        assert "/repo/src/db.py" not in text


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
        request = SummaryRequest(
            _second_range(), record, goal, 2_000, prior_user_messages=real_user_texts(first)
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
            "## Next step\nNow update the docs."
        )
        assert s2.ledgers == Ledgers(
            goal=goal,
            files_modified=("src/x.py", "docs/x.md"),
            constraints=("Never edit vendor/.", "必须保留旧名字作为别名。"),
            done=("edited src/x.py", "created docs/x.md"),
            files=(
                FileFact("src/x.py", "modified", 2, "edited"),
                FileFact("docs/x.md", "modified", 2, "created", True),
            ),
            rules=(
                RuleFact("Never edit vendor/.", "active", 0, "edit vendor"),
                RuleFact("必须保留旧名字作为别名。", "active", 3, "必须保留旧名字作为别名"),
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
    def test_newest_first_within_their_budget_with_the_overflowing_one_cut(self) -> None:
        msgs = tuple(user(t) for t in ("goal", "a" * 40, "b" * 40, "c" * 40, "latest"))
        summarizer = ExtractiveSummarizer(user_messages_budget=28)
        summary = summarizer.summarize(SummaryRequest(msgs, None, "goal", 500), EST)
        assert summary.text == (
            "## Goal\ngoal\n\n"
            "## User messages (newest first)\n"
            "- " + "c" * 40 + "\n"
            "- " + "b" * 40 + "\n"
            "- " + "a" * 8 + " [… 32 more characters]\n\n"
            "## Next step\nlatest"
        )

    def test_one_that_cannot_fit_even_cut_is_counted_as_not_shown(self) -> None:
        msgs = tuple(user(t) for t in ("goal", "a" * 40, "b" * 40, "c" * 40, "latest"))
        summarizer = ExtractiveSummarizer(user_messages_budget=25)
        summary = summarizer.summarize(SummaryRequest(msgs, None, "goal", 500), EST)
        assert summary.text == (
            "## Goal\ngoal\n\n"
            "## User messages (newest first)\n"
            "- " + "c" * 40 + "\n"
            "- " + "b" * 40 + "\n"
            "- (1 older message not shown)\n\n"
            "## Next step\nlatest"
        )


class TestBudget:
    @staticmethod
    def _history() -> tuple[Message, ...]:
        msgs: list[Message] = [user("Make the build green. Run the suite.")]
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

    def test_commands_go_first_keeping_the_newest(self) -> None:
        request = SummaryRequest(self._history(), None, "Make the build green. Run the suite.", 80)
        summary = SUMMARIZER.summarize(request, EST)
        assert summary.tokens == 79
        assert summary.notes == ("commands: 5 commands not shown",)
        assert summary.text == (
            "## Goal\nMake the build green. Run the suite.\n\n"
            "## Done\n- edited src/b.py\n\n"
            "## Files modified\n- src/b.py\n\n"
            "## Files read\n- src/a.py\n\n"
            "## Commands run\n"
            + "".join(f"- ls dir{i:02d}\n" for i in range(5, 12))
            + "- (5 earlier commands not shown)\n\n"
            "## Next step\nNo later request: continue with the goal above."
        )

    def test_at_the_floor_only_goal_and_modified_files_remain(self) -> None:
        request = SummaryRequest(self._history(), None, "Make the build green. Run the suite.", 20)
        summary = SUMMARIZER.summarize(request, EST)
        assert summary.tokens == 19
        assert summary.text == (
            "## Goal\nMake the build green. Run the suite.\n\n## Files modified\n- src/b.py"
        )

    def test_when_required_sections_cannot_fit_it_is_rejected(self) -> None:
        request = SummaryRequest(self._history(), None, "Make the build green. Run the suite.", 15)
        with pytest.raises(SummaryRejected) as info:
            SUMMARIZER.summarize(request, EST)
        assert info.value.reason == "over_budget"
        assert info.value.tokens_after == 19

    def test_a_goal_larger_than_the_budget_keeps_its_first_part_and_says_what_was_cut(
        self,
    ) -> None:
        goal = "".join(f"{i:04d} " for i in range(400))  # 2,000 characters
        summary = SUMMARIZER.summarize(SummaryRequest((user(goal),), None, goal, 200), EST)
        assert summary.text == (
            f"## Goal\n{goal[:694]}\n[… 1,306 more characters not shown]\n\n"
            "## Next step\nNo later request: continue with the goal above."
        )
        assert summary.tokens == 200
        assert summary.notes == ("goal: 1,306 characters cut",)

    def test_the_first_500_characters_of_the_goal_always_survive(self) -> None:
        goal = "".join(f"{i:04d} " for i in range(400))
        summary = SUMMARIZER.summarize(SummaryRequest((user(goal),), None, goal, 136), EST)
        assert summary.text == f"## Goal\n{goal[:500]}\n[… 1,500 more characters not shown]"
        assert summary.tokens == 136
        with pytest.raises(SummaryRejected):
            SUMMARIZER.summarize(SummaryRequest((user(goal),), None, goal, 135), EST)

    def test_modified_paths_are_grouped_by_directory_as_a_last_resort(self) -> None:
        msgs: list[Message] = [user("go")]
        for i in range(6):
            msgs += [
                calls(call(f"w{i}", "Write", file_path=f"src/pkg/m{i}.py", content="")),
                results((f"w{i}", "ok")),
            ]
        summary = SUMMARIZER.summarize(SummaryRequest(tuple(msgs), None, "go", 21), EST)
        assert summary.text == (
            "## Goal\ngo\n\n## Files modified\n- src/pkg/: m0.py, m1.py, m2.py, m3.py, m4.py, m5.py"
        )
        assert summary.notes[-1] == "files_modified: grouped by directory"


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
        assert summary.text == (
            "## Goal\nFix the bug.\n\n"
            "## Constraints\n- Don't use mocks.\n\n"
            "## Done\n- wrote t.py\n\n"
            "## Files modified\n- t.py\n\n"
            "## Current work\nWrote the test; running it next.\n\n"
            "## Next step\nNow add a test. Don't use mocks.\n\n"
            "## Turn context\n"
            "The verbatim messages after this summary continue a turn that began before it.\n"
            "That turn answers the request under Next step.\n"
            "Already done in that turn: wrote t.py.\n\n"
            "## Pinned\n- Release on Friday\n\n"
            "## Focus\nthe test"
        )
        assert summary.ledgers.pinned == ("Release on Friday",)

    def test_nothing_to_summarize_is_rejected(self) -> None:
        with pytest.raises(SummaryRejected) as info:
            SUMMARIZER.summarize(SummaryRequest((), None, "goal", 100), EST)
        assert info.value.reason == "empty"

    def test_a_non_positive_budget_is_refused(self) -> None:
        with pytest.raises(ValueError, match="budget_tokens"):
            SummaryRequest((), None, "", 0)


def test_ledger_sections_render_alone_for_the_hybrid_summarizer() -> None:
    ledgers = Ledgers(files_modified=("a.py",), errors=("boom",), pinned=("keep me",))
    assert render(ledger_sections(ledgers)) == (
        "## Files modified\n- a.py\n\n## Errors\n- boom\n\n## Pinned\n- keep me"
    )


def test_an_injected_block_passed_as_goal_or_prior_message_is_ignored() -> None:
    env = "<environment_context>\n  <cwd>/repo</cwd>\n</environment_context>"
    msgs = (user("Add a flag."), assistant("Added."))
    request = SummaryRequest(msgs, None, env, 500, prior_user_messages=(env,))
    summary = SUMMARIZER.summarize(request, EST)
    assert summary.ledgers.goal == "Add a flag."
    assert summary.text == (
        "## Goal\nAdd a flag.\n\n## Current work\nAdded.\n\n"
        "## Next step\nNo later request: continue with the goal above."
    )


@pytest.mark.parametrize("budget", [99, 120, 200, 400])
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


def test_under_the_default_estimator_the_required_sections_need_99_tokens() -> None:
    from ctxengine.tokens import HeuristicEstimator

    msgs = codex_history() + pi_history()
    request = SummaryRequest(msgs, None, real_user_texts(msgs)[0], 98)
    with pytest.raises(SummaryRejected) as info:
        SUMMARIZER.summarize(request, HeuristicEstimator())
    # the Codex session's working directory (/repo) makes every modified path absolute
    assert (info.value.reason, info.value.tokens_after) == ("over_budget", 99)


class TestGoalKeptWhole:
    def test_a_tight_budget_keeps_the_goal_whole_by_not_repeating_its_constraints(self) -> None:
        goal = (
            "Migrate the billing module to the new API. " * 12
            + "You must keep the old endpoints working. Never delete the audit table."
        )
        history = (user(goal), assistant("Looking at the billing module."), user("go on"))
        full, full_tokens = _summarize(history, budget=5_000)
        assert "## Constraints\n- You must keep the old endpoints working." in full
        found = None
        for budget in range(full_tokens - 1, 0, -1):
            try:
                text, _tokens = _summarize(history, budget=budget)
            except SummaryRejected:
                break
            if goal not in text:
                break
            found = (budget, text)
        assert found is not None
        budget, text = found
        assert budget < full_tokens
        assert goal in text
        # at the tightest budget that keeps the goal whole, its constraints are not repeated
        assert text.count("You must keep the old endpoints working.") == 1


def test_ledger_sections_show_rule_error_file_and_identifier_facts() -> None:
    ledgers = Ledgers(
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
    )
    assert render(ledger_sections(ledgers)) == (
        "## Constraints\n- (superseded) Always target Python 3.8.\n- Never push.\n- Use tabs.\n\n"
        "## Files modified\n- old.py\n- /r/a.py\n\n"
        "## Scratch files (backups, temporary files, helper scripts)\n- /r/fix.py\n\n"
        "## Files read\n- /r/b.py\n\n"
        "## Errors\n- Exit code 1\n- fixed: FAILED t.py::a - x\n"
        "- open: KeyError: 'x' — at File \"/r/a.py\", line 3 — `python t.py`\n\n"
        "## Identifiers\n- port: localhost:8080"
    )


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
        ledgers=Ledgers(goal="go", error_facts=facts, identifiers=ids),
    )
    request = SummaryRequest((user("go"), assistant("ok")), previous, "go", 80)
    summary = SUMMARIZER.summarize(request, EST)
    assert summary.notes == (
        "identifiers: 20 identifiers not shown",
        "errors: 2 errors not shown",
    )
    assert summary.text == (
        "## Goal\ngo\n\n"
        "## Errors\n- fixed: E2: boom number 2 — `make`\n- open: E3: boom number 3 — `make`\n"
        "- open: E4: boom number 4 — `make`\n- (2 earlier errors not shown)\n\n"
        "## Identifiers\n- (20 earlier identifiers not shown)\n\n"
        "## Current work\nok\n\n"
        "## Next step\nNo later request: continue with the goal above."
    )
