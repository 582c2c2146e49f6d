"""Tool-call ids and tool names as the providers accept them: exact replacements."""

import hashlib

import pytest

from ctxengine.projection.render.ids import (
    id_problem,
    name_problem,
    original_names,
    wire_id,
    wire_name,
)

REUSED = "call_5iDdbOYybq7L19vqXmR0DPaU#2"
LONG = "fc_68a1b2c3d4e5f60718293a4b5c6d7e8f90a1b2c3d4e5f607"


class TestWireId:
    def test_a_valid_id_is_unchanged_for_both_providers(self) -> None:
        assert wire_id("toolu_01ABC-x", "anthropic") == "toolu_01ABC-x"
        assert wire_id("toolu_01ABC-x", "openai") == "toolu_01ABC-x"
        assert wire_id("a" * 40, "openai") == "a" * 40

    def test_anthropic_replaces_other_characters_and_appends_a_hash_of_the_original(
        self,
    ) -> None:
        assert wire_id(REUSED, "anthropic") == "call_5iDdbOYybq7L19vqXmR0DPaU_2_c90a0b5062"
        assert wire_id("t.1:x", "anthropic") == "t_1_x_704f315ccc"
        assert wire_id("", "anthropic") == "_7d64c5272e"
        digest = hashlib.blake2b(REUSED.encode(), digest_size=5).hexdigest()
        assert digest == "c90a0b5062"

    def test_openai_keeps_any_character_but_cuts_long_ids_to_40_keeping_the_hash(
        self,
    ) -> None:
        assert wire_id(REUSED, "openai") == REUSED
        assert wire_id("t.1:x", "openai") == "t.1:x"
        assert wire_id(LONG, "openai") == "fc_68a1b2c3d4e5f60718293a4b5c_e8b7aa8455"
        assert wire_id("a" * 41, "openai") == "aaaaaaaaaaaaaaaaaaaaaaaaaaaaa_e6e7af925a"
        assert wire_id("", "openai") == "_7d64c5272e"

    def test_ids_equal_up_to_the_replaced_characters_stay_distinct(self) -> None:
        assert wire_id("a.b", "anthropic") == "a_b_ab1f84b1e7"
        assert wire_id("a:b", "anthropic") == "a_b_1a2ed37ca1"

    def test_the_problems_name_the_rule(self) -> None:
        assert id_problem("t.1:x", "anthropic") == "must match ^[a-zA-Z0-9_-]+$"
        assert id_problem(LONG, "openai") == "is 51 characters long (at most 40)"
        assert id_problem("", "openai") == "must not be empty"
        assert id_problem(REUSED, "openai") is None
        with pytest.raises(ValueError, match="unknown provider 'gemini'"):
            wire_id("a", "gemini")


class TestWireName:
    def test_a_valid_name_is_unchanged(self) -> None:
        assert wire_name("mcp__server__read-file", "anthropic") == "mcp__server__read-file"
        assert wire_name("n" * 64, "openai") == "n" * 64

    def test_an_invalid_name_maps_the_same_way_for_both_providers(self) -> None:
        assert wire_name("my.tool/v2", "anthropic") == "my_tool_v2_9fb9626a25"
        assert wire_name("my.tool/v2", "openai") == "my_tool_v2_9fb9626a25"
        assert wire_name("lire_fichier_é", "openai") == "lire_fichier___f9e4f1c359"

    def test_a_name_over_64_characters_is_cut_keeping_the_hash(self) -> None:
        assert wire_name("n" * 65, "anthropic") == "n" * 53 + "_b604a51ae6"
        assert name_problem("n" * 65, "openai") == "must match ^[a-zA-Z0-9_-]{1,64}$"
        assert name_problem("", "anthropic") == "must match ^[a-zA-Z0-9_-]{1,64}$"

    def test_original_names_maps_only_the_replaced_names_back(self) -> None:
        assert original_names(["bash", "my.tool/v2"], "openai") == {
            "my_tool_v2_9fb9626a25": "my.tool/v2",
        }
        assert original_names(("bash", "my.tool/v2"), "anthropic") == {
            "my_tool_v2_9fb9626a25": "my.tool/v2",
        }
        assert original_names(["bash", "read_file"], "openai") == {}
