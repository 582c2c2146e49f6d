"""Kimi Code session wire log (``sessions/<work dir>/session_<id>/agents/<agent>/…jsonl``):
one typed record per line (``metadata``, ``config.update``, ``context.append_message``,
``context.append_loop_event``, ``context.apply_compaction``, ``llm.request``, ``turn.*`` …).

Mapping, in file order:

* The first ``systemPrompt`` (``config.update`` / ``profile.bind``) → the first message, role
  ``system``; ``modelAlias`` gives the model.
* ``context.append_message`` → a message of its role; ``user`` messages whose ``origin`` is
  not the user (``injection`` reminders, a ``system_trigger`` such as a sub-agent's brief)
  are marked ``meta["synthetic"]`` with the variant or name.
* ``context.append_loop_event``: a ``step.begin`` … ``step.end`` span is one model call and
  becomes one assistant message: ``content.part`` (``think`` → reasoning, ``text``) and
  ``tool.call`` (``toolCallId``, ``name``, ``args``) in order; the ``tool.result`` events of the
  step become ``tool`` messages after it (``output`` then ``note``, ``isError`` → error).
  ``step.end`` gives the usage (``inputOther`` uncached, ``inputCacheRead``,
  ``inputCacheCreation``, ``output``), the stop reason (``finishReason``) and ``messageId``.
  A step cut by ``turn.cancel`` is marked ``"aborted"``.
* ``context.apply_compaction`` → a compaction record (``contextSummary``, the text put in
  context, else ``summary``; ``tokensBefore`` / ``tokensAfter``), followed by copies of the
  last ``keptUserMessageCount`` messages the user typed, which Kimi Code keeps.
* An ``Agent`` tool result that names the sub-agent it ran (``agent_id: …``) links the call to
  it in ``meta["subagents"]``.
* Everything else (``llm.*``, ``usage.record``, ``turn.*``, ``permission.*``, ``plan_mode.*``,
  ``full_compaction.*``, ``tools.*``, ``metadata`` …) never reaches the model: ignored.
  Unknown ``context.*`` records and loop events, and records of unknown families, are
  skipped.

Tolerated drift (counted in the report, refused in strict mode): a ``tool.call`` without
``toolCallId`` (``"call_gen_<line>"``), ``null`` ``args`` (``{}``), a ``tool.result`` without
``toolCallId`` (answers the oldest unanswered call), a ``result`` that is a string instead
of ``{"output": …}``.
"""

from __future__ import annotations

import re
from typing import Any

from ctxengine.importers._calls import Calls, arguments_text
from ctxengine.importers._kimi_parts import content_parts
from ctxengine.importers._log import Cut, Rows
from ctxengine.importers._parts import SYNTHETIC, opt_dict, opt_int, opt_str
from ctxengine.importers.report import ImportReport
from ctxengine.model import (
    ImagePart,
    Message,
    Part,
    ReasoningPart,
    TextPart,
    ToolCallPart,
    ToolResultPart,
    Usage,
)

#: ``finishReason`` → our normalised stop reason.
FINISH_REASONS = {
    "end_turn": "stop",
    "stop": "stop",
    "tool_use": "tool_use",
    "tool_calls": "tool_use",
    "max_tokens": "length",
    "length": "length",
}
#: Record families that never reach the model.
IGNORED_FAMILIES = frozenset(
    {
        "metadata", "config", "profile", "tools", "turn", "llm", "usage", "permission",
        "plan_mode", "full_compaction", "plugin", "runtime", "token_counting", "notification",
        "hook", "mcp", "session", "subagent", "btw", "goal",
    }
)  # fmt: skip
_AGENT_ID = re.compile(r"^agent_id:\s*(\S+)", re.M)


class WireReader:
    """Reads the records of one Kimi Code wire log into :attr:`rows`."""

    def __init__(self, report: ImportReport) -> None:
        self.report = report
        self.rows = Rows()
        self.calls = Calls(report)
        self.system_prompt: str | None = None
        self.model: str | None = None
        self.info: dict[str, Any] = {}
        self.subagents: dict[str, str] = {}
        self.user_rows: list[int] = []
        self.step: list[Part] = []
        self.step_results: list[tuple[Message, bytes]] = []
        self.step_keys: list[bytes] = []
        #: the record being read (the source of the rows it adds).
        self.current = b""

    def feed(self, line: int, obj: dict[str, Any], raw: bytes) -> None:
        self.current = raw
        kind = obj.get("type")
        if not isinstance(kind, str):
            self.report.skip("record without type", "expected a string `type`", line=line)
            return
        if kind in ("config.update", "profile.bind"):
            self._config(obj)
            self.report.ignore(kind, line=line)
        elif kind == "metadata":
            if opt_str(obj, "protocol_version"):
                self.info["protocol_version"] = obj["protocol_version"]
            self.report.ignore(kind, line=line)
        elif kind == "context.append_message":
            self._message(line, obj.get("message"))
        elif kind == "context.append_loop_event":
            self._loop(line, obj.get("event"))
        elif kind == "context.apply_compaction":
            self._compaction(obj)
        elif kind == "turn.cancel":
            self._close(aborted=True)
            self.report.ignore(kind, line=line)
        elif kind.split(".", 1)[0] in IGNORED_FAMILIES:
            self.report.ignore(kind, line=line)
        else:
            self.report.skip(
                f"record:{kind}",
                "expected a Kimi Code record type (context.append_message, "
                f"context.append_loop_event, context.apply_compaction, config.update …), "
                f"got {kind!r}",
                line=line,
            )

    def _config(self, obj: dict[str, Any]) -> None:
        prompt = opt_str(obj, "systemPrompt")
        if prompt and self.system_prompt is None:
            self.system_prompt = prompt
            self.rows.add(Message("system", (TextPart(prompt),)), key=self.current)
        self.model = opt_str(obj, "modelAlias") or self.model
        for key in ("profileName", "thinkingEffort", "cwd"):
            if opt_str(obj, key):
                self.info.setdefault(key, obj[key])

    def _message(self, line: int, message: Any) -> None:
        self._close()
        role = message.get("role") if isinstance(message, dict) else None
        if role not in ("user", "system", "assistant"):
            self.report.skip(
                f"message role {role}" if isinstance(role, str) else "malformed message",
                "expected a `message` object with `role` user, system or assistant",
                line=line,
            )
            return
        assert isinstance(message, dict)
        parts = content_parts(message.get("content"), self.report, line)
        if parts is None:
            return
        if role == "assistant":
            self.rows.add(Message("assistant", tuple(parts)), key=self.current)
            return
        content = tuple(p for p in parts if isinstance(p, TextPart | ImagePart))
        origin = opt_dict(message, "origin")
        meta: dict[str, Any] = {}
        if role == "user" and origin and origin.get("kind") != "user":
            meta[SYNTHETIC] = (
                opt_str(origin, "variant") or opt_str(origin, "name") or str(origin.get("kind"))
            )
        row = self.rows.add(Message(role, content, meta=meta), key=self.current)
        if role == "user" and not meta:
            self.user_rows.append(row)

    def _loop(self, line: int, event: Any) -> None:
        kind = event.get("type") if isinstance(event, dict) else None
        if not isinstance(kind, str):
            self.report.skip(
                "malformed loop event", "expected an `event` object with a string `type`",
                line=line,
            )  # fmt: skip
            return
        assert isinstance(event, dict)
        if kind == "step.begin":
            self._close()
        elif kind == "content.part":
            parts = content_parts([event.get("part")], self.report, line)
            self.step.extend(parts or ())
            self.step_keys.append(self.current)
        elif kind == "tool.call":
            self._call(line, event)
        elif kind == "tool.result":
            self._result(line, event)
        elif kind == "step.end":
            self._close(event)
        else:
            self.report.skip(
                f"loop event:{kind}",
                "expected a loop event of type step.begin, content.part, tool.call, "
                f"tool.result or step.end, got {kind!r}",
                line=line,
            )

    def _call(self, line: int, event: dict[str, Any]) -> None:
        name = opt_str(event, "name")
        if name is None:
            self.report.skip(
                "tool.call without name", "expected a string `name` on a tool.call", line=line
            )
            return
        args = event.get("args", {})
        if args is None:
            self.report.repair("null arguments", "expected `args` on a tool.call", line=line)
            args = {}
        unique = self.calls.call(
            event.get("toolCallId"), name, f"call_gen_{line}", what="tool.call", line=line
        )
        self.step.append(
            ToolCallPart(unique, name, arguments_text(args, self.report, "args", line=line))
        )
        self.step_keys.append(self.current)

    def _result(self, line: int, event: dict[str, Any]) -> None:
        unique = self.calls.result(event.get("toolCallId"), what="tool.result", line=line)
        if unique is None:
            return
        result = event.get("result")
        if isinstance(result, str):
            self.report.repair(
                "structured tool output",
                "expected `result` to be an object with `output`, got a string",
                line=line,
            )
            result = {"output": result}
        result = result if isinstance(result, dict) else {}
        texts = [t for t in (result.get("output"), result.get("note")) if isinstance(t, str)]
        text = "\n".join(texts)
        name = self.calls.name_of(unique)
        if name == "Agent":
            found = _AGENT_ID.search(text)
            if found:
                self.subagents[unique] = found.group(1)
        part = ToolResultPart(
            unique, (TextPart(text),), is_error=result.get("isError") is True, name=name
        )
        self.step_results.append((Message("tool", (part,)), self.current))

    def _close(self, end: dict[str, Any] | None = None, *, aborted: bool = False) -> None:
        """Emit the open step: its assistant message, then its tool results."""
        if self.step:
            usage = None
            stop: str | None = None
            meta: dict[str, Any] = {}
            if end is not None:
                raw = opt_dict(end, "usage")
                if raw:
                    usage = Usage(
                        input_tokens=opt_int(raw, "inputOther"),
                        output_tokens=opt_int(raw, "output"),
                        cache_read_tokens=opt_int(raw, "inputCacheRead"),
                        cache_write_tokens=opt_int(raw, "inputCacheCreation"),
                    )
                finish = opt_str(end, "finishReason")
                stop = FINISH_REASONS.get(finish, finish) if finish else None
                if opt_str(end, "messageId"):
                    meta["message_id"] = end["messageId"]
            if aborted:
                stop = "aborted"
            elif stop is None and any(isinstance(p, ToolCallPart) for p in self.step):
                stop = "tool_use"
            parts = _merge_reasoning(self.step)
            msg = Message(
                "assistant", tuple(parts), usage=usage, model=self.model, stop_reason=stop,
                meta=meta,
            )  # fmt: skip
            self.rows.add(msg, key=b"".join(self.step_keys))
        for result, source in self.step_results:
            self.rows.add(result, key=source)
        self.step = []
        self.step_results = []
        self.step_keys = []

    def _compaction(self, obj: dict[str, Any]) -> None:
        self._close()
        summary = opt_str(obj, "contextSummary") or opt_str(obj, "summary") or ""
        kept = opt_int(obj, "keptUserMessageCount")
        copies = self.user_rows[-kept:] if kept > 0 else []
        self.rows.add(
            Cut(
                summary=summary,
                policy="kimi-code",
                tokens_before=opt_int(obj, "tokensBefore"),
                tokens_after=opt_int(obj, "tokensAfter"),
            ),
            meta={k: obj[k] for k in ("compactedCount", "keptUserMessageCount") if k in obj},
        )
        kept_rows: list[int] = []
        for row in copies:
            msg = self.rows.rows[row].body
            assert isinstance(msg, Message)
            original = self.rows.rows[row].key
            key = ["kept", original.hex()] if original is not None else None
            kept_rows.append(self.rows.add(msg, meta={"kept_by_compaction": True}, key=key))
        self.user_rows = kept_rows

    def finish(self) -> None:
        """Emit a step left open at the end of the file."""
        self._close()


def _merge_reasoning(parts: list[Part]) -> list[Part]:
    """Adjacent ``think`` parts streamed one after the other become one reasoning part."""
    merged: list[Part] = []
    for part in parts:
        last = merged[-1] if merged else None
        if (
            isinstance(part, ReasoningPart)
            and isinstance(last, ReasoningPart)
            and not last.signature
            and not part.signature
        ):
            merged[-1] = ReasoningPart(last.text + part.text, meta=last.meta)
        else:
            merged.append(part)
    return merged
