"""The one table from a provider name to the renderer of its request bodies.

Every renderer takes the same arguments (see :class:`Renderer`), so a caller picks one by
the provider's ``name`` (:attr:`ctxengine.providers.base.Provider.name`) and never branches
on it.
"""

from __future__ import annotations

from collections.abc import Mapping
from types import MappingProxyType
from typing import Any, Protocol

from ctxengine.errors import ConfigError
from ctxengine.projection.context import Context
from ctxengine.projection.render._common import tool_schema
from ctxengine.projection.render.anthropic import render_anthropic
from ctxengine.projection.render.ids import original_names
from ctxengine.projection.render.openai import render_openai
from ctxengine.projection.render.openai_responses import render_openai_responses


class Renderer(Protocol):
    """Renders a context as one provider's request body (plain JSON values).

    Args:
        context: the projected context.
        model: the body's ``model`` field; omitted when ``None``.
        max_tokens: output cap in tokens, in the provider's own field; omitted when
            ``None``.
        declare_tools: also declare every tool the messages call that ``context.tools``
            lacks (transcripts rarely record the schemas).
        cache: mark the prefix for the provider's prompt cache where the API takes
            markers (Anthropic); ignored where caching is automatic (OpenAI).
        system_messages: the model takes ``role: "system"`` messages inside the
            conversation (a model profile's ``mid_conversation_system``): the continuation
            and re-injected state go there where the API allows it (Anthropic); ignored
            elsewhere.
    """

    def __call__(
        self,
        context: Context,
        *,
        model: str | None = None,
        max_tokens: int | None = None,
        declare_tools: bool = False,
        cache: bool = False,
        system_messages: bool = False,
    ) -> dict[str, Any]: ...


#: Provider name → renderer: ``openai`` (Chat Completions), ``openai-responses``
#: (Responses) and ``anthropic`` (Messages).
RENDERERS: Mapping[str, Renderer] = MappingProxyType(
    {
        "openai": render_openai,
        "openai-responses": render_openai_responses,
        "anthropic": render_anthropic,
    }
)


def renderer_for(name: str) -> Renderer:
    """The renderer for provider ``name``.

    Raises:
        ConfigError: no renderer has that name; the message lists the known ones.
    """
    render = RENDERERS.get(name)
    if render is None:
        known = ", ".join(sorted(RENDERERS))
        raise ConfigError(f"no renderer for provider {name!r}; known: {known}")
    return render


#: The tool-name rules (:func:`~ctxengine.projection.render.ids.wire_name`) each renderer
#: applies: the Responses API names functions as Chat Completions does.
NAME_RULES: Mapping[str, str] = MappingProxyType(
    {"openai": "openai", "openai-responses": "openai", "anthropic": "anthropic"}
)


def original_tool_names(context: Context, name: str) -> dict[str, str]:
    """``{name as sent: the context's own name}`` for every tool name of ``context`` (declared
    in ``context.tools`` or called by an assistant message) that the renderer for provider
    ``name`` replaces; empty when it replaces none. A reply's tool calls use the names sent,
    so a provider maps them back through this (``CompletionRequest.tool_names``).

    Raises:
        ConfigError: no renderer has that name.
    """
    renderer_for(name)
    declared = (tool_schema(schema)[0] for schema in context.tools)
    called = (c.name for m in context.messages if m.role == "assistant" for c in m.tool_calls)
    return original_names([*declared, *called], NAME_RULES[name])
