"""A run that ends by counting the lines a search for failures selected (``… | grep "error
TS" | wc -l``) exits 0 whatever it counted: a count above 0 is not a success that fixes
anything, nor a done step that says "succeeded"."""

from __future__ import annotations

import pytest
from summarizer_helpers import call, calls, results

from ctxengine.model import Message, TextPart, user
from ctxengine.summarizers import ExtractiveSummarizer, SummaryRequest
from ctxengine.summarizers.ledgers import extract_ledgers
from ctxengine.summarizers.runs import counted_failures
from hand_estimator import HandEstimator

TS = "src/a.ts(3,1): error TS2304: Cannot find name 'chalk'."
CHECK = "npm run check"
COUNT = 'npm run check 2>&1 | grep "error TS" | wc -l'


def _bash(cid: str, command: str, output: str, failed: bool = False) -> tuple[Message, Message]:
    text = f"{output}\n\n\nCommand exited with code 2" if failed else output
    return calls(call(cid, "bash", command=command)), results((cid, text, failed))


@pytest.mark.parametrize(
    ("command", "output", "expected"),
    [
        (COUNT, "      11\n", 11),
        (COUNT, "0\n", 0),
        ("cd web && npm test 2>&1 | grep -i fail | wc -l", "3", 3),
        ("pytest -q 2>&1 | grep -c FAILED", "2\n", 2),
        ("make 2>&1 | grep -e Error | wc -l", "4", 4),
        ("npm run check 2>&1 | grep -E '(error|warning)' | wc -l", "7", 7),
        # not a count of failure lines
        ("ls src | wc -l", "11", None),
        ("git log --oneline | grep fix | wc -l", "5", None),
        ("npm run check 2>&1 | grep 'error TS' | wc -c", "480", None),
        ("wc -l src/a.py", "11 src/a.py", None),
        ("grep -c error build.log", "4", None),
        (COUNT, "11 lines", None),
    ],
)
def test_counted_failures(command: str, output: str, expected: int | None) -> None:
    assert counted_failures(command, output) == expected


def _errors(msgs: tuple[Message, ...]) -> list[tuple[str, str, str]]:
    return [(e.status, e.text, e.command) for e in extract_ledgers(msgs).error_facts]


class TestACountOfFailureLines:
    def test_a_positive_count_neither_fixes_the_errors_nor_reads_as_a_success(self) -> None:
        msgs = (
            user("Fix the type errors."),
            *_bash("a", CHECK, TS, failed=True),
            *_bash("b", COUNT, "      11\n"),
            Message("assistant", (TextPart("Eleven errors left."),)),
        )
        assert _errors(msgs) == [("open", TS, CHECK)]
        summary = ExtractiveSummarizer(user_messages_budget=200).summarize(
            SummaryRequest(msgs, None, "Fix the type errors.", 2_000), HandEstimator()
        )
        assert "(succeeded)" not in summary.text
        assert f"- open: {TS} — `{CHECK}`" in summary.text
        assert "Open errors to resolve: 1 (listed under Errors)." in summary.text

    def test_a_count_of_zero_is_a_clean_run(self) -> None:
        msgs = (
            user("Fix the type errors."),
            *_bash("a", CHECK, TS, failed=True),
            *_bash("b", COUNT, "0\n"),
        )
        assert _errors(msgs) == [("fixed", TS, CHECK)]
