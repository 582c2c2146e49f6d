"""A context handed off as a provider request body: unanswered calls closed, the next user
message appended, rendered and checked (``compact`` and ``export`` write it)."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

import typer

from ctxengine.policy.defaults import DEFAULT_ANTHROPIC_MAX_TOKENS
from ctxengine.projection.context import Context
from ctxengine.projection.handoff import close_pending, with_next_user
from ctxengine.projection.render.anthropic import cache_layout
from ctxengine.projection.render.registry import renderer_for
from ctxengine.projection.validate import validate
from ctxengine.providers.profiles import ProfileTable
from ctxengine.tokens.base import Estimator


@dataclass(frozen=True, slots=True)
class RequestOptions:
    """What the command line says about the request body.

    Attributes:
        provider: ``openai`` or ``anthropic`` (a key of :data:`ctxengine.replay.RENDERERS`).
        model: model name written into the body; with it the body must pass the strict check,
            and the model's profile decides where the state goes (``mid_conversation_system``,
            :func:`takes_system_messages`).
        max_tokens: output budget written into the body, in tokens.
        next_user: the next user message, appended to the request.
        cache: put the prompt-cache breakpoints every agent request carries on the body
            (Anthropic: at most four ``cache_control`` markers, never on the last message;
            the other APIs have none to write).
    """

    provider: str
    model: str | None = None
    max_tokens: int | None = None
    next_user: str | None = None
    cache: bool = False


def takes_system_messages(model: str | None) -> bool:
    """Whether ``model``'s profile (the shipped table with the ``CTXENGINE_MODEL_PROFILES``
    overrides) sets ``mid_conversation_system``; ``False`` for no model or an unknown one.

    Raises:
        ConfigError: the overrides file is missing or invalid.
    """
    if model is None:
        return False
    profile = ProfileTable.load().lookup(model)
    return profile is not None and profile.mid_conversation_system


@dataclass(frozen=True, slots=True)
class Handoff:
    """A rendered hand-off.

    Attributes:
        context: the context sent: pending calls closed, the next user message appended.
        closed: ids of the calls closed with the session-ended result.
        body: the provider request body (JSON-ready).
        cache_breakpoints: where the body's prompt-cache breakpoints are, in request order:
            ``(JSON path, boundary)`` as ``inspect`` lists them
            (:func:`~ctxengine.projection.render.anthropic.cache_layout`); empty without
            ``cache`` or for a provider other than Anthropic.
    """

    context: Context
    closed: tuple[str, ...]
    body: dict[str, Any]
    cache_breakpoints: tuple[tuple[str, str], ...] = ()


def hand_off(ctx: Context, estimator: Estimator, reserve: int, opts: RequestOptions) -> Handoff:
    """Close ``ctx``'s unanswered calls, append ``opts.next_user`` and render the body
    (:func:`render_request`; ``reserve`` in tokens).

    Raises:
        typer.BadParameter: see :func:`render_request`.
        RuntimeError: see :func:`render_request`.
    """
    ctx, closed = close_pending(ctx, estimator)
    if opts.next_user:
        ctx = with_next_user(ctx, opts.next_user, estimator)
    system_messages = takes_system_messages(opts.model)
    body = render_request(ctx, opts, reserve, system_messages=system_messages)
    layout: list[tuple[str, str]] = []
    if opts.cache and opts.provider == "anthropic":
        layout = cache_layout(ctx, declare_tools=True, system_messages=system_messages)
    return Handoff(ctx, closed, body, tuple(layout))


def render_request(
    ctx: Context, opts: RequestOptions, reserve: int, *, system_messages: bool | None = None
) -> dict[str, Any]:
    """Render a hand-off body: every tool it calls declared (transcripts rarely record the
    schemas); Anthropic's required ``max_tokens`` filled in (``opts.max_tokens``, else the
    smaller of :data:`DEFAULT_ANTHROPIC_MAX_TOKENS` and ``reserve``, in tokens); with
    ``opts.model`` the body must pass the strict check (it can be POSTed as is), and a model
    whose profile takes mid-conversation system messages gets the state there, as
    ``Session.complete`` sends it (``system_messages``, when given, decides instead of the
    profile); with ``opts.cache`` the prompt-cache breakpoints.

    Raises:
        ConfigError: the model profile overrides file is missing or invalid.
        typer.BadParameter: a strict Anthropic body ends with the assistant's turn (the
            next user message is needed: ``--user``).
        RuntimeError: ctxengine produced an invalid body (an internal error).
    """
    out_budget = opts.max_tokens
    if opts.provider == "anthropic" and out_budget is None:
        out_budget = min(DEFAULT_ANTHROPIC_MAX_TOKENS, reserve)
    render = renderer_for(opts.provider)
    body = render(
        ctx,
        model=opts.model,
        max_tokens=out_budget,
        declare_tools=True,
        cache=opts.cache,
        system_messages=(
            takes_system_messages(opts.model) if system_messages is None else system_messages
        ),
    )
    problems = validate(body, opts.provider, strict=opts.model is not None)
    if any("(prefill)" in p for p in problems):
        raise typer.BadParameter(
            "the request ends with the assistant's last reply, which Anthropic models reject "
            "as prefill: give the next user message with --user TEXT",
            param_hint="--user",
        )
    if problems:
        raise RuntimeError(f"ctxengine produced an invalid {opts.provider} request: {problems[:3]}")
    return body
