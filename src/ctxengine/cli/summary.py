"""Summarizer configuration for the CLI: the kind, the summary model (flag or
``CTXENGINE_SUMMARY_MODEL``), its provider (base URL and key from flags or the SDK variables)
and project compact instructions read from AGENTS.md / CLAUDE.md in the working directory."""

from __future__ import annotations

import warnings
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from ctxengine.errors import ConfigError
from ctxengine.policy import Policy
from ctxengine.policy.defaults import MODEL_SUMMARIZER_NAMES
from ctxengine.providers import RetrySettings, create_provider, model_profile, parse_model_spec
from ctxengine.providers.profiles import summary_model_from_env
from ctxengine.summarizers.base import Summarizer
from ctxengine.summarizers.factory import compact_instructions, make_summarizer

#: Rules files searched, in order, for a "Compact instructions" section.
RULES_FILES: tuple[str, ...] = ("AGENTS.md", "CLAUDE.md")


@dataclass(slots=True)
class SummarizerChoice:
    """What the CLI resolved.

    Attributes:
        kind: ``extractive``, ``llm``, ``hybrid`` or ``none``.
        summarizer: the summarizer.
        model: the summary model spec (``openai:gpt-4o-mini``), or ``None``.
        instructions_from: rules files the compact instructions came from.
        warnings: messages to show (an unknown model profile …).
    """

    kind: str
    summarizer: Summarizer
    model: str | None = None
    instructions_from: list[str] = field(default_factory=list)
    warnings: list[str] = field(default_factory=list)


def read_instructions(directory: Path) -> tuple[str | None, list[str]]:
    """The compact instructions sections of the rules files in ``directory``, joined, and the
    names of the files they came from."""
    found: list[str] = []
    names: list[str] = []
    for name in RULES_FILES:
        path = directory / name
        if not path.is_file():
            continue
        section = compact_instructions(path.read_text(encoding="utf-8", errors="replace"))
        if section:
            found.append(section)
            names.append(name)
    return ("\n\n".join(found) or None), names


def choose_summarizer(
    kind: str | None,
    model: str | None,
    *,
    policy: Policy,
    base_url: str | None = None,
    api_key: str | None = None,
    verify: bool = False,
    directory: Path | None = None,
    timeout: float | None = None,
    preferred: str | None = None,
) -> SummarizerChoice:
    """Resolve the CLI's summarizer options.

    ``kind`` defaults to ``preferred`` (a preset's summarizer) when that needs no model or a
    summary model is configured (``model`` or ``CTXENGINE_SUMMARY_MODEL``); else to
    ``hybrid`` when a summary model is configured, else ``extractive``. ``timeout`` (seconds)
    bounds each summary request: the SDK's timeout (connect, and each read while streaming),
    and the budget its retries must fit in
    (:attr:`~ctxengine.providers.RetrySettings.max_elapsed_s`); ``None`` keeps the provider
    defaults.

    Raises:
        ConfigError: a malformed model spec, a model summarizer without a model, a missing
            SDK or key.
    """
    budget = policy.user_messages_budget_tokens
    if kind in ("extractive", "none"):
        return SummarizerChoice(kind, make_summarizer(kind, user_messages_budget=budget))
    spec = model
    if spec is None:
        env = summary_model_from_env()
        spec = f"{env[0]}:{env[1]}" if env else None
    if kind is None and preferred is not None and (preferred not in MODEL_SUMMARIZER_NAMES or spec):
        kind = preferred
    chosen = kind or ("hybrid" if spec else "extractive")
    if chosen in ("extractive", "none"):
        return SummarizerChoice(chosen, make_summarizer(chosen, user_messages_budget=budget))
    if spec is None:
        make_summarizer(chosen, user_messages_budget=budget)  # raises the ConfigError
        raise ConfigError("unreachable")  # pragma: no cover
    _, model_id = parse_model_spec(spec)
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        profile = model_profile(model_id)
    options: dict[str, Any] = {"api_key": api_key, "base_url": base_url}
    if timeout is not None:
        options |= {"timeout": timeout, "retry": RetrySettings(max_elapsed_s=timeout)}
    provider = create_provider(spec, **options)
    instructions, sources = read_instructions(directory or Path.cwd())
    summarizer = make_summarizer(
        chosen,
        user_messages_budget=budget,
        provider=provider,
        profile=profile,
        verify=verify,
        instructions=instructions,
        template=policy.summary_template,
        overflow=policy.summary_overflow,
    )
    return SummarizerChoice(chosen, summarizer, spec, sources, [str(w.message) for w in caught])


__all__ = ["RULES_FILES", "SummarizerChoice", "choose_summarizer", "read_instructions"]


def summary_report(choice: SummarizerChoice, fallback: str | None) -> dict[str, Any]:
    """The ``summarizer`` part of the compact report: kind, model, model calls and their
    usage (accounted apart from the session), instruction sources and any fallback."""
    calls = getattr(choice.summarizer, "calls", [])
    usage = getattr(choice.summarizer, "usage", None)
    return {
        "kind": choice.kind,
        "model": choice.model,
        "calls": len(calls),
        "input_tokens": usage.prompt_tokens if usage is not None else 0,
        "output_tokens": usage.output_tokens if usage is not None else 0,
        "instructions_from": choice.instructions_from,
        "fallback": fallback,
    }
