"""Command kinds and keys: which runs can fail by their output, searches, test runners."""

from __future__ import annotations

import pytest

from ctxengine.summarizers.runs import (
    command_key,
    ends_in_search,
    named_tests,
    runner_of,
    runs_something,
)


@pytest.mark.parametrize(
    ("command", "key"),
    [
        ("cd /testbed && python reproduce_issue.py 2>&1", "python reproduce_issue.py"),
        ("cd /testbed && python reproduce_issue.py", "python reproduce_issue.py"),
        ("python -m pytest tests/x.py -q 2>&1 | tail -20", "python -m pytest tests/x.py -q"),
        ("npm run check 2>&1 | grep error | head -5", "npm run check"),
        ("make all >/dev/null", "make all"),
        ("cat > t.py <<'EOF'\nprint(1)\nEOF\npython t.py", "cat > t.py <<'EOF' ; python t.py"),
        ("PYTHONPATH=. pytest -q", "PYTHONPATH=. pytest -q"),
    ],
)
def test_command_key(command: str, key: str) -> None:
    assert command_key(command) == key


def test_a_long_key_keeps_its_head_and_a_hash_of_the_whole() -> None:
    a = command_key("python -c '" + "x = 1; " * 60 + "'")
    b = command_key("python -c '" + "x = 1; " * 61 + "'")
    assert a[:180] == b[:180]
    assert a != b
    assert len(a) == 180 + len(" …#") + 12


@pytest.mark.parametrize(
    ("command", "runs"),
    [
        ("cat build.log", False),
        ("grep -rn Traceback logs/ | head", False),
        ("sed -n '1,20p' a.py && git diff", False),
        ("sed -i 's/a/b/' a.py", True),
        ("python x.py 2>&1 | head -50", True),
        ("git commit -m 'x'", True),
        ("make", True),
        ("cat > x.py <<'EOF'\nraise SystemExit(1)\nEOF", False),
    ],
)
def test_runs_something(command: str, runs: bool) -> None:
    assert runs_something(command) is runs


def test_a_search_ends_the_command() -> None:
    assert ends_in_search("grep -n foo a.py") is True
    assert ends_in_search("cd /testbed && git log | grep fix") is True
    assert ends_in_search("grep -n foo a.py | head -3") is False
    assert ends_in_search("pytest -q") is False


@pytest.mark.parametrize(
    ("command", "runner", "targets"),
    [
        (
            "cd /r && python -m pytest tests/test_a.py::test_b -x",
            "pytest",
            ("tests/test_a.py::test_b",),
        ),
        ("pytest -q", "pytest", ()),
        ("uv run pytest tests/ -q", "pytest", ("tests",)),
        ("python tests/runtests.py migrations", "unittest", ()),
        ("npm test -- src/sum.test.js", "jest", ("src/sum.test.js",)),
        ("go test ./...", "go", ()),
        ("cargo test parse", "cargo", ()),
        ("python x.py", "", ()),
    ],
)
def test_runner_and_targets(command: str, runner: str, targets: tuple[str, ...]) -> None:
    assert runner_of(command) == runner
    assert named_tests(command) == targets
