"""A test run that selects some of the tests it names (``pytest tests/a.py -k other``) and
passes has not passed that file: a failure of another test in it stays open."""

from __future__ import annotations

import pytest
from summarizer_helpers import call, calls, results

from ctxengine.model import Message, user
from ctxengine.summarizers.ledgers import extract_ledgers
from ctxengine.summarizers.runs import selects_tests

FAILED = "FAILED tests/test_a.py::test_x - AssertionError: assert 7 == 8"
FAIL_OUTPUT = f"F.\n=== short test summary info ===\n{FAILED}\n1 failed, 1 passed in 0.02s"


def _bash(cid: str, command: str, output: str, failed: bool = False) -> tuple[Message, Message]:
    text = f"{output}\n\n\nCommand exited with code 1" if failed else output
    return calls(call(cid, "bash", command=command)), results((cid, text, failed))


def _errors(*steps: tuple[Message, Message]) -> list[tuple[str, str]]:
    msgs: list[Message] = [user("Make the tests pass.")]
    for pair in steps:
        msgs.extend(pair)
    return [(e.status, e.text) for e in extract_ledgers(tuple(msgs)).error_facts]


@pytest.mark.parametrize(
    ("command", "expected"),
    [
        ("pytest tests/test_a.py -k other", True),
        ("pytest -kother tests/test_a.py", True),
        ("python -m pytest -m 'not slow'", True),
        ("pytest --lf", True),
        ("pytest --deselect tests/test_a.py::test_x", True),
        ("python -m unittest -k test_y", True),
        ("npx jest -t parses src/a.test.ts", True),
        ("npx mocha -g parses", True),
        ("go test ./... -run TestX", True),
        ("cargo test parses", True),
        ("pytest tests/test_a.py", False),
        ("pytest -x -q tests/test_a.py", False),
        ("pytest -o addopts= tests", False),
        ("vitest --run", False),
        ("go test ./...", False),
        ("cargo test -- --nocapture", False),
        ("ls -k", False),
    ],
)
def test_selects_tests(command: str, expected: bool) -> None:
    assert selects_tests(command) is expected


class TestAPassOfSelectedTests:
    def test_it_leaves_another_test_of_the_file_open(self) -> None:
        assert _errors(
            _bash("a", "pytest tests/test_a.py::test_x", FAIL_OUTPUT, failed=True),
            _bash("b", "pytest tests/test_a.py -k other", ".\n1 passed, 1 deselected in 0.01s"),
        ) == [("open", FAILED)]

    def test_a_selection_of_the_whole_suite_is_no_suite_pass(self) -> None:
        assert _errors(
            _bash("a", "pytest tests/test_a.py::test_x", FAIL_OUTPUT, failed=True),
            _bash("b", "pytest -m fast", ".\n1 passed, 3 deselected in 0.01s"),
        ) == [("open", FAILED)]

    def test_the_file_passing_whole_fixes_it(self) -> None:
        assert _errors(
            _bash("a", "pytest tests/test_a.py::test_x", FAIL_OUTPUT, failed=True),
            _bash("b", "pytest tests/test_a.py", "..\n2 passed in 0.01s"),
        ) == [("fixed", FAILED)]

    def test_the_selected_test_named_passed_in_the_output_fixes_it(self) -> None:
        assert _errors(
            _bash("a", "pytest tests/test_a.py::test_x", FAIL_OUTPUT, failed=True),
            _bash(
                "b",
                "pytest -v tests/test_a.py -k test_x",
                "tests/test_a.py::test_x PASSED [100%]\n1 passed, 1 deselected in 0.01s",
            ),
        ) == [("fixed", FAILED)]
