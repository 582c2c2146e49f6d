"""Summarizers: turn the old prefix of a session into continuation state.

:class:`Summarizer` is the protocol; :class:`ExtractiveSummarizer` is the deterministic default
(no LLM). :func:`extract_ledgers` and :func:`serialize_transcript` are shared with the LLM
summarizers. :class:`LLMSummarizer` has a model write the continuation state;
:class:`HybridSummarizer` appends the extractive ledgers to that narrative;
:func:`make_summarizer` builds one by name.

The names below are loaded from their modules on first use (PEP 562): importing one module of
the package (say :mod:`.base`) does not compile the ledger and rule patterns of the others.
"""

from __future__ import annotations

from ctxengine._runtime import load_name, names

#: ``typing.TYPE_CHECKING`` without importing :mod:`typing`; type checkers read the block below.
TYPE_CHECKING = False
if TYPE_CHECKING:
    from typing import Any

    from ctxengine.model.roles import (
        is_goal_candidate,
        is_injected_text,
        is_real_user_message,
        is_slash_command,
    )
    from ctxengine.summarizers.base import LiveRequest, Summarizer, Summary, SummaryRequest
    from ctxengine.summarizers.calls import ModelSummarizer, SummaryCall
    from ctxengine.summarizers.constraints import constraint_sentences, real_user_texts
    from ctxengine.summarizers.extractive import ExtractiveSummarizer
    from ctxengine.summarizers.extractive_state import ledger_block
    from ctxengine.summarizers.factory import compact_instructions, make_summarizer
    from ctxengine.summarizers.hybrid import HybridSummarizer
    from ctxengine.summarizers.ledgers import call_effects, extract_ledgers, shell_command
    from ctxengine.summarizers.llm import LLMSummarizer
    from ctxengine.summarizers.transcript import (
        TRANSCRIPT_MODES,
        TranscriptMode,
        head_tail,
        serialize_transcript,
    )

__all__ = [
    "TRANSCRIPT_MODES",
    "ExtractiveSummarizer",
    "HybridSummarizer",
    "LLMSummarizer",
    "LiveRequest",
    "ModelSummarizer",
    "Summarizer",
    "Summary",
    "SummaryCall",
    "SummaryRequest",
    "TranscriptMode",
    "call_effects",
    "compact_instructions",
    "constraint_sentences",
    "extract_ledgers",
    "head_tail",
    "is_goal_candidate",
    "is_injected_text",
    "is_real_user_message",
    "is_slash_command",
    "ledger_block",
    "make_summarizer",
    "real_user_texts",
    "serialize_transcript",
    "shell_command",
]

#: The module each public name is loaded from on first use.
_HOMES: dict[str, str] = {
    **dict.fromkeys(
        ("is_goal_candidate", "is_injected_text", "is_real_user_message", "is_slash_command"),
        "ctxengine.model.roles",
    ),
    **dict.fromkeys(
        ("LiveRequest", "Summarizer", "Summary", "SummaryRequest"), "ctxengine.summarizers.base"
    ),
    **dict.fromkeys(("ModelSummarizer", "SummaryCall"), "ctxengine.summarizers.calls"),
    **dict.fromkeys(
        ("constraint_sentences", "real_user_texts"), "ctxengine.summarizers.constraints"
    ),
    "ExtractiveSummarizer": "ctxengine.summarizers.extractive",
    "ledger_block": "ctxengine.summarizers.extractive_state",
    **dict.fromkeys(("compact_instructions", "make_summarizer"), "ctxengine.summarizers.factory"),
    "HybridSummarizer": "ctxengine.summarizers.hybrid",
    **dict.fromkeys(
        ("call_effects", "extract_ledgers", "shell_command"), "ctxengine.summarizers.ledgers"
    ),
    "LLMSummarizer": "ctxengine.summarizers.llm",
    **dict.fromkeys(
        ("TRANSCRIPT_MODES", "TranscriptMode", "head_tail", "serialize_transcript"),
        "ctxengine.summarizers.transcript",
    ),
}


def __getattr__(name: str) -> Any:
    """A public name, imported from its module on first use and kept (PEP 562).

    Raises:
        AttributeError: ``name`` is not a public name (nor a submodule already imported).
    """
    return load_name(__name__, _HOMES, globals(), name)


def __dir__() -> list[str]:
    return names(globals(), __all__)
