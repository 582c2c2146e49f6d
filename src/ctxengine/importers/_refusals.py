"""Agent files ctxengine recognises and refuses on purpose, with the reason in the format
name (:mod:`ctxengine.importers.unsupported` raises ``UnsupportedFormatError`` naming it):

* Antigravity trajectory steps (``{"step_index", "source", "type": "USER_INPUT" |
  "PLANNER_RESPONSE" | "RUN_COMMAND" …}`` lines): the planner's tool calls carry no ids and
  the tool steps that follow name no call, so which step answers which call is unknown and
  tool exchanges cannot be rebuilt.
* Antigravity brain artifacts (Markdown under an ``antigravity`` folder): notes the agent
  wrote, not a conversation.
* Grok ``summary.json`` and Kimi Code ``state.json``: session metadata; the conversation is
  in the JSONL logs beside them (which import).
"""

from __future__ import annotations

import re
from pathlib import Path

from ctxengine.importers._peek import peek

ANTIGRAVITY_STEPS = (
    "Antigravity trajectory steps (tool steps name no call, so tool exchanges cannot be rebuilt)"
)
ANTIGRAVITY_BRAIN = "Antigravity brain artifact (Markdown notes, not a conversation)"
GROK_SUMMARY = "Grok session summary (metadata only; import chat_history.jsonl beside it)"
KIMI_STATE = "Kimi Code session state (metadata only; import the agents' JSONL logs)"

_STEP = re.compile(rb'\A\s*\{\s*"step_index"\s*:\s*\d+\s*,\s*"source"\s*:')


def antigravity_steps(path: Path, head: bytes) -> bool:
    """True for Antigravity trajectory step JSONL."""
    return _STEP.match(head) is not None


def antigravity_brain(path: Path, head: bytes) -> bool:
    """True for a Markdown file under an ``antigravity`` folder."""
    return path.suffix.lower() == ".md" and any(p.lower() == "antigravity" for p in path.parts)


def grok_summary(path: Path, head: bytes) -> bool:
    """True for a Grok ``summary.json`` (``info`` and ``chat_format_version`` keys)."""
    p = peek(head)
    return p.kind == "object" and "info" in p.keys and "chat_format_version" in p.keys


def kimi_state(path: Path, head: bytes) -> bool:
    """True for a Kimi Code ``state.json`` (``agents`` with ``workDir`` or ``isCustomTitle``)."""
    p = peek(head)
    keys = set(p.keys)
    return p.kind == "object" and "agents" in keys and bool(keys & {"workDir", "isCustomTitle"})
