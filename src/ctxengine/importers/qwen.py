"""Qwen Code chat recordings (``~/.qwen/projects/<cwd>/chats/<sessionId>.jsonl``).

Every line is a record ``{"uuid", "parentUuid", "sessionId", "timestamp", "type", "subtype"?,
"message"?: {"role", "parts"}, …}`` (``packages/core/src/services/chatRecordingService.ts``);
``message`` is a Gemini ``Content``. Mapping, in file order:

* ``user`` records → a user message of the text / inline-data parts (the hook context Qwen
  adds to the prompt is model input and stays). Subtypes other than a typed prompt
  (``notification``, ``cron``, ``background_task_completed`` …) are marked
  ``meta["synthetic"]`` with the subtype.
* ``assistant`` records → an assistant message: ``thought`` text parts as reasoning (with
  ``thoughtSignature``), text, ``functionCall`` parts as tool calls; ``usageMetadata`` as
  usage (``promptTokenCount`` includes cached tokens). Consecutive records with the same
  ``uuid`` are one streamed reply and are merged.
* ``tool_result`` records → a ``tool`` message of the ``functionResponse`` parts, each
  answering the call its ``id`` names (``response.output``, else ``response.error`` as an
  error, else the response as JSON); ``toolCallResult.status`` ``error`` marks it an error.
* ``system`` ``chat_compression`` → a compaction record whose summary is the first turn of
  ``compressedHistory``; the rest of that history (the acknowledgement and the kept tail)
  follows it, so the projection holds what Qwen sends after compressing. ``rewind`` → the
  messages logged after the record it names (its ``parentUuid``, or
  ``systemPayload.targetUuid``) are dropped, as Qwen's active branch does (counted as
  ``rewound``). ``custom_title`` gives the title, ``parent_session`` the
  ``meta["parent_session_id"]``; other system records (UI telemetry, slash commands,
  snapshots …) never reach the model and are ignored.
* Sub-agent records (``isSidechain``) are not part of the main conversation (ignored), and
  records of another ``sessionId`` than the first record's are skipped.

Tolerated drift (counted in the report, refused in strict mode): a ``functionCall`` without
``id`` (``"call_gen_<line>_<n>"``) or with ``null`` args, a ``functionResponse`` without
``id`` (answers the oldest unanswered call), a ``response`` that is not an object (its
text, or JSON), glued JSON objects on one line, unknown record types and parts, and what
:func:`~ctxengine.importers._lines.iter_objects` tolerates.
"""

from __future__ import annotations

import re
from pathlib import Path
from typing import Any

from ctxengine.importers._build import file_digest
from ctxengine.importers._calls import Calls, arguments_text, json_text
from ctxengine.importers._images import image_from_base64
from ctxengine.importers._lines import first_line, iter_objects
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

_TYPE = re.compile(rb'"type"\s*:\s*"(?:user|assistant|system|tool_result)"')
_QWEN_KEYS = re.compile(rb'"parts"\s*:\s*\[|"systemPayload"\s*:|"role"\s*:\s*"model"')
#: User subtypes that are what the user typed.
_TYPED = frozenset({"mid_turn_user_message", "at_command", "realtime_message"})
POLICY = "qwen-code"

Content = TextPart | ImagePart


class QwenImporter:
    """Importer for Qwen Code chat JSONL (see the module docstring)."""

    name = "qwen"
    label = "a Qwen Code chat"

    def sniff(self, path: Path, head: bytes) -> bool:
        """True when the first record has Qwen's envelope (``uuid``, ``sessionId``, a record
        ``type``) and a Gemini ``parts`` list, a ``systemPayload`` or a ``model`` role."""
        first = first_line(head)
        return (
            first.startswith(b"{")
            and b'"sessionId"' in first
            and b'"uuid"' in first
            and _TYPE.search(first) is not None
            and _QWEN_KEYS.search(first) is not None
        )

    def read(self, path: Path, report: ImportReport | None = None) -> ImportedSession:
        """Parse ``path``, counting what is skipped, repaired and ignored in ``report``.

        Raises:
            TranscriptError: unreadable file; in strict mode the first skipped or repaired
                item, naming its line.
        """
        report = start_report(path, report)
        reader = _Reader(report)
        for line, obj, raw in iter_objects(path, report):
            reader.feed(line, obj, raw)
        sid = reader.session_id or file_digest(path)
        entries = reader.rows.build(sid)
        meta = dict(reader.info)
        title = meta.pop("title", None) or title_of(entries)
        return ImportedSession(sid, self.name, str(path), entries, title, meta, report)


class _Reader:
    def __init__(self, report: ImportReport) -> None:
        self.report = report
        self.rows = Rows()
        self.calls = Calls(report)
        self.session_id: str | None = None
        self.info: dict[str, Any] = {}
        #: row count after each record uuid was read (for rewinds).
        self.after: dict[str, int] = {}
        self.last_uuid: str | None = None
        self.last_assistant: int | None = None
        self.raw = b""

    def feed(self, line: int, obj: dict[str, Any], raw: bytes) -> None:
        self.raw = raw
        kind = obj.get("type")
        if not isinstance(kind, str):
            self.report.skip("record without type", "expected a string `type`", line=line)
            return
        sid = opt_str(obj, "sessionId")
        if self.session_id is None and sid:
            self.session_id = sid
            for key in ("cwd", "version", "gitBranch"):
                if opt_str(obj, key):
                    self.info[key] = obj[key]
        elif sid and sid != self.session_id:
            self.report.skip(
                "record of another session",
                f"expected `sessionId` {self.session_id!r} on every record, got {sid!r}",
                line=line,
            )
            return
        if obj.get("isSidechain") is True:
            self.report.ignore("sidechain", line=line)
            return
        uuid = opt_str(obj, "uuid")
        merged = kind == "assistant" and uuid is not None and uuid == self.last_uuid
        if not merged:
            self.last_assistant = None
        if kind == "user":
            self._user(line, obj)
        elif kind == "assistant":
            self._assistant(line, obj)
        elif kind == "tool_result":
            self._tool(line, obj)
        elif kind == "system":
            self._system(line, obj)
        else:
            self.report.skip(
                f"record:{kind}",
                f"expected a record type user, assistant, tool_result or system, got {kind!r}",
                line=line,
            )
        if uuid is not None:
            self.after[uuid] = len(self.rows)
            self.last_uuid = uuid

    def _parts(self, line: int, obj: dict[str, Any]) -> list[Any] | None:
        parts = opt_dict(obj, "message").get("parts")
        if isinstance(parts, list):
            return parts
        self.report.skip(
            f"{obj['type']} without parts",
            "expected a `message` object with a `parts` list",
            line=line,
        )
        return None

    def _user(self, line: int, obj: dict[str, Any]) -> None:
        raw = self._parts(line, obj)
        if raw is None:
            return
        parts = [p for p in (self._content(line, r) for r in raw) if p is not None]
        if not parts:
            self.report.skip("empty user record", "expected text parts", line=line)
            return
        sub = opt_str(obj, "subtype")
        meta = {SYNTHETIC: sub} if sub and sub not in _TYPED else {}
        self.rows.add(
            Message("user", tuple(parts), meta=meta),
            opt_str(obj, "timestamp"),
            opt_str(obj, "uuid"),
            key=self.raw,
        )

    def _content(self, line: int, part: Any) -> Content | None:
        if isinstance(part, dict) and isinstance(part.get("text"), str):
            return TextPart(part["text"])
        data = opt_dict(part, "inlineData") if isinstance(part, dict) else {}
        if isinstance(data.get("data"), str):
            return image_from_base64(opt_str(data, "mimeType"), data["data"])
        self.report.skip(
            "part not understood",
            "expected a text or inlineData part",
            line=line,
        )
        return None

    def _assistant(self, line: int, obj: dict[str, Any]) -> None:
        raw = self._parts(line, obj)
        if raw is None:
            return
        parts: list[Part] = []
        for n, part in enumerate(raw):
            found = self._model_part(line, n, part)
            if found is not None:
                parts.append(found)
        usage = _usage(obj.get("usageMetadata"))
        model = opt_str(obj, "model")
        if self.last_assistant is not None:
            prev = self.rows.rows[self.last_assistant].body
            assert isinstance(prev, Message)
            merged = list(prev.parts) + [p for p in parts if p not in prev.parts]
            msg = _assistant(merged, usage or prev.usage, model or prev.model)
            self.rows.replace(self.last_assistant, msg)
            return
        self.last_assistant = self.rows.add(
            _assistant(parts, usage, model), opt_str(obj, "timestamp"), opt_str(obj, "uuid"),
            key=self.raw,
        )  # fmt: skip

    def _model_part(self, line: int, n: int, part: Any) -> Part | None:
        if not isinstance(part, dict):
            self.report.skip("malformed part", "expected a part object", line=line)
            return None
        if isinstance(part.get("text"), str):
            if part.get("thought") is True:
                sig = opt_str(part, "thoughtSignature")
                return ReasoningPart(part["text"], signature=sig, meta={"provider": "gemini"})
            return TextPart(part["text"]) if part["text"] else None
        call = part.get("functionCall")
        if isinstance(call, dict) and isinstance(call.get("name"), str):
            args = call.get("args", {})
            if args is None:
                self.report.repair("null arguments", "expected `functionCall.args`", line=line)
                args = {}
            unique = self.calls.call(
                call.get("id"), call["name"], f"call_gen_{line}_{n}", what="functionCall",
                line=line,
            )  # fmt: skip
            return ToolCallPart(
                unique,
                call["name"],
                arguments_text(args, self.report, "functionCall.args", line=line),
            )
        self.report.skip(
            "part not understood",
            "expected a text, thought or functionCall part",
            line=line,
        )
        return None

    def _tool(self, line: int, obj: dict[str, Any]) -> None:
        raw = self._parts(line, obj)
        if raw is None:
            return
        failed = opt_dict(obj, "toolCallResult").get("status") == "error"
        results: list[ToolResultPart] = []
        for part in raw:
            response = part.get("functionResponse") if isinstance(part, dict) else None
            if not isinstance(response, dict):
                self.report.skip(
                    "part not understood", "expected a functionResponse part", line=line
                )
                continue
            unique = self.calls.result(response.get("id"), what="functionResponse", line=line)
            if unique is None:
                continue
            raw = response.get("response")
            if not isinstance(raw, dict):
                self.report.repair(
                    "tool output not an object",
                    "expected `functionResponse.response` to be an object, got "
                    + type(raw).__name__,
                    line=line,
                )
            text, error = _response_text(raw)
            results.append(
                ToolResultPart(
                    unique,
                    (TextPart(text),),
                    is_error=failed or error,
                    name=opt_str(response, "name") or self.calls.name_of(unique),
                )
            )
        if results:
            msg = Message("tool", tuple(results))
            self.rows.add(msg, opt_str(obj, "timestamp"), opt_str(obj, "uuid"), key=self.raw)

    def _system(self, line: int, obj: dict[str, Any]) -> None:
        sub = opt_str(obj, "subtype") or "?"
        payload = opt_dict(obj, "systemPayload")
        if sub == "chat_compression":
            self._compression(line, obj, payload)
            return
        if sub == "rewind":
            target = opt_str(payload, "targetUuid") or opt_str(obj, "parentUuid")
            size = self.after.get(target) if target else None
            if size is None:
                self.report.skip(
                    "rewind to an unknown record",
                    "expected a rewind record whose `parentUuid` names an earlier record",
                    line=line,
                )
                return
            for _ in range(self.rows.truncate(size)):
                self.report.ignore("rewound", line=line)
            self.report.ignore("system:rewind", line=line)
            return
        if sub == "custom_title" and opt_str(payload, "customTitle"):
            self.info["title"] = payload["customTitle"]
        elif sub == "parent_session" and opt_str(payload, "parentSessionId"):
            self.info["parent_session_id"] = payload["parentSessionId"]
        self.report.ignore(f"system:{sub}", line=line)

    def _compression(self, line: int, obj: dict[str, Any], payload: dict[str, Any]) -> None:
        history = payload.get("compressedHistory")
        if not isinstance(history, list) or not history:
            self.report.skip(
                "chat_compression without history",
                "expected a `systemPayload.compressedHistory` list",
                line=line,
            )
            return
        first = history[0] if isinstance(history[0], dict) else {}
        texts = [p["text"] for p in first.get("parts") or () if isinstance(p, dict) and
                 isinstance(p.get("text"), str)]  # fmt: skip
        info = opt_dict(payload, "info")
        cut = Cut(
            summary="\n".join(texts),
            policy=POLICY,
            tokens_before=opt_int(info, "originalTokenCount"),
            tokens_after=opt_int(info, "newTokenCount"),
        )
        self.rows.add(cut, opt_str(obj, "timestamp"), opt_str(obj, "uuid"))
        for content in history[1:]:
            if not isinstance(content, dict) or not isinstance(content.get("parts"), list):
                self.report.skip(
                    "malformed compressed content",
                    "expected `compressedHistory` items with `role` and `parts`",
                    line=line,
                )
                continue
            record = {"type": "assistant" if content.get("role") == "model" else "user",
                      "message": content}  # fmt: skip
            if any(isinstance(p, dict) and "functionResponse" in p for p in content["parts"]):
                self._tool(line, {**record, "type": "tool_result"})
            elif record["type"] == "assistant":
                self.last_assistant = None
                self._assistant(line, record)
            else:
                self._user(line, record)
        self.last_assistant = None


def _assistant(parts: list[Part], usage: Usage | None, model: str | None) -> Message:
    calls = any(isinstance(p, ToolCallPart) for p in parts)
    return Message(
        "assistant",
        tuple(parts),
        usage=usage,
        model=model,
        stop_reason="tool_use" if calls else None,
    )


def _usage(raw: Any) -> Usage | None:
    if not isinstance(raw, dict) or not isinstance(raw.get("promptTokenCount"), int):
        return None
    cached = opt_int(raw, "cachedContentTokenCount")
    return Usage(
        input_tokens=max(0, raw["promptTokenCount"] - cached),
        output_tokens=opt_int(raw, "candidatesTokenCount") + opt_int(raw, "thoughtsTokenCount"),
        cache_read_tokens=cached,
    )


def _response_text(response: Any) -> tuple[str, bool]:
    """The text of a ``functionResponse.response`` and whether it reports an error."""
    if isinstance(response, dict):
        if isinstance(response.get("output"), str):
            return response["output"], False
        if isinstance(response.get("error"), str):
            return response["error"], True
    if isinstance(response, str):
        return response, False
    return json_text(response if response is not None else {}), False


IMPORTER = QwenImporter()
