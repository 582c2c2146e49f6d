"""The ledger primer (:mod:`ctxengine.summarizers.prime`): each message is analysed as it
arrives, so the compaction's walk finds every analysis remembered, and the ledgers are the
same as without it."""

from __future__ import annotations

import json

from ctxengine.model import Message, TextPart, ToolCallPart, ToolResultPart, assistant, user
from ctxengine.summarizers.failures import detect
from ctxengine.summarizers.identifiers import identifier_facts
from ctxengine.summarizers.ledgers import extract_ledgers
from ctxengine.summarizers.prime import ANALYSES, LedgerPrimer, clear_analysis_caches
from ctxengine.summarizers.runs import command_key


def bash(call_id: str, command: str) -> ToolCallPart:
    return ToolCallPart(call_id, "bash", json.dumps({"command": command}))


def result(call_id: str, text: str) -> Message:
    return Message("tool", (ToolResultPart(call_id, (TextPart(text),), name="bash"),))


def conversation() -> list[Message]:
    return [
        user("Fix the failing test in src/app.py; the ticket is PROJ-1234."),
        assistant("Running the tests.", bash("c1", "pytest -q tests/test_app.py")),
        result(
            "c1",
            "F\nFAILED tests/test_app.py::test_total - AssertionError: 3 != 4\n"
            "1 failed in 0.02s\nexit code 1",
        ),
        assistant(
            "I decided to fix the rounding in total().", bash("c2", "sed -i s/a/b/ src/app.py")
        ),
        result("c2", "exit code 0"),
        assistant("Running them again.", bash("c3", "pytest -q tests/test_app.py")),
        result("c3", "1 passed in 0.01s\nexit code 0"),
    ]


def test_the_walk_finds_every_analysis_remembered_and_the_ledgers_do_not_change() -> None:
    messages = conversation()
    clear_analysis_caches()
    cold = extract_ledgers(messages)
    clear_analysis_caches()
    primer = LedgerPrimer()
    for m in messages:
        primer.observe(m)
    misses = {f.__name__: f.cache_info().misses for f in ANALYSES}
    assert misses["detect"] == 3  # every output of a command that runs something (sed -i too)
    assert misses["command_key"] == 2  # "pytest -q tests/test_app.py" and the sed command
    primed = extract_ledgers(messages)
    after = {f.__name__: f.cache_info().misses for f in ANALYSES}
    # the fold computes only a user's rules afresh: they depend on the range (its language,
    # its boilerplate)
    assert {n for n in after if after[n] != misses[n]} == {"rule_sentences"}
    assert primed == cold
    assert primed.files_modified == ("src/app.py",)
    assert [e.status for e in primed.error_facts] == ["fixed"]


def test_a_result_is_analysed_with_its_call_and_a_stray_result_is_left_alone() -> None:
    clear_analysis_caches()
    primer = LedgerPrimer()
    primer.observe(result("nobody", "Traceback (most recent call last):\nValueError: x"))
    assert detect.cache_info().currsize == 0
    primer.observe(assistant("", bash("c9", "python run.py")))
    assert command_key.cache_info().currsize == 0  # asked when the result comes
    primer.observe(result("c9", "ValueError: bad value 7"))
    assert detect.cache_info().currsize == 1
    assert command_key.cache_info().currsize == 1
    assert identifier_facts.cache_info().currsize == 1  # c9's output; the stray one is not read


def test_clear_forgets_every_analysis() -> None:
    primer = LedgerPrimer()
    for m in conversation():
        primer.observe(m)
    assert sum(f.cache_info().currsize for f in ANALYSES) > 0
    clear_analysis_caches()
    assert sum(f.cache_info().currsize for f in ANALYSES) == 0
