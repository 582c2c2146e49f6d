"""Model profiles: the shipped table, id matching, user overrides, unknown models, and the
``provider:model`` spec."""

from __future__ import annotations

import json
import warnings
from pathlib import Path

import pytest

from ctxengine.errors import ConfigError
from ctxengine.policy.defaults import UNKNOWN_MODEL_CONTEXT_WINDOW
from ctxengine.providers.profiles import (
    TOKENIZERS,
    ModelProfile,
    ProfileTable,
    UnknownModelWarning,
    model_profile,
    normalize_model_id,
    parse_model_spec,
    summary_model_from_env,
)
from ctxengine.tokens.constants import TOKENIZER_SCRIPT_RATES


class TestShippedTable:
    @pytest.mark.parametrize(
        ("model", "matched", "window", "max_output", "reasoning"),
        [
            (
                "claude-sonnet-4-5",
                "claude-sonnet-4-5",
                200_000,
                64_000,
                "anthropic-signed-thinking",
            ),
            (
                "claude-opus-4-1-20250805",
                "claude-opus-4-1",
                200_000,
                32_000,
                "anthropic-signed-thinking",
            ),
            (
                "claude-haiku-4-5@20251001",
                "claude-haiku-4-5",
                200_000,
                64_000,
                "anthropic-signed-thinking",
            ),
            ("gpt-4o-2024-08-06", "gpt-4o", 128_000, 16_384, "none"),
            ("gpt-4.1-mini", "gpt-4.1-mini", 1_047_576, 32_768, "none"),
            ("gpt-5", "gpt-5", 400_000, 128_000, "openai-encrypted"),
            ("gpt-5.1-codex-max", "gpt-5.1-codex", 400_000, 128_000, "openai-encrypted"),
            ("o4-mini-2025-04-16", "o4-mini", 200_000, 100_000, "openai-encrypted"),
            ("o1-mini", "o1-mini", 128_000, 65_536, "openai-encrypted"),
            ("deepseek-reasoner", "deepseek-reasoner", 128_000, 65_536, "reasoning-content"),
            ("gemini-2.5-pro", "gemini-2.5-pro", 1_048_576, 65_536, "gemini-thought-signature"),
            ("llama-3.3-70b-versatile", "llama-3.3", 131_072, 8_192, "none"),
            ("qwen3:8b", "qwen3", 32_768, 8_192, "reasoning-content"),
            ("qwen3-coder:30b", "qwen3-coder", 262_144, 65_536, "none"),
        ],
    )
    def test_well_known_models(
        self, model: str, matched: str, window: int, max_output: int, reasoning: str
    ) -> None:
        profile = ProfileTable.builtin().lookup(model)
        assert profile is not None
        assert (profile.model, profile.matched) == (model, matched)
        assert (profile.context_window, profile.max_output_tokens) == (window, max_output)
        assert profile.reasoning_format == reasoning
        assert profile.native_compaction is False

    def test_router_and_bedrock_ids_find_the_same_profile(self) -> None:
        table = ProfileTable.builtin()
        for model in (
            "anthropic/claude-sonnet-4.5",
            "us.anthropic.claude-sonnet-4-5-20250929-v1:0",
            "anthropic.claude-sonnet-4-5-20250929-v1:0",
        ):
            profile = table.lookup(model)
            assert profile is not None and profile.matched == "claude-sonnet-4-5", model

    def test_a_prefix_only_matches_at_a_boundary(self) -> None:
        table = ProfileTable.builtin()
        assert table.lookup("gpt-4o-mini") is not None
        assert table.lookup("gpt-4o-mini").matched == "gpt-4o-mini"  # type: ignore[union-attr]
        assert table.lookup("gpt-4-0613").matched == "gpt-4"  # type: ignore[union-attr]
        assert table.lookup("gpt-4x") is None
        assert table.lookup("o3x") is None

    def test_normalized_ids(self) -> None:
        assert normalize_model_id(" OpenAI/GPT-4.1 ") == "gpt-4-1"
        assert normalize_model_id("eu.anthropic.claude-opus-4-1") == "claude-opus-4-1"


class TestTokenizer:
    """Which tokenizer family each model's token estimate is calibrated for."""

    @pytest.mark.parametrize(
        ("model", "tokenizer"),
        [
            ("gpt-4o", "o200k_base"),
            ("gpt-4o-2024-08-06", "o200k_base"),
            ("openai/gpt-4o-mini", "o200k_base"),
            ("gpt-4.1", "o200k_base"),
            ("gpt-4.1-nano-2025-04-14", "o200k_base"),
            ("gpt-5", "o200k_base"),
            ("gpt-5-codex", "o200k_base"),
            ("gpt-5.1-codex", "o200k_base"),
            ("gpt-5.2", "o200k_base"),
            ("o1-preview", "o200k_base"),
            ("o3-mini", "o200k_base"),
            ("o4-mini-2025-04-16", "o200k_base"),
            ("openai/gpt-oss-120b", "o200k_base"),
            ("gpt-4", "cl100k_base"),
            ("gpt-4-0613", "cl100k_base"),
            ("gpt-4-turbo-2024-04-09", "cl100k_base"),
            ("gpt-3.5-turbo-0125", "cl100k_base"),
            ("claude-sonnet-4-5-20250929", None),
            ("us.anthropic.claude-opus-4-1-20250805-v1:0", None),
            ("gemini-2.5-pro", None),
            ("deepseek-chat", None),
            ("qwen3:32b", None),
            ("llama-3.3-70b-instruct", None),
            ("grok-4", None),
        ],
    )
    def test_each_model_s_family(self, model: str, tokenizer: str | None) -> None:
        profile = ProfileTable.builtin().lookup(model)
        assert profile is not None and profile.tokenizer == tokenizer

    def test_the_families_of_the_shipped_table(self) -> None:
        table = ProfileTable.builtin()
        by_family = {
            t: sorted(k for k, p in table._by_norm.items() if p.tokenizer == t)
            for t in ("cl100k_base", "o200k_base")
        }
        assert by_family["cl100k_base"] == ["gpt-3-5-turbo", "gpt-4", "gpt-4-turbo"]
        assert len(by_family["o200k_base"]) == 21
        assert {k.split("-")[0] for k in by_family["o200k_base"]} == {"gpt", "o1", "o3", "o4"}
        assert all(p.provider == "openai" for p in table._by_norm.values() if p.tokenizer)

    def test_an_unknown_model_has_none_and_the_names_are_the_estimator_s(self) -> None:
        with pytest.warns(UnknownModelWarning):
            assert ProfileTable.builtin().resolve("my-finetune").tokenizer is None
        assert tuple(TOKENIZER_SCRIPT_RATES) == TOKENIZERS

    def test_an_override_sets_or_clears_it(self, tmp_path: Path) -> None:
        path = tmp_path / "profiles.json"
        doc = {"models": {"gpt-4o": {"tokenizer": None}, "acme": {"tokenizer": "o200k_base"}}}
        path.write_text(json.dumps(doc), encoding="utf-8")
        table = ProfileTable.load(path)
        assert table.resolve("gpt-4o").tokenizer is None
        assert table.resolve("gpt-4o").context_window == 128_000
        assert table.resolve("acme").tokenizer == "o200k_base"


class TestUnknownModels:
    def test_unknown_model_gets_the_default_and_a_warning(self) -> None:
        with pytest.warns(UnknownModelWarning, match="no profile for model 'my-finetune'"):
            profile = ProfileTable.builtin().resolve("my-finetune")
        assert profile == ModelProfile(
            "my-finetune", None, None, UNKNOWN_MODEL_CONTEXT_WINDOW, 4_096
        )
        assert profile.known is False

    def test_known_model_resolves_without_a_warning(self) -> None:
        with warnings.catch_warnings():
            warnings.simplefilter("error")
            assert ProfileTable.builtin().resolve("gpt-4o").known is True


class TestOverrides:
    def write(self, tmp_path: Path, doc: object) -> Path:
        path = tmp_path / "profiles.json"
        path.write_text(json.dumps(doc), encoding="utf-8")
        return path

    def test_a_partial_override_keeps_the_shipped_fields(self, tmp_path: Path) -> None:
        path = self.write(tmp_path, {"models": {"qwen3": {"context_window": 131_072}}})
        profile = ProfileTable.load(path).resolve("qwen3:32b")
        assert (profile.context_window, profile.max_output_tokens) == (131_072, 8_192)
        assert profile.reasoning_format == "reasoning-content"

    def test_a_new_model_from_the_env_file(
        self, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
    ) -> None:
        doc = {
            "models": {
                "acme-coder": {
                    "provider": "openai",
                    "context_window": 65_536,
                    "max_output_tokens": 16_384,
                    "native_compaction": True,
                }
            }
        }
        monkeypatch.setenv("CTXENGINE_MODEL_PROFILES", str(self.write(tmp_path, doc)))
        profile = model_profile("acme-coder-v2")
        assert profile == ModelProfile(
            "acme-coder-v2", "acme-coder", "openai", 65_536, 16_384, "none", True
        )

    def test_mid_conversation_system_messages_from_claude_opus_4_8_on_and_by_an_override(
        self, tmp_path: Path
    ) -> None:
        table = ProfileTable.builtin()
        assert sorted(k for k, p in table._by_norm.items() if p.mid_conversation_system) == [
            "claude-haiku-5-5",
            "claude-opus-4-8",
            "claude-opus-5",
            "claude-opus-5-5",
            "claude-sonnet-5",
            "claude-sonnet-5-5",
        ]
        assert table.resolve("claude-opus-4-6").mid_conversation_system is False
        assert table.resolve("claude-opus-5-5-20261015").matched == "claude-opus-5-5"
        doc = {
            "models": {
                "claude-opus-4-6": {
                    "provider": "anthropic",
                    "context_window": 200_000,
                    "max_output_tokens": 64_000,
                    "mid_conversation_system": True,
                }
            }
        }
        profile = ProfileTable.load(self.write(tmp_path, doc)).resolve("claude-opus-4-6-20260301")
        assert profile.mid_conversation_system is True
        bad = {"models": {"x": {"mid_conversation_system": "yes"}}}
        with pytest.raises(ConfigError, match="mid_conversation_system must be true or false"):
            ProfileTable.load(self.write(tmp_path, bad))

    def test_an_argument_wins_over_the_env_file(self, tmp_path: Path) -> None:
        path = self.write(tmp_path, {"models": {"gpt-4o": {"context_window": 64_000}}})
        env = {"CTXENGINE_MODEL_PROFILES": str(tmp_path / "missing.json")}
        assert ProfileTable.load(path, environ=env).resolve("gpt-4o").context_window == 64_000

    @pytest.mark.parametrize(
        ("doc", "message"),
        [
            ({"gpt-4o": {}}, "expected an object with a 'models' object"),
            ({"models": {"x": {"context_window": 0}}}, "context_window must be a positive int"),
            ({"models": {"x": {"window": 10}}}, r"unknown field\(s\) \['window'\]"),
            ({"models": {"x": {"reasoning_format": "cot"}}}, "reasoning_format must be one of"),
            ({"models": {"x": {"tokenizer": "p50k_base"}}}, "tokenizer must be one of"),
            ({"models": {"x": 5}}, "expected an object of fields"),
        ],
    )
    def test_invalid_files_are_config_errors(
        self, tmp_path: Path, doc: object, message: str
    ) -> None:
        with pytest.raises(ConfigError, match=message):
            ProfileTable.load(self.write(tmp_path, doc))

    def test_missing_or_broken_file_is_a_config_error(self, tmp_path: Path) -> None:
        with pytest.raises(ConfigError, match=r"missing\.json"):
            ProfileTable.load(tmp_path / "missing.json")
        broken = tmp_path / "broken.json"
        broken.write_text("{nope", encoding="utf-8")
        with pytest.raises(ConfigError, match="not valid JSON"):
            ProfileTable.load(broken)


class TestModelSpec:
    @pytest.mark.parametrize(
        ("spec", "expected"),
        [
            ("openai:gpt-4o", ("openai", "gpt-4o")),
            ("anthropic:claude-sonnet-4-5", ("anthropic", "claude-sonnet-4-5")),
            ("openai-responses:gpt-5", ("openai-responses", "gpt-5")),
            ("openai:qwen3:8b", ("openai", "qwen3:8b")),
            (" OpenAI-Chat : llama3.1 ", ("openai", "llama3.1")),
        ],
    )
    def test_valid_specs(self, spec: str, expected: tuple[str, str]) -> None:
        assert parse_model_spec(spec) == expected

    @pytest.mark.parametrize(
        ("spec", "message"),
        [
            ("gpt-4o", "expected 'provider:model'"),
            ("openai:", "expected 'provider:model'"),
            ("gemini:gemini-2.5-pro", "unknown provider 'gemini'"),
        ],
    )
    def test_invalid_specs(self, spec: str, message: str) -> None:
        with pytest.raises(ConfigError, match=message):
            parse_model_spec(spec)

    def test_summary_model_from_the_environment(self) -> None:
        assert summary_model_from_env({}) is None
        env = {"CTXENGINE_SUMMARY_MODEL": "anthropic:claude-haiku-4-5"}
        assert summary_model_from_env(env) == ("anthropic", "claude-haiku-4-5")
