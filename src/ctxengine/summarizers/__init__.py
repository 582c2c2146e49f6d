"""Summarizers: turn the old prefix of a session into continuation state.

:class:`Summarizer` is the protocol; :class:`ExtractiveSummarizer` is the deterministic default
(no LLM). :func:`extract_ledgers` and :func:`serialize_transcript` are shared with the LLM
summarizers. :class:`LLMSummarizer` has a model write the continuation state;
:class:`HybridSummarizer` appends the extractive ledgers to that narrative;
:func:`make_summarizer` builds one by name.
"""

from ctxengine.model.roles import (
    is_goal_candidate,
    is_injected_text,
    is_real_user_message,
    is_slash_command,
)
from ctxengine.summarizers.base import LiveRequest, Summarizer, Summary, SummaryRequest
from ctxengine.summarizers.calls import ModelSummarizer, SummaryCall
from ctxengine.summarizers.constraints import constraint_sentences, real_user_texts
from ctxengine.summarizers.extractive import ExtractiveSummarizer, ledger_block
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
