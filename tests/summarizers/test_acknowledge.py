"""Bare acknowledgements: texts that only say "go on", in the languages of the list, with
punctuation and case ignored; any other word makes a text substantive."""

from __future__ import annotations

import pytest

from ctxengine.summarizers.acknowledge import MAX_CHARS, is_acknowledgement


@pytest.mark.parametrize(
    "text",
    [
        "continue",
        "Continue.",
        "  yes  ",
        "Yes please!",
        "OK, continue",
        "ok",
        "okay",
        "go on",
        "Go ahead",
        "proceed",
        "sure",
        "do it",
        "yes to all.",
        "Yes to all",
        "continue with all",
        "continue until all are done",
        "Can we continue from where we left off?",
        "Let’s go",
        "sounds good, go ahead",
        "继续",
        "好",
        "好的",
        "是",
        "可以",
        "可以，开始实施",
        "はい",
        "続けて",
        "네",
        "계속",
        "sí",
        "Sí, sigue",
        "continúa",
        "oui",
        "vas-y",
        "ja",
        "weiter",
        "Ja, mach weiter",
        "sim",
        "да",
        "продолжай",
        "Да, продолжай!",
        "System: Please continue.",
        "User: ok",
        "[system]: continue",
    ],
)
def test_an_acknowledgement(text: str) -> None:
    assert is_acknowledgement(text) is True


@pytest.mark.parametrize(
    "text",
    [
        "",
        "   ",
        "?!",
        "yes, add the --json flag",
        "continue with the tests",
        "yes do the quickstart",
        "ok, add more printers",
        "PLease complete the optional next steps",
        "pause",
        "yesterday",
        "good catch, fix it",
        "go build it",
        "好像不对",
        "可以直接放在docstring",
        "是否需要保留",
        "sigue con los tests",
        "weiter mit dem Parser",
        "System: run the tests",
        "Assistant: ok",
    ],
)
def test_not_an_acknowledgement(text: str) -> None:
    assert is_acknowledgement(text) is False


def test_a_long_run_of_acknowledgements_is_not_one() -> None:
    # "yes " is 4 characters: 20 of them normalise to 79 characters, 21 to 83
    assert is_acknowledgement("yes " * 20) is True
    assert is_acknowledgement("yes " * 21) is False
    assert MAX_CHARS == 80
