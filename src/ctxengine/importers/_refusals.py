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
* ``codex exec --json`` output (``thread.started``, ``turn.*``, ``item.*`` events): the run's
  items summarised for display. It has no user prompt, no developer or base instructions,
  and commands and file changes without the tool calls the model made (their names,
  arguments and call ids), so the requests cannot be rebuilt; the rollout Codex writes for
  the same run (``~/.codex/sessions/…/rollout-*.jsonl``) imports.
* Claude Code sub-agent metadata (``agent-<id>.meta.json``: agent type, description, the
  parent's call): the sub-agent's conversation is the ``agent-<id>.jsonl`` beside it.
* A file inside an OpenCode JSON storage folder that is not a session file (a
  ``message/<session>/<message>.json`` or ``part/<message>/<part>.json`` file, the
  ``migration`` marker): one piece of a session; the storage folder imports.
* A model-request log (``{"path", "headers", "body", "reply"}`` lines, as a recording proxy
  captures an agent's HTTP requests): what the agent sent, not its session.
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
_CODEX_EXEC = re.compile(rb'\A\s*\{\s*"type"\s*:\s*"(?:thread|turn|item)\.[a-z_]+"')
CODEX_EXEC = (
    "codex exec --json output (events summarising the run's items: no user prompt, and "
    "commands and file changes without the tool calls the model made; import the rollout "
    "Codex wrote for the run, ~/.codex/sessions/…/rollout-*.jsonl)"
)
CLAUDE_SUBAGENT_META = (
    "Claude Code sub-agent metadata (agent type and description; import the "
    "agent-<id>.jsonl beside it)"
)
OPENCODE_STORAGE_FILE = (
    "an OpenCode storage file (one message, part or marker of a JSON storage folder; point "
    "at the storage folder)"
)
REQUEST_LOG = (
    "a model-request log (HTTP requests an agent sent, as a proxy captured them; import the "
    "agent's session file)"
)


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


def codex_exec(path: Path, head: bytes) -> bool:
    """True for ``codex exec --json`` output (first line a ``thread.*``, ``turn.*`` or
    ``item.*`` event)."""
    return _CODEX_EXEC.match(head) is not None


def claude_subagent_meta(path: Path, head: bytes) -> bool:
    """True for a Claude Code ``agent-<id>.meta.json`` (an object with ``agentType``)."""
    p = peek(head)
    return path.name.endswith(".meta.json") and p.kind == "object" and "agentType" in p.keys


def opencode_storage_file(path: Path, head: bytes) -> bool:
    """True for a file inside an OpenCode JSON storage folder (a folder holding ``session``
    and ``message`` folders) that is not a session file (those import)."""
    parents = list(path.parents)
    for depth, folder in enumerate(parents[:3]):
        if (folder / "session").is_dir() and (folder / "message").is_dir():
            inside = path.parts[len(folder.parts)] if depth else ""
            return inside != "session"
    return False


def request_log(path: Path, head: bytes) -> bool:
    """True for JSONL whose first record has ``path``, ``headers`` and ``body`` keys."""
    p = peek(head.split(b"\n", 1)[0])
    return p.kind == "object" and {"path", "headers", "body"} <= set(p.keys)
