"""Failure detection and error-line choice on tool results as each agent writes them."""

from __future__ import annotations

import pytest

from ctxengine.model import TextPart, ToolResultPart
from ctxengine.summarizers.signals import error_lines, looks_failed, result_failed, result_text


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


def test_a_python_traceback_keeps_the_exception_line() -> None:
    text = (
        "Traceback (most recent call last):\n"
        '  File "/repo/reproduce_bug.py", line 17, in <module>\n'
        "    result = np.array_equal(ds.pixel_array, pixels)\n"
        "ValueError: The length of the pixel data (8) doesn't match the expected length (16)\n"
    )
    assert looks_failed(text) is True
    assert error_lines(text) == (
        "Traceback (most recent call last):",
        "ValueError: The length of the pixel data (8) doesn't match the expected length (16)",
    )


def test_pytest_output_gives_the_assertion_and_the_failed_test() -> None:
    text = (
        "F.\n"
        "=================================== FAILURES ===================================\n"
        "E       AssertionError: assert 0 == 1\n"
        "=========================== short test summary info ============================\n"
        "FAILED tests/test_cli.py::test_verbose - AssertionError: assert 0 == 1\n"
        "========================= 1 failed, 1 passed in 0.05s =========================\n"
    )
    assert looks_failed(text) is True
    assert error_lines(text) == (
        "E       AssertionError: assert 0 == 1",
        "FAILED tests/test_cli.py::test_verbose - AssertionError: assert 0 == 1",
        "========================= 1 failed, 1 passed in 0.05s =========================",
    )


def test_without_a_telling_line_the_first_line_is_kept_and_long_lines_are_capped() -> None:
    assert error_lines("\n  something odd happened  \nmore") == ("something odd happened",)
    long = "error: " + "x" * 400
    (line,) = error_lines(long)
    assert len(line) == 300
    assert line.endswith("…")
    assert error_lines("") == ()


def test_successful_output_does_not_look_failed() -> None:
    assert looks_failed("3 passed in 0.20s") is False
    assert looks_failed("def raise_error():\n    raise ValueError('x')") is False


def test_a_bare_exit_code_is_joined_by_the_last_line() -> None:
    text = "Exit code 1\nCompiling 3 files\n** (CompileError) lib/a.ex:3: undefined function foo/0"
    assert error_lines(text) == (
        "Exit code 1",
        "** (CompileError) lib/a.ex:3: undefined function foo/0",
    )
