"""Renderers: a :class:`~ctxengine.projection.context.Context` as a provider request body,
and the one table from a provider name to its renderer."""

from ctxengine.projection.render._common import called_tool_schemas
from ctxengine.projection.render.anthropic import render_anthropic
from ctxengine.projection.render.openai import render_openai
from ctxengine.projection.render.openai_responses import render_openai_responses
from ctxengine.projection.render.registry import (
    RENDERERS,
    Renderer,
    original_tool_names,
    renderer_for,
)

__all__ = [
    "RENDERERS",
    "Renderer",
    "called_tool_schemas",
    "original_tool_names",
    "render_anthropic",
    "render_openai",
    "render_openai_responses",
    "renderer_for",
]
