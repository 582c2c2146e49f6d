"""A context handed off as a provider request body: unanswered calls closed, the next user
message appended, rendered and checked (``compact`` and ``export`` write it)."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

import typer

from ctxengine.policy.defaults import DEFAULT_ANTHROPIC_MAX_TOKENS
from ctxengine.projection.context import Context
from ctxengine.projection.handoff import close_pending, with_next_user
from ctxengine.projection.render.registry import renderer_for
from ctxengine.projection.validate import validate
from ctxengine.tokens.base import Estimator


@dataclass(frozen=True, slots=True)
class RequestOptions:
    """What the command line says about the request body.

    Attributes:
        provider: ``openai`` or ``anthropic`` (a key of :data:`ctxengine.replay.RENDERERS`).
        model: model name written into the body; with it the body must pass the strict check.
        max_tokens: output budget written into the body, in tokens.
        next_user: the next user message, appended to the request.
    """

    provider: str
    model: str | None = None
    max_tokens: int | None = None
    next_user: str | None = None


@dataclass(frozen=True, slots=True)
class Handoff:
    """A rendered hand-off.

    Attributes:
        context: the context sent: pending calls closed, the next user message appended.
        closed: ids of the calls closed with the session-ended result.
        body: the provider request body (JSON-ready).
    """

    context: Context
    closed: tuple[str, ...]
    body: dict[str, Any]


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
    return Handoff(ctx, closed, render_request(ctx, opts, reserve))


def render_request(ctx: Context, opts: RequestOptions, reserve: int) -> dict[str, Any]:
    """Render a hand-off body: every tool it calls declared (transcripts rarely record the
    schemas); Anthropic's required ``max_tokens`` filled in (``opts.max_tokens``, else the
    smaller of :data:`DEFAULT_ANTHROPIC_MAX_TOKENS` and ``reserve``, in tokens); with
    ``opts.model`` the body must pass the strict check (it can be POSTed as is).

    Raises:
        typer.BadParameter: a strict Anthropic body ends with the assistant's turn (the
            next user message is needed: ``--user``).
        RuntimeError: ctxengine produced an invalid body (an internal error).
    """
    out_budget = opts.max_tokens
    if opts.provider == "anthropic" and out_budget is None:
        out_budget = min(DEFAULT_ANTHROPIC_MAX_TOKENS, reserve)
    render = renderer_for(opts.provider)
    body = render(ctx, model=opts.model, max_tokens=out_budget, declare_tools=True)
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
