"""Factory droid sessions: the session store (``~/.factory/sessions/<project>/<id>.jsonl``)
and ``droid exec --output-format stream-json`` logs.

Session store: a ``session_start`` line (``id``, ``title``, ``cwd``, ``version``) then
``message`` lines whose ``message`` is Anthropic-shaped (``role`` and ``content`` blocks;
mapping in :mod:`ctxengine.importers._line_blocks`: ``tool_result`` blocks become a ``tool``
message, the rest of a user line a user message, an assistant line one assistant message).
``todo_state`` lines never reach the model (ignored). The model comes from the
``<id>.settings.json`` beside the file when it is there.

stream-json: ``system`` (``session_id``, ``model``, ``cwd``), ``message`` (``role``,
``text``), ``tool_call`` (``toolCallId``, ``toolName``, ``parameters``), ``tool_result``
(``toolCallId``, ``value``: text, or ``{stdout, stderr, exitCode}``; an error when
``isError`` or ``exitCode`` ≠ 0) and ``completion`` (``finalText``). An assistant
``message`` and the ``tool_call`` lines after it are one model response (one assistant
message); ``finalText`` is the last assistant message unless that text is already the last
one.

Tolerated drift (counted in the report, refused in strict mode): calls and results without
ids (generated ``"droid_<line>_<n>"``, results answer the oldest unanswered call), ``null``
input, structured tool outputs, unknown record types and blocks, and what
:func:`~ctxengine.importers._lines.iter_objects` tolerates.
"""

from __future__ import annotations

import re
from pathlib import Path
from typing import Any

import orjson

from ctxengine.importers._build import file_digest
from ctxengine.importers._calls import Calls, arguments_text, json_text
from ctxengine.importers._line_blocks import LineBlocks, assistant_message
from ctxengine.importers._lines import first_line, iter_objects
from ctxengine.importers._log import Rows
from ctxengine.importers._parts import opt_str, title_of
from ctxengine.importers.base import ImportedSession, start_report
from ctxengine.importers.report import ImportReport
from ctxengine.model import Message, Part, TextPart, ToolCallPart, ToolResultPart

_STORE = re.compile(rb'\A\{\s*"type"\s*:\s*"(?:session_start|message)"')
_STREAM = re.compile(rb'\A\{\s*"type"\s*:\s*"(?:system|message|tool_call|tool_result|completion)"')
_STORE_IGNORED = frozenset({"todo_state", "session_end"})


class DroidImporter:
    """Importer for Factory droid session stores and stream-json logs."""

    name = "droid"
    label = "a Factory droid session"

    def sniff(self, path: Path, head: bytes) -> bool:
        """True for a session store (first line ``session_start``, or a ``message`` line
        with a ``message`` object) or a stream-json log (first line of a stream-json type
        with a ``session_id`` and no ``subtype``, which Claude Code's stream-json has)."""
        first = first_line(head)
        if _STORE.match(first) and (
            b'"session_start"' in first or b'"message":{' in first.replace(b" ", b"")
        ):
            return True
        return (
            _STREAM.match(first) is not None
            and b'"session_id"' in first
            and b'"subtype"' not in first
        )

    def read(self, path: Path, report: ImportReport | None = None) -> ImportedSession:
        """Parse ``path``, counting what is skipped, repaired and ignored in ``report``.

        Raises:
            TranscriptError: unreadable file; in strict mode the first skipped or repaired
                item, naming its line.
        """
        report = start_report(path, report)
        store: _Store | None = None
        stream: _Stream | None = None
        for line, obj, raw in iter_objects(path, report):
            if store is None and stream is None:
                if obj.get("type") == "session_start" or isinstance(obj.get("message"), dict):
                    store = _Store(report)
                else:
                    stream = _Stream(report)
            if store is not None:
                store.feed(line, obj, raw)
            elif stream is not None:
                stream.feed(line, obj, raw)
        reader: _Store | _Stream = store or stream or _Store(report)
        if isinstance(reader, _Stream):
            reader.finish()
        else:
            model = _settings_model(path)
            if model:
                reader.info["model"] = model
        sid = reader.session_id or file_digest(path)
        entries = reader.rows.build(sid)
        meta = dict(reader.info)
        title = meta.pop("title", None) or title_of(entries)
        meta["kind"] = "session-store" if isinstance(reader, _Store) else "stream-json"
        return ImportedSession(sid, self.name, str(path), entries, title, meta, report)


def _settings_model(path: Path) -> str | None:
    try:
        data = orjson.loads(path.with_name(f"{path.stem}.settings.json").read_bytes())
    except (OSError, orjson.JSONDecodeError):
        return None
    return opt_str(data, "model") if isinstance(data, dict) else None


class _Store:
    def __init__(self, report: ImportReport) -> None:
        self.report = report
        self.rows = Rows()
        self.blocks = LineBlocks(report, "droid", ids_recorded=True)
        self.session_id: str | None = None
        self.info: dict[str, Any] = {}

    def feed(self, line: int, obj: dict[str, Any], raw: bytes) -> None:
        kind = obj.get("type")
        if kind == "session_start":
            self.session_id = self.session_id or opt_str(obj, "id")
            for key in ("title", "cwd", "version", "owner"):
                if isinstance(obj.get(key), str | int) and key not in self.info:
                    self.info[key] = obj[key]
            self.report.ignore("session_start", line=line)
            return
        if kind in _STORE_IGNORED:
            self.report.ignore(str(kind), line=line)
            return
        if kind != "message":
            self.report.skip(
                f"record:{kind}",
                f"expected a session store line of type session_start or message, got {kind!r}",
                line=line,
            )
            return
        message = obj.get("message")
        role = message.get("role") if isinstance(message, dict) else None
        content = message.get("content") if isinstance(message, dict) else None
        if isinstance(content, str):
            content = [{"type": "text", "text": content}]
        if role not in ("user", "assistant") or not isinstance(content, list):
            self.report.skip(
                "malformed message",
                "expected a `message` object with `role` user or assistant and `content` blocks",
                line=line,
            )
            return
        created, source = opt_str(obj, "timestamp"), opt_str(obj, "id")
        if role == "assistant":
            parts = self.blocks.assistant(line, content)
            if parts:
                self.rows.add(assistant_message(parts), created, source, key=raw)
            return
        for n, msg in enumerate(self.blocks.user(line, content)):
            self.rows.add(msg, created, source if n == 0 else None, key=raw)


class _Stream:
    def __init__(self, report: ImportReport) -> None:
        self.report = report
        self.rows = Rows()
        self.calls = Calls(report)
        self.session_id: str | None = None
        self.info: dict[str, Any] = {}
        self.open: list[Part] = []
        self.open_keys: list[bytes] = []
        self.raw = b""
        self.open_at: str | None = None
        self.last_text: str | None = None

    def feed(self, line: int, obj: dict[str, Any], raw: bytes) -> None:
        self.raw = raw
        kind = obj.get("type")
        self.session_id = self.session_id or opt_str(obj, "session_id")
        created = opt_str(obj, "timestamp")
        if kind == "system":
            for key in ("model", "cwd"):
                if opt_str(obj, key):
                    self.info[key] = obj[key]
            self.report.ignore("system", line=line)
        elif kind == "message":
            self._message(line, obj, created)
        elif kind == "tool_call":
            self._call(line, obj, created)
        elif kind == "tool_result":
            self._result(line, obj, created)
        elif kind == "completion":
            text = opt_str(obj, "finalText")
            self._flush()
            if text and text != self.last_text:
                msg = assistant_message([TextPart(text)], stop_reason="stop")
                self.rows.add(msg, created, key=raw)
                self.last_text = text
            self.report.ignore("completion", line=line)
        else:
            self.report.skip(
                f"record:{kind}",
                "expected a stream-json line of type system, message, tool_call, tool_result "
                f"or completion, got {kind!r}",
                line=line,
            )

    def _message(self, line: int, obj: dict[str, Any], created: str | None) -> None:
        role, text = obj.get("role"), opt_str(obj, "text")
        if role not in ("user", "assistant") or text is None:
            self.report.skip(
                "malformed message",
                "expected a message with `role` user or assistant and `text`",
                line=line,
            )
            return
        self._flush()
        if role == "assistant":
            self.open = [TextPart(text)]
            self.open_keys = [self.raw]
            self.open_at = created
            self.last_text = text
        else:
            self.rows.add(Message("user", (TextPart(text),)), created, key=self.raw)

    def _call(self, line: int, obj: dict[str, Any], created: str | None) -> None:
        name = opt_str(obj, "toolName")
        if name is None:
            self.report.skip("tool_call without name", "expected a string `toolName`", line=line)
            return
        args = obj.get("parameters", {})
        if args is None:
            self.report.repair("null arguments", "expected `parameters` on a tool_call", line=line)
            args = {}
        unique = self.calls.call(
            obj.get("toolCallId"), name, f"droid_{line}_0", what="tool_call", line=line
        )
        if not self.open:
            self.open_at = created
        self.open_keys.append(self.raw)
        text = arguments_text(args, self.report, "parameters", line=line)
        self.open.append(ToolCallPart(unique, name, text))

    def _result(self, line: int, obj: dict[str, Any], created: str | None) -> None:
        self._flush()
        unique = self.calls.result(obj.get("toolCallId"), what="tool_result", line=line)
        if unique is None:
            return
        value = obj.get("value")
        failed = obj.get("isError") is True
        if isinstance(value, dict):
            streams = [value.get(k) for k in ("stdout", "stderr")]
            text = "\n".join(s for s in streams if isinstance(s, str) and s)
            code = value.get("exitCode")
            failed = failed or (isinstance(code, int) and code != 0)
            if not any(isinstance(s, str) for s in streams):
                text = json_text(value)
        else:
            text = value if isinstance(value, str) else json_text(value)
        part = ToolResultPart(
            unique, (TextPart(text),), is_error=failed, name=self.calls.name_of(unique)
        )
        self.rows.add(Message("tool", (part,)), created, key=self.raw)

    def _flush(self) -> None:
        if self.open:
            key = b"".join(self.open_keys)
            self.rows.add(assistant_message(self.open), self.open_at, key=key)
        self.open = []
        self.open_keys = []

    def finish(self) -> None:
        self._flush()


IMPORTER = DroidImporter()
