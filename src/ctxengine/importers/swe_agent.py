"""SWE-agent ``.traj`` files: ``{"trajectory": [steps], "history": [chat messages], "info": …}``.

The ``history`` (what the model saw) is imported; the ``trajectory`` steps are used only when
a file has no history. Two variants exist:

- **function calling** (assistant ``tool_calls``, ``tool`` messages with ``tool_call_ids``):
  mapped like chat-completions (:mod:`ctxengine.importers._chat`). Demonstration replays reuse
  call ids across turns; :class:`~ctxengine.importers._build.CallIds` renames the repeats
  (``call_x``, ``call_x#2`` …) and pairs each result with its own call.
- **actions in text** (the model writes a thought and a fenced command; the next user message
  is the observation): each assistant message becomes its ``thought`` as text plus one tool
  call ``bash`` with ``{"command": <action>}`` (id ``"action-<history index>"``); the user
  message right after it becomes that call's result. SWE-agent runs every action, its own
  commands (``open``, ``edit`` …) included, in its shell, so ``bash`` is what ran. The original
  ``content`` is kept in the message meta.

The history of both variants often ends with the final action (``submit``) and no
observation; the trajectory's last step holds it (the submitted diff). When the history ends
with an assistant message whose one call is unanswered and the last step's ``action`` is that
call's action, the step's ``observation`` becomes the call's result (a ``tool`` message with
``meta["source"] = "trajectory"``). Otherwise the call stays unanswered, as in the source.

Demonstrations (history messages with ``is_demo``) are kept, marked
``meta["synthetic"] = "is_demo"``: they are examples, never the user's request.

Without history, each trajectory step gives an assistant message (``thought`` + the action
as a ``bash`` call ``"step-<index>"``) and a tool message with its ``observation``.
The session id is a hash of the file bytes (``.traj`` files carry no run id).
"""

from __future__ import annotations

from dataclasses import replace
from pathlib import Path
from typing import Any

import orjson

from ctxengine.importers._build import LogBuilder, load_json, read_file
from ctxengine.importers._chat import ChatReader, title_from
from ctxengine.importers._parts import SYNTHETIC
from ctxengine.importers._peek import peek
from ctxengine.importers._text import bytes_digest
from ctxengine.importers.base import ImportedSession, start_report
from ctxengine.importers.report import ImportReport
from ctxengine.model import Message, Part, TextPart, ToolCallPart, ToolResultPart

#: ``info`` fields kept in the session meta.
_INFO_KEYS = ("exit_status", "model_stats", "swe_agent_version", "swe_agent_hash")
#: Roles in a SWE-agent history.
_ROLES = ("system", "user", "assistant", "tool")
#: Keys that mark a history message as SWE-agent's (besides the chat keys).
_HISTORY_MARKS = ("agent", "message_type")
#: Keys of a trajectory step besides ``action``.
_STEP_MARKS = ("observation", "thought", "response")


def _bash(call_id: str, action: str) -> ToolCallPart:
    return ToolCallPart(call_id, "bash", orjson.dumps({"command": action}).decode())


class SweAgentImporter:
    """Importer for SWE-agent trajectories (see the module docstring)."""

    name = "swe-agent"
    label = "a SWE-agent trajectory"

    def sniff(self, path: Path, head: bytes) -> bool:
        """True for an object whose ``history`` messages carry SWE-agent's ``agent`` or
        ``message_type`` keys, or whose ``trajectory`` steps have an ``action`` and an
        ``observation``/``thought``/``response``."""
        p = peek(head)
        if p.kind != "object":
            return False
        history = p.records("history") or ()
        if any("role" in m and any(k in m for k in _HISTORY_MARKS) for m in history):
            return True
        steps = p.records("trajectory") or ()
        if any("action" in s and any(k in s for k in _STEP_MARKS) for s in steps):
            return True
        snippet = "".join(p.snippets.get("trajectory", "").split())
        return snippet.startswith(tuple(f'[{{"{k}":' for k in ("action", *_STEP_MARKS)))

    def read(self, path: Path, report: ImportReport | None = None) -> ImportedSession:
        """Import the whole file; history messages not understood are skipped and drift
        repaired into ``report`` (:mod:`ctxengine.importers._chat`).

        Raises:
            TranscriptError: not an object, no ``history``/``trajectory`` list, or a
                malformed message field or step (with its JSON path); in strict mode the
                first skip or repair.
        """
        report = start_report(path, report)
        raw = read_file(path)  # parsed and hashed from the same bytes
        data = load_json(path, report, raw)
        reader = ChatReader(path, report=report)
        if not isinstance(data, dict):
            raise reader.fail("$", "expected a SWE-agent trajectory object")
        builder = LogBuilder(bytes_digest(raw))
        history = data.get("history")
        steps = data.get("trajectory")
        meta: dict[str, Any] = {}
        if isinstance(history, list) and history:
            fc = any(_is_fc(m) for m in history)
            meta["function_calling"] = fc
            read_history = _read_fc if fc else _read_actions
            messages = read_history(reader, history)
            final = _final_observation(messages, steps)
            if final is not None:
                messages.append(final)
        elif isinstance(steps, list) and steps:
            messages = _read_steps(reader, steps)
        else:
            raise reader.fail("$.history", "expected a non-empty `history` or `trajectory` list")
        messages = [_mark_demo(m) for m in messages]
        for msg in messages:
            builder.add(msg)
        info = data.get("info")
        if isinstance(info, dict):
            meta.update({k: info[k] for k in _INFO_KEYS if k in info})
        return ImportedSession(
            session_id=builder.session_id,
            format=self.name,
            source_path=str(path),
            entries=tuple(builder.entries),
            title=title_from([m for m in messages if not m.meta.get("is_demo")]),
            meta=meta,
            report=report,
        )


def _action_of(m: Message) -> str | None:
    """The source action of an assistant message: its ``action`` meta (function calling), else
    the command of its synthetic ``bash`` call (actions in text)."""
    action = m.meta.get("action")
    if isinstance(action, str):
        return action
    calls = m.tool_calls
    if len(calls) == 1 and calls[0].name == "bash":
        try:
            args = orjson.loads(calls[0].arguments)
        except orjson.JSONDecodeError:
            return None
        command = args.get("command") if isinstance(args, dict) else None
        return command if isinstance(command, str) else None
    return None


def _final_observation(messages: list[Message], steps: Any) -> Message | None:
    """The last trajectory step's observation as the result of the history's final call, when
    the history ends with an assistant message whose single call is that step's action."""
    if not messages or not isinstance(steps, list) or not steps:
        return None
    last, step = messages[-1], steps[-1]
    if last.role != "assistant" or len(last.tool_calls) != 1 or not isinstance(step, dict):
        return None
    action, observation = step.get("action"), step.get("observation")
    if not isinstance(action, str) or not isinstance(observation, str):
        return None
    source = _action_of(last)
    if source is None or source.strip() != action.strip():
        return None
    result = ToolResultPart(last.tool_calls[0].id, (TextPart(observation),))
    return Message("tool", (result,), meta={"source": "trajectory"})


def _mark_demo(m: Message) -> Message:
    """A demonstration (``is_demo``) is an example SWE-agent puts before the task, not a
    request: mark it synthetic so that it is never taken for the user's goal."""
    if m.meta.get("is_demo") and SYNTHETIC not in m.meta:
        return replace(m, meta={**m.meta, SYNTHETIC: "is_demo"})
    return m


def _is_fc(m: Any) -> bool:
    return isinstance(m, dict) and (bool(m.get("tool_calls")) or m.get("role") == "tool")


def _checked(reader: ChatReader, m: Any, jp: str) -> dict[str, Any] | None:
    """``m`` when it is a message object with a SWE-agent role, else ``None`` (skipped)."""
    if not isinstance(m, dict):
        reader.skip("malformed message", jp, "expected a message object")
        return None
    role = m.get("role")
    if role not in _ROLES:
        kind = f"message role {role}" if isinstance(role, str) else "message without role"
        reader.skip(kind, f"{jp}.role", "expected one of " + ", ".join(_ROLES))
        return None
    result: dict[str, Any] = m
    return result


def _read_fc(reader: ChatReader, history: list[Any]) -> list[Message]:
    """Function-calling history: chat messages whose tool messages list ``tool_call_ids``."""
    out: list[Message] = []
    for i, raw in enumerate(history):
        jp = f"$.history[{i}]"
        m = _checked(reader, raw, jp)
        if m is None:
            continue
        if m["role"] != "tool":
            msg = reader.message(m, jp)
            if msg is not None:
                out.append(msg)
            continue
        ids = m.get("tool_call_ids")
        if ids is None and isinstance(m.get("tool_call_id"), str):
            ids = [m["tool_call_id"]]
        if not (isinstance(ids, list) and ids and all(isinstance(x, str) for x in ids)):
            ids = [None]
        meta = {k: v for k, v in m.items() if k not in ("role", "content", "tool_call_ids")}
        parts: list[Part] = []
        for source_id in ids:
            unique = reader.answer(source_id, f"{jp}.tool_call_ids", "tool message")
            if unique is not None:
                parts.extend(reader.result(unique, m, jp, {}, {}).parts)
        if parts:
            out.append(Message("tool", tuple(parts), meta=meta))
    return out


def _read_actions(reader: ChatReader, history: list[Any]) -> list[Message]:
    """History with actions in assistant text: thought + synthetic ``bash`` call; the next
    user message is the call's result."""
    out: list[Message] = []
    pending: str | None = None
    for i, raw in enumerate(history):
        jp = f"$.history[{i}]"
        m = _checked(reader, raw, jp)
        if m is None:
            continue
        role = m["role"]
        meta = {k: v for k, v in m.items() if k not in ("role", "content", "thought", "action")}
        content = reader.content(m.get("content"), f"{jp}.content")
        if role == "user" and pending is not None:
            result = ToolResultPart(pending, tuple(content) or (TextPart(""),))
            out.append(Message("tool", (result,), meta={**meta, "source_role": "user"}))
            pending = None
            continue
        action = m.get("action")
        if role != "assistant" or not isinstance(action, str) or not action.strip():
            out.append(Message(role, tuple(content), meta=meta))
            continue
        thought = m.get("thought")
        parts: list[Part] = [TextPart(thought)] if isinstance(thought, str) and thought else []
        pending = f"action-{i}"
        parts.append(_bash(pending, action))
        meta["content"] = m.get("content")
        out.append(Message("assistant", tuple(parts), meta=meta))
    return out


def _read_steps(reader: ChatReader, steps: list[Any]) -> list[Message]:
    """Trajectory steps (no history): assistant thought + ``bash`` call, then the observation."""
    out: list[Message] = []
    for j, step in enumerate(steps):
        jp = f"$.trajectory[{j}]"
        if not isinstance(step, dict):
            raise reader.fail(jp, "expected a trajectory step object")
        action = reader.string(step, "action", jp)
        observation = step.get("observation")
        if not isinstance(observation, str):
            raise reader.fail(f"{jp}.observation", "expected a string `observation`")
        thought = step.get("thought") or step.get("response")
        parts: list[Part] = [TextPart(thought)] if isinstance(thought, str) and thought else []
        call_id = f"step-{j}"
        parts.append(_bash(call_id, action))
        out.append(Message("assistant", tuple(parts)))
        out.append(Message("tool", (ToolResultPart(call_id, (TextPart(observation),)),)))
    return out


IMPORTER = SweAgentImporter()
