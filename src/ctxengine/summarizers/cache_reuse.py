"""Cache-reuse mode: the summary instruction appended to the exact request the agent sent last,
so the provider serves the whole history from its prefix cache (Claude Code and Codex append
to the raw history; OpenCode's opt-in "suffix" mode does the same).

:func:`append_to_body` adds one user turn to a body of each provider API and removes the
agent's output budget (the summary request sets its own); nothing else changes, since any
other edit of the prefix (tools, ``tool_choice``, cache markers) would break the cache.
Pure; no I/O.
"""

from __future__ import annotations

import copy
from collections.abc import Mapping
from typing import Any

#: Output-budget fields removed from the live body before the summary budget is applied.
_OUTPUT_FIELDS = ("max_tokens", "max_completion_tokens", "max_output_tokens")
#: ``tool_choice`` values that force a tool call: such a body cannot produce a summary.
_FORCING = ("required", "any", "tool", "function")


class NotReusable(ValueError):
    """The live body cannot carry a summary instruction (unknown provider, forced tool
    choice, no messages)."""


def _forces_tool(choice: object) -> bool:
    if isinstance(choice, str):
        return choice in _FORCING
    if isinstance(choice, Mapping):
        return str(choice.get("type")) in _FORCING
    return False


def append_to_body(body: Mapping[str, Any], provider: str, text: str) -> dict[str, Any]:
    """A copy of ``body`` with ``text`` as a final user turn.

    Args:
        body: a request body rendered for ``provider``.
        provider: ``"openai"`` (Chat Completions), ``"openai-responses"`` or ``"anthropic"``.
        text: the instruction.

    Returns:
        The new body (``body`` is not modified). Anthropic: the text becomes one more block of
        the last user turn when the body ends with one (the blocks before it keep their
        cache), else a new user turn.

    Raises:
        NotReusable: an unknown provider, a body without messages, a ``tool_choice`` that
            forces a tool call, or an Anthropic body that ends with a system message.
    """
    out = copy.deepcopy(dict(body))
    if _forces_tool(out.get("tool_choice")):
        raise NotReusable(f"tool_choice {out.get('tool_choice')!r} forces a tool call")
    for name in _OUTPUT_FIELDS:
        out.pop(name, None)
    if provider == "openai":
        messages = out.get("messages")
        if not isinstance(messages, list) or not messages:
            raise NotReusable("the body has no messages")
        messages.append({"role": "user", "content": text})
    elif provider == "openai-responses":
        items = out.get("input")
        if not isinstance(items, list) or not items:
            raise NotReusable("the body has no input items")
        items.append(
            {"type": "message", "role": "user", "content": [{"type": "input_text", "text": text}]}
        )
    elif provider == "anthropic":
        messages = out.get("messages")
        if not isinstance(messages, list) or not messages:
            raise NotReusable("the body has no messages")
        block = {"type": "text", "text": text}
        last = messages[-1]
        if isinstance(last, dict) and last.get("role") == "system":
            # A mid-conversation system message must precede an assistant message or end
            # the request: no user turn may follow it.
            raise NotReusable("the body ends with a mid-conversation system message")
        if isinstance(last, dict) and last.get("role") == "user":
            content = last.get("content")
            blocks = [{"type": "text", "text": content}] if isinstance(content, str) else content
            last["content"] = [*(blocks or []), block]
        else:
            messages.append({"role": "user", "content": [block]})
    else:
        raise NotReusable(f"no cache-reuse support for provider {provider!r}")
    return out


__all__ = ["NotReusable", "append_to_body"]
