"""The presets interface the replay comparison reads: ``preset(name) -> Policy`` and
``PRESET_NAMES``."""

from __future__ import annotations

import pytest

from ctxengine.errors import ConfigError
from ctxengine.policy import DEFAULT_POLICY, Policy
from ctxengine.policy.presets import PRESET_NAMES, preset


def test_every_listed_name_is_a_policy_and_default_is_the_default_policy() -> None:
    assert PRESET_NAMES[0] == "default" or "default" in PRESET_NAMES
    assert all(isinstance(preset(name), Policy) for name in PRESET_NAMES)
    assert preset("default") == DEFAULT_POLICY


def test_an_unknown_name_is_a_config_error_naming_it() -> None:
    with pytest.raises(ConfigError, match="'nosuch'"):
        preset("nosuch")
