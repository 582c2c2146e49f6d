"""GitHub Copilot CLI session events (``~/.copilot/session-state/<sessionId>/events.jsonl``).

Every line is an event ``{"type", "data", "id", "parentId", "timestamp", "agentId"?}`` (the
schema of ``github/copilot-sdk`` ``session-events``). Mapping, in file order:

* ``user.message``: a user message with ``transformedContent`` (the text sent to the model,
  with the wrapping Copilot adds), else ``content``; ``blob`` image attachments become image
  parts. A message with a ``source`` (skill-injected) is marked ``meta["synthetic"]``.
* ``system.message``: a ``system`` (or ``developer``, by its ``role``) message;
  ``system.notification`` (background task completions sent to the model): a user message
  marked ``meta["synthetic"] = "system.notification"``.
* ``assistant.message``: one assistant message: ``reasoningText`` as reasoning (signature
  ``reasoningOpaque`` or ``encryptedContent``, kept byte-exact), ``content`` as text,
  ``toolRequests`` as tool calls (``arguments`` object or text; ``null`` is repaired to
  ``{}``). ``assistant.reasoning`` events give the reasoning of the next assistant message when
  it has none of its own. ``assistant.usage`` (input includes cached tokens, as the OpenAI
  convention) gives the usage of the last assistant message since the last user or tool
  message; ``outputTokens`` alone is kept in meta, never as usage (it would make a false
  usage anchor).
* ``tool.execution_complete``: one ``tool`` message answering ``toolCallId``: the
  ``result.content`` sent to the model, or the ``error.message`` when ``success`` is false
  (``is_error``).
* ``session.compaction_complete`` with ``success``: a compaction record with
  ``summaryContent``, ``preCompactionTokens`` / ``postCompactionTokens``; Copilot compacts in
  the background and swaps only the prefix it summarised, so the messages logged since the
  matching ``session.compaction_start`` stay verbatim (``first_kept_id``). A failed
  compaction is ignored.
* ``session.truncation``: a compaction record whose summary states how many messages were
  removed; the verbatim tail is the last ``postTruncationMessagesLength`` conversation
  messages (moved forward past tool results). An event without that count is skipped.
* ``session.context_cleared``: a compaction record keeping nothing (``/clear``).
* ``session.snapshot_rewind``: the events from ``upToEventId`` on are removed (counted as
  ``rewound``).
* Events with an ``agentId`` belong to a sub-agent and are not part of the main conversation
  (ignored as ``subagent event``); ``subagent.started`` links each sub-agent to the tool call
  that spawned it in ``meta["subagents"]`` (tool call id → agent name), and a sub-agent
  event's ``parentToolCallId`` in ``meta["subagent_ids"]`` (agent id → tool call id).
* ``session.start`` gives the session id, version and repository context; the other events of
  the families Copilot uses for the session lifecycle, UI, hooks, permissions and telemetry
  are ignored; an event of any other family is skipped.

Tolerated drift (counted in the report, refused in strict mode): a tool request or result
without ``toolCallId`` (``"call_gen_<line>_<n>"``; a result answers the oldest unanswered
call), ``null`` arguments, a ``result`` that is a string or a list of content blocks instead
of ``{"content": …}``, events without ``type`` or ``data``, and what
:func:`~ctxengine.importers._lines.iter_objects` tolerates.
"""

from __future__ import annotations

import re
from collections.abc import Callable
from pathlib import Path
from typing import Any

from ctxengine.importers._build import file_digest
from ctxengine.importers._calls import Calls, arguments_text, json_text
from ctxengine.importers._images import image_from_base64
from ctxengine.importers._lines import iter_objects
from ctxengine.importers._log import Cut, Rows
from ctxengine.importers._parts import SYNTHETIC, opt_dict, opt_int, opt_str, title_of
from ctxengine.importers.base import ImportedSession, start_report
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

_SNIFF = re.compile(
    rb'"type"\s*:\s*"(?:session|user|assistant|tool|system|hook|subagent)\.[a-z_]+"'
)
#: Event families that never carry model input (lifecycle, UI, hooks, permissions, telemetry).
_IGNORED_FAMILIES = frozenset(
    {
        "session", "assistant", "tool", "hook", "subagent", "skill", "skills", "permission",
        "user_input", "elicitation", "sampling", "mcp", "command", "commands", "capabilities",
        "exit_plan_mode", "auto_mode", "session_limits_exhausted", "managed_settings", "tools",
        "background_tasks", "factory_run", "custom_agents", "extensions", "canvas", "ui",
        "pending_messages", "external_tool", "model", "custom_notification", "abort", "system",
        "user",
    }
)  # fmt: skip
POLICY = "copilot-cli"


class CopilotImporter:
    """Importer for Copilot CLI ``events.jsonl`` (see the module docstring)."""

    name = "copilot"
    label = "a Copilot CLI session"

    def sniff(self, path: Path, head: bytes) -> bool:
        """True for JSONL whose first event has a dotted Copilot event ``type`` and ``data``."""
        first = head.split(b"\n", 1)[0]
        return (
            first.lstrip().startswith(b"{")
            and b'"data"' in first
            and _SNIFF.search(first) is not None
        )

    def read(self, path: Path, report: ImportReport | None = None) -> ImportedSession:
        """Parse ``path``, counting what is skipped, repaired and ignored in ``report``.

        Raises:
            TranscriptError: unreadable file; in strict mode the first skipped or repaired
                item, naming its line.
        """
        report = start_report(path, report)
        reader = _Reader(path, report)
        for line, obj, raw in iter_objects(path, report):
            reader.feed(line, obj, raw)
        return reader.finish()


class _Reader:
    def __init__(self, path: Path, report: ImportReport) -> None:
        self.path = path
        self.report = report
        self.rows = Rows()
        self.calls = Calls(report)
        self.session_id: str | None = None
        self.model: str | None = None
        self.info: dict[str, Any] = {}
        self.subagents: dict[str, str] = {}
        self.subagent_ids: dict[str, str] = {}
        #: row count when each event was read (for rewinds).
        self.at_event: dict[str, int] = {}
        self.reasoning: list[ReasoningPart] = []
        #: the event being read (the source of the rows it adds).
        self.current = b""
        self.compaction_start: int | None = None
        #: row of the assistant message a later ``assistant.usage`` belongs to.
        self.usage_row: int | None = None

    def feed(self, line: int, obj: dict[str, Any], raw: bytes) -> None:
        kind, data = obj.get("type"), obj.get("data")
        if not isinstance(kind, str) or not isinstance(data, dict):
            self.report.skip(
                "malformed event",
                "expected an event with a string `type` and a `data` object",
                line=line,
            )
            return
        if isinstance(obj.get("id"), str):
            self.at_event.setdefault(obj["id"], len(self.rows))
        if isinstance(obj.get("agentId"), str):
            parent = opt_str(data, "parentToolCallId")
            if parent:
                self.subagent_ids.setdefault(obj["agentId"], parent)
            self.report.ignore("subagent event", line=line)
            return
        created = opt_str(obj, "timestamp")
        source_id = opt_str(obj, "id")
        self.current = raw
        handler = _HANDLERS.get(kind)
        if handler is not None:
            handler(self, line, data, created, source_id)
        elif kind.split(".", 1)[0] in _IGNORED_FAMILIES:
            self.report.ignore(kind, line=line)
        else:
            self.report.skip(
                f"event:{kind}",
                f"expected a Copilot CLI event type (user.message, assistant.message, "
                f"tool.execution_complete, session.* …), got {kind!r}",
                line=line,
            )

    # -- events ---------------------------------------------------------------------------

    def _start(self, line: int, data: dict[str, Any], created: str | None, sid: str | None) -> None:
        self.session_id = self.session_id or opt_str(data, "sessionId")
        for key in ("copilotVersion", "producer"):
            if opt_str(data, key):
                self.info[key] = data[key]
        context = opt_dict(data, "context")
        for key in ("cwd", "repository", "branch"):
            if opt_str(context, key):
                self.info[key] = context[key]
        self.report.ignore("session.start", line=line)

    def _model_change(
        self, line: int, data: dict[str, Any], created: str | None, sid: str | None
    ) -> None:
        self.model = opt_str(data, "newModel") or self.model
        self.report.ignore("session.model_change", line=line)

    def _user(self, line: int, data: dict[str, Any], created: str | None, sid: str | None) -> None:
        text = opt_str(data, "transformedContent") or opt_str(data, "content") or ""
        parts: list[Part] = [TextPart(text)] if text else []
        for item in data.get("attachments") or ():
            if (
                isinstance(item, dict)
                and item.get("type") == "blob"
                and str(item.get("mimeType", "")).startswith("image/")
                and isinstance(item.get("data"), str)
            ):
                parts.append(image_from_base64(item["mimeType"], item["data"]))
        if not parts:
            self.report.skip("empty user.message", "expected `content` text", line=line)
            return
        meta = {SYNTHETIC: data["source"]} if opt_str(data, "source") else {}
        self._add(Message("user", tuple(parts), meta=meta), created, sid)

    def _system(
        self, line: int, data: dict[str, Any], created: str | None, sid: str | None
    ) -> None:
        text = opt_str(data, "content")
        if text is None:
            self.report.skip("system.message without content", "expected `content`", line=line)
            return
        msg = Message(
            "developer" if data.get("role") == "developer" else "system", (TextPart(text),)
        )
        self._add(msg, created, sid)

    def _notification(
        self, line: int, data: dict[str, Any], created: str | None, sid: str | None
    ) -> None:
        text = opt_str(data, "content")
        if not text:
            self.report.ignore("system.notification", line=line)
            return
        meta = {SYNTHETIC: "system.notification"}
        self._add(Message("user", (TextPart(text),), meta=meta), created, sid)

    def _reasoning(
        self, line: int, data: dict[str, Any], created: str | None, sid: str | None
    ) -> None:
        text = opt_str(data, "content")
        if text:
            self.reasoning.append(ReasoningPart(text))
        self.report.ignore("assistant.reasoning", line=line)

    def _assistant(
        self, line: int, data: dict[str, Any], created: str | None, sid: str | None
    ) -> None:
        parts: list[Part] = []
        text = opt_str(data, "reasoningText")
        opaque = opt_str(data, "reasoningOpaque")
        encrypted = opt_str(data, "encryptedContent")
        if text or opaque or encrypted:
            provider = "anthropic" if opaque else "openai"
            parts.append(
                ReasoningPart(
                    text or "", signature=opaque or encrypted, meta={"provider": provider}
                )
            )
        elif self.reasoning:
            parts.extend(self.reasoning)
        self.reasoning = []
        content = opt_str(data, "content")
        if content:
            parts.append(TextPart(content))
        requests = data.get("toolRequests")
        for n, request in enumerate(requests if isinstance(requests, list) else ()):
            call = self._call(line, n, request)
            if call is not None:
                parts.append(call)
        meta: dict[str, Any] = {
            k: data[k] for k in ("messageId", "requestId", "outputTokens") if k in data
        }
        calls = any(isinstance(p, ToolCallPart) for p in parts)
        msg = Message(
            "assistant",
            tuple(parts),
            model=opt_str(data, "model") or self.model,
            stop_reason="tool_use" if calls else "stop",
            meta=meta,
        )
        self.usage_row = self._add(msg, created, sid)

    def _call(self, line: int, n: int, request: Any) -> ToolCallPart | None:
        name = opt_str(request, "name") if isinstance(request, dict) else None
        if name is None:
            self.report.skip(
                "tool request without name",
                "expected a tool request object with a string `name`",
                line=line,
            )
            return None
        assert isinstance(request, dict)
        arguments = request.get("arguments", {})
        if arguments is None:
            self.report.repair(
                "null arguments", "expected `arguments` on a tool request", line=line
            )
            arguments = {}
        unique = self.calls.call(
            request.get("toolCallId"), name, f"call_gen_{line}_{n}", what="tool request",
            line=line,
        )  # fmt: skip
        meta = {"type": request["type"]} if request.get("type") == "custom" else {}
        text = arguments_text(arguments, self.report, "arguments", line=line)
        return ToolCallPart(unique, name, text, meta=meta)

    def _usage(self, line: int, data: dict[str, Any], created: str | None, sid: str | None) -> None:
        self.report.ignore("assistant.usage", line=line)
        if self.usage_row is None or not isinstance(data.get("inputTokens"), int):
            return
        row = self.rows.rows[self.usage_row]
        msg = row.body
        if not isinstance(msg, Message) or msg.usage is not None:
            return
        cached = opt_int(data, "cacheReadTokens")
        usage = Usage(
            input_tokens=max(0, opt_int(data, "inputTokens") - cached),
            output_tokens=opt_int(data, "outputTokens"),
            cache_read_tokens=cached,
            cache_write_tokens=opt_int(data, "cacheWriteTokens"),
        )
        self.rows.replace(
            self.usage_row,
            Message(msg.role, msg.parts, usage, msg.model, msg.stop_reason, msg.meta),
        )

    def _tool(self, line: int, data: dict[str, Any], created: str | None, sid: str | None) -> None:
        unique = self.calls.result(data.get("toolCallId"), what="tool result", line=line)
        if unique is None:
            return
        success = data.get("success") is not False
        text = self._result_text(line, data.get("result"))
        error = opt_dict(data, "error")
        if not success and opt_str(error, "message"):
            text = error["message"] if not text else f"{text}\n{error['message']}"
        content: tuple[TextPart | ImagePart, ...] = (TextPart(text),)
        result = ToolResultPart(
            unique, content, is_error=not success, name=self.calls.name_of(unique)
        )
        self._add(Message("tool", (result,)), created, sid)

    def _result_text(self, line: int, result: Any) -> str:
        if isinstance(result, dict):
            text = result.get("content", result.get("detailedContent"))
            if isinstance(text, str):
                return text
            if text is None:
                return ""
            result = text
        if result is None:
            return ""
        self.report.repair(
            "structured tool output",
            "expected `result` to be an object with `content` text, got " + type(result).__name__,
            line=line,
        )
        if isinstance(result, str):
            return result
        if isinstance(result, list):
            return "\n".join(str(b["text"]) for b in result if isinstance(b, dict) and "text" in b)
        return json_text(result)

    def _compaction_start(
        self, line: int, data: dict[str, Any], created: str | None, sid: str | None
    ) -> None:
        self.compaction_start = len(self.rows)
        self.report.ignore("session.compaction_start", line=line)

    def _compaction(
        self, line: int, data: dict[str, Any], created: str | None, sid: str | None
    ) -> None:
        if data.get("success") is not True:
            self.report.ignore("session.compaction_complete (failed)", line=line)
            return
        kept = self.compaction_start
        if kept is not None and kept >= len(self.rows):
            kept = None
        self.compaction_start = None
        cut = Cut(
            summary=opt_str(data, "summaryContent") or "",
            policy=POLICY,
            kept=kept,
            tokens_before=opt_int(data, "preCompactionTokens"),
            tokens_after=opt_int(data, "postCompactionTokens"),
        )
        meta: dict[str, Any] = {k: data[k] for k in ("trigger", "checkpointNumber") if k in data}
        self.rows.add(cut, created, sid, meta)

    def _truncation(
        self, line: int, data: dict[str, Any], created: str | None, sid: str | None
    ) -> None:
        kept = data.get("postTruncationMessagesLength")
        removed = data.get("messagesRemovedDuringTruncation")
        if not isinstance(kept, int) or not isinstance(removed, int):
            self.report.skip(
                "session.truncation without counts",
                "expected integer `postTruncationMessagesLength` and "
                "`messagesRemovedDuringTruncation` on a session.truncation event",
                line=line,
            )
            return
        if removed <= 0:
            self.report.ignore("session.truncation (nothing removed)", line=line)
            return
        cut = Cut(
            summary=f"[{removed} earlier messages were removed by truncation]",
            policy=POLICY,
            kept=self.rows.keep_last(kept),
            tokens_before=opt_int(data, "preTruncationTokensInMessages"),
            tokens_after=opt_int(data, "postTruncationTokensInMessages"),
        )
        self.rows.add(cut, created, sid, {"source": "session.truncation"})

    def _cleared(
        self, line: int, data: dict[str, Any], created: str | None, sid: str | None
    ) -> None:
        cut = Cut(summary="[the conversation was cleared]", policy=POLICY)
        self.rows.add(cut, created, sid, {"source": "session.context_cleared"})

    def _rewind(
        self, line: int, data: dict[str, Any], created: str | None, sid: str | None
    ) -> None:
        target = opt_str(data, "upToEventId")
        size = self.at_event.get(target) if target else None
        if size is None:
            self.report.skip(
                "rewind to an unknown event",
                "expected `upToEventId` to name an earlier event",
                line=line,
            )
            return
        for _ in range(self.rows.truncate(size)):
            self.report.ignore("rewound", line=line)

    def _subagent(
        self, line: int, data: dict[str, Any], created: str | None, sid: str | None
    ) -> None:
        name, call = opt_str(data, "agentName"), opt_str(data, "toolCallId")
        if name and call:
            self.subagents[call] = name
        self.report.ignore("subagent.started", line=line)

    # -- output ---------------------------------------------------------------------------

    def _add(self, msg: Message, created: str | None, source_id: str | None) -> int:
        if msg.role in ("user", "tool"):
            self.usage_row = None
        return self.rows.add(msg, created, source_id, key=self.current)

    def finish(self) -> ImportedSession:
        sid = self.session_id or file_digest(self.path)
        entries = self.rows.build(sid)
        meta = dict(self.info)
        if self.model:
            meta["model"] = self.model
        if self.subagents:
            meta["subagents"] = dict(self.subagents)
        if self.subagent_ids:
            meta["subagent_ids"] = dict(self.subagent_ids)
        return ImportedSession(
            sid, "copilot", str(self.path), entries, title_of(entries), meta, self.report
        )


_Handler = Callable[[_Reader, int, dict[str, Any], str | None, str | None], None]
_HANDLERS: dict[str, _Handler] = {
    "session.start": _Reader._start,
    "session.model_change": _Reader._model_change,
    "user.message": _Reader._user,
    "system.message": _Reader._system,
    "system.notification": _Reader._notification,
    "assistant.reasoning": _Reader._reasoning,
    "assistant.message": _Reader._assistant,
    "assistant.usage": _Reader._usage,
    "tool.execution_complete": _Reader._tool,
    "session.compaction_start": _Reader._compaction_start,
    "session.compaction_complete": _Reader._compaction,
    "session.truncation": _Reader._truncation,
    "session.context_cleared": _Reader._cleared,
    "session.snapshot_rewind": _Reader._rewind,
    "subagent.started": _Reader._subagent,
}

IMPORTER = CopilotImporter()
