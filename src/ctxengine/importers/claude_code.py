"""Claude Code session JSONL (``~/.claude/projects/<dir>/<session>.jsonl`` and the sidechain
files under ``<session>/subagents/agent-*.jsonl``, compaction sub-agents included).

Mapping, in file order:

* ``assistant`` lines: Claude Code writes one line per content block, each repeating the
  same ``message.id``; lines with the same id are merged into one assistant message placed
  where its first line was (tool results logged between its lines follow it). A block seen
  twice is kept once. Whitespace-only text blocks (a streaming artefact) are dropped. Usage
  is the last line's; ``stop_reason`` is normalised, and a message left without one (the
  usual case, since lines are written before the reply ends) gets ``"tool_use"`` when it
  has tool calls. ``isApiErrorMessage`` lines get ``"error"``.
* ``user`` lines: ``tool_result`` blocks become one ``tool`` message (entry id = ``uuid``);
  the line's other blocks become a following user message (id ``<uuid>#text``). ``isMeta``
  lines (hook reminders, command caveats) are sent to the model by Claude Code, so they are
  kept as user messages marked ``meta["synthetic"] = "isMeta"``. Interruption markers
  ("[Request interrupted by user]") are kept as user text.
* ``system`` lines with ``subtype: compact_boundary`` become a :class:`CompactionRecord`
  (entry id = the boundary's ``uuid``, ``tokens_before`` = ``compactMetadata.preTokens``,
  ``first_kept_id=None``: Claude Code keeps no verbatim tail). The ``isCompactSummary`` user
  message after it supplies the summary and is not repeated as a message; a summary without
  a boundary (older versions) becomes the record itself.
* Progress, file-history-snapshot, queue-operation, other system lines and summaries are
  not messages; their counts are in ``ImportedSession.meta["skipped"]``.
* A main session file never imports ``isSidechain`` lines (older versions logged sub-agent
  turns inline); a sidechain file imports only its own. Its session id is
  ``<sessionId>:agent-<agentId>`` so it never collides with the parent session.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from ctxengine.errors import TranscriptError
from ctxengine.importers._anthropic import STOP_REASONS, usage_of
from ctxengine.importers._build import (
    CallIds,
    LogBuilder,
    file_digest,
    read_jsonl,
)
from ctxengine.importers._claude_blocks import Blocks
from ctxengine.importers._parts import SYNTHETIC, count, opt_dict, opt_int, opt_str, title_of
from ctxengine.importers.base import ImportedSession
from ctxengine.model import CompactionRecord, Message, Part, TextPart, ToolResultPart

_TYPE = re.compile(
    rb'"type"\s*:\s*"(?:user|assistant|system|progress|file-history-snapshot|summary)"'
)
_SESSION_KEYS = ("cwd", "gitBranch", "version", "slug", "agentId")


@dataclass
class _Assistant:
    line: int
    uuid: str
    created_at: str | None
    message_id: str
    blocks: list[dict[str, Any]] = field(default_factory=list)
    uuids: list[str] = field(default_factory=list)
    raw: dict[str, Any] = field(default_factory=dict)
    api_error: bool = False


@dataclass
class _User:
    line: int
    uuid: str
    created_at: str | None
    content: str | list[Any]
    is_meta: bool


@dataclass
class _Boundary:
    line: int
    uuid: str
    created_at: str | None
    pre_tokens: int
    meta: dict[str, Any]
    summary: str | None = None


_Item = _Assistant | _User | _Boundary


class ClaudeCodeImporter:
    """Importer for Claude Code session JSONL (see the module docstring for the mapping)."""

    name = "claude-code"

    def sniff(self, path: Path, head: bytes) -> bool:
        """True for JSONL whose records carry Claude Code's ``sessionId`` and ``uuid``."""
        return (
            head.lstrip().startswith(b"{")
            and b'"sessionId"' in head
            and (b'"uuid"' in head or b'"messageId"' in head)
            and _TYPE.search(head) is not None
        )

    def read(self, path: Path) -> ImportedSession:
        """Parse ``path``. Raises ``TranscriptError`` naming the line on malformed records."""
        return read_jsonl(path, _Reader(path))


class _Reader:
    def __init__(self, path: Path) -> None:
        self.path = path
        self.items: list[_Item] = []
        self.assistants: dict[str, _Assistant] = {}
        self.seen: set[str] = set()
        self.sidechain: bool | None = None
        self.info: dict[str, Any] = {}
        self.session_id: str | None = None
        self.skipped: dict[str, int] = {}

    def feed(self, line: int, obj: dict[str, Any]) -> None:
        """Take the record on 1-based ``line`` (see :class:`~._build.LineReader`)."""
        kind = obj.get("type")
        if not isinstance(kind, str):
            raise TranscriptError(str(self.path), "expected a string `type`", line=line)
        if self.session_id is None and isinstance(obj.get("sessionId"), str):
            self.session_id = obj["sessionId"]
        if kind in ("user", "assistant"):
            self._message(line, kind, obj)
        elif kind == "system" and obj.get("subtype") == "compact_boundary":
            self._boundary(line, obj)
        else:
            sub = obj.get("subtype")
            count(self.skipped, f"{kind}:{sub}" if isinstance(sub, str) else kind)

    def _message(self, line: int, kind: str, obj: dict[str, Any]) -> None:
        side = bool(obj.get("isSidechain"))
        if self.sidechain is None:
            self.sidechain = side
            self.info.update({k: obj[k] for k in _SESSION_KEYS if isinstance(obj.get(k), str)})
        uuid = obj.get("uuid")
        if not isinstance(uuid, str) or not uuid:
            raise TranscriptError(
                str(self.path), f"expected a string `uuid` on a {kind}", line=line
            )
        if side != self.sidechain or uuid in self.seen:
            count(self.skipped, "sidechain" if side != self.sidechain else "duplicate")
            return
        self.seen.add(uuid)
        message = obj.get("message")
        if (
            not isinstance(message, dict)
            or not isinstance(message.get("role"), str)
            or not isinstance(message.get("content"), str | list)
        ):
            raise TranscriptError(
                str(self.path),
                "expected a `message` object with `role` and `content` (a string or a list)",
                line=line,
            )
        created = opt_str(obj, "timestamp")
        if kind == "assistant":
            self._assistant(line, uuid, created, obj, message)
        elif obj.get("isCompactSummary"):
            self._summary(line, uuid, created, message["content"])
        else:
            self.items.append(
                _User(line, uuid, created, message["content"], bool(obj.get("isMeta")))
            )

    def _assistant(
        self, line: int, uuid: str, created: str | None, obj: dict[str, Any], msg: dict[str, Any]
    ) -> None:
        msg_id = opt_str(msg, "id") or uuid
        acc = self.assistants.get(msg_id)
        if acc is None:
            acc = _Assistant(line, uuid, created, msg_id)
            self.assistants[msg_id] = acc
            self.items.append(acc)
        else:
            acc.uuids.append(uuid)
        content = msg["content"]
        blocks = [{"type": "text", "text": content}] if isinstance(content, str) else content
        for block in blocks:
            if block not in acc.blocks:
                acc.blocks.append(block)
        acc.raw.update({k: msg[k] for k in ("model", "usage", "stop_reason") if msg.get(k)})
        if isinstance(obj.get("requestId"), str):
            acc.raw["request_id"] = obj["requestId"]
        acc.api_error = acc.api_error or bool(obj.get("isApiErrorMessage"))

    def _boundary(self, line: int, obj: dict[str, Any]) -> None:
        uuid = opt_str(obj, "uuid") or f"boundary-{line}"
        meta = opt_dict(obj, "compactMetadata")
        trigger = opt_str(meta, "trigger")
        extra: dict[str, Any] = {"trigger": trigger} if trigger else {}
        boundary = _Boundary(
            line, uuid, opt_str(obj, "timestamp"), opt_int(meta, "preTokens"), extra
        )
        self.items.append(boundary)

    def _summary(self, line: int, uuid: str, created: str | None, content: str | list[Any]) -> None:
        text = (
            content
            if isinstance(content, str)
            else "\n".join(
                b["text"] for b in content if isinstance(b, dict) and isinstance(b.get("text"), str)
            )
        )
        last = self.items[-1] if self.items else None
        if isinstance(last, _Boundary) and last.summary is None:
            last.summary = text
            last.meta["summary_uuid"] = uuid
        else:
            self.items.append(_Boundary(line, uuid, created, 0, {}, text))

    def finish(self) -> ImportedSession:
        """The session read so far."""
        sid = self.session_id or file_digest(self.path)
        if self.sidechain and isinstance(self.info.get("agentId"), str):
            sid = f"{sid}:agent-{self.info['agentId']}"
        builder = LogBuilder(sid)
        blocks = Blocks(self.path, CallIds())
        for item in self.items:
            if isinstance(item, _Assistant):
                self._add_assistant(builder, blocks, item)
            elif isinstance(item, _User):
                self._add_user(builder, blocks, item)
            else:
                self._add_boundary(builder, item)
        meta: dict[str, Any] = {k: v for k, v in self.info.items()}
        meta["sidechain"] = bool(self.sidechain)
        if self.skipped:
            meta["skipped"] = dict(sorted(self.skipped.items()))
        entries = tuple(builder.entries)
        return ImportedSession(sid, "claude-code", str(self.path), entries, title_of(entries), meta)

    def _add_assistant(self, builder: LogBuilder, blocks: Blocks, item: _Assistant) -> None:
        parts: list[Part] = []
        other: list[dict[str, Any]] = []
        for raw in item.blocks:
            block = blocks.check(raw, item.line)
            if block["type"] == "text" and not str(block.get("text", "")).strip():
                continue
            part = blocks.assistant(block, item.line)
            if part is None:
                other.append(block)
            else:
                parts.append(part)
        raw_stop = item.raw.get("stop_reason")
        stop = STOP_REASONS.get(raw_stop) if isinstance(raw_stop, str) else None
        if item.api_error:
            stop = "error"
        elif stop is None and any(p.kind == "tool_call" for p in parts):
            stop = "tool_use"
        meta: dict[str, Any] = {"message_id": item.message_id}
        if "request_id" in item.raw:
            meta["request_id"] = item.raw["request_id"]
        if item.uuids:
            meta["merged_uuids"] = list(item.uuids)
        if other:
            meta["other_blocks"] = other
        model = item.raw.get("model")
        msg = Message(
            "assistant",
            tuple(parts),
            usage=usage_of(item.raw.get("usage")),
            model=model if isinstance(model, str) else None,
            stop_reason=stop,
            meta=meta,
        )
        builder.add(msg, source_id=item.uuid, created_at=item.created_at)

    def _add_user(self, builder: LogBuilder, blocks: Blocks, item: _User) -> None:
        meta = {SYNTHETIC: "isMeta"} if item.is_meta else {}
        if isinstance(item.content, str):
            msg = Message("user", (TextPart(item.content),), meta=meta)
            builder.add(msg, source_id=item.uuid, created_at=item.created_at)
            return
        results: list[ToolResultPart] = []
        parts: list[Part] = []
        for raw in item.content:
            block = blocks.check(raw, item.line)
            if block["type"] == "tool_result":
                results.append(blocks.tool_result(block, item.line))
            else:
                part = blocks.content(block, item.line)
                if part is not None:
                    parts.append(part)
        text_id = item.uuid
        if results:
            builder.add(
                Message("tool", tuple(results)), source_id=item.uuid, created_at=item.created_at
            )
            text_id = f"{item.uuid}#text"
        if parts:
            msg = Message("user", tuple(parts), meta=meta)
            builder.add(msg, source_id=text_id, created_at=item.created_at)

    def _add_boundary(self, builder: LogBuilder, item: _Boundary) -> None:
        record = CompactionRecord(
            summary=item.summary if item.summary is not None else "",
            first_kept_id=None,
            tokens_before=item.pre_tokens,
            tokens_after=0,
            policy="claude-code",
            summarizer="imported",
            reason="imported",
        )
        builder.add(record, source_id=item.uuid, created_at=item.created_at, meta=item.meta)


IMPORTER = ClaudeCodeImporter()
