"""Claude Code session JSONL (``~/.claude/projects/<dir>/<session>.jsonl`` and the sidechain
files under ``<session>/subagents/agent-*.jsonl``, compaction sub-agents included).

The imported log is what the model was sent, in the order it was sent. Mapping, in file
order:

* ``assistant`` lines: Claude Code writes one line per content block, each repeating the
  same ``message.id``; lines with the same id are merged into one assistant message placed
  where its first line was (tool results logged between its lines follow it). Its entry id
  is the line's ``uuid`` for a one-line message, else ``"<first uuid>..<last uuid>"``: it
  names every line merged in, so a message read while Claude Code was still writing its
  lines gets another id once it has more (a re-import then supersedes the shorter one:
  :mod:`ctxengine.stores._reimport`). A block seen twice is kept once. Whitespace-only text
  blocks (a streaming artefact) are dropped. Usage is the last line's; ``stop_reason`` is
  normalised, and a message left without one (the usual case, since lines are written before
  the reply ends) gets ``"tool_use"`` when it has tool calls. ``isApiErrorMessage`` lines
  get ``"error"``. The line's reasoning ``effort`` and the message's cache ``diagnostics``
  go to the message meta. Provider-side tool blocks (``server_tool_use``,
  ``web_search_tool_result`` …) become text parts
  (:mod:`ctxengine.importers._server_blocks`).
* ``user`` lines: ``tool_result`` blocks become one ``tool`` message (entry id = ``uuid``);
  the line's other blocks become a following user message (id ``<uuid>#text``). A result
  made only of ``tool_reference`` blocks (a ToolSearch answer) is followed by the user text
  ``"Tool loaded."`` (id ``<uuid>#loaded``), which Claude Code sends with it (seen in the
  requests of Claude Code 2.1.328). ``isMeta`` lines (hook reminders, command caveats) are
  sent to the model by Claude Code, so they are kept as user messages marked
  ``meta["synthetic"] = "isMeta"``. Interruption markers are kept as user text.
* ``attachment`` lines that record what was sent (``rendered`` texts, ``renderedRole``
  ``user`` or ``system``: git status and attribution context, re-read files after a
  compaction, the date, environment, model, tool, agent and skill listings, reminders)
  become messages of that role marked ``meta["synthetic"] = "attachment:<type>"``; a system
  text loses its ``<system-reminder>`` wrapper, as Claude Code sends it. Between two
  assistant messages Claude Code sends, after each tool-result line, first the user-role
  attachments and then the other user lines (attachments move up until they meet a tool
  result or an assistant message), and the system-role attachments last; the log keeps that
  order. Attachments without ``rendered`` (prompt snapshots, deferred-tool records, hook
  results) are ignored.
* ``system`` lines with ``subtype: compact_boundary`` become a :class:`CompactionRecord`
  (entry id = the boundary's ``uuid``, ``tokens_before`` = ``compactMetadata.preTokens``).
  The ``isCompactSummary`` user message after it supplies the summary and is not repeated as
  a message; a summary without a boundary (older versions) becomes the record itself. When
  the boundary keeps a segment verbatim (``compactMetadata.preservedSegment``, sent after
  the summary), ``first_kept_id`` is the entry of its ``headUuid``; otherwise ``None``. The
  attachments logged between such a boundary and its summary (the git status context, the
  date) are sent before the kept segment, the others after it (seen in the requests of
  Claude Code 2.1.328): the record's ``lead_ids`` name the former, so the projection shows
  them right after the summary.
* Progress, file-history-snapshot, queue-operation, request, cost and mode records and other
  ``system`` lines never reach the model: they are ignored, counted in the report and in
  ``ImportedSession.meta["skipped"]``. Unknown record types are skipped.
* A main session file never imports ``isSidechain`` lines (older versions logged sub-agent
  turns inline); a sidechain file imports only its own. Its session id is
  ``<parent session id>:agent-<agentId>`` so it never collides with the parent session, and
  ``meta["parent_session_id"]`` names the parent: the lines' ``sessionId``, or, when a
  sub-agent file names itself there (``agent-<agentId>``), the folder it lies in
  (``<parent session id>/subagents/agent-<agentId>.jsonl``, Claude Code's layout). The
  ``agent-<agentId>.meta.json`` beside it gives ``meta["agent_type"]``, ``["description"]``
  and ``["parent_tool_use_id"]`` (the parent's call that started it). A main session file
  lists the sub-agent files of its ``<session>/subagents/`` folder in ``meta["subagents"]``.

Tolerated drift (counted in the report, refused in strict mode): tool calls and results
without ids (:mod:`ctxengine.importers._claude_blocks`), malformed or unknown blocks, lines
without ``uuid`` or ``message``, and everything :func:`~ctxengine.importers._build.iter_jsonl`
tolerates.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Literal

import orjson

from ctxengine.importers._anthropic import STOP_REASONS, usage_of
from ctxengine.importers._build import CallIds, LogBuilder, file_digest, read_jsonl
from ctxengine.importers._claude_blocks import Blocks
from ctxengine.importers._parts import SYNTHETIC, opt_dict, opt_int, opt_str, title_of
from ctxengine.importers.base import ImportedSession, start_report
from ctxengine.importers.report import ImportReport
from ctxengine.model import CompactionRecord, Message, Part, TextPart, ToolResultPart

_TYPE = re.compile(
    rb'"type"\s*:\s*"(?:user|assistant|system|progress|file-history-snapshot|summary)"'
)
_SNAPSHOT = re.compile(
    rb'\A\s*\{\s*"type"\s*:\s*"file-history-snapshot"\s*,\s*"messageId"\s*:\s*"[^"]*"\s*,'
    rb'\s*"snapshot"\s*:'
)
_SESSION_KEYS = ("cwd", "gitBranch", "version", "slug", "agentId")
#: Record types that never reach the model (UI, bookkeeping, the request log).
IGNORED_RECORDS = frozenset(
    {
        "progress",
        "file-history-snapshot",
        "queue-operation",
        "summary",
        "custom-title",
        "agent-name",
        "tag",
        "pr-link",
        "worktree-state",
        "last-prompt",
        "atis-latch",
        "tools-used",
        "api-request",
        "api-request-blob",
        "api-request-shape",
        "cost-state",
        "mode",
    }
)
#: Text Claude Code sends after a tool result made only of ``tool_reference`` blocks.
TOOL_LOADED = "Tool loaded."
_REMINDER_OPEN = "<system-reminder>"
_REMINDER_CLOSE = "</system-reminder>"


@dataclass
class _Assistant:
    line: int
    uuid: str
    created_at: str | None
    message_id: str
    #: ``(block, line, line uuid)`` in first-seen order.
    blocks: list[tuple[dict[str, Any], int, str]] = field(default_factory=list)
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
    #: line uuids that may hold the calls this line answers: ``sourceToolAssistantUUID``,
    #: ``parentUuid``.
    links: tuple[str | None, ...] = ()

    @property
    def has_results(self) -> bool:
        return isinstance(self.content, list) and any(
            isinstance(b, dict) and b.get("type") == "tool_result" for b in self.content
        )


@dataclass
class _Attachment:
    line: int
    uuid: str
    created_at: str | None
    role: Literal["user", "system"]
    texts: list[str]
    kind: str


@dataclass
class _Boundary:
    line: int
    uuid: str
    created_at: str | None
    pre_tokens: int
    meta: dict[str, Any]
    summary: str | None = None
    kept_head: str | None = None
    #: uuids of the attachments logged between the boundary and its summary.
    lead: tuple[str, ...] = ()


_Item = _Assistant | _User | _Attachment | _Boundary


class ClaudeCodeImporter:
    """Importer for Claude Code session JSONL (see the module docstring for the mapping)."""

    name = "claude-code"
    label = "a Claude Code session"

    def sniff(self, path: Path, head: bytes) -> bool:
        """True for JSONL whose records carry Claude Code's ``sessionId`` and ``uuid``, or
        that opens with a ``file-history-snapshot`` record (a session file Claude Code has
        written nothing else to yet)."""
        return _SNAPSHOT.match(head) is not None or (
            head.lstrip().startswith(b"{")
            and b'"sessionId"' in head
            and (b'"uuid"' in head or b'"messageId"' in head)
            and _TYPE.search(head) is not None
        )

    def read(self, path: Path, report: ImportReport | None = None) -> ImportedSession:
        """Parse ``path``, counting what is skipped, repaired and ignored in ``report``.

        Raises:
            TranscriptError: unreadable file; in strict mode the first skipped or repaired
                item, naming its line.
        """
        report = start_report(path, report)
        return read_jsonl(path, Reader(path, report), report)


def system_text(text: str) -> str:
    """A system-role attachment text as Claude Code sends it: without the
    ``<system-reminder>`` wrapper its ``rendered`` text has."""
    stripped = text.strip()
    if stripped.startswith(_REMINDER_OPEN) and stripped.endswith(_REMINDER_CLOSE):
        return stripped[len(_REMINDER_OPEN) : -len(_REMINDER_CLOSE)].strip("\n")
    return text


class Reader:
    """Reads the records of one Claude Code session file, fed line by line (a
    :class:`~ctxengine.importers._build.LineReader`); :mod:`.claude_code_stream` feeds it
    stream-json records renamed to session-file lines."""

    def __init__(self, path: Path, report: ImportReport) -> None:
        self.path = path
        self.report = report
        self.items: list[_Item] = []
        self.assistants: dict[str, _Assistant] = {}
        self.seen: set[str] = set()
        self.sidechain: bool | None = None
        self.info: dict[str, Any] = {}
        self.session_id: str | None = None

    def feed(self, line: int, obj: dict[str, Any]) -> None:
        """Take the record on 1-based ``line`` (see :class:`~._build.LineReader`)."""
        kind = obj.get("type")
        if not isinstance(kind, str):
            self.report.skip("record without type", "expected a string `type`", line=line)
            return
        if self.session_id is None and isinstance(obj.get("sessionId"), str):
            self.session_id = obj["sessionId"]
        if kind in ("user", "assistant"):
            self._message(line, kind, obj)
        elif kind == "attachment":
            self._attachment(line, obj)
        elif kind == "system":
            sub = obj.get("subtype")
            if sub == "compact_boundary":
                self._boundary(line, obj)
            else:
                self.report.ignore(f"system:{sub}" if isinstance(sub, str) else kind, line=line)
        elif kind in IGNORED_RECORDS:
            self.report.ignore(kind, line=line)
        else:
            self.report.skip(
                f"record:{kind}",
                f"expected a Claude Code record type (user, assistant, attachment, system …), "
                f"got {kind!r}",
                line=line,
            )

    def _admit(self, line: int, obj: dict[str, Any], uuid: str) -> bool:
        """Whether a line belongs to this file's chain (its side, not seen before)."""
        side = bool(obj.get("isSidechain"))
        if self.sidechain is not None and side != self.sidechain:
            self.report.ignore("sidechain", line=line)
            return False
        if uuid in self.seen:
            self.report.ignore("duplicate", line=line)
            return False
        self.seen.add(uuid)
        return True

    def _message(self, line: int, kind: str, obj: dict[str, Any]) -> None:
        uuid = obj.get("uuid")
        if not isinstance(uuid, str) or not uuid:
            self.report.skip(
                f"{kind} without uuid", f"expected a string `uuid` on a {kind}", line=line
            )
            return
        if self.sidechain is None:
            self.sidechain = bool(obj.get("isSidechain"))
            self.info.update({k: obj[k] for k in _SESSION_KEYS if isinstance(obj.get(k), str)})
        if not self._admit(line, obj, uuid):
            return
        message = obj.get("message")
        if (
            not isinstance(message, dict)
            or not isinstance(message.get("role"), str)
            or not isinstance(message.get("content"), str | list)
        ):
            self.report.skip(
                f"{kind} without message",
                "expected a `message` object with `role` and `content` (a string or a list)",
                line=line,
            )
            return
        if message["role"] != kind:
            # the record's type decides: its tool results and text are read as that role's
            self.report.repair(
                "message role",
                f"expected `message.role` {kind!r} on a {kind} record, got {message['role']!r}",
                line=line,
            )
        created = opt_str(obj, "timestamp")
        if kind == "assistant":
            self._assistant(line, uuid, created, obj, message)
        elif obj.get("isCompactSummary"):
            self._summary(line, uuid, created, message["content"])
        else:
            links = (opt_str(obj, "sourceToolAssistantUUID"), opt_str(obj, "parentUuid"))
            self.items.append(
                _User(line, uuid, created, message["content"], bool(obj.get("isMeta")), links)
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
        known = [b for b, _, _ in acc.blocks]
        for block in blocks:
            if block not in known:
                acc.blocks.append((block, line, uuid))
                known.append(block)
        acc.raw.update({k: msg[k] for k in ("model", "usage", "stop_reason") if msg.get(k)})
        if isinstance(msg.get("diagnostics"), dict):
            acc.raw["cache_diagnostics"] = msg["diagnostics"]
        if isinstance(obj.get("effort"), str):
            acc.raw["effort"] = obj["effort"]
        if isinstance(obj.get("requestId"), str):
            acc.raw["request_id"] = obj["requestId"]
        acc.api_error = acc.api_error or bool(obj.get("isApiErrorMessage"))

    def _attachment(self, line: int, obj: dict[str, Any]) -> None:
        attachment = obj.get("attachment")
        kind = attachment.get("type") if isinstance(attachment, dict) else None
        if not isinstance(kind, str):
            self.report.skip(
                "malformed attachment",
                "expected an `attachment` object with a string `type`",
                line=line,
            )
            return
        uuid = opt_str(obj, "uuid") or f"attachment-{line}"
        if not self._admit(line, obj, uuid):
            return
        rendered = obj.get("rendered")
        texts = [
            r["content"]
            for r in (rendered if isinstance(rendered, list) else ())
            if isinstance(r, dict) and isinstance(r.get("content"), str)
        ]  # fmt: skip
        if not texts:
            self.report.ignore(f"attachment:{kind}", line=line)
            return
        role: Literal["user", "system"] = (
            "system" if obj.get("renderedRole") == "system" else "user"
        )
        if role == "system":
            texts = [system_text(t) for t in texts]
        self.items.append(_Attachment(line, uuid, opt_str(obj, "timestamp"), role, texts, kind))

    def _boundary(self, line: int, obj: dict[str, Any]) -> None:
        uuid = opt_str(obj, "uuid") or f"boundary-{line}"
        meta = opt_dict(obj, "compactMetadata")
        trigger = opt_str(meta, "trigger")
        extra: dict[str, Any] = {"trigger": trigger} if trigger else {}
        head = opt_str(opt_dict(meta, "preservedSegment"), "headUuid")
        boundary = _Boundary(
            line, uuid, opt_str(obj, "timestamp"), opt_int(meta, "preTokens"), extra, None, head
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
        between: list[str] = []
        for item in reversed(self.items):
            if isinstance(item, _Boundary) and item.summary is None:
                item.summary = text
                item.meta["summary_uuid"] = uuid
                item.lead = tuple(reversed(between))
                return
            if not isinstance(item, _Attachment):
                break
            between.append(item.uuid)
        self.items.append(_Boundary(line, uuid, created, 0, {}, text))

    def finish(self) -> ImportedSession:
        """The session read so far."""
        sid, links = self._identity()
        log = _Log(LogBuilder(sid), Blocks(self.path, CallIds(), self.report), self.report)
        run: list[_User | _Attachment] = []
        for item in self.items:
            if isinstance(item, _User | _Attachment):
                run.append(item)
                continue
            log.run(run)
            run = []
            if isinstance(item, _Assistant):
                log.assistant(item)
            else:
                log.boundary(item)
        log.run(run)
        meta: dict[str, Any] = {k: v for k, v in self.info.items()}
        meta["sidechain"] = bool(self.sidechain)
        meta.update(links)
        skipped = {
            k: n for k, n in self.report.counts("ignored").items() if not k.startswith("block:")
        }
        if skipped:
            meta["skipped"] = skipped
        entries = tuple(log.builder.entries)
        return ImportedSession(
            sid, "claude-code", str(self.path), entries, title_of(entries), meta, self.report
        )

    def _identity(self) -> tuple[str, dict[str, Any]]:
        """The session id and the parent / sub-agent links (see the module docstring)."""
        sid = self.session_id or file_digest(self.path)
        links: dict[str, Any] = {}
        agent = self.info.get("agentId")
        if not self.sidechain:
            folder = self.path.parent / self.path.stem / "subagents"
            children = (
                sorted(p.stem for p in folder.glob("agent-*.jsonl")) if folder.is_dir() else []
            )
            if children:
                links["subagents"] = children
            return sid, links
        if not isinstance(agent, str):
            return sid, links
        if sid == f"agent-{agent}":  # the file names itself, not its parent session
            if self.path.parent.name != "subagents":
                return sid, links
            sid = self.path.parent.parent.name
        links["parent_session_id"] = sid
        described = _subagent_meta(self.path.with_suffix(".meta.json"))
        links.update(described)
        return f"{sid}:agent-{agent}", links


def _subagent_meta(path: Path) -> dict[str, Any]:
    """What a sub-agent's ``agent-<id>.meta.json`` says of it (``agent_type``,
    ``description``, ``parent_tool_use_id``: the parent's call that started it); ``{}``
    when there is none or it cannot be read."""
    try:
        data = orjson.loads(path.read_bytes())
    except (OSError, orjson.JSONDecodeError):
        return {}
    if not isinstance(data, dict):
        return {}
    keys = {
        "agentType": "agent_type",
        "description": "description",
        "toolUseId": "parent_tool_use_id",
    }
    return {
        ours: data[theirs] for theirs, ours in keys.items() if isinstance(data.get(theirs), str)
    }


class _Log:
    """Builds the log from the items, in the order Claude Code sends them."""

    def __init__(self, builder: LogBuilder, blocks: Blocks, report: ImportReport) -> None:
        self.builder = builder
        self.blocks = blocks
        self.report = report
        #: entry id of each imported line uuid (merged assistant lines included).
        self.entry_of: dict[str, str] = {}

    def run(self, items: list[_User | _Attachment]) -> None:
        """The user-side lines between two assistant messages: after each tool-result line
        its user-role attachments then the other user lines, the system-role attachments
        last (see the module docstring)."""
        attachments: list[_Attachment] = []
        plain: list[_User] = []
        system: list[_Attachment] = []
        for item in items:
            if isinstance(item, _Attachment):
                (system if item.role == "system" else attachments).append(item)
            elif item.has_results:
                self._flush(attachments, plain)
                self.user(item)
            else:
                plain.append(item)
        self._flush(attachments, plain)
        for att in system:
            self.attachment(att)

    def _flush(self, attachments: list[_Attachment], plain: list[_User]) -> None:
        for att in attachments:
            self.attachment(att)
        for user in plain:
            self.user(user)
        attachments.clear()
        plain.clear()

    def _add(self, msg: Message, source_id: str, line_uuid: str, created: str | None) -> None:
        entry = self.builder.add(msg, source_id=source_id, created_at=created)
        self.entry_of.setdefault(line_uuid, entry.id)

    def attachment(self, item: _Attachment) -> None:
        parts = tuple(TextPart(t) for t in item.texts)
        msg = Message(item.role, parts, meta={SYNTHETIC: f"attachment:{item.kind}"})
        self._add(msg, item.uuid, item.uuid, item.created_at)

    def assistant(self, item: _Assistant) -> None:
        parts: list[Part] = []
        other: list[dict[str, Any]] = []
        for raw, line, line_uuid in item.blocks:
            block = self.blocks.check(raw, line)
            if block is None:
                continue
            if block["type"] == "text" and not str(block.get("text", "")).strip():
                continue
            part = self.blocks.assistant(block, line, line_uuid)
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
        for key in ("request_id", "effort", "cache_diagnostics"):
            if key in item.raw:
                meta[key] = item.raw[key]
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
        source_id = f"{item.uuid}..{item.uuids[-1]}" if item.uuids else item.uuid
        self._add(msg, source_id, item.uuid, item.created_at)
        for uuid in item.uuids:
            self.entry_of.setdefault(uuid, self.entry_of[item.uuid])

    def user(self, item: _User) -> None:
        meta = {SYNTHETIC: "isMeta"} if item.is_meta else {}
        if isinstance(item.content, str):
            msg = Message("user", (TextPart(item.content),), meta=meta)
            self._add(msg, item.uuid, item.uuid, item.created_at)
            return
        results: list[ToolResultPart] = []
        parts: list[Part] = []
        loaded = False
        for raw in item.content:
            block = self.blocks.check(raw, item.line)
            if block is None:
                continue
            if block["type"] == "tool_result":
                result = self.blocks.tool_result(block, item.line, item.links)
                if result is not None:
                    results.append(result)
                    loaded = loaded or _only_tool_references(block.get("content"))
            else:
                part = self.blocks.content(block, item.line)
                if part is not None:
                    parts.append(part)
        text_id = item.uuid
        if results:
            self._add(Message("tool", tuple(results)), item.uuid, item.uuid, item.created_at)
            text_id = f"{item.uuid}#text"
            if loaded:
                note = Message("user", (TextPart(TOOL_LOADED),), meta={SYNTHETIC: "tool_loaded"})
                self._add(note, f"{item.uuid}#loaded", item.uuid, item.created_at)
        if parts:
            msg = Message("user", tuple(parts), meta=meta)
            self._add(msg, text_id, item.uuid, item.created_at)

    def boundary(self, item: _Boundary) -> None:
        first_kept: str | None = None
        if item.kept_head is not None:
            first_kept = self.entry_of.get(item.kept_head)
            if first_kept is None:
                self.report.skip(
                    "preserved segment not found",
                    "expected compactMetadata.preservedSegment.headUuid to name an earlier "
                    "message of this file",
                    line=item.line,
                )
        record = CompactionRecord(
            summary=item.summary if item.summary is not None else "",
            first_kept_id=first_kept,
            tokens_before=item.pre_tokens,
            tokens_after=0,
            policy="claude-code",
            summarizer="imported",
            reason="imported",
            lead_ids=item.lead if first_kept is not None and item.lead else None,
        )
        self.builder.add(record, source_id=item.uuid, created_at=item.created_at, meta=item.meta)


def _only_tool_references(content: Any) -> bool:
    """True for a tool result ``content`` made only of ``tool_reference`` blocks."""
    return (
        isinstance(content, list)
        and bool(content)
        and all(isinstance(b, dict) and b.get("type") == "tool_reference" for b in content)
    )


IMPORTER = ClaudeCodeImporter()
