"""Model profiles: the capability facts a request needs about a model, shipped as package
data (``profiles.json``) and overridable by the user.

=====================  ======================================================================
field                  meaning
=====================  ======================================================================
``context_window``     tokens shared by input and output
``max_output_tokens``  the largest output the model can be asked for (tokens)
``reasoning_format``   what reasoning a request must echo back: ``anthropic-signed-thinking``
                       (thinking blocks with signatures, byte-exact), ``openai-encrypted``
                       (Responses reasoning items with ``encrypted_content``),
                       ``gemini-thought-signature``, ``reasoning-content`` (plain
                       ``reasoning_content`` text of chat-completions servers), or ``none``
``native_compaction``  the provider can compact this model's context server-side
                       (Anthropic: the models the compaction-threshold page lists, Claude
                       Opus/Sonnet 4.6 and later; OpenAI: GPT-5.2, the model OpenAI's
                       compaction guide and ``/responses/compact`` launched with). It
                       decides ``Policy.compaction_backend="auto"``
``context_window_1m``  the window with Anthropic's ``context-1m-2025-08-07`` beta, for a
                       model that takes it (``null`` for the others): Claude Sonnet 4 and
                       4.5 (Anthropic's 1M-context announcement, 2025-08), Opus 4.6 and
                       Sonnet 4.6 (their release notes), Opus 4.8 (Claude Code 2.1.197 asks
                       for it with that model by default, ``claude-opus-4-8[1m]``). The
                       proxy uses it for a request that sends the beta header
``mid_conversation_    the model takes ``role: "system"`` messages inside ``messages``
system``               (Anthropic: Claude Opus 4.8 and later; earlier models answer "role
                       'system' is not supported on this model"): the continuation and
                       re-injected state are sent there instead of as user turns. Set for
                       the shipped Claude Opus 4.8, Opus 5 / 5.5, Sonnet 5 / 5.5 and Haiku 5.5
                       profiles; a model that still refuses is answered with user turns from
                       then on (:func:`~ctxengine.engine.calls.call_until_fit`)
``tokenizer``          the tokenizer family the model's token estimate is calibrated for
                       (:class:`~ctxengine.tokens.HeuristicEstimator`'s ``encoding``):
                       ``o200k_base`` for OpenAI's GPT-4o, GPT-4.1, GPT-5 and o-series models
                       and gpt-oss (whose ``o200k_harmony`` encodes text as ``o200k_base``),
                       ``cl100k_base`` for GPT-4 (and GPT-4 Turbo) and GPT-3.5 (tiktoken's
                       model table); ``null`` for every model whose tokenizer is not one of
                       those (Claude, Gemini, DeepSeek, Llama, Qwen, Mistral, Grok): their
                       estimate errs high by both encodings' larger count
=====================  ======================================================================

A model id matches a table key exactly or by prefix ending at a ``-``, ``:``, ``@`` or ``/``
(longest key wins), after lower-casing, dropping a ``vendor/`` prefix (OpenRouter) or a
Bedrock ``region.vendor.`` prefix, and writing dots as dashes. So
``claude-sonnet-4-5-20250929``, ``anthropic/claude-sonnet-4.5`` and
``us.anthropic.claude-sonnet-4-5-20250929-v1:0`` all find ``claude-sonnet-4-5``.

Open-weight models list the model's own window; a server may run it with less (Ollama's
``num_ctx``, vLLM's ``--max-model-len``): override the profile for such deployments.

Overrides: a JSON file of the same shape as ``profiles.json`` (``{"models": {id: fields}}``),
given as an argument or by ``CTXENGINE_MODEL_PROFILES``. An override entry may give only some
fields; the others come from the entry its id resolves to in the shipped table, else from the
unknown-model default.
"""

from __future__ import annotations

import json
import os
import re
import warnings
from collections.abc import Mapping
from dataclasses import dataclass, replace
from functools import cache
from importlib import resources
from pathlib import Path
from typing import Any, Literal, TypeAlias

from ctxengine.errors import ConfigError
from ctxengine.policy.defaults import UNKNOWN_MODEL_CONTEXT_WINDOW, UNKNOWN_MODEL_MAX_OUTPUT_TOKENS

ReasoningFormat: TypeAlias = Literal[
    "anthropic-signed-thinking",
    "openai-encrypted",
    "gemini-thought-signature",
    "reasoning-content",
    "none",
]
REASONING_FORMATS: tuple[str, ...] = (
    "anthropic-signed-thinking",
    "openai-encrypted",
    "gemini-thought-signature",
    "reasoning-content",
    "none",
)
#: Environment variable naming a JSON file of profile overrides.
PROFILES_ENV = "CTXENGINE_MODEL_PROFILES"
#: Environment variable naming the summary model, ``provider:model``.
SUMMARY_MODEL_ENV = "CTXENGINE_SUMMARY_MODEL"
#: Providers a model spec may name (``openai`` = Chat Completions).
PROVIDER_NAMES: tuple[str, ...] = ("openai", "openai-responses", "anthropic")
#: Tokenizer families a profile may name (those ``tokens.constants.TOKENIZER_SCRIPT_RATES``
#: calibrates the estimate for; this layer may not import ``tokens``).
TOKENIZERS: tuple[str, ...] = ("o200k_base", "cl100k_base")


_BEDROCK_PREFIX = re.compile(
    r"^(?:(?:us|eu|apac|global|jp|au|ca)\.)?"
    r"(?:anthropic|meta|amazon|mistral|deepseek|qwen|openai|cohere|ai21)\."
)
_BOUNDARY = "-:@/"


class UnknownModelWarning(UserWarning):
    """A model id matched no profile; the conservative default was used."""


@dataclass(frozen=True, slots=True)
class ModelProfile:
    """Capability facts of one model (see the module table).

    Attributes:
        model: the id that was looked up.
        matched: the table key it matched, or ``None`` for the unknown-model default.
        provider: ``anthropic``, ``openai``, ``gemini`` … (the API family), or ``None``.
        context_window / max_output_tokens: tokens.
        reasoning_format / native_compaction / mid_conversation_system /
            context_window_1m / tokenizer: see the module table.
    """

    model: str
    matched: str | None
    provider: str | None
    context_window: int
    max_output_tokens: int
    reasoning_format: ReasoningFormat = "none"
    native_compaction: bool = False
    mid_conversation_system: bool = False
    context_window_1m: int | None = None
    tokenizer: str | None = None

    @property
    def known(self) -> bool:
        """True when the id matched a profile."""
        return self.matched is not None


def normalize_model_id(model: str) -> str:
    """The form used for matching (lower case, no vendor prefix, dots as dashes)."""
    name = model.strip().lower().rsplit("/", 1)[-1]
    name = _BEDROCK_PREFIX.sub("", name)
    return name.replace(".", "-")


def _entry(key: str, fields: Mapping[str, Any], base: ModelProfile, origin: str) -> ModelProfile:
    """Validate one table entry, filling missing fields from ``base``."""
    unknown = set(fields) - {
        "provider",
        "context_window",
        "max_output_tokens",
        "reasoning_format",
        "native_compaction",
        "mid_conversation_system",
        "context_window_1m",
        "tokenizer",
    }
    if unknown:
        raise ConfigError(f"{origin}: model {key!r}: unknown field(s) {sorted(unknown)}")
    profile = replace(base, model=key, matched=key, **dict(fields))
    for name in ("context_window", "max_output_tokens"):
        value = getattr(profile, name)
        if not isinstance(value, int) or isinstance(value, bool) or value <= 0:
            raise ConfigError(f"{origin}: model {key!r}: {name} must be a positive int")
    wide = profile.context_window_1m
    if wide is not None and (not isinstance(wide, int) or isinstance(wide, bool) or wide <= 0):
        raise ConfigError(f"{origin}: model {key!r}: context_window_1m must be a positive int")
    if profile.reasoning_format not in REASONING_FORMATS:
        raise ConfigError(
            f"{origin}: model {key!r}: reasoning_format must be one of {REASONING_FORMATS}"
        )
    for name in ("native_compaction", "mid_conversation_system"):
        if not isinstance(getattr(profile, name), bool):
            raise ConfigError(f"{origin}: model {key!r}: {name} must be true or false")
    if profile.tokenizer is not None and profile.tokenizer not in TOKENIZERS:
        raise ConfigError(f"{origin}: model {key!r}: tokenizer must be one of {TOKENIZERS} or null")
    return profile


def _unknown(model: str) -> ModelProfile:
    return ModelProfile(
        model, None, None, UNKNOWN_MODEL_CONTEXT_WINDOW, UNKNOWN_MODEL_MAX_OUTPUT_TOKENS
    )


class ProfileTable:
    """Profiles by model id. Build with :meth:`builtin` or :meth:`load`."""

    def __init__(self, profiles: Mapping[str, ModelProfile]) -> None:
        self._by_norm = {normalize_model_id(k): p for k, p in profiles.items()}

    def __len__(self) -> int:
        return len(self._by_norm)

    @classmethod
    def from_json(cls, doc: object, origin: str, base: ProfileTable | None = None) -> ProfileTable:
        """A table from a parsed JSON document ``{"models": {id: fields}}``, layered over
        ``base`` (override entries fill missing fields from ``base``'s match)."""
        models = doc.get("models") if isinstance(doc, Mapping) else None
        if not isinstance(models, Mapping):
            raise ConfigError(f"{origin}: expected an object with a 'models' object")
        merged = dict(base._by_norm) if base is not None else {}
        for key, fields in models.items():
            if not isinstance(fields, Mapping):
                raise ConfigError(f"{origin}: model {key!r}: expected an object of fields")
            start = (base.lookup(key) if base is not None else None) or _unknown(key)
            merged[normalize_model_id(key)] = _entry(key, fields, start, origin)
        table = cls({})
        table._by_norm = merged
        return table

    @classmethod
    def builtin(cls) -> ProfileTable:
        """The table shipped with ctxengine."""
        return _builtin()

    @classmethod
    def load(
        cls, path: str | Path | None = None, *, environ: Mapping[str, str] | None = None
    ) -> ProfileTable:
        """The shipped table with the user's overrides from ``path`` (or the file named by
        ``CTXENGINE_MODEL_PROFILES``) applied.

        Raises:
            ConfigError: the file is missing, not JSON, or has an invalid entry.
        """
        env = os.environ if environ is None else environ
        chosen = path if path is not None else env.get(PROFILES_ENV) or None
        table = _builtin()
        if chosen is None:
            return table
        try:
            doc = json.loads(Path(chosen).read_text(encoding="utf-8"))
        except OSError as exc:
            raise ConfigError(f"model profiles file {chosen}: {exc.strerror or exc}") from exc
        except ValueError as exc:
            raise ConfigError(f"model profiles file {chosen}: not valid JSON ({exc})") from exc
        return cls.from_json(doc, str(chosen), base=table)

    def lookup(self, model: str) -> ModelProfile | None:
        """The profile of ``model`` (exact, else longest prefix at a boundary), or ``None``."""
        norm = normalize_model_id(model)
        if norm in self._by_norm:
            return replace(self._by_norm[norm], model=model)
        best: str | None = None
        for key in self._by_norm:
            at_boundary = norm.startswith(key) and norm[len(key)] in _BOUNDARY
            if at_boundary and (best is None or len(key) > len(best)):
                best = key
        return replace(self._by_norm[best], model=model) if best is not None else None

    def resolve(self, model: str) -> ModelProfile:
        """:meth:`lookup`, or the unknown-model default with an :class:`UnknownModelWarning`."""
        found = self.lookup(model)
        if found is not None:
            return found
        warnings.warn(
            f"no profile for model {model!r}: assuming a {UNKNOWN_MODEL_CONTEXT_WINDOW}-token "
            f"window and {UNKNOWN_MODEL_MAX_OUTPUT_TOKENS} output tokens; add it to a "
            f"{PROFILES_ENV} file",
            UnknownModelWarning,
            stacklevel=2,
        )
        return _unknown(model)


@cache
def _builtin() -> ProfileTable:
    text = resources.files("ctxengine.providers").joinpath("profiles.json").read_text("utf-8")
    return ProfileTable.from_json(json.loads(text), "ctxengine/providers/profiles.json")


def model_profile(model: str, *, overrides: str | Path | None = None) -> ModelProfile:
    """Profile of ``model`` from the shipped table plus overrides (``overrides`` or
    ``CTXENGINE_MODEL_PROFILES``); unknown models get the default and a warning."""
    return ProfileTable.load(overrides).resolve(model)


def parse_model_spec(spec: str) -> tuple[str, str]:
    """Split ``"provider:model"`` (``openai:gpt-4o``, ``anthropic:claude-sonnet-4-5``,
    ``openai:qwen3:8b``) at the first colon.

    Returns:
        ``(provider, model)``, the provider one of :data:`PROVIDER_NAMES` (``openai-chat`` is
        accepted as ``openai``).

    Raises:
        ConfigError: no colon, an empty part, or an unknown provider.
    """
    provider, sep, model = spec.strip().partition(":")
    provider = provider.strip().lower()
    provider = "openai" if provider == "openai-chat" else provider
    if not sep or not provider or not model.strip():
        raise ConfigError(f"model spec {spec!r}: expected 'provider:model', e.g. 'openai:gpt-4o'")
    if provider not in PROVIDER_NAMES:
        raise ConfigError(
            f"model spec {spec!r}: unknown provider {provider!r} "
            f"(expected one of {', '.join(PROVIDER_NAMES)})"
        )
    return provider, model.strip()


def summary_model_from_env(environ: Mapping[str, str] | None = None) -> tuple[str, str] | None:
    """``(provider, model)`` from ``CTXENGINE_SUMMARY_MODEL``, or ``None`` when unset.

    Raises:
        ConfigError: the variable is set but malformed.
    """
    env = os.environ if environ is None else environ
    spec = env.get(SUMMARY_MODEL_ENV, "").strip()
    return parse_model_spec(spec) if spec else None


__all__ = [
    "PROFILES_ENV",
    "SUMMARY_MODEL_ENV",
    "TOKENIZERS",
    "ModelProfile",
    "ProfileTable",
    "ReasoningFormat",
    "UnknownModelWarning",
    "model_profile",
    "normalize_model_id",
    "parse_model_spec",
    "summary_model_from_env",
]
