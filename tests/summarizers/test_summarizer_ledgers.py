"""Ledgers from each agent's tool vocabulary: exact files, steps, errors and commands."""

from __future__ import annotations

from summarizer_helpers import (
    call,
    calls,
    claude_code_history,
    codex_history,
    openhands_history,
    pi_history,
    results,
    swe_agent_history,
)

from ctxengine.model import ErrorFact, FileFact, Ledgers, RuleFact, user
from ctxengine.summarizers.ledgers import extract_ledgers, shell_command


def test_claude_code() -> None:
    assert extract_ledgers(claude_code_history(), "goal") == Ledgers(
        goal="goal",
        files_read=(),
        files_modified=("/repo/src/auth.py", "/repo/tests/test_auth.py"),
        constraints=("Don't touch the database schema.",),
        errors=("<tool_use_error>String to replace not found in file.",),
        commands=("pytest -q tests/test_auth.py",),
        done=(
            "edited /repo/src/auth.py",
            "created /repo/tests/test_auth.py",
            "ran `pytest -q tests/test_auth.py` (succeeded)",
        ),
        error_facts=(
            ErrorFact(
                "<tool_use_error>String to replace not found in file.",
                "open",
                6,
                "Edit(/repo/src/db.py)",
            ),
        ),
        files=(
            FileFact("/repo/src/auth.py", "modified", 8, "edited"),
            FileFact("/repo/tests/test_auth.py", "modified", 8, "created", True),
        ),
        rules=(
            RuleFact(
                "Don't touch the database schema.",
                "active",
                0,
                "database schema touch",
                head="database schema touch",
            ),
        ),
        passed=(
            "cmd:Edit(/repo/src/auth.py)",
            "cmd:Write(/repo/tests/test_auth.py)",
            "cmd:pytest -q tests/test_auth.py",
            "test:tests/test_auth.py",
        ),
    )


def test_codex_shell_and_apply_patch() -> None:
    failed = ErrorFact(
        "FAILED tests/test_cli.py::test_verbose - AssertionError: assert 0 == 1",
        "fixed",
        7,
        "pytest -q",
        "tests/test_cli.py::test_verbose",
        runner="pytest",
        fixed_by=11,
    )
    assert extract_ledgers(codex_history()) == Ledgers(
        files_read=(),
        files_modified=("/repo/src/tool/cli.py", "/repo/tests/test_cli.py"),
        constraints=("Only change cli.py and its tests.",),
        errors=(failed.text,),
        commands=("sed -n '1,120p' src/tool/cli.py", "pytest -q"),
        done=(
            "edited /repo/src/tool/cli.py",
            "created /repo/tests/test_cli.py",
            "ran `pytest -q` (succeeded)",
        ),
        error_facts=(failed,),
        files=(
            FileFact("/repo/src/tool/cli.py", "modified", 9, "edited"),
            FileFact("/repo/tests/test_cli.py", "modified", 5, "created", True),
        ),
        rules=(
            RuleFact(
                "Only change cli.py and its tests.",
                "active",
                1,
                "cli.py tests",
                head="cli.py tests",
            ),
        ),
        cwd="/repo",
        passed=(
            "cmd:sed -n '1,120p' src/tool/cli.py",
            "cmd:shell(/repo/src/tool/cli.py /repo/tests/test_cli.py)",
            "rerun:pytest -q",
            "cmd:apply_patch(/repo/src/tool/cli.py)",
            "cmd:pytest -q",
            "suite:pytest",
        ),
    )


def test_pi() -> None:
    assert extract_ledgers(pi_history()) == Ledgers(
        files_read=("src/theme/theme.ts",),
        files_modified=("src/theme/loader.ts", "src/tui/app.ts"),
        constraints=("Never use chalk directly; always go through theme.ts.",),
        errors=(
            "Could not find the exact text in src/tui/app.ts.",
            "src/tui/app.ts(3,1): error TS2304: Cannot find name 'chalk'.",
        ),
        commands=("npm run check",),
        done=(
            "wrote src/theme/loader.ts",
            "edited src/tui/app.ts",
            "ran `npm run check` (succeeded)",
        ),
        error_facts=(
            ErrorFact(
                "Could not find the exact text in src/tui/app.ts.",
                "fixed",
                6,
                "edit(src/tui/app.ts)",
                fixed_by=10,
            ),
            ErrorFact(
                "src/tui/app.ts(3,1): error TS2304: Cannot find name 'chalk'.",
                "fixed",
                8,
                "npm run check",
                fixed_by=12,
            ),
        ),
        files=(
            FileFact("src/theme/theme.ts", "read", 2, "read"),
            FileFact("src/theme/loader.ts", "modified", 4, "wrote", True),
            FileFact("src/tui/app.ts", "modified", 10, "edited"),
        ),
        rules=(
            RuleFact(
                "Never use chalk directly; always go through theme.ts.",
                "active",
                0,
                "chalk directly theme.ts through",
                head="chalk directly",
            ),
        ),
        passed=(
            "cmd:write(src/theme/loader.ts)",
            "rerun:npm run check",
            "cmd:edit(src/tui/app.ts)",
            "cmd:npm run check",
        ),
    )


def test_openhands() -> None:
    ledgers = extract_ledgers(openhands_history())
    assert ledgers.errors == ("ModuleNotFoundError: No module named 'keyboard'",)
    assert ledgers.error_facts == (
        ErrorFact(
            "ModuleNotFoundError: No module named 'keyboard'",
            "open",
            6,
            "python3 /workspace/game.py --headless",
            where='File "/workspace/game.py", line 2, in <module>',
        ),
    )
    assert ledgers.files == (FileFact("/workspace/game.py", "modified", 8, "edited", True),)
    assert ledgers.files_modified == ("/workspace/game.py",)
    assert ledgers.done == (
        "created /workspace/game.py",
        "edited /workspace/game.py",
        "ran `python3 -m pytest -q /workspace` (succeeded)",
    )


def test_swe_agent_edits_the_open_file_and_its_created_then_deleted_script_is_scratch() -> None:
    ledgers = extract_ledgers(swe_agent_history())
    assert ledgers.files == (
        FileFact("src/marshmallow/fields.py", "modified", 14, "edited"),
        FileFact("reproduce.py", "scratch", 16, "deleted", True),
    )
    assert ledgers.files_modified == ("src/marshmallow/fields.py",)
    assert ledgers.error_facts == (
        ErrorFact(
            "- E999 IndentationError: unexpected indent",
            "fixed",
            12,
            "edit(src/marshmallow/fields.py)",
            fixed_by=14,
        ),
    )
    assert ledgers.done == (
        "created reproduce.py",
        "edited reproduce.py",
        "edited src/marshmallow/fields.py",
        "deleted reproduce.py",
    )


def test_swe_agent_text_commands_through_a_shell_tool() -> None:
    msgs = (
        calls(call("a", "bash", command="open tests/missing_colon.py\n")),
        results(("a", "[File: /repo/tests/missing_colon.py (10 lines total)]")),
        calls(call("b", "bash", command="edit 3:3\n    def x():\nend_of_edit\n")),
        results(("b", "[File: /repo/tests/missing_colon.py (10 lines total)]\n3:    def x():")),
    )
    ledgers = extract_ledgers(msgs)
    assert ledgers.files_modified == ("tests/missing_colon.py",)
    assert ledgers.done == ("edited tests/missing_colon.py",)
    assert ledgers.files_read == ()


def test_an_edit_of_an_unknown_open_file_takes_the_path_from_the_result_header() -> None:
    msgs = (
        calls(call("b", "edit", search="a", replace="b")),
        results(("b", "[File: /repo/x.py (10 lines total)]\n3: b")),
    )
    assert extract_ledgers(msgs).files_modified == ("/repo/x.py",)


class TestOnlySuccessfulStepsCount:
    def test_a_failed_edit_is_neither_modified_nor_done(self) -> None:
        msgs = (
            calls(call("e1", "Edit", file_path="a.py", old_string="x", new_string="y")),
            results(("e1", "<tool_use_error>File has not been read yet.</tool_use_error>", True)),
        )
        ledgers = extract_ledgers(msgs)
        assert ledgers.files_modified == ()
        assert ledgers.done == ()
        assert ledgers.errors == ("<tool_use_error>File has not been read yet.</tool_use_error>",)

    def test_a_call_without_a_result_counts_as_not_done(self) -> None:
        msgs = (calls(call("e1", "Write", file_path="a.py", content="x")),)
        assert extract_ledgers(msgs) == Ledgers()

    def test_a_failed_read_is_not_a_read(self) -> None:
        msgs = (
            calls(call("r1", "Read", file_path="missing.py")),
            results(("r1", "File does not exist.", True)),
        )
        ledgers = extract_ledgers(msgs)
        assert ledgers.files_read == ()
        assert ledgers.errors == ("File does not exist.",)

    def test_a_failing_test_run_is_an_error_not_a_done_step(self) -> None:
        msgs = (
            calls(call("b1", "bash", command="python -m pytest -q")),
            results(("b1", "F\nFAILED t.py::test_x - assert 1 == 2\n1 failed in 0.01s")),
        )
        ledgers = extract_ledgers(msgs)
        assert ledgers.done == ()
        assert ledgers.errors == ("FAILED t.py::test_x - assert 1 == 2",)


def test_reads_exclude_modified_paths_and_search_tools_are_not_reads() -> None:
    msgs = (
        user("go"),
        calls(
            call("a", "Read", file_path="a.py"),
            call("b", "Glob", pattern="**/*.py"),
            call("c", "Bash", command="cat b.py c.py && grep -rn x ."),
        ),
        results(("a", "x"), ("b", "a.py\nb.py"), ("c", "x")),
        calls(call("d", "Bash", command="sed -i 's/x/y/' b.py")),
        results(("d", "")),
    )
    ledgers = extract_ledgers(msgs)
    assert ledgers.files_read == ("a.py", "c.py")
    assert ledgers.files_modified == ("b.py",)
    assert ledgers.done == ("edited b.py",)


def test_long_commands_are_capped_and_patches_are_not_commands() -> None:
    long = "echo " + "x" * 300
    msgs = (
        calls(call("a", "Bash", command=long)),
        results(("a", "x")),
        calls(
            call(
                "b",
                "shell",
                command=[
                    "bash",
                    "-lc",
                    "apply_patch <<'P'\n*** Begin Patch\n"
                    "*** Add File: n.txt\n+hi\n*** End Patch\nP",
                ],
            )
        ),
        results(("b", "Done")),
    )
    ledgers = extract_ledgers(msgs)
    assert ledgers.commands == (long[:199] + "…",)
    assert ledgers.files_modified == ("n.txt",)


def test_shell_command_forms() -> None:
    assert shell_command(call("a", "shell", command=["bash", "-lc", "ls -la"])) == "ls -la"
    assert shell_command(call("a", "shell", command=["git", "commit", "-m", "two words"])) == (
        "git commit -m 'two words'"
    )
    assert shell_command(call("a", "exec_command", cmd="make")) == "make"
    assert shell_command(call("a", "Read", file_path="x")) is None


def test_a_check_named_only_inside_a_heredoc_body_is_not_a_check_and_done_shows_line_one() -> None:
    patch_then_ls = (
        "apply_patch <<'P'\n*** Begin Patch\n*** Add File: t.py\n+import pytest\n"
        "*** End Patch\nP\nls"
    )
    commit = "git commit -m \"$(cat <<'EOF'\nfix: x\nEOF\n)\""
    msgs = (
        calls(call("a", "Bash", command=patch_then_ls)),
        results(("a", "ok")),
        calls(call("b", "Bash", command=commit)),
        results(("b", "[main 1a2b3c] fix: x")),
    )
    assert extract_ledgers(msgs).done == (
        "created t.py",
        "ran `git commit -m \"$(cat <<'EOF' …` (succeeded)",
    )


REJECTED = (
    "The user doesn't want to proceed with this tool use. The tool use was rejected (eg. if "
    "it was a file edit, the new_string was NOT written to the file). STOP what you are "
    "doing and wait for the user to tell you how to proceed."
)


def test_a_call_the_user_declined_is_a_decision_not_an_error() -> None:
    msgs = (
        user("go"),
        calls(
            call("e1", "Edit", file_path="/repo/a.py", old_string="x", new_string="y"),
            call("b1", "Bash", command="git push --force"),
            call("g1", "Glob", pattern="**/*.ex"),
        ),
        results(("e1", REJECTED, True), ("b1", REJECTED, True), ("g1", REJECTED, True)),
    )
    ledgers = extract_ledgers(msgs)
    assert ledgers.error_facts == ()
    assert ledgers.files_modified == ()
    assert ledgers.commands == ()
    assert ledgers.done == (
        "declined by the user: `Edit(/repo/a.py)` (not run)",
        "declined by the user: `git push --force` (not run)",
        "declined by the user: `Glob` (not run)",
    )
