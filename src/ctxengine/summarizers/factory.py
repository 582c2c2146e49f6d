"""Building a summarizer by name, and reading project compact instructions from a rules file.

The model summarizers' modules are imported when one is built: reading the instructions of a
rules file loads no summarizer.

Pure: the caller resolves the provider and the model profile (environment, files) and passes
them in.
"""

from __future__ import annotations

import re
from typing import TYPE_CHECKING, Literal

from ctxengine.errors import ConfigError
from ctxengine.policy.defaults import SUMMARIZER_NAMES
from ctxengine.summarizers.extractive import ExtractiveSummarizer

if TYPE_CHECKING:
    from ctxengine.providers.base import Provider
    from ctxengine.providers.profiles import ModelProfile
    from ctxengine.summarizers.base import Summarizer

#: Largest share of the summary model's window its output budget may take.
OUTPUT_MAX_WINDOW_RATIO = 0.25
#: Headings (any level, any case) of the project compact instructions section.
INSTRUCTION_HEADINGS: tuple[str, ...] = ("compact instructions", "summary instructions")

_HEADING = re.compile(r"^(#{1,6})\s+(.+?)\s*#*\s*$")


def summary_output_tokens(profile: ModelProfile) -> int:
    """Output budget of a summary call for a model: the profile's max output, at most
    :data:`~ctxengine.summarizers.llm.DEFAULT_SUMMARY_OUTPUT_TOKENS` and at most a quarter of
    its window (tokens)."""
    from ctxengine.summarizers.llm import DEFAULT_SUMMARY_OUTPUT_TOKENS

    return min(
        profile.max_output_tokens,
        DEFAULT_SUMMARY_OUTPUT_TOKENS,
        int(profile.context_window * OUTPUT_MAX_WINDOW_RATIO),
    )


def make_summarizer(
    kind: str,
    *,
    user_messages_budget: int,
    provider: Provider | None = None,
    profile: ModelProfile | None = None,
    verify: bool = False,
    cache_reuse: bool = False,
    instructions: str | None = None,
    template: str = "default",
    overflow: Literal["shrink", "drop_oldest"] = "shrink",
) -> Summarizer:
    """The summarizer named ``kind``.

    Args:
        kind: one of :data:`~ctxengine.policy.defaults.SUMMARIZER_NAMES` (``"extractive"``,
            ``"llm"``, ``"hybrid"``, ``"none"``).
        user_messages_budget: tokens of verbatim user messages (extractive).
        provider / profile: the summary model and its profile (window and max output), both
            required for ``llm`` and ``hybrid``.
        verify / cache_reuse / instructions / overflow: see
            :class:`~ctxengine.summarizers.llm.LLMSummarizer`.
        template: the name of the template a model summarizer follows
            (:data:`~ctxengine.summarizers.templates.TEMPLATES`).

    Raises:
        ConfigError: an unknown kind or template, or a model summarizer without a model.
    """
    if kind == "extractive":
        return ExtractiveSummarizer(user_messages_budget=user_messages_budget)
    if kind == "none":
        from ctxengine.summarizers.drop import DropSummarizer

        return DropSummarizer()
    if kind not in SUMMARIZER_NAMES:
        raise ConfigError(f"unknown summarizer {kind!r}; expected one of {SUMMARIZER_NAMES}")
    if provider is None or profile is None:
        raise ConfigError(
            f"the {kind} summarizer needs a summary model: set CTXENGINE_SUMMARY_MODEL "
            "(e.g. openai:gpt-4o-mini or anthropic:claude-haiku-4-5) or pass --summary-model"
        )
    from ctxengine.summarizers.hybrid import HybridSummarizer
    from ctxengine.summarizers.llm import LLMSummarizer
    from ctxengine.summarizers.templates import template_named

    llm = LLMSummarizer(
        provider,
        max_output_tokens=summary_output_tokens(profile),
        window=profile.context_window,
        verify=verify,
        cache_reuse=cache_reuse,
        instructions=instructions,
        template=template_named(template),
        overflow=overflow,
    )
    return llm if kind == "llm" else HybridSummarizer(llm)


def compact_instructions(markdown: str) -> str | None:
    """The body of the "Compact instructions" (or "Summary instructions") section of a rules
    file such as AGENTS.md or CLAUDE.md: the lines after that heading up to the next heading of
    the same or a higher level, stripped; ``None`` when there is no such section or it is
    empty."""
    lines = markdown.splitlines()
    for i, line in enumerate(lines):
        m = _HEADING.match(line)
        if m is None or " ".join(m.group(2).lower().split()) not in INSTRUCTION_HEADINGS:
            continue
        level = len(m.group(1))
        body: list[str] = []
        for following in lines[i + 1 :]:
            h = _HEADING.match(following)
            if h is not None and len(h.group(1)) <= level:
                break
            body.append(following)
        text = "\n".join(body).strip()
        return text or None
    return None


__all__ = [
    "compact_instructions",
    "make_summarizer",
    "summary_output_tokens",
]
