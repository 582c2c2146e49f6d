"""LangChain v1: :class:`CtxengineMiddleware`, an ``AgentMiddleware`` whose
``wrap_model_call`` hands the model a context fitted to the window, in place of
``SummarizationMiddleware``.

Usage::

    from langchain.agents import create_agent
    from ctxengine.adapters.langchain import CtxengineMiddleware

    agent = create_agent(model, tools, middleware=[CtxengineMiddleware(window=128_000)])

The view is ephemeral (``wrap_model_call``): the agent's state keeps every message; each
model call gets the projection of it, continuing from the previous call's compaction (a
:class:`~ctxengine.engine.stateless.PrefixCache`), so the conversation is never rewritten and
the checkpointed state stays whole.

Mapping: messages go through LangChain's own OpenAI conversion
(``convert_to_openai_messages``): ``SystemMessage`` → system, ``HumanMessage`` → user,
``AIMessage`` → assistant with its ``tool_calls``, ``ToolMessage`` → tool result. The
messages kept verbatim are the agent's own objects; the continuation state and pruned or
truncated tool results come back as ``HumanMessage`` / ``ToolMessage`` / ``AIMessage``
(``convert_to_messages``). Dropped in what is made anew (never in what is kept): message ids,
``additional_kwargs``, ``response_metadata`` and usage metadata, content blocks other than
text and images. The request's ``system_message`` and tools are counted and passed on as
they are.
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable
from typing import Any

from langchain.agents.middleware import AgentMiddleware, ModelRequest, ModelResponse
from langchain_core.messages import (
    SystemMessage,
    convert_to_messages,
    convert_to_openai_messages,
)
from langchain_core.utils.function_calling import convert_to_openai_tool

from ctxengine.engine.stateless import PrefixCache
from ctxengine.policy import DEFAULT_POLICY, Policy

from ._fit import Fitted, Fitter

__all__ = ["CtxengineMiddleware"]


class CtxengineMiddleware(AgentMiddleware):
    """Fits each model call's messages to ``window`` tokens (see the module docstring).

    Args:
        window: the model's context window in tokens.
        policy: the ladder configuration (default policy).
        cache: checkpoints of earlier calls (default: one of the middleware's own).

    Attributes:
        fitter: the fitter of the agent's conversation (``calls``, ``changed_calls``).
        last: what the latest call was given (:class:`~ctxengine.adapters._fit.Fitted`).
    """

    def __init__(
        self, window: int, *, policy: Policy = DEFAULT_POLICY, cache: PrefixCache | None = None
    ) -> None:
        super().__init__()
        self.fitter = Fitter(window, policy=policy, cache=cache)
        self.last: Fitted | None = None

    def _fit(self, request: ModelRequest) -> ModelRequest:
        messages: list[Any] = list(request.messages)
        groups = [convert_to_openai_messages([m]) for m in messages]
        system = request.system_message
        text = system.text if isinstance(system, SystemMessage) else None
        tools = [convert_to_openai_tool(t) for t in request.tools or ()]
        fitted = self.fitter.fit(groups, system=text or None, tools=tools)
        self.last = fitted
        if not fitted.changed:
            return request
        head: list[Any] = convert_to_messages(fitted.head_chat())
        return request.override(messages=[*head, *messages[fitted.start :]])

    def wrap_model_call(
        self,
        request: ModelRequest,
        handler: Callable[[ModelRequest], ModelResponse],
    ) -> Any:
        """Call the model on the fitted messages."""
        return handler(self._fit(request))

    async def awrap_model_call(
        self,
        request: ModelRequest,
        handler: Callable[[ModelRequest], Awaitable[ModelResponse]],
    ) -> Any:
        """Call the model on the fitted messages (async agents)."""
        return await handler(self._fit(request))
