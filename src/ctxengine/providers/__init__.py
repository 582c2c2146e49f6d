"""Model providers: one request/reply shape over the official ``openai`` and ``anthropic``
SDKs (optional extras), error classification with an overflow pattern table, bounded
retries, cancellable streaming, and the model profile table.

Importing this package never imports an SDK; constructing a provider does, and a missing SDK
is a :class:`~ctxengine.errors.ConfigError` naming the extra to install. The names below are
loaded from their modules on first use (PEP 562): a module that needs only
:mod:`ctxengine.providers.base` or :mod:`ctxengine.providers.classify` does not import the
provider classes and their call machinery (``asyncio``, threads).
"""

from __future__ import annotations

from collections.abc import Callable
from typing import TYPE_CHECKING, Any, Literal

from ctxengine._runtime import load_name
from ctxengine.errors import ConfigError

if TYPE_CHECKING:
    from ctxengine.providers.anthropic import AnthropicProvider
    from ctxengine.providers.base import (
        Completion,
        CompletionRequest,
        FinishReason,
        NativeProvider,
        Provider,
        RetrySettings,
    )
    from ctxengine.providers.classify import ErrorClass, classify_error, to_provider_error
    from ctxengine.providers.openai import OpenAIProvider
    from ctxengine.providers.overflow import (
        is_length_stop_on_full_window,
        is_silent_overflow,
        match_overflow,
    )
    from ctxengine.providers.profiles import (
        ModelProfile,
        ProfileTable,
        model_profile,
        parse_model_spec,
        summary_model_from_env,
    )

#: The module each public name is loaded from on first use.
_HOMES: dict[str, str] = {
    "AnthropicProvider": "anthropic",
    **dict.fromkeys(
        (
            "Completion",
            "CompletionRequest",
            "FinishReason",
            "NativeProvider",
            "Provider",
            "RetrySettings",
        ),
        "base",
    ),
    **dict.fromkeys(("ErrorClass", "classify_error", "to_provider_error"), "classify"),
    "OpenAIProvider": "openai",
    **dict.fromkeys(
        ("is_length_stop_on_full_window", "is_silent_overflow", "match_overflow"), "overflow"
    ),
    **dict.fromkeys(
        (
            "ModelProfile",
            "ProfileTable",
            "model_profile",
            "parse_model_spec",
            "summary_model_from_env",
        ),
        "profiles",
    ),
}


#: :data:`_HOMES` as dotted module paths.
_HOMES_FULL = {name: f"{__name__}.{home}" for name, home in _HOMES.items()}


def __getattr__(name: str) -> Any:
    """A public name, imported from its module on first use and kept (PEP 562).

    Raises:
        AttributeError: ``name`` is not a public name (nor a submodule already imported).
    """
    return load_name(__name__, _HOMES_FULL, globals(), name)


def create_provider(
    spec: str,
    *,
    api_key: str | None = None,
    base_url: str | None = None,
    retry: RetrySettings | None = None,
    sleep: Callable[[float], None] | None = None,
    **options: Any,
) -> Provider:
    """A provider for a ``provider:model`` spec (``openai:gpt-4o``,
    ``openai-responses:gpt-5``, ``anthropic:claude-sonnet-4-5``).

    Args:
        spec: see :func:`~ctxengine.providers.profiles.parse_model_spec`.
        api_key / base_url: override the SDK's environment variables.
        retry / sleep: retry settings and an injectable sleep (seconds).
        options: passed to the provider class (``timeout``, ``max_tokens_param`` …).

    Raises:
        ConfigError: a malformed spec, a missing SDK or a missing key.
    """
    from ctxengine.providers.anthropic import AnthropicProvider
    from ctxengine.providers.openai import OpenAIProvider
    from ctxengine.providers.profiles import parse_model_spec

    provider, model = parse_model_spec(spec)
    common: dict[str, Any] = {"api_key": api_key, "base_url": base_url, "retry": retry}
    common["sleep"] = sleep
    if provider == "anthropic":
        return AnthropicProvider(model, **common, **options)
    if provider in ("openai", "openai-responses"):
        api: Literal["chat", "responses"] = "chat" if provider == "openai" else "responses"
        return OpenAIProvider(model, api=api, **common, **options)
    raise ConfigError(f"no provider named {provider!r}")  # pragma: no cover - spec validated


__all__ = [
    "AnthropicProvider",
    "Completion",
    "CompletionRequest",
    "ErrorClass",
    "FinishReason",
    "ModelProfile",
    "NativeProvider",
    "OpenAIProvider",
    "ProfileTable",
    "Provider",
    "RetrySettings",
    "classify_error",
    "create_provider",
    "is_length_stop_on_full_window",
    "is_silent_overflow",
    "match_overflow",
    "model_profile",
    "parse_model_spec",
    "summary_model_from_env",
    "to_provider_error",
]
