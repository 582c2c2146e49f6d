"""pydantic-ai: :class:`CtxengineHistory`, a history processor that hands the model the
agent's messages fitted to the window.

Usage (pydantic-ai 2 takes history processors as the ``ProcessHistory`` capability; 1.x as
``history_processors=[…]``)::

    from pydantic_ai import Agent
    from pydantic_ai.capabilities import ProcessHistory
    from ctxengine.adapters.pydantic_ai import CtxengineHistory

    agent = Agent("openai:gpt-5", capabilities=[ProcessHistory(CtxengineHistory(400_000))])

Each model request gets the projection of its history, continuing from the previous
request's compaction (a :class:`~ctxengine.engine.stateless.PrefixCache`) while the history
grows at its end. ``ProcessHistory`` writes what a processor returns back into the run's
history, so after a compaction the agent's history is the compacted one (continuation state
first) and the next compaction summarizes from there.

Mapping (per message part, to ctxengine's messages): ``SystemPromptPart`` → system;
``UserPromptPart`` → user (text; other content as its string form); ``CompactionPart`` in a
request → user; ``ToolReturnPart`` → tool result; ``RetryPromptPart`` → tool result (error)
when it names a tool call, else user; ``ModelResponse`` → assistant with its ``TextPart``
text and ``ToolCallPart`` calls (``ThinkingPart`` and provider-built parts are not counted).
Messages kept verbatim are the agent's own objects; the continuation state comes back as a
``ModelRequest`` with a ``UserPromptPart``, pruned or truncated tool results as
``ToolReturnPart`` (the tool's name from its call), a rendered reply as a ``ModelResponse``
of ``TextPart`` / ``ToolCallPart``. Dropped in what is made anew: timestamps, usage, model
names, provider details, thinking, files and images of the parts.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

from pydantic_ai.messages import (
    CompactionPart,
    ModelMessage,
    ModelRequest,
    ModelResponse,
    RetryPromptPart,
    SystemPromptPart,
    TextPart,
    ToolCallPart,
    ToolReturnPart,
    UserPromptPart,
)

from ctxengine.engine.stateless import PrefixCache
from ctxengine.policy import DEFAULT_POLICY, Policy

from ._fit import Fitted, Fitter

__all__ = ["CtxengineHistory", "to_chat"]

Json = dict[str, Any]


def _text(content: Any) -> str:
    return content if isinstance(content, str) else str(content)


def to_chat(message: ModelMessage) -> list[Json]:
    """One pydantic-ai message as Chat Completions messages (see the module docstring)."""
    if isinstance(message, ModelResponse):
        texts = [p.content for p in message.parts if isinstance(p, TextPart) and p.content]
        calls = [
            {
                "id": p.tool_call_id,
                "type": "function",
                "function": {"name": p.tool_name, "arguments": p.args_as_json_str()},
            }
            for p in message.parts
            if isinstance(p, ToolCallPart)
        ]
        out: Json = {"role": "assistant", "content": "\n\n".join(texts) or None}
        if calls:
            out["tool_calls"] = calls
        return [out] if texts or calls else []
    found: list[Json] = []
    for part in message.parts:
        if isinstance(part, SystemPromptPart):
            found.append({"role": "system", "content": part.content})
        elif isinstance(part, UserPromptPart):
            found.append({"role": "user", "content": _text(part.content)})
        elif isinstance(part, ToolReturnPart):
            found.append({"role": "tool", "tool_call_id": part.tool_call_id,
                          "content": part.model_response_str()})  # fmt: skip
        elif isinstance(part, RetryPromptPart):
            if part.tool_name is not None:
                found.append({"role": "tool", "tool_call_id": part.tool_call_id,
                              "content": part.model_response()})  # fmt: skip
            else:
                found.append({"role": "user", "content": part.model_response()})
        elif isinstance(part, CompactionPart) and part.content:
            found.append({"role": "user", "content": part.content})
    return found


def _from_chat(items: Sequence[Json], names: Mapping[str, str]) -> list[ModelMessage]:
    """Chat Completions messages as pydantic-ai messages; consecutive request parts share one
    ``ModelRequest``."""
    out: list[ModelMessage] = []
    parts: list[Any] = []
    for item in items:
        role = item["role"]
        if role == "assistant":
            if parts:
                out.append(ModelRequest(parts=parts))
                parts = []
            reply: list[Any] = []
            content = item.get("content")
            if isinstance(content, str) and content:
                reply.append(TextPart(content))
            for call in item.get("tool_calls") or ():
                fn = call["function"]
                reply.append(ToolCallPart(fn["name"], fn["arguments"], call["id"]))
            out.append(ModelResponse(parts=reply))
            continue
        text = item.get("content")
        if isinstance(text, list):
            text = "\n".join(p.get("text", "") for p in text if isinstance(p, dict))
        text = text if isinstance(text, str) else ""
        if role == "system" or role == "developer":
            parts.append(SystemPromptPart(text))
        elif role == "tool":
            cid = item["tool_call_id"]
            parts.append(ToolReturnPart(names.get(cid, "tool"), text, cid))
        else:
            parts.append(UserPromptPart(text))
    if parts:
        out.append(ModelRequest(parts=parts))
    return out


def _merge(head: list[ModelMessage], tail: Sequence[ModelMessage]) -> list[ModelMessage]:
    """``head + tail``, a request ending ``head`` and one opening ``tail`` made one."""
    if head and tail and isinstance(head[-1], ModelRequest) and isinstance(tail[0], ModelRequest):
        joined = ModelRequest(parts=[*head[-1].parts, *tail[0].parts])
        return [*head[:-1], joined, *tail[1:]]
    return [*head, *tail]


class CtxengineHistory:
    """A pydantic-ai history processor fitting the messages to ``window`` tokens (see the
    module docstring). One instance per conversation (it continues from its previous call).

    Args:
        window: the model's context window in tokens.
        tools: the agent's tool schemas (counted in the window).
        policy: the ladder configuration.
        cache: checkpoints of earlier calls (default: one of the processor's own).

    Attributes:
        fitter: the conversation's fitter (``calls``, ``changed_calls``).
        last: what the latest call was given, fitted.
    """

    def __init__(
        self,
        window: int,
        *,
        tools: Sequence[Mapping[str, Any]] = (),
        policy: Policy = DEFAULT_POLICY,
        cache: PrefixCache | None = None,
    ) -> None:
        self.tools = tuple(tools)
        self.fitter = Fitter(window, policy=policy, cache=cache)
        self.last: Fitted | None = None

    def __call__(self, messages: list[ModelMessage]) -> list[ModelMessage]:
        """The messages to send: the agent's own when they fit, else the fitted ones."""
        if not messages:
            return messages
        fitted = self.fitter.fit([to_chat(m) for m in messages], tools=self.tools)
        self.last = fitted
        if not fitted.changed:
            return messages
        names = {
            p.tool_call_id: p.tool_name
            for m in messages
            if isinstance(m, ModelResponse)
            for p in m.parts
            if isinstance(p, ToolCallPart)
        }
        head = _from_chat(fitted.head_chat(), names)
        return _merge(head, messages[fitted.start :])
