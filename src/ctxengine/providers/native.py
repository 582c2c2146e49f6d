"""Provider-native compaction on the wire: the request fields that ask a provider to compact,
and the compaction items read back from its replies exactly as returned.

==========================  ================================================================
request                     fields
==========================  ================================================================
Anthropic, at a threshold   ``context_management: {"edits": [...]}`` with ``compact_20260112``
                            (``trigger``, ``instructions``, ``pause_after_compaction``) after
                            the context-editing edits configured (``clear_thinking_20251015``
                            first, then ``clear_tool_uses_20250919``, as the context-editing
                            docs order combined strategies); beta headers
                            ``compact-2026-01-12`` and ``context-management-2025-06-27``
Anthropic, on demand        ``compaction: {"type": "summarize", "instructions"?}``, without
                            the fields a compaction request may not carry; beta
                            ``compact-2026-09-04``. The reply holds the ``compaction`` block
                            alone (``stop_reason: "compaction"``)
OpenAI Responses,           ``context_management: [{"type": "compaction",
at a threshold              "compact_threshold": N}]``
OpenAI, on demand           ``POST /responses/compact`` with the ``input`` items; the reply's
                            ``output`` is the compacted window: the user messages, then one
                            ``compaction`` item
==========================  ================================================================

Replies are read from the raw HTTP body (not from the SDK's models, which add the fields
they declare and drop or reorder others), so every item is stored as
:class:`~ctxengine.model.NativeCompactionPart` with its JSON exactly as the provider wrote
it (compact separators, key order kept).

Usage: Anthropic reports a compaction's own tokens in ``usage.iterations`` (an entry of
type ``"compaction"``), not in the top-level fields; the size of the context the reply was
written on is the last ``"message"`` iteration's (the SDK's ``BetaIterationsUsage``: "Do not
derive the context window size from a ``compaction`` entry"). :func:`anthropic_usages`
splits them.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

import orjson

from ctxengine.errors import ConfigError
from ctxengine.model import NativeCompactionPart, Usage
from ctxengine.policy.defaults import (
    ANTHROPIC_BETA_COMPACT_ON_DEMAND,
    ANTHROPIC_BETA_COMPACT_THRESHOLD,
    ANTHROPIC_BETA_CONTEXT_EDITING,
    ANTHROPIC_COMPACT_TRIGGER_MIN,
    ANTHROPIC_COMPACTION_DROPPED_FIELDS,
)

#: The ``type`` of a compaction block (Anthropic) and of a compaction item (OpenAI).
COMPACTION = "compaction"
#: The compaction edit of Anthropic's ``context_management``.
COMPACT_EDIT = "compact_20260112"
#: ``stop_reason`` of an Anthropic reply that holds only the compaction block (on demand, or
#: ``pause_after_compaction``).
COMPACTION_STOP = "compaction"


@dataclass(frozen=True, slots=True)
class NativeSettings:
    """What an ordinary request asks the provider to do with its context on its own.

    Attributes:
        compact: ask for compaction at a threshold (Anthropic ``compact_20260112``, OpenAI
            ``compact_threshold``); ``False`` sends only the context-editing ``edits``.
        trigger_tokens: the threshold in input tokens; ``None``: Anthropic's default
            (150,000), and no ``context_management`` for OpenAI (which needs a threshold).
        instructions: replace Anthropic's summarization prompt.
        pause_after_compaction: Anthropic returns the compaction block alone
            (``stop_reason: "compaction"``) instead of answering on the compacted context.
        edits: Anthropic context-editing edits (``clear_tool_uses_20250919``,
            ``clear_thinking_20251015``), exactly as the API takes them.
    """

    compact: bool = True
    trigger_tokens: int | None = None
    instructions: str | None = None
    pause_after_compaction: bool = False
    edits: tuple[Mapping[str, Any], ...] = ()


def anthropic_threshold(settings: NativeSettings) -> tuple[dict[str, Any], tuple[str, ...]]:
    """The Messages request fields and beta headers of ``settings``: ``({"context_management":
    {"edits": [...]}}, betas)``, or ``({}, ())`` when there is nothing to ask.

    Raises:
        ConfigError: a trigger below Anthropic's minimum
            (:data:`~ctxengine.policy.defaults.ANTHROPIC_COMPACT_TRIGGER_MIN`).
    """
    edits = sorted(
        (dict(e) for e in settings.edits),
        key=lambda e: 0 if e.get("type") == "clear_thinking_20251015" else 1,
    )
    betas: list[str] = []
    if settings.compact:
        edit: dict[str, Any] = {"type": COMPACT_EDIT}
        trigger = settings.trigger_tokens
        if trigger is not None:
            if trigger < ANTHROPIC_COMPACT_TRIGGER_MIN:
                raise ConfigError(
                    f"an Anthropic compaction trigger of {trigger:,} tokens is below the API's "
                    f"minimum of {ANTHROPIC_COMPACT_TRIGGER_MIN:,}"
                )
            edit["trigger"] = {"type": "input_tokens", "value": trigger}
        if settings.instructions:
            edit["instructions"] = settings.instructions
        if settings.pause_after_compaction:
            edit["pause_after_compaction"] = True
        edits.append(edit)
        betas.append(ANTHROPIC_BETA_COMPACT_THRESHOLD)
    if settings.edits:
        betas.append(ANTHROPIC_BETA_CONTEXT_EDITING)
    if not edits:
        return {}, ()
    return {"context_management": {"edits": edits}}, tuple(betas)


def anthropic_on_demand(
    body: Mapping[str, Any], instructions: str | None = None
) -> tuple[dict[str, Any], tuple[str, ...]]:
    """``body`` (a Messages request) turned into a compaction request: the top-level
    ``compaction`` parameter added (``instructions`` replace the server's prompt; blank ones
    count as absent), the fields a compaction request may not carry removed (a forced
    ``tool_choice`` too), and the beta header it needs."""
    out = {k: v for k, v in body.items() if k not in ANTHROPIC_COMPACTION_DROPPED_FIELDS}
    choice = out.get("tool_choice")
    if isinstance(choice, Mapping) and choice.get("type") in ("any", "tool"):
        del out["tool_choice"]
    config: dict[str, Any] = {"type": "summarize"}
    if instructions and instructions.strip():
        config["instructions"] = instructions
    out["compaction"] = config
    return out, (ANTHROPIC_BETA_COMPACT_ON_DEMAND,)


def openai_threshold(settings: NativeSettings) -> dict[str, Any]:
    """The Responses request fields of ``settings``: ``{"context_management": [{"type":
    "compaction", "compact_threshold": N}]}``, or ``{}`` without a threshold or with
    ``compact`` off."""
    if not settings.compact or settings.trigger_tokens is None:
        return {}
    return {
        "context_management": [{"type": COMPACTION, "compact_threshold": settings.trigger_tokens}]
    }


def beta_header(betas: Sequence[str], existing: str | None = None) -> str:
    """The ``anthropic-beta`` header value: ``existing`` ones first, then ``betas``, each
    once, comma-separated."""
    names = [n.strip() for n in (existing or "").split(",") if n.strip()]
    for beta in betas:
        if beta not in names:
            names.append(beta)
    return ",".join(names)


def item_json(item: Mapping[str, Any]) -> str:
    """``item`` (parsed from a reply with its key order) as compact JSON: the bytes the
    provider wrote when it wrote compact JSON."""
    return orjson.dumps(item).decode()


def native_parts(
    provider: str, items: Sequence[Any], *, types: tuple[str, ...] = (COMPACTION,)
) -> tuple[NativeCompactionPart, ...]:
    """The items of ``items`` whose ``type`` is one of ``types``, as
    :class:`~ctxengine.model.NativeCompactionPart` of ``provider`` (``"anthropic"``,
    ``"openai"``), exactly as returned, in order."""
    return tuple(
        NativeCompactionPart(provider, item_json(item))
        for item in items
        if isinstance(item, Mapping) and item.get("type") in types
    )


def _int(value: object) -> int:
    return value if isinstance(value, int) and not isinstance(value, bool) else 0


def _usage(u: Mapping[str, Any]) -> Usage:
    return Usage(
        _int(u.get("input_tokens")),
        _int(u.get("output_tokens")),
        _int(u.get("cache_read_input_tokens")),
        _int(u.get("cache_creation_input_tokens")),
    )


def anthropic_usages(usage: object) -> tuple[Usage, Usage | None]:
    """Anthropic reply usage → ``(usage of the reply, usage of its compaction)``.

    The reply's usage is the top-level one, except that a reply carrying
    ``usage.iterations`` with a ``"message"`` entry takes the last one's (the context the
    reply was written on, after a compaction, and what the reply added to it: the usage
    anchor). The compaction's usage is the sum of the ``"compaction"`` iterations (``None``
    when there is none). All counts in tokens."""
    u = usage if isinstance(usage, Mapping) else {}
    top = _usage(u)
    iterations = [i for i in u.get("iterations") or () if isinstance(i, Mapping)]
    messages = [i for i in iterations if i.get("type") == "message"]
    compactions = [_usage(i) for i in iterations if i.get("type") == COMPACTION]
    compacted = (
        Usage(
            sum(c.input_tokens for c in compactions),
            sum(c.output_tokens for c in compactions),
            sum(c.cache_read_tokens for c in compactions),
            sum(c.cache_write_tokens for c in compactions),
        )
        if compactions
        else None
    )
    return (_usage(messages[-1]) if messages else top), compacted


def usage_dict(usage: Usage) -> dict[str, int]:
    """``usage`` as plain JSON (kept in a message's ``meta``)."""
    return {
        "input_tokens": usage.input_tokens,
        "output_tokens": usage.output_tokens,
        "cache_read_tokens": usage.cache_read_tokens,
        "cache_write_tokens": usage.cache_write_tokens,
    }


__all__ = [
    "COMPACTION",
    "COMPACTION_STOP",
    "COMPACT_EDIT",
    "NativeSettings",
    "anthropic_on_demand",
    "anthropic_threshold",
    "anthropic_usages",
    "beta_header",
    "item_json",
    "native_parts",
    "openai_threshold",
    "usage_dict",
]
