"""ctxengine: decides what an LLM agent's model sees on every call.

The whole history is an append-only log; the context is a projection of it; when the context
nears the window a cheapest-first ladder (truncate, prune, summarize, recover) compacts it and
records every step as data.

The names below are the public surface; everything else is importable from its module. They
are loaded on first use (PEP 562): ``import ctxengine`` reads no other module of the package,
``ctxengine.Session`` or ``from ctxengine import Session`` imports the engine then.
"""

from __future__ import annotations

#: ``typing.TYPE_CHECKING`` without importing :mod:`typing`, which costs more than the rest of
#: this module; type checkers read the block below.
TYPE_CHECKING = False
if TYPE_CHECKING:
    from typing import Any

    from ctxengine.assembly import ContextAssembler
    from ctxengine.engine import CompactionOutcome, LadderEvent, PlanDecision, Session
    from ctxengine.engine.stateless import PrefixCache, prepare
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
    "PrefixCache",
    "Session",
    "StoreConflict",
    "SummaryRejected",
    "ThrashError",
    "TranscriptError",
    "UnsupportedFormatError",
    "ensure_valid",
    "prepare",
    "read_transcript",
    "render_anthropic",
    "render_openai",
    "validate",
]

#: The module each public name is loaded from on first use.
_HOMES: dict[str, str] = {
    "ContextAssembler": "ctxengine.assembly",
    **dict.fromkeys(
        ("CompactionOutcome", "LadderEvent", "PlanDecision", "Session"), "ctxengine.engine"
    ),
    **dict.fromkeys(
        (
            "CompactionLoopError",
            "CompactionVetoed",
            "ConfigError",
            "ContextFloorError",
            "ContextOverflow",
            "CtxEngineError",
            "NothingToCompact",
            "PinBudgetExceeded",
            "StoreConflict",
            "SummaryRejected",
            "ThrashError",
            "TranscriptError",
            "UnsupportedFormatError",
        ),
        "ctxengine.errors",
    ),
    **dict.fromkeys(("PrefixCache", "prepare"), "ctxengine.engine.stateless"),
    "read_transcript": "ctxengine.importers",
    "CompactionPlan": "ctxengine.ladder.plan",
    "DEFAULT_POLICY": "ctxengine.policy",
    "Policy": "ctxengine.policy",
    "Context": "ctxengine.projection.context",
    "render_anthropic": "ctxengine.projection.render.anthropic",
    "render_openai": "ctxengine.projection.render.openai",
    "ensure_valid": "ctxengine.projection.validate",
    "validate": "ctxengine.projection.validate",
}


def __getattr__(name: str) -> Any:
    """A public name, imported from its module on first use and kept (PEP 562).

    Raises:
        AttributeError: ``name`` is not a public name (nor a submodule already imported).
    """
    from ctxengine._runtime import load_name  # not at import: `import ctxengine` loads nothing else

    return load_name(__name__, _HOMES, globals(), name)


def __dir__() -> list[str]:
    from ctxengine._runtime import names

    return names(globals(), __all__)
