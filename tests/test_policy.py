"""Policy validation: every invalid field is a ConfigError naming the field."""

from __future__ import annotations

from typing import get_args

import pytest

from ctxengine.errors import ConfigError
from ctxengine.policy import Policy, SummarizerName
from ctxengine.policy.defaults import SUMMARIZER_NAMES


class TestSummarizerName:
    @pytest.mark.parametrize("name", ["extractive", "llm", "hybrid", "none"])
    def test_the_four_summarizers_are_accepted(self, name: str) -> None:
        assert Policy(summarizer=name).summarizer == name

    def test_the_default_is_extractive(self) -> None:
        assert Policy().summarizer == "extractive"

    @pytest.mark.parametrize("name", ["abstractive", "LLM", "", "llm "])
    def test_any_other_name_is_a_config_error_naming_the_field_and_the_choices(
        self, name: str
    ) -> None:
        with pytest.raises(ConfigError) as info:
            Policy(summarizer=name)
        lines = str(info.value).splitlines()
        assert lines[:3] == [
            "invalid policy: 1 validation error for Policy",
            "summarizer",
            f"  Input should be 'extractive', 'llm', 'hybrid' or 'none' [type=literal_error, "
            f"input_value={name!r}, input_type=str]",
        ]
        assert info.value.__cause__ is None

    def test_the_policy_type_names_the_summarizers_of_the_defaults(self) -> None:
        assert get_args(SummarizerName) == SUMMARIZER_NAMES
