"""The durable-state items of ``ladder/reinject.py`` on hand-built histories: which injected
messages carry rules, the todo list of the newest todo call, the background tasks still
running, the collapse of what the kept tail shows, and ``fit()``."""

from __future__ import annotations

from typing import Any

from ladder_helpers import EST, call

from ctxengine.ladder.reinject import (
    BACKGROUND_ITEM,
    TODO_RAW_ITEM,
    DurableItem,
    RunningTask,
    background_item,
    durable_items,
    fit,
    item_label,
    rules_items,
    running_tasks,
    todo_item,
)
from ctxengine.model import Message, TextPart, ToolCallPart, ToolResultPart
from ctxengine.policy import Policy
from ctxengine.projection.injection import is_rules_message, rules_file, rules_text

CLAUDE_RULES = (
    "<system-reminder>\nContents of /repo/CLAUDE.md (project instructions, checked into the "
    "codebase):\n\nAlways run the tests.\n</system-reminder>"
)
CODEX_RULES = "# AGENTS.md instructions for /repo\n\n<INSTRUCTIONS>\nUse uv.\n</INSTRUCTIONS>"


def user(text: str, **meta: Any) -> Message:
    return Message("user", (TextPart(text),), meta=meta)


def calling(cid: str, name: str, **args: Any) -> Message:
    return Message("assistant", (call(cid, name, **args),))


def answer(cid: str, text: str, *, is_error: bool = False) -> Message:
    return Message("tool", (ToolResultPart(cid, (TextPart(text),), is_error=is_error),))


class TestRules:
    def test_which_injected_messages_carry_rules(self) -> None:
        assert is_rules_message(user(CLAUDE_RULES))
        assert is_rules_message(user(CODEX_RULES))
        assert is_rules_message(user("<user_instructions>\nBe brief.\n</user_instructions>"))
        claude_md = "<system-reminder>\n# claudeMd\nCodebase instructions.\n</system-reminder>"
        assert is_rules_message(user(claude_md))
        # Mentions only: a listing, a hint, a file read; and what a person typed.
        assert not is_rules_message(user("<system-reminder>\nAGENTS.md\nsrc/\n</system-reminder>"))
        assert not is_rules_message(
            user("<system-reminder>\nsuch as a CLAUDE.md or memory rule\n</system-reminder>")
        )
        assert not is_rules_message(user("Contents of /repo/CLAUDE.md: please fix it"))
        assert not is_rules_message(user("Contents of /repo/CLAUDE.md.bak", isMeta=True))
        assert not is_rules_message(answer("r1", CLAUDE_RULES))

    def test_a_persons_message_with_a_rules_part_gives_that_part_alone(self) -> None:
        request = "Please refactor the billing module to use Decimal."
        both = Message("user", (TextPart(CLAUDE_RULES), TextPart(request)))
        assert rules_text(both) == CLAUDE_RULES
        assert is_rules_message(both)
        assert rules_items([both]) == [CLAUDE_RULES]
        # The same rules sent on their own in the kept tail: not re-injected again.
        assert rules_items([both], kept=[user(CLAUDE_RULES)]) == []
        assert rules_text(user(request)) is None
        assert rules_text(user(CODEX_RULES)) == CODEX_RULES

    def test_the_rules_file_a_block_carries(self) -> None:
        assert rules_file(CLAUDE_RULES) == "/repo/CLAUDE.md"
        assert rules_file(CODEX_RULES) == "/repo/AGENTS.md"
        assert rules_file("# AGENTS.md\n\nUse uv.") == "AGENTS.md"
        assert rules_file("Contents of CLAUDE.local.md (user's private instructions)") == (
            "CLAUDE.local.md"
        )
        assert rules_file("<system-reminder>\n# claudeMd\nBe brief.\n</system-reminder>") is None
        assert item_label("rules", CLAUDE_RULES) == "re-injected rules /repo/CLAUDE.md"
        assert item_label("rules", "<user_instructions>x</user_instructions>") == (
            "re-injected rules"
        )
        assert item_label("todos", CLAUDE_RULES) == "re-injected todo list"

    def test_each_rules_text_once_less_what_the_tail_shows(self) -> None:
        left = [user(CLAUDE_RULES), user("task"), user(CODEX_RULES), user(CLAUDE_RULES)]
        assert rules_items(left) == [CLAUDE_RULES, CODEX_RULES]
        assert rules_items(left, kept=[user(CODEX_RULES)]) == [CLAUDE_RULES]


class TestTodos:
    def test_the_newest_call_wins_and_a_newer_one_in_the_tail_is_left_to_it(self) -> None:
        old = calling("t1", "TodoWrite", todos=[{"content": "a", "status": "pending"}])
        new = calling(
            "t2",
            "todowrite",  # OpenCode
            todos=[
                {"content": "a", "status": "completed", "priority": "high", "id": "1"},
                {"content": "b", "status": "in_progress", "priority": "low", "id": "2"},
                {"content": "c", "status": "cancelled", "priority": "low", "id": "3"},
            ],
        )
        assert todo_item([old, new]) == (
            "The todo list (from the latest todowrite call before the compaction): 1 of 3 items "
            "open; 2 done, not listed. Keep it up to date with todowrite:\n- [in_progress] b"
        )
        assert todo_item([old], kept=[new]) is None

    def test_a_finished_list_and_unreadable_arguments(self) -> None:
        done = calling("t1", "update_plan", plan=[{"step": "a", "status": "completed"}])
        assert todo_item([done]) is None
        raw = Message("assistant", (ToolCallPart("t2", "TodoWrite", "- [ ] a"),))
        assert todo_item([raw]) == TODO_RAW_ITEM.format(tool="TodoWrite", arguments="- [ ] a")
        no_status = calling("t3", "write_todos", todos=[{"description": "a"}, "b"])
        assert todo_item([no_status]) == (
            "The todo list (from the latest write_todos call before the compaction): 2 of 2 "
            "items open. Keep it up to date with write_todos:\n- [pending] a\n- [pending] b"
        )


class TestBackground:
    def test_codex_unified_exec_sessions(self) -> None:
        history = [
            calling("e1", "exec_command", cmd="npm run dev", yield_time_ms=1000),
            answer(
                "e1", "Chunk ID: 1\nWall time: 1.0 seconds\nProcess running with session ID 7\n"
            ),
            calling("e2", "exec_command", cmd="pytest", yield_time_ms=1000),
            answer("e2", "Chunk ID: 2\nProcess running with session ID 9\nOutput:\n"),
            calling("e3", "write_stdin", session_id=9, chars=""),
            answer("e3", "Chunk ID: 3\nProcess exited with code 0\nOutput:\n5 passed"),
        ]
        assert running_tasks(history) == [
            RunningTask("shell", "7", "exec_command", "npm run dev", 1, True)
        ]

    def test_polls_stops_errors_and_subagents_without_a_result(self) -> None:
        history = [
            calling("b1", "Bash", command="make watch", run_in_background=True),
            answer("b1", "Command running in background with ID: bash_1"),
            calling("b2", "Bash", command="make test", run_in_background=True),
            answer("b2", "Command running in background with ID: bash_2"),
            calling("b3", "Bash", command="make serve", run_in_background=True),
            answer("b3", "Command running in background with ID: bash_3"),
            calling("b4", "Bash", command="false", run_in_background=True),
            answer("b4", "Command running in background with ID: bash_4", is_error=True),
            calling("p1", "BashOutput", bash_id="bash_2"),
            answer("p1", "<status>completed</status>\n\n<exit_code>0</exit_code>"),
            calling("k1", "KillBash", shell_id="bash_3"),
            answer("k1", "Shell bash_3 killed"),
            calling("r1", "Read", file_path="/notes.md"),  # not a shell: its text is data
            answer("r1", "Command running in background with ID: bash_9"),
            Message(
                "assistant",
                (
                    call("s1", "Task", description="Review the diff", prompt="Review."),
                    call("s2", "Task", description="Write docs", prompt="Docs."),
                ),
            ),
            answer("s2", "Docs written."),
        ]
        tasks = running_tasks(history)
        assert [(t.kind, t.id, t.label) for t in tasks] == [
            ("shell", "bash_1", "make watch"),
            ("subagent", "s1", "Review the diff"),
        ]
        assert background_item(history) == BACKGROUND_ITEM.format(
            tasks="- shell bash_1 (Bash): make watch\n- subagent s1 (Task): Review the diff"
        )
        # Started in the kept tail: it shows there; finished in the tail: not running.
        assert running_tasks(history[:2], kept=history[2:4]) == [tasks[0]]
        stop = [calling("k2", "KillShell", shell_id="bash_1"), answer("k2", "killed")]
        assert running_tasks(history[:2], kept=stop) == []

    def test_a_long_command_is_shown_on_one_line_within_the_limit(self) -> None:
        command = "python -m http.server \\\n  " + "x" * 300
        history = [
            calling("b1", "Bash", command=command, run_in_background=True),
            answer("b1", "Command running in background with ID: b1x"),
        ]
        (task,) = running_tasks(history)
        assert len(task.label) == 200 and task.label.endswith("…")
        assert task.label.startswith("python -m http.server \\ xxx")


class TestFit:
    def test_required_items_always_then_the_others_in_order(self) -> None:
        items = [
            DurableItem("rules", "R", 50),
            DurableItem("plan", "P", 40),
            DurableItem("files", "F", 100, "f", 10),
            DurableItem("files", None, 0, "g", 10),
            DurableItem("todos", "T", 30),
        ]
        assert fit(items, None, 10_000).texts == ("R", "P", "F", "g", "T")
        assert fit(items, 60, 10_000).texts == ("R", "P", "f", "g", "T")
        assert fit(items, 0, 10_000).texts == ("R", "T")
        # The whole state within max_tokens: 80 required, 40 left.
        state = fit(items, None, 120)
        assert state.texts == ("R", "P", "T")
        assert (state.tokens, state.required_tokens) == (120, 80)
        assert state.by_kind() == {"rules": 50, "plan": 40, "todos": 30}
        assert state.by_kind(required=True) == {"rules": 50, "todos": 30}

    def test_durable_items_follow_the_policy(self) -> None:
        history = [
            user(CLAUDE_RULES),
            calling("t1", "TodoWrite", todos=[{"content": "a", "status": "pending"}]),
            answer("t1", "ok"),
        ]
        assert [i.kind for i in durable_items(history, Policy(), EST)] == ["rules", "todos"]
        assert durable_items(history, Policy(reinject=()), EST) == ()
        assert [i.kind for i in durable_items(history, Policy(reinject=("todos",)), EST)] == [
            "todos"
        ]
        (rules,) = durable_items(history, Policy(reinject=("rules",)), EST)
        assert rules.tokens == EST.message(user(CLAUDE_RULES)) and rules.required
