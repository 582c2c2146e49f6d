"""Grok CLI sessions (``~/.grok/…/<session>/chat_history.jsonl``, with ``summary.json``
beside it).

Every line is one item of the conversation sent to the model, in order:

* ``system`` → a system message; ``user`` → a user message of its ``text`` and ``image``
  (``url``, a data URL when inline) parts, marked ``meta["synthetic"]`` with its
  ``synthetic_reason`` (environment context Grok adds) when it has one.
* ``reasoning`` (Responses-style: ``summary`` texts and ``encrypted_content``, kept byte-exact
  as the signature) and ``backend_tool_call`` (a provider-side tool such as web search, a
  text part ``[provider-side tool call] web_search({…})`` with the item in its meta) belong
  to the next ``assistant`` line, which becomes one assistant message with them, its
  ``content`` text and its ``tool_calls`` (``id``, ``name``, ``arguments`` JSON text);
  ``model_id`` gives the model. Reasoning not followed by an assistant line before the next
  user line (an interrupted turn) is ignored.
* ``tool_result`` → a ``tool`` message answering ``tool_call_id``.

``summary.json`` gives the session id (``info.id``), title (``generated_title``) and, for a
sub-agent session, ``meta["session_kind"]`` and the agent name.

Tolerated drift (counted in the report, refused in strict mode): a tool call without ``id``
(``"call_gen_<line>_<n>"``) or with ``null`` arguments, a ``tool_result`` without
``tool_call_id`` (answers the oldest unanswered call), a ``content`` that is a list where text
was expected, unknown item types and parts, and what
:func:`~ctxengine.importers._lines.iter_objects` tolerates.
"""

from __future__ import annotations

import json
import re
from pathlib import Path
from typing import Any

import orjson

from ctxengine.importers._build import file_digest
from ctxengine.importers._calls import Calls, arguments_text
from ctxengine.importers._images import image_from_url
from ctxengine.importers._line_blocks import assistant_message
from ctxengine.importers._lines import first_line, iter_objects
from ctxengine.importers._log import Rows
from ctxengine.importers._parts import SYNTHETIC, opt_dict, opt_str, title_of
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
)

_FIRST = re.compile(rb'\A\{\s*"type"\s*:\s*"(?:system|user)"\s*,\s*"content"\s*:')
_OTHER_AGENTS = (b'"sessionId"', b'"session_id"', b'"uuid"', b'"payload"')

Content = TextPart | ImagePart


class GrokImporter:
    """Importer for Grok CLI ``chat_history.jsonl`` (see the module docstring)."""

    name = "grok"
    label = "a Grok CLI chat history"

    def sniff(self, path: Path, head: bytes) -> bool:
        """True when the first line is ``{"type": "system"|"user", "content": …}`` without
        the session keys of other agents' logs."""
        first = first_line(head)
        return _FIRST.match(first) is not None and not any(k in first for k in _OTHER_AGENTS)

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
        reader.drop_pending(None)
        summary = _summary(path)
        info = opt_dict(summary, "info")
        sid = opt_str(info, "id") or file_digest(path)
        entries = reader.rows.build(sid)
        meta: dict[str, Any] = {"cwd": info["cwd"]} if opt_str(info, "cwd") else {}
        for key in ("current_model_id", "session_kind", "agent_name", "reasoning_effort"):
            if opt_str(summary, key):
                meta[key] = summary[key]
        if reader.model:
            meta["model"] = reader.model
        title = opt_str(summary, "generated_title") or title_of(entries)
        return ImportedSession(sid, self.name, str(path), entries, title, meta, report)


def _summary(path: Path) -> dict[str, Any]:
    try:
        data = orjson.loads(path.with_name("summary.json").read_bytes())
    except (OSError, orjson.JSONDecodeError):
        return {}
    return data if isinstance(data, dict) else {}


class _Reader:
    def __init__(self, report: ImportReport) -> None:
        self.report = report
        self.rows = Rows()
        self.calls = Calls(report)
        self.pending: list[Part] = []
        self.pending_line: int | None = None
        self.model: str | None = None
        #: the item being read (the source of the rows it adds).
        self.current = b""

    def feed(self, line: int, obj: dict[str, Any], raw: bytes) -> None:
        self.current = raw
        kind = obj.get("type")
        if kind == "system":
            text = self._text(line, obj.get("content"))
            if text is not None:
                self.rows.add(Message("system", (TextPart(text),)), key=self.current)
        elif kind == "user":
            self.drop_pending(line)
            parts = self._user_parts(line, obj.get("content"))
            if parts:
                reason = opt_str(obj, "synthetic_reason")
                meta = {SYNTHETIC: reason} if reason else {}
                self.rows.add(Message("user", tuple(parts), meta=meta), key=self.current)
        elif kind == "reasoning":
            self._hold(line, _reasoning(obj))
        elif kind == "backend_tool_call":
            self._hold(line, _backend(obj))
        elif kind == "assistant":
            self._assistant(line, obj)
        elif kind == "tool_result":
            self._tool(line, obj)
        else:
            self.report.skip(
                f"item:{kind}" if isinstance(kind, str) else "item without type",
                "expected an item of type system, user, reasoning, assistant, tool_result or "
                f"backend_tool_call, got {kind!r}",
                line=line,
            )

    def _hold(self, line: int, part: Part) -> None:
        if not self.pending:
            self.pending_line = line
        self.pending.append(part)

    def drop_pending(self, line: int | None) -> None:
        """Forget reasoning and provider-side calls no assistant line followed."""
        if self.pending:
            self.report.ignore("reasoning without a reply", line=self.pending_line)
        self.pending = []

    def _text(self, line: int, content: Any) -> str | None:
        if isinstance(content, str):
            return content
        if isinstance(content, list):
            self.report.repair(
                "structured content",
                "expected `content` text, got a list of parts",
                line=line,
            )
            return "\n".join(
                p["text"] for p in content if isinstance(p, dict) and isinstance(p.get("text"), str)
            )
        if content is None:
            return ""
        self.report.skip("malformed content", "expected `content` text", line=line)
        return None

    def _user_parts(self, line: int, content: Any) -> list[Content]:
        if isinstance(content, str):
            return [TextPart(content)]
        if not isinstance(content, list):
            self.report.skip(
                "user without content", "expected `content` parts on a user item", line=line
            )
            return []
        parts: list[Content] = []
        for item in content:
            kind = item.get("type") if isinstance(item, dict) else None
            if kind == "text" and isinstance(item.get("text"), str):
                parts.append(TextPart(item["text"]))
            elif kind == "image" and isinstance(item.get("url"), str):
                parts.append(image_from_url(item["url"]))
            else:
                self.report.skip(
                    f"part:{kind}" if isinstance(kind, str) else "malformed part",
                    f"expected a text or image part with its fields, got {kind!r}",
                    line=line,
                )
        return parts

    def _assistant(self, line: int, obj: dict[str, Any]) -> None:
        parts: list[Part] = list(self.pending)
        self.pending = []
        text = self._text(line, obj.get("content"))
        if text:
            parts.append(TextPart(text))
        calls = obj.get("tool_calls")
        for n, call in enumerate(calls if isinstance(calls, list) else ()):
            name = opt_str(call, "name") if isinstance(call, dict) else None
            if name is None:
                self.report.skip(
                    "tool call without name", "expected a tool call with a `name`", line=line
                )
                continue
            assert isinstance(call, dict)
            args = call.get("arguments", "{}")
            if args is None:
                self.report.repair(
                    "null arguments", "expected `arguments` on a tool call", line=line
                )
                args = "{}"
            unique = self.calls.call(call.get("id"), name, f"call_gen_{line}_{n}", line=line)
            text = arguments_text(args, self.report, "arguments", line=line)
            parts.append(ToolCallPart(unique, name, text))
        model = opt_str(obj, "model_id")
        self.model = model or self.model
        meta = (
            {"reasoning_effort": obj["reasoning_effort"]}
            if opt_str(obj, "reasoning_effort")
            else {}
        )
        if not parts:
            self.report.skip("empty assistant item", "expected content or tool calls", line=line)
            return
        self.rows.add(assistant_message(parts, model=model, meta=meta), key=self.current)

    def _tool(self, line: int, obj: dict[str, Any]) -> None:
        unique = self.calls.result(obj.get("tool_call_id"), what="tool_result", line=line)
        if unique is None:
            return
        text = self._text(line, obj.get("content"))
        result = ToolResultPart(unique, (TextPart(text or ""),), name=self.calls.name_of(unique))
        self.rows.add(Message("tool", (result,)), key=self.current)


def _reasoning(obj: dict[str, Any]) -> ReasoningPart:
    texts = [
        s["text"]
        for s in obj.get("summary") or ()
        if isinstance(s, dict) and isinstance(s.get("text"), str)
    ]
    return ReasoningPart(
        "\n\n".join(texts), signature=opt_str(obj, "encrypted_content"), meta={"provider": "xai"}
    )


def _backend(obj: dict[str, Any]) -> TextPart:
    kind = opt_dict(obj, "kind")
    tool = opt_str(kind, "tool_type") or "tool"
    action = json.dumps(kind.get("action", {}), ensure_ascii=False, sort_keys=True)
    return TextPart(f"[provider-side tool call] {tool}({action})", meta={"provider_item": obj})


IMPORTER = GrokImporter()
