"""Codex CLI rollout JSONL (``~/.codex/sessions/YYYY/MM/DD/rollout-*.jsonl``).

Every line is ``{"timestamp", "type", "payload"}``. ``response_item`` lines (what the model saw
and said) become messages; ``event_msg`` lines repeat them for the UI (or report progress,
review mode, collaborating agents, goals, MCP calls …) and are never messages. Mapping, in
file order:

* ``session_meta.base_instructions`` (Codex's base prompt, sent as the first ``developer``
  input item of every request) becomes the first message, role ``developer``, marked
  ``meta["source"] = "base_instructions"``.
* ``message`` items with role user / developer / system become messages of that role. User
  messages Codex writes itself (``<environment_context>``, ``<user_instructions>``, AGENTS.md
  text) are marked ``meta["synthetic"]`` with the tag name.
* A run of assistant-side items (assistant ``message``, ``reasoning``, calls, provider-side
  web search, image generation and compaction items) with nothing else between them is one
  model response and becomes one assistant message, so parallel calls stay in one message.
  Reasoning keeps its summary text and its ``encrypted_content`` as the signature,
  byte-exact. ``stop_reason`` is ``"tool_use"`` when the response made calls, else
  ``"stop"``; a response cut by ``turn_aborted`` gets ``"aborted"``. Item mapping:
  :mod:`ctxengine.importers._codex_items`.
* Tool outputs become one ``tool`` message each. ``is_error`` is set when the output reports
  a non-zero exit code (JSON ``metadata.exit_code`` or an ``Exit code: N`` header) or starts
  with a sandbox / patch failure.
* ``event_msg`` ``token_count``: Codex logs it when a response completes, before (0.3x) or
  after (later versions) that response's items. Usage therefore goes to the assistant message
  of the same stretch between two non-assistant items (user message, tool output); the last
  count in the stretch wins. ``last_token_usage.input_tokens`` includes cached tokens, so
  ``input = input_tokens - cached_input_tokens``.
* A ``compacted`` line becomes a :class:`CompactionRecord` with its ``message`` as summary.
  When it carries the ``replacement_history`` Codex continues from, the items of that history
  follow the record, except the messages already in the head and the user message that
  repeats the summary, so that the projection holds what Codex sent after compacting.
* Each ``session_meta`` line adds its id to ``meta["session_ids"]``: a resumed rollout starts
  with its own id followed by the id it resumed. The session id is the first one.
* ``turn_context`` gives the model and the reasoning effort (the last ones are
  ``meta["model"]`` and ``meta["reasoning_effort"]``). ``world_state``,
  ``token_usage_record``, ``ghost_snapshot`` items and every ``event_msg`` never reach the
  model: they are ignored (counted in ``meta["skipped"]``); unknown record and item types
  are skipped.
* Entry ids: rollout lines carry no ids, so an entry's id is a hash of the previous entry's
  id and the digest of the lines it was read from (:meth:`~._build.LogBuilder.add_keyed`):
  its own line, or for an assistant message every item line of its response plus the
  ``token_count`` and ``turn_aborted`` lines that gave its usage and stop reason, so a
  response that grew (a later call, its usage logged after it) gets a new id.
"""

from __future__ import annotations

import hashlib
import re
from pathlib import Path
from typing import Any

from ctxengine.importers._build import LOCATED, CallIds, LogBuilder, file_digest, relocated
from ctxengine.importers._calls import arguments_text
from ctxengine.importers._codex_items import Items, tool_output_is_error
from ctxengine.importers._lines import iter_objects
from ctxengine.importers._log import source_digest
from ctxengine.importers._parts import opt_dict, opt_str, title_of
from ctxengine.importers.base import ImportedSession, start_report
from ctxengine.importers.report import ImportReport
from ctxengine.model import CompactionRecord, Message, Part, TextPart, ToolCallPart, Usage

_blake2b = hashlib.blake2b

_SNIFF = re.compile(rb'"type"\s*:\s*"(?:session_meta|response_item|turn_context|event_msg)"')
_ASSISTANT_ITEMS = frozenset(
    {
        "reasoning",
        "function_call",
        "custom_tool_call",
        "local_shell_call",
        "web_search_call",
        "tool_search_call",
        "image_generation_call",
        "compaction",
        "tool_call",
    }
)
_OUTPUT_ITEMS = frozenset(
    {"function_call_output", "custom_tool_call_output", "tool_search_output", "tool_result"}
)
#: Items and records that never reach the model.
_IGNORED_ITEMS = frozenset({"ghost_snapshot"})
_IGNORED_RECORDS = frozenset({"world_state", "token_usage_record"})

__all__ = ["IMPORTER", "CodexImporter", "tool_output_is_error"]


class CodexImporter:
    """Importer for Codex CLI rollout JSONL (see the module docstring for the mapping)."""

    name = "codex"
    label = "a Codex rollout"

    def sniff(self, path: Path, head: bytes) -> bool:
        """True for JSONL whose lines are Codex rollout items (``type`` + ``payload``)."""
        return (
            head.lstrip().startswith(b"{")
            and _SNIFF.search(head[:4096]) is not None  # before the scan of the whole head
            and b'"payload"' in head
        )

    def read(self, path: Path, report: ImportReport | None = None) -> ImportedSession:
        """Parse ``path``, counting what is skipped, repaired and ignored in ``report``.

        Raises:
            TranscriptError: unreadable file; in strict mode the first skipped or repaired
                item, naming its line.
        """
        report = start_report(path, report)
        reader = _Reader(path, report)
        number = 0
        try:
            for number, obj, raw in iter_objects(path, report):
                reader.feed(number, obj, raw)
        except LOCATED as exc:
            raise relocated(path, exc, number) from None
        return reader.finish()


class _Reader:
    def __init__(self, path: Path, report: ImportReport) -> None:
        self.path = path
        self.report = report
        self.items = Items(path, CallIds(), report)
        #: ``(body, created_at, digest of the lines it was read from)`` in log order.
        self.entries: list[tuple[Message | CompactionRecord, str | None, bytes]] = []
        self.head: list[Message] = []
        self.group: list[Part] = []
        self.group_meta: dict[str, Any] = {}
        self.group_at: str | None = None
        #: digests of the lines of the pending assistant message (its items, its
        #: ``turn_aborted`` event).
        self.group_lines: list[bytes] = []
        self.usage: Usage | None = None
        #: the ``token_count`` line :attr:`usage` was read from.
        self.usage_line = b""
        #: the line being read, and its digest once computed.
        self.raw = b""
        self.digest: bytes | None = None
        self.model: str | None = None
        self.effort: str | None = None
        self.session_ids: list[str] = []
        self.meta_seen = False
        self.info: dict[str, Any] = {}
        #: ``event_msg`` kind → how many of its lines were met after the first (reported at
        #: :meth:`finish`: the report is the same as with one call per line, and cheaper).
        self.events: dict[str, int] = {}

    def feed(self, line: int, obj: dict[str, Any], raw: bytes) -> None:
        """Take the record on 1-based ``line``, whose bytes are ``raw``; raises
        ``TranscriptError`` naming the line."""
        self.raw = raw
        self.digest = None
        kind, payload = obj.get("type"), obj.get("payload")
        # exact types: the objects come from a JSON parser (no subclasses)
        if type(kind) is not str or type(payload) is not dict:
            self.report.skip(
                "malformed line",
                "expected a rollout line with a string `type` and a `payload` object",
                line=line,
            )
            return
        created = obj.get("timestamp")
        if type(created) is not str:
            created = None
        if kind == "response_item":
            self._item(line, payload, created)
        elif kind == "event_msg":
            self._event(line, payload)
        elif kind == "session_meta":
            self._session_meta(payload, created)
        elif kind == "turn_context":
            self.model = opt_str(payload, "model") or self.model
            self.effort = opt_str(payload, "effort") or self.effort
        elif kind == "compacted":
            self._compacted(line, payload, created)
        elif kind in _IGNORED_RECORDS:
            self.report.ignore(kind, line=line)
        else:
            self.report.skip(
                f"record:{kind}",
                "expected a rollout line of type session_meta, response_item, event_msg, "
                f"turn_context or compacted, got {kind!r}",
                line=line,
            )

    def _add(
        self, body: Message | CompactionRecord, created: str | None, digest: bytes | None = None
    ) -> None:
        """Append ``body`` read from the current line (``digest``: of the lines it was read
        from, when not that line alone)."""
        at_head = len(self.head) == len(self.entries)
        if at_head and isinstance(body, Message) and body.role in ("developer", "system"):
            self.head.append(body)
        self.entries.append((body, created, digest or self._line_digest()))

    def _line_digest(self) -> bytes:
        """The digest of the line being read (computed once: a ``compacted`` line gives
        several entries; :func:`~._log.source_digest`, inlined in :meth:`_item`)."""
        if self.digest is None:
            self.digest = source_digest(self.raw)
        return self.digest

    def _item(self, line: int, payload: dict[str, Any], created: str | None) -> None:
        kind = payload.get("type")
        if type(kind) is not str:
            self.report.skip("item without type", "expected a string `payload.type`", line=line)
            return
        if kind == "function_call" and self._function_call(line, payload, created):
            return
        if kind in _ASSISTANT_ITEMS or (kind == "message" and payload.get("role") == "assistant"):
            group = self.group
            if not group:
                self.group_at = created
            before = len(group)
            self.items.assistant(line, payload, group, self.group_meta)
            if len(group) > before:
                digest = self.digest
                if digest is None:
                    digest = self.digest = _blake2b(self.raw, digest_size=16).digest()
                self.group_lines.append(digest)
        elif kind == "compaction_summary":
            self._item(line, {**payload, "type": "compaction"}, created)
        elif kind == "message":
            self._flush()
            msg = self.items.message(line, payload)
            if msg is not None:
                self._add(msg, created)
        elif kind in _OUTPUT_ITEMS:
            self._flush()
            out = self.items.output(line, payload)
            if out is not None:
                self._add(out, created)
        elif kind in _IGNORED_ITEMS:
            self.report.ignore(f"response_item:{kind}", line=line)
        else:
            self.report.skip(
                f"response_item:{kind}",
                f"expected a known response item type, got {kind!r}",
                line=line,
            )

    def _function_call(self, line: int, payload: dict[str, Any], created: str | None) -> bool:
        """The usual ``function_call`` item (string ``call_id``, ``name`` and ``arguments``)
        added to the open response as :meth:`Items.assistant` adds it, in one call; False
        (nothing done) for any other shape, which the general path reads."""
        source_id = payload.get("call_id")
        name = payload.get("name")
        arguments = payload.get("arguments")
        # exact types: the values come from a JSON parser
        if type(source_id) is not str or not source_id:
            return False
        if type(name) is not str or type(arguments) is not str:
            return False
        group = self.group
        if not group:
            self.group_at = created
        items = self.items
        unique = items.calls.call(source_id)
        items.order.append((source_id, unique))
        items.names[unique] = name
        text = arguments_text(arguments, self.report, "arguments", line=line)
        group.append(ToolCallPart(unique, name, text, {}))
        digest = self.digest
        if digest is None:
            digest = self.digest = _blake2b(self.raw, digest_size=16).digest()
        self.group_lines.append(digest)
        return True

    def _event(self, line: int, payload: dict[str, Any]) -> None:
        kind = payload.get("type")
        if type(kind) is not str or not kind:
            kind = "?"
        if kind == "token_count":
            info = payload.get("info")
            if type(info) is dict:
                last = info.get("last_token_usage")
                if type(last) is dict and last:
                    # opt_int inlined: an exact int (a JSON parser gives no bool for a number)
                    cached = last.get("cached_input_tokens")
                    if type(cached) is not int:
                        cached = 0
                    given = last.get("input_tokens")
                    output = last.get("output_tokens")
                    self.usage = Usage(
                        max(0, (given if type(given) is int else 0) - cached),
                        output if type(output) is int else 0,
                        cached,
                    )
                    self.usage_line = self.raw
                window = info.get("model_context_window")
                if type(window) is int and window:
                    self.info["model_context_window"] = window
        elif kind == "turn_aborted" and self.group:
            self.group_meta["stop_reason"] = "aborted"
            self.group_lines.append(self._line_digest())
            self._flush()
        # counted here, reported at the first of each kind and in one call at the end
        seen = self.events.get(kind)
        if seen is None:
            self.events[kind] = 0
            self.report.ignore(f"event_msg:{kind}", line=line)
        else:
            self.events[kind] = seen + 1

    def _session_meta(self, payload: dict[str, Any], created: str | None) -> None:
        sid = opt_str(payload, "id")
        if sid and sid not in self.session_ids:
            self.session_ids.append(sid)
        if not self.meta_seen:
            self.meta_seen = True
            for key in ("cwd", "cli_version", "originator"):
                if opt_str(payload, key):
                    self.info[key] = payload[key]
            git = opt_dict(payload, "git")
            if opt_str(git, "branch"):
                self.info["git_branch"] = git["branch"]
            base = payload.get("base_instructions")
            text = opt_str(base, "text") if isinstance(base, dict) else base
            if isinstance(text, str) and text:
                self._flush()
                meta = {"source": "base_instructions"}
                self._add(Message("developer", (TextPart(text),), meta=meta), created)

    def _compacted(self, line: int, payload: dict[str, Any], created: str | None) -> None:
        self._flush()
        summary = opt_str(payload, "message") or ""
        self._add(_compaction(summary), created)
        history = payload.get("replacement_history")
        if not isinstance(history, list):
            return
        for item in history:
            if not isinstance(item, dict):
                self.report.skip(
                    "malformed replacement item",
                    "expected `replacement_history` items to be objects",
                    line=line,
                )
                continue
            if item.get("type") == "message" and item.get("role") != "assistant":
                msg = self.items.message(line, item)
                if msg is None or self._repeats(msg, summary):
                    continue
                self._add(msg, created)
            else:
                self._item(line, item, created)
        self._flush()

    def _repeats(self, msg: Message, summary: str) -> bool:
        """True for a replacement-history message the projection already shows: a head
        message, or the user message that repeats the summary."""
        if msg.role == "user":
            return msg.text == summary
        return any(h.role == msg.role and h.text == msg.text for h in self.head)

    def _flush(self) -> None:
        """Close the stretch: emit the pending assistant message with the stretch's usage."""
        if not self.group:
            if self.usage is None and not self.group_meta:
                return  # nothing pending (the usual case before a user message or output)
        else:
            group, meta = self.group, self.group_meta
            stop = meta.pop("stop_reason", None) if meta else None
            if not stop:
                stop = "stop"
                for p in group:
                    if p.kind == "tool_call":
                        stop = "tool_use"
                        break
            # positional: role, parts, usage, model, stop_reason, meta
            msg = Message("assistant", tuple(group), self.usage, self.model, stop, dict(meta))
            self._add(msg, self.group_at, self._group_digest())
        self.group = []
        self.group_meta = {}
        self.group_lines = []
        self.usage = None
        self.usage_line = b""

    def _group_digest(self) -> bytes:
        """The 16-byte digest of the pending assistant message's sources: the digest of
        its one line, else blake2b of the digests of its lines (each item's, the
        ``turn_aborted`` one) and of the ``token_count`` line its usage was read from."""
        lines = self.group_lines
        if len(lines) == 1 and self.usage is None:
            return lines[0]
        if self.usage is not None:
            lines.append(source_digest(self.usage_line))
        return hashlib.blake2b(b"".join(lines), digest_size=16).digest()

    def finish(self) -> ImportedSession:
        """The session read so far."""
        self._flush()
        for kind, more in self.events.items():
            if more:
                self.report.ignore(f"event_msg:{kind}", count=more)
        self.events = {}
        sid = self.session_ids[0] if self.session_ids else file_digest(self.path)
        builder = LogBuilder(sid)
        builder.extend_keyed(self.entries)
        meta: dict[str, Any] = dict(self.info)
        meta["session_ids"] = list(self.session_ids)
        if self.model:
            meta["model"] = self.model
        if self.effort:
            meta["reasoning_effort"] = self.effort
        skipped = {
            k: n
            for k, n in self.report.counts("ignored").items()
            if k.startswith(("event_msg:", "response_item:")) or k in _IGNORED_RECORDS
        }
        if skipped:
            meta["skipped"] = skipped
        entries = tuple(builder.entries)
        return ImportedSession(
            sid, "codex", str(self.path), entries, title_of(entries), meta, self.report
        )


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
