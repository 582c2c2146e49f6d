"""Codex CLI rollout JSONL (``~/.codex/sessions/YYYY/MM/DD/rollout-*.jsonl``).

Every line is ``{"timestamp", "type", "payload"}``. Only ``response_item`` lines (what the
model saw and said) become messages; ``event_msg`` lines repeat them for the UI and are never
messages. Mapping, in file order:

* ``message`` items with role user / developer / system become messages of that role. User
  messages Codex writes itself (``<environment_context>``, ``<user_instructions>``, AGENTS.md
  text) are marked ``meta["synthetic"]`` with the tag name.
* A run of assistant-side items (assistant ``message``, ``reasoning``, ``function_call``,
  ``custom_tool_call``, ``local_shell_call``, ``web_search_call``) with nothing else between
  them is one model response and becomes one assistant message, so parallel calls stay in
  one message. Reasoning keeps its summary text and its ``encrypted_content`` as the
  signature, byte-exact. ``stop_reason`` is ``"tool_use"`` when the response made calls,
  else ``"stop"``; a response cut by ``turn_aborted`` gets ``"aborted"``.
* ``function_call_output`` / ``custom_tool_call_output`` become one ``tool`` message each.
  ``is_error`` is set when the output reports a non-zero exit code (JSON ``metadata.exit_code``
  or an ``Exit code: N`` header) or starts with a sandbox / patch failure.
* ``event_msg`` ``token_count``: Codex logs it when a response completes, before (0.3x) or
  after (later versions) that response's items. Usage therefore goes to the assistant message
  of the same stretch between two non-assistant items (user message, tool output); the last
  count in the stretch wins. ``last_token_usage.input_tokens`` includes cached tokens, so
  ``input = input_tokens - cached_input_tokens``.
* A ``compacted`` line becomes a :class:`CompactionRecord` with its ``message`` as summary.
* Each ``session_meta`` line adds its id to ``meta["session_ids"]``: a resumed rollout starts
  with its own id followed by the id it resumed. The session id is the first one.
* Entry ids are content hashes (rollout lines carry no ids).
"""

from __future__ import annotations

import re
from pathlib import Path
from typing import Any

from ctxengine.errors import TranscriptError
from ctxengine.importers._build import (
    CallIds,
    LogBuilder,
    file_digest,
    read_jsonl,
)
from ctxengine.importers._codex_items import Items, tool_output_is_error
from ctxengine.importers._parts import count, opt_dict, opt_int, opt_str, title_of
from ctxengine.importers.base import ImportedSession
from ctxengine.model import CompactionRecord, Message, Part, Usage

_SNIFF = re.compile(rb'"type"\s*:\s*"(?:session_meta|response_item|turn_context|event_msg)"')
_ASSISTANT_ITEMS = frozenset(
    {"reasoning", "function_call", "custom_tool_call", "local_shell_call", "web_search_call"}
)
_OUTPUT_ITEMS = frozenset({"function_call_output", "custom_tool_call_output"})

__all__ = ["IMPORTER", "CodexImporter", "tool_output_is_error"]


class CodexImporter:
    """Importer for Codex CLI rollout JSONL (see the module docstring for the mapping)."""

    name = "codex"

    def sniff(self, path: Path, head: bytes) -> bool:
        """True for JSONL whose lines are Codex rollout items (``type`` + ``payload``)."""
        return (
            head.lstrip().startswith(b"{")
            and b'"payload"' in head
            and _SNIFF.search(head[:4096]) is not None
        )

    def read(self, path: Path) -> ImportedSession:
        """Parse ``path``. Raises ``TranscriptError`` naming the line on malformed items."""
        return read_jsonl(path, _Reader(path))


class _Reader:
    def __init__(self, path: Path) -> None:
        self.path = path
        self.items = Items(path, CallIds())
        self.entries: list[tuple[Message | CompactionRecord, str | None]] = []
        self.group: list[Part] = []
        self.group_meta: dict[str, Any] = {}
        self.group_at: str | None = None
        self.usage: Usage | None = None
        self.model: str | None = None
        self.session_ids: list[str] = []
        self.info: dict[str, Any] = {}
        self.skipped: dict[str, int] = {}

    def feed(self, line: int, obj: dict[str, Any]) -> None:
        """Take the record on 1-based ``line`` (see :class:`~._build.LineReader`)."""
        kind, payload = obj.get("type"), obj.get("payload")
        if not isinstance(kind, str) or not isinstance(payload, dict):
            raise TranscriptError(
                str(self.path),
                "expected a rollout line with a string `type` and a `payload` object",
                line=line,
            )
        created = opt_str(obj, "timestamp")
        if kind == "response_item":
            self._item(line, payload, created)
        elif kind == "event_msg":
            self._event(payload)
        elif kind == "session_meta":
            self._session_meta(payload)
        elif kind == "turn_context":
            self.model = opt_str(payload, "model") or self.model
        elif kind == "compacted":
            self._flush()
            summary = opt_str(payload, "message") or ""
            self.entries.append((_compaction(summary), created))
        else:
            count(self.skipped, kind)

    def _item(self, line: int, payload: dict[str, Any], created: str | None) -> None:
        kind = payload.get("type")
        if not isinstance(kind, str):
            raise TranscriptError(str(self.path), "expected a string `payload.type`", line=line)
        if (kind == "message" and payload.get("role") == "assistant") or kind in _ASSISTANT_ITEMS:
            if not self.group:
                self.group_at = created
            self.items.assistant(line, payload, self.group, self.group_meta)
        elif kind == "message":
            self._flush()
            self.entries.append((self.items.message(line, payload), created))
        elif kind in _OUTPUT_ITEMS:
            self._flush()
            self.entries.append((self.items.output(line, payload), created))
        else:
            count(self.skipped, f"response_item:{kind}")

    def _event(self, payload: dict[str, Any]) -> None:
        kind = opt_str(payload, "type") or "?"
        if kind == "token_count":
            last = opt_dict(opt_dict(payload, "info"), "last_token_usage")
            if last:
                cached = opt_int(last, "cached_input_tokens")
                self.usage = Usage(
                    input_tokens=max(0, opt_int(last, "input_tokens") - cached),
                    output_tokens=opt_int(last, "output_tokens"),
                    cache_read_tokens=cached,
                )
            window = opt_int(opt_dict(payload, "info"), "model_context_window")
            if window:
                self.info["model_context_window"] = window
        elif kind == "turn_aborted" and self.group:
            self.group_meta["stop_reason"] = "aborted"
            self._flush()
        count(self.skipped, f"event_msg:{kind}")

    def _session_meta(self, payload: dict[str, Any]) -> None:
        sid = opt_str(payload, "id")
        if sid and sid not in self.session_ids:
            self.session_ids.append(sid)
        if len(self.session_ids) <= 1:
            for key in ("cwd", "cli_version", "originator"):
                if opt_str(payload, key):
                    self.info[key] = payload[key]
            git = opt_dict(payload, "git")
            if opt_str(git, "branch"):
                self.info["git_branch"] = git["branch"]

    def _flush(self) -> None:
        """Close the stretch: emit the pending assistant message with the stretch's usage."""
        if self.group:
            stop = self.group_meta.pop("stop_reason", None)
            calls = any(p.kind == "tool_call" for p in self.group)
            msg = Message(
                "assistant",
                tuple(self.group),
                usage=self.usage,
                model=self.model,
                stop_reason=stop or ("tool_use" if calls else "stop"),
                meta=dict(self.group_meta),
            )
            self.entries.append((msg, self.group_at))
        self.group = []
        self.group_meta = {}
        self.usage = None

    def finish(self) -> ImportedSession:
        """The session read so far."""
        self._flush()
        sid = self.session_ids[0] if self.session_ids else file_digest(self.path)
        builder = LogBuilder(sid)
        for body, created in self.entries:
            builder.add(body, created_at=created)
        meta: dict[str, Any] = dict(self.info)
        meta["session_ids"] = list(self.session_ids)
        if self.model:
            meta["model"] = self.model
        if self.skipped:
            meta["skipped"] = dict(sorted(self.skipped.items()))
        entries = tuple(builder.entries)
        return ImportedSession(sid, "codex", str(self.path), entries, title_of(entries), meta)


def _compaction(summary: str) -> CompactionRecord:
    return CompactionRecord(
        summary=summary,
        first_kept_id=None,
        tokens_before=0,
        tokens_after=0,
        policy="codex",
        summarizer="imported",
        reason="imported",
    )


IMPORTER = CodexImporter()
