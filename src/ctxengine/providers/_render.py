"""A request's own messages rendered the way agent requests are: through the renderer of the
provider's name (:func:`ctxengine.projection.render.registry.renderer_for`)."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from ctxengine.model import Message, TextPart
from ctxengine.projection.context import Context
from ctxengine.projection.render.registry import original_tool_names, renderer_for
from ctxengine.providers.base import CompletionRequest


def request_context(request: CompletionRequest, *, system_message: bool = True) -> Context:
    """The context ``request.messages`` make: ``request.system`` first as a system message
    (unless ``system_message`` is false or it is empty), the request's tools declared."""
    head = (Message("system", (TextPart(request.system),)),) if request.system else ()
    messages = (*head, *request.messages) if system_message else request.messages
    return Context(messages=messages, sources=(None,) * len(messages), tools=request.tools)


def render_messages(
    request: CompletionRequest, provider: str, *, system_message: bool = True
) -> dict[str, Any]:
    """The body of ``request.messages`` for ``provider``, rendered with the request's
    ``cache`` setting and no model or output budget (the provider fills those in)."""
    ctx = request_context(request, system_message=system_message)
    return renderer_for(provider)(ctx, cache=request.cache)


def reply_names(request: CompletionRequest, provider: str) -> Mapping[str, str]:
    """``{name as sent: the caller's name}`` for the tool names of ``request`` that the
    renderer replaced: ``request.tool_names`` for a prebuilt body, else worked out from the
    messages and tools the provider renders."""
    if request.body is not None:
        return request.tool_names
    return original_tool_names(request_context(request), provider)
