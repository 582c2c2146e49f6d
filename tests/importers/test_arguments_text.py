"""Tool-call arguments as JSON text (``importers._calls.arguments_text``): a string is kept
verbatim; one that is not JSON is counted as repaired, and refused under ``strict``."""

from __future__ import annotations

from typing import Any

import pytest

from ctxengine.errors import TranscriptError
from ctxengine.importers._calls import ARGUMENTS_NOT_JSON, arguments_text, json_text
from ctxengine.importers.report import ImportReport

EXPECTED = "expected `arguments` to be JSON text, got text that is not JSON (kept as text)"


class TestJSONText:
    @pytest.mark.parametrize(
        ("value", "text"),
        [
            ({"b": 1, "a": "é"}, '{"b":1,"a":"é"}'),
            ([1, None], "[1,null]"),
            (None, "null"),
            ("not JSON {", "not JSON {"),
        ],
    )
    def test_a_string_verbatim_anything_else_serialised_in_key_order(
        self, value: Any, text: str
    ) -> None:
        assert json_text(value) == text
        assert arguments_text(value, ImportReport("s.jsonl"), "arguments") == text


class TestArgumentsCheck:
    @pytest.mark.parametrize(
        "text",
        [
            '{"command": "ls"}',
            "[1]",
            '"a string"',
            "null",
            "42",
            " \n\t{}\n",
            "",
            "   ",
            "\n",
            '{"a": "é ☃"}',
            '{"a": "\\ud83d"}',  # an escaped lone surrogate: JSON by the grammar, orjson refuses it
            '{"a": "\ud83d"}',  # a lone surrogate in the text itself
            "1e400",  # past a double's range: JSON by the grammar, orjson refuses it
        ],
    )
    def test_json_and_no_arguments_pass_unflagged(self, text: str) -> None:
        report = ImportReport("s.jsonl", strict=True)
        assert arguments_text(text, report, "arguments", line=3) is text
        assert report.clean and report.issues == ()

    @pytest.mark.parametrize(
        "text",
        [
            '{"command": "ls',  # cut short
            '{"command": "ls"} trailing',
            "{'command': 'ls'}",  # a Python dict
            '{"a": 1,}',
            "NaN",
            "Infinity",
            '\ufeff{"a": 1}',
            "```json\n{}\n```",
            "ls -la",
            '{"a": "é',  # not ASCII, cut short
        ],
    )
    def test_text_that_is_not_json_is_kept_and_counted_as_repaired(self, text: str) -> None:
        report = ImportReport("s.jsonl")
        assert arguments_text(text, report, "arguments", line=3) is text
        [issue] = report.issues
        assert issue.to_dict() == {
            "action": "repaired",
            "kind": ARGUMENTS_NOT_JSON,
            "count": 1,
            "first_line": 3,
            "expected": EXPECTED,
        }

    def test_text_nested_deeper_than_orjson_reads_is_not_checked(self) -> None:
        """5,000 levels (orjson stops at 1,024; ``json`` would recurse): passed as it is,
        whole or cut short; 1,000 levels cut short is checked, and flagged."""
        deep = '{"a":' * 5_000 + "1" + "}" * 5_000
        report = ImportReport("s.jsonl", strict=True)
        for text in (deep, deep[:-1]):
            assert arguments_text(text, report, "arguments", line=1) is text
        shallower = '{"a":' * 1_000 + "1" + "}" * 999
        with pytest.raises(TranscriptError) as info:
            arguments_text(shallower, report, "arguments", line=2)
        assert str(info.value) == f"s.jsonl:2: {EXPECTED}"
        whole = shallower + "}"
        assert arguments_text(whole, report, "arguments", line=3) is whole

    def test_the_report_counts_every_one_and_keeps_the_first_place(self) -> None:
        report = ImportReport("chat.json")
        for i, text in enumerate(["{}", "{", "", "[1", "{}"]):
            arguments_text(text, report, "arguments", json_path=f"$[{i}].arguments")
        assert report.summary() == (
            "repaired 2: tool call arguments not JSON (kept as text) ×2 ($[1].arguments)"
        )

    def test_strict_raises_naming_file_line_and_field(self) -> None:
        report = ImportReport("rollout.jsonl", strict=True)
        with pytest.raises(TranscriptError) as info:
            arguments_text('{"a":', report, "function.arguments", line=7)
        assert str(info.value) == (
            "rollout.jsonl:7: expected `function.arguments` to be JSON text, got text that is "
            "not JSON (kept as text)"
        )

    def test_strict_names_the_json_path_of_a_document(self) -> None:
        report = ImportReport("chat.json", strict=True)
        with pytest.raises(TranscriptError) as info:
            arguments_text("{", report, "arguments", json_path="$[1].function_call.arguments")
        assert str(info.value) == f"chat.json at $[1].function_call.arguments: {EXPECTED}"
