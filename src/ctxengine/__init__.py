"""ctxengine: decides what an LLM agent's model sees on every call.

The whole history is an append-only log; the context is a projection of it; when the context
nears the window a cheapest-first ladder (truncate, prune, summarize, recover) compacts it and
records every step as data.

The names below are the public surface; everything else is importable from its module.
"""

from ctxengine.assembly import ContextAssembler
from ctxengine.engine import CompactionOutcome, LadderEvent, PlanDecision, Session
from ctxengine.errors import (
    CompactionLoopError,
    CompactionVetoed,
    ConfigError,
    ContextFloorError,
    ContextOverflow,
    CtxEngineError,
    NothingToCompact,
    PinBudgetExceeded,
    StoreConflict,
    SummaryRejected,
    ThrashError,
    TranscriptError,
    UnsupportedFormatError,
)
from ctxengine.importers import read_transcript
from ctxengine.ladder.plan import CompactionPlan
from ctxengine.policy import DEFAULT_POLICY, Policy
from ctxengine.projection.context import Context
from ctxengine.projection.render.anthropic import render_anthropic
from ctxengine.projection.render.openai import render_openai
from ctxengine.projection.validate import ensure_valid, validate

__version__ = "0.1.0"

__all__ = [
    "DEFAULT_POLICY",
    "CompactionLoopError",
    "CompactionOutcome",
    "CompactionPlan",
    "CompactionVetoed",
    "ConfigError",
    "Context",
    "ContextAssembler",
    "ContextFloorError",
    "ContextOverflow",
    "CtxEngineError",
    "LadderEvent",
    "NothingToCompact",
    "PinBudgetExceeded",
    "PlanDecision",
    "Policy",
    "Session",
    "StoreConflict",
    "SummaryRejected",
    "ThrashError",
    "TranscriptError",
    "UnsupportedFormatError",
    "ensure_valid",
    "read_transcript",
    "render_anthropic",
    "render_openai",
    "validate",
]
