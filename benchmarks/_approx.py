"""An approximate token counter equal to LangChain's ``count_tokens_approximately``.

The rule is re-implemented from ``langchain_core/messages/utils.py`` (langchain-core 1.x; the
default arguments: 4 characters per token, 3 extra tokens per message, names counted, 85 tokens
per image block, no usage scaling, no tools) so that ctxengine's outputs are measured with the
same yardstick as the peers' table in ``../shared/reference/peers-measured.md``. LangChain is
not a dependency of ctxengine.
"""

from __future__ import annotations

import json
import math
from collections.abc import Sequence
from typing import Any


def approx_tokens(messages: Sequence[dict[str, Any]]) -> int:
    """LangChain's ``count_tokens_approximately`` with its defaults, on OpenAI-format
    messages (re-implemented from ``langchain_core/messages/utils.py``; langchain is not a
    dependency).

    Per message: characters of the content (a string; or, for a list, text blocks' text, a
    flat 85 tokens per image block and ``len(repr(block))`` for other blocks), plus
    ``len(repr(tool_calls))`` for an assistant message with string content (LangChain's
    ``{"name", "args", "id", "type": "tool_call"}`` dicts, args parsed from the JSON), plus the
    tool call id of a tool message, the role and the name; ``ceil(chars / 4) + 3`` tokens.
    The total is rounded up.
    """
    total = 0.0
    for m in messages:
        role = str(m["role"])
        content = m.get("content") or ""
        chars = 0
        if isinstance(content, str):
            chars += len(content)
        else:
            for block in content:
                kind = block.get("type", "") if isinstance(block, dict) else None
                if kind in ("image", "image_url"):
                    total += 85
                elif kind == "text":
                    chars += len(block.get("text", ""))
                else:
                    chars += len(repr(block))
        if role == "assistant" and isinstance(content, str) and m.get("tool_calls"):
            chars += len(repr([_lc_tool_call(c) for c in m["tool_calls"]]))
        if role == "tool":
            chars += len(m.get("tool_call_id", ""))
        chars += len(role)
        if m.get("name"):
            chars += len(m["name"])
        total += math.ceil(chars / 4) + 3
    return math.ceil(total)


def _lc_tool_call(call: dict[str, Any]) -> dict[str, Any]:
    args = call["function"]["arguments"]
    try:
        parsed = json.loads(args, strict=False) if isinstance(args, str) else args
    except ValueError:
        parsed = args
    return {"name": call["function"]["name"], "args": parsed, "id": call["id"], "type": "tool_call"}
