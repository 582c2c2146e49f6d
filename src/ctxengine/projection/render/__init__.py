"""Renderers: a :class:`~ctxengine.projection.context.Context` as a provider request body."""

from ctxengine.projection.render.anthropic import render_anthropic
from ctxengine.projection.render.openai import render_openai

__all__ = ["render_anthropic", "render_openai"]
