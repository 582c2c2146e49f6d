"""Builders and a tiny exact estimator for the summarizer tests."""

from __future__ import annotations

import json
from collections.abc import Mapping, Sequence
from typing import Any

from ctxengine.model import Message, Part, TextPart, ToolCallPart, ToolResultPart


class QuarterEstimator:
    """One token per started 4 characters: easy to compute by hand in a test."""

    def text(self, text: str) -> int:
        return (len(text) + 3) // 4

    def part(self, part: Part) -> int:
        return self.text(getattr(part, "text", "") or "")

    def message(self, message: Message) -> int:
        return 4 + sum(self.part(p) for p in message.parts)

    def tools(self, schemas: Sequence[Mapping[str, Any]]) -> int:
        return self.text(json.dumps(list(schemas)))


def call(call_id: str, name: str, **arguments: Any) -> ToolCallPart:
    """A tool call whose arguments are the keyword arguments as JSON."""
    return ToolCallPart(call_id, name, json.dumps(arguments))


def calls(*parts: ToolCallPart, text: str = "") -> Message:
    """An assistant message with optional text and the given calls."""
    head: tuple[Part, ...] = (TextPart(text),) if text else ()
    return Message("assistant", head + parts)


def results(*items: tuple[str, str] | tuple[str, str, bool]) -> Message:
    """A tool message: each item is (call id, text[, is_error])."""
    parts = tuple(
        ToolResultPart(i[0], (TextPart(i[1]),), is_error=bool(i[2]) if len(i) > 2 else False)
        for i in items
    )
    return Message("tool", parts)


def raw_call(call_id: str, name: str, arguments: str) -> ToolCallPart:
    """A tool call with arguments kept as given (e.g. a Codex custom tool's raw input)."""
    return ToolCallPart(call_id, name, arguments)


def codex_output(output: str, exit_code: int) -> str:
    """Codex's JSON envelope around a shell output."""
    return json.dumps(
        {"output": output, "metadata": {"exit_code": exit_code, "duration_seconds": 0.1}}
    )


def claude_code_history() -> tuple[Message, ...]:
    """Read, a failed Edit, a good Edit, Write, a Grep, a passing Bash test run."""
    return (
        Message(
            "user",
            (TextPart("Fix the login bug in src/auth.py. Don't touch the database schema."),),
        ),
        calls(call("t1", "Read", file_path="/repo/src/auth.py"), text="Reading the module."),
        results(("t1", "     1\tdef login(user):\n     2\t    return None")),
        calls(call("t2", "Grep", pattern="login", path="/repo/src")),
        results(("t2", "Found 2 files\n/repo/src/auth.py\n/repo/src/views.py")),
        calls(call("t3", "Edit", file_path="/repo/src/db.py", old_string="x", new_string="y")),
        results(
            (
                "t3",
                "<tool_use_error>String to replace not found in file.\nString: x</tool_use_error>",
                True,
            )
        ),
        calls(
            call("t4", "Edit", file_path="/repo/src/auth.py", old_string="None", new_string="user"),
            call("t5", "Write", file_path="/repo/tests/test_auth.py", content="def test(): pass\n"),
        ),
        results(
            ("t4", "The file /repo/src/auth.py has been updated. Here's the result..."),
            ("t5", "File created successfully at: /repo/tests/test_auth.py"),
        ),
        calls(call("t6", "Bash", command="pytest -q tests/test_auth.py", description="Run tests")),
        results(("t6", "1 passed in 0.02s")),
        Message("assistant", (TextPart("Fixed: login now returns the user. The test passes."),)),
    )


def codex_history() -> tuple[Message, ...]:
    """Codex shell reads, apply_patch as argv and as a custom tool, a failing then passing run."""
    patch = (
        "*** Begin Patch\n*** Update File: src/tool/cli.py\n@@\n-a\n+b\n"
        "*** Add File: tests/test_cli.py\n+def test_verbose(): pass\n*** End Patch\n"
    )
    failed = (
        "failed in sandbox LinuxSeccomp with execution error: sandbox denied exec error, "
        "exit code: 1, "
        "stdout: F.\nFAILED tests/test_cli.py::test_verbose - AssertionError: assert 0 == 1\n"
        "1 failed, 1 passed in 0.05s\n, stderr: "
    )
    return (
        Message(
            "user", (TextPart("<environment_context>\n  <cwd>/repo</cwd>\n</environment_context>"),)
        ),
        Message(
            "user",
            (TextPart("Add a --verbose flag to the CLI. Only change cli.py and its tests."),),
        ),
        calls(call("s1", "shell", command=["bash", "-lc", "sed -n '1,120p' src/tool/cli.py"])),
        results(("s1", codex_output("import argparse\n", 0))),
        calls(call("s2", "shell", command=["apply_patch", patch])),
        results(
            (
                "s2",
                codex_output(
                    "Success. Updated the following files:\n"
                    "M src/tool/cli.py\nA tests/test_cli.py\n",
                    0,
                ),
            )
        ),
        calls(call("s3", "shell", command=["bash", "-lc", "pytest -q"])),
        results(("s3", failed)),
        calls(
            raw_call(
                "s4",
                "apply_patch",
                "*** Begin Patch\n*** Update File: src/tool/cli.py\n@@\n-b\n+c\n*** End Patch",
            )
        ),
        results(
            ("s4", codex_output("Success. Updated the following files:\nM src/tool/cli.py\n", 0))
        ),
        calls(call("s5", "exec_command", cmd="pytest -q")),
        results(("s5", codex_output("2 passed in 0.04s\n", 0))),
        Message("assistant", (TextPart("The flag is in place and both tests pass."),)),
    )


def pi_history() -> tuple[Message, ...]:
    """pi read/write/edit/bash with a failed edit and a failed type check."""
    return (
        Message(
            "user",
            (
                TextPart(
                    "Port the theme loader. Never use chalk directly; always go through theme.ts."
                ),
            ),
        ),
        calls(call("p1", "read", path="src/theme/theme.ts")),
        results(("p1", "export const theme = {};")),
        calls(call("p2", "write", path="src/theme/loader.ts", content="export {};")),
        results(("p2", "Successfully wrote 10 bytes to src/theme/loader.ts")),
        calls(call("p3", "edit", path="src/tui/app.ts", oldText="a", newText="b")),
        results(("p3", "Could not find the exact text in src/tui/app.ts.", True)),
        calls(call("p4", "bash", command="npm run check")),
        results(
            (
                "p4",
                "src/tui/app.ts(3,1): error TS2304: Cannot find name 'chalk'.\n\n\n"
                "Command exited with code 2",
                True,
            )
        ),
        calls(call("p5", "edit", path="src/tui/app.ts", oldText="chalk", newText="theme")),
        results(("p5", "Successfully replaced text in src/tui/app.ts.")),
        calls(call("p6", "bash", command="npm run check")),
        results(("p6", "ok")),
        Message("assistant", (TextPart("The loader is ported and the check is clean."),)),
    )


def openhands_history() -> tuple[Message, ...]:
    """OpenHands str_replace_editor and execute_bash."""
    tb = (
        'Traceback (most recent call last):\n  File "/workspace/game.py", line 2, in <module>\n'
        "    import keyboard\nModuleNotFoundError: No module named 'keyboard'\n"
        "[Command finished with exit code 1]"
    )
    return (
        Message(
            "user",
            (
                TextPart(
                    "Create a 2048 game in /workspace/game.py. Make sure it runs without a display."
                ),
            ),
        ),
        calls(call("o1", "str_replace_editor", command="view", path="/workspace")),
        results(
            (
                "o1",
                "Here's the files and directories up to 2 levels deep in /workspace, "
                "excluding hidden items:\n/workspace/",
            )
        ),
        calls(
            call(
                "o2",
                "str_replace_editor",
                command="create",
                path="/workspace/game.py",
                file_text="import keyboard\n",
            )
        ),
        results(("o2", "File created successfully at: /workspace/game.py")),
        calls(call("o3", "execute_bash", command="python3 /workspace/game.py --headless")),
        results(("o3", tb)),
        calls(
            call(
                "o4",
                "str_replace_editor",
                command="str_replace",
                path="/workspace/game.py",
                old_str="import keyboard\n",
                new_str="",
            )
        ),
        results(
            (
                "o4",
                "The file /workspace/game.py has been edited. "
                "Here's the result of running `cat -n`...",
            )
        ),
        calls(call("o5", "execute_bash", command="python3 -m pytest -q /workspace")),
        results(("o5", "1 passed in 0.01s\n[Command finished with exit code 0]")),
        calls(call("o6", "finish", message="done")),
        results(("o6", "")),
    )


def swe_agent_history() -> tuple[Message, ...]:
    """SWE-agent function calls: open/create/insert on the open file, a rejected edit, rm."""
    return (
        Message(
            "user",
            (TextPart("TimeDelta serialization rounds down. You must not change the public API."),),
        ),
        calls(call("w1", "open", path="src/marshmallow/fields.py", line_number=1474)),
        results(
            (
                "w1",
                "[File: /repo/src/marshmallow/fields.py (1997 lines total)]\n"
                "(1456 more lines above)",
            )
        ),
        calls(call("w2", "create", filename="reproduce.py")),
        results(("w2", "[File: /repo/reproduce.py (1 lines total)]\n1:")),
        calls(call("w3", "insert", text="print(1)\n")),
        results(("w3", "[File: /repo/reproduce.py (2 lines total)]\n1:print(1)")),
        calls(call("w4", "bash", command="python reproduce.py")),
        results(("w4", "344")),
        calls(call("w5", "open", path="src/marshmallow/fields.py")),
        results(("w5", "[File: /repo/src/marshmallow/fields.py (1997 lines total)]")),
        calls(call("w6", "edit", search="return int(x)", replace="  return round(x)")),
        results(
            (
                "w6",
                "Your proposed edit has introduced new syntax error(s). Please understand the "
                "fixes and retry your edit command.\n\nERRORS:\n"
                "- E999 IndentationError: unexpected indent",
            )
        ),
        calls(call("w7", "edit", search="return int(x)", replace="return int(round(x))")),
        results(
            (
                "w7",
                "[File: /repo/src/marshmallow/fields.py (1997 lines total)]\n"
                "1475:        return int(round(x))",
            )
        ),
        calls(call("w8", "bash", command="rm reproduce.py")),
        results(("w8", "")),
        calls(call("w9", "submit")),
        results(("w9", "diff --git a/src/marshmallow/fields.py b/src/marshmallow/fields.py")),
    )
