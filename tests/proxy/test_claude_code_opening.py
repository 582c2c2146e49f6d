"""Claude Code's opening survives the proxy's compactions: the ``<system-reminder>`` block
beside the first prompt and the mid-conversation system message listing the agent types
(recorded from Claude Code 2.1.197: ``data/claude_code_2_1_197_first_request.json``) are in
every request forwarded after a compaction, byte for byte, re-injected after the
continuation state (:func:`~ctxengine.ladder.reinject.opening_items`)."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import orjson

from ctxengine.projection.validate import validate
from ctxengine.proxy.core import ProxyCore

DATA = Path(__file__).resolve().parent / "data" / "claude_code_2_1_197_first_request.json"
#: What the Bash tool printed at each step (``seq 1 2500``, about 4,000 tokens).
OUTPUT = "\n".join(str(n) for n in range(1, 2501))
MARK = {"type": "ephemeral"}


def _step(messages: list[dict[str, Any]], k: int) -> None:
    """Append one Bash call and its result as Claude Code sends them: the cache marker
    moves to the newest block."""
    for m in messages:
        if isinstance(m["content"], list):
            m["content"] = [
                {x: v for x, v in b.items() if x != "cache_control"} for b in m["content"]
            ]
    use = {
        "type": "tool_use",
        "id": f"toolu_{k}",
        "name": "Bash",
        "input": {"command": "seq 1 2500"},
    }
    result = {
        "type": "tool_result",
        "tool_use_id": f"toolu_{k}",
        "content": OUTPUT,
        "cache_control": MARK,
    }
    messages += [{"role": "assistant", "content": [use]}, {"role": "user", "content": [result]}]


def _text_blocks(body: dict[str, Any]) -> list[dict[str, Any]]:
    out: list[dict[str, Any]] = []
    for m in body["messages"]:
        content = m["content"]
        if isinstance(content, str):
            out.append({"type": "text", "text": content})
        else:
            out.extend(b for b in content if b.get("type") == "text")
    return out


def test_the_opening_reminder_and_system_message_are_in_every_request_after_a_compaction() -> None:
    doc = json.loads(DATA.read_text())
    body, headers = doc["body"], doc["headers"]
    reminder = body["messages"][0]["content"][0]["text"]
    agents = body["messages"][1]["content"]
    assert reminder.startswith("<system-reminder>\nAs you answer the user's questions")
    assert agents.startswith("Available agent types for the Agent tool:") and len(agents) == 6_062
    core = ProxyCore(window=40_000)
    messages = json.loads(json.dumps(body["messages"]))
    sent = []
    for k in range(1, 13):
        raw = orjson.dumps({**body, "messages": messages})
        p = core.prepare("anthropic", raw, headers)
        sent.append((p, raw))
        _step(messages, k)
    epochs = [p.epoch for p, _ in sent]
    assert epochs == [0, 0, 0, 0, 1, 1, 1, 2, 2, 2, 3, 3]
    for p, raw in sent:
        out = orjson.loads(p.raw)
        assert validate(out, "anthropic") == []
        if p.epoch == 0:
            assert p.raw == raw  # the client's bytes, opening and all
            continue
        blocks = _text_blocks(out)
        assert {"type": "text", "text": reminder} in blocks
        assert {"type": "text", "text": agents} in blocks
        # Re-injected after the continuation state, in the opening's order.
        texts = [b["text"] for b in blocks]
        assert texts[0].startswith("The earlier part of this session was compacted.")
        assert texts[1:3] == [reminder, agents]
        # The client's own system field, cache markers and all.
        assert out["system"] == body["system"]
