"""Tool-call arguments nested deeper than any recursion allows: measured without parsing,
carried as their JSON text, truncated into valid JSON, rendered into valid requests."""

from __future__ import annotations

import json

import pytest
from projection_helpers import EST, result, tool

from ctxengine.model import Message, ToolCallPart, user
from ctxengine.model.json_depth import (
    DEEP_ARGUMENTS_NOTE,
    MAX_JSON_DEPTH,
    JsonTooDeep,
    exceeds_depth,
    loads_bounded,
)
from ctxengine.projection import Context
from ctxengine.projection.render import render_anthropic, render_openai
from ctxengine.projection.render._common import parse_arguments
from ctxengine.projection.transform import (
    TRUNCATION_MARKER,
    TruncateCap,
    short_args,
    truncate_arguments,
)
from ctxengine.projection.validate import validate
from ctxengine.summarizers.transcript import format_call


def nested_objects(depth: int) -> str:
    """``{"a":{"a":…1…}}``: ``depth`` objects, 6 × depth + 1 characters."""
    return '{"a":' * depth + "1" + "}" * depth


def nested_lists(depth: int) -> str:
    """``{"a":[[…1…]]}``: one object holding ``depth`` lists, 2 × depth + 7 characters."""
    return '{"a":' + "[" * depth + "1" + "]" * depth + "}"


DEEP = nested_objects(5_000)


class TestDepth:
    def test_the_limit_is_inclusive(self) -> None:
        assert not exceeds_depth(nested_objects(MAX_JSON_DEPTH))
        assert exceeds_depth(nested_objects(MAX_JSON_DEPTH + 1))
        assert not exceeds_depth(nested_lists(MAX_JSON_DEPTH - 1))
        assert exceeds_depth(nested_lists(MAX_JSON_DEPTH))

    def test_brackets_inside_strings_do_not_count(self) -> None:
        text = json.dumps({"patch": "[" * 5_000 + '\\"{' * 5_000})
        assert not exceeds_depth(text)
        assert loads_bounded(text) == {"patch": "[" * 5_000 + '\\"{' * 5_000}

    def test_siblings_do_not_add_up(self) -> None:
        text = json.dumps([[1]] * 10_000)
        assert not exceeds_depth(text, 2)
        assert exceeds_depth(text, 1)

    def test_5000_levels_raise_a_value_error_without_recursing(self) -> None:
        for text in (DEEP, nested_lists(5_000), "[" * 5_000):
            with pytest.raises(JsonTooDeep) as info:
                loads_bounded(text)
            assert isinstance(info.value, ValueError)
            assert str(info.value) == "JSON nested deeper than 128 levels"


class TestTruncate:
    def test_over_deep_arguments_are_cut_as_text_into_valid_json(self) -> None:
        cap = TruncateCap(tokens=100, chars=32_000, head_ratio=0.5)
        out = truncate_arguments(DEEP, cap, EST, "e7")
        assert out is not None
        text, omitted_chars, omitted_tokens = out
        # 30,001 characters are 7,501 tokens; the first cut (399 characters) wrapped in
        # the escaped object is over the cap, the second keeps 65 + 66 characters.
        assert (omitted_chars, omitted_tokens) == (29_870, 29_870 // 4 + 1)
        marker = TRUNCATION_MARKER.format(omitted_chars=29_870, omitted_tokens=7_468, entry_id="e7")
        raw = DEEP[:65] + marker + DEEP[-66:]
        assert json.loads(text) == {"_raw": raw, "_note": DEEP_ARGUMENTS_NOTE}
        assert text == json.dumps({"_raw": raw, "_note": DEEP_ARGUMENTS_NOTE}, ensure_ascii=False)
        assert (len(text), EST.text(text)) == (345, 87)

    def test_over_deep_arguments_under_the_cap_stay_verbatim(self) -> None:
        cap = TruncateCap(tokens=10_000, chars=32_000, head_ratio=0.5)
        assert truncate_arguments(DEEP, cap, EST, "e1") is None

    def test_the_prune_placeholder_summary_is_the_collapsed_text(self) -> None:
        assert short_args(DEEP) == DEEP[:79] + "…"


class TestRender:
    def context(self) -> Context:
        messages = (
            user("go"),
            Message("assistant", (ToolCallPart("c1", "f", DEEP),)),
            tool(result("c1", "ok")),
            user("next"),
        )
        return Context(messages=messages, sources=(None,) * 4)

    def test_openai_carries_the_arguments_text_verbatim(self) -> None:
        body = render_openai(self.context(), model="m", declare_tools=True)
        arguments = body["messages"][1]["tool_calls"][0]["function"]["arguments"]
        assert arguments == DEEP
        assert len(arguments) == 30_001
        assert validate(body, "openai", strict=True) == []

    def test_anthropic_carries_an_object_holding_the_text(self) -> None:
        body = render_anthropic(self.context(), model="m", max_tokens=100, declare_tools=True)
        block = body["messages"][1]["content"][0]
        assert block["input"] == {"_raw": DEEP, "_note": DEEP_ARGUMENTS_NOTE}
        assert len(block["input"]["_raw"]) == 30_001
        assert validate(body, "anthropic", strict=True) == []

    def test_parse_arguments_keeps_the_shallow_cases(self) -> None:
        assert parse_arguments(nested_objects(3)) == {"a": {"a": {"a": 1}}}
        assert parse_arguments("[1]") == {"_raw": "[1]"}
        assert parse_arguments(nested_lists(MAX_JSON_DEPTH)) == {
            "_raw": nested_lists(MAX_JSON_DEPTH),
            "_note": DEEP_ARGUMENTS_NOTE,
        }

    def test_a_summary_transcript_shows_the_text(self) -> None:
        line = format_call(ToolCallPart("c1", "f", DEEP), 40)
        assert line.startswith('f({"a":{"a":')
        assert line.endswith("}}}})")
