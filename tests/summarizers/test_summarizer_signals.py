"""Failure detection and error-line choice on tool results as each agent writes them."""

from __future__ import annotations

import pytest

from ctxengine.model import TextPart, ToolResultPart
from ctxengine.summarizers.signals import exit_code, result_failed, result_text


def _result(text: str, is_error: bool = False) -> ToolResultPart:
    return ToolResultPart("c1", (TextPart(text),), is_error=is_error)


@pytest.mark.parametrize(
    ("text", "is_error", "failed"),
    [
        ("anything", True, True),
        ('{"output":"ok\\n","metadata":{"exit_code":0,"duration_seconds":0.1}}', False, False),
        ('{"output":"","metadata":{"exit_code":1,"duration_seconds":0.2}}', False, True),
        (
            "failed in sandbox LinuxSeccomp with execution error: sandbox denied exec error, "
            "exit code: 2, stdout: , stderr: boom",
            False,
            True,
        ),
        ("error: Failed to find expected lines in /x/README.md:\n### CLI", False, True),
        ("src/a.ts(3,1): error TS2304: x\n\n\nCommand exited with code 2", False, True),
        ("all good\nCommand exited with code 0", False, False),
        ("1 passed\n[Command finished with exit code 0]", False, False),
        ("Traceback ...\n[Command finished with exit code 1]", False, True),
        ("Your proposed edit has introduced new syntax error(s).", False, True),
        ("ERROR:\nNo replacement was performed, old_str did not appear verbatim.", False, True),
        ("The file src/app.py has been updated.", False, False),
        ("def error_handler(): pass", False, False),
    ],
)
def test_result_failed(text: str, is_error: bool, failed: bool) -> None:
    assert result_failed(_result(text, is_error)) is failed


def test_result_text_unwraps_the_codex_envelope() -> None:
    envelope = (
        '{"output":"Success. Updated the following files:\\nM a.py\\n","metadata":{"exit_code":0}}'
    )
    assert result_text(_result(envelope)) == "Success. Updated the following files:\nM a.py\n"
    assert result_text(_result("plain")) == "plain"


def test_the_mini_swe_agent_envelope_gives_the_exit_code_and_the_output() -> None:
    text = "<returncode>2</returncode>\n<output>\nsed: can't read x.py: No such file\n</output>"
    assert exit_code(text) == 2
    assert result_failed(_result(text)) is True
    assert result_text(_result(text)) == "sed: can't read x.py: No such file"
    ok = "<returncode>0</returncode>\n<output>\n</output>"
    assert (exit_code(ok), result_failed(_result(ok)), result_text(_result(ok))) == (0, False, "")


@pytest.mark.parametrize(
    ("text", "code"),
    [
        ("Exit code 128\nfatal: not a git repository", 128),
        ("src/a.ts(3,1): error TS2304: x\n\nCommand exited with code 2", 2),
        ("1 passed\n[Command finished with exit code 0]", 0),
        ('{"output":"","metadata":{"exit_code":1}}', 1),
        ("make: *** [all] Error 2", None),
    ],
)
def test_exit_code_in_each_agents_wording(text: str, code: int | None) -> None:
    assert exit_code(text) == code
