"""Gemini CLI sessions: the JSONL chat recording, the older JSON session, and chat shares.

Formats (Gemini CLI ``packages/core/src/services/chatRecordingService.ts``):

* **Chat recording** (``~/.gemini/tmp/<project>/chats/session-*.jsonl``; a subagent's chat is
  ``chats/<parent session id>/<session id>.jsonl``): line 1 holds the metadata
  (``sessionId``, ``projectHash``, ``startTime``, ``kind: main | subagent``, ``directories``);
  then ``MessageRecord`` lines, ``{"$set": {…}}`` metadata updates and ``{"$rewindTo": id}``
  records. A record whose id was seen before replaces it in place (Gemini CLI re-writes a
  message when its tool calls or tokens arrive); ``$rewindTo`` drops that message and every
  later one (they are no longer sent; counted as ignored ``rewound``); a ``$set`` of
  ``messages`` replaces the conversation: when it drops earlier messages and brings new
  ones (``/compress``: the ``<state_snapshot>`` user turn and the model's acknowledgement),
  the messages up to then are kept in the log and followed by a :class:`CompactionRecord`
  whose summary is the new user text, ``first_kept_id`` the first message kept; the
  acknowledgement is not imported (ignored).
* **Session JSON** (older ``session-*.json``): the same metadata and a ``messages`` list.
* **Chat share** (``/chat share``): Markdown or JSON (:mod:`ctxengine.importers._gemini_share`).
  A share holds the history as Gemini CLI sends it: after a compression, a user turn holding
  the ``<state_snapshot>`` summary and the model's acknowledgement ("Got it. Thanks for the
  additional context!"). That pair becomes a :class:`CompactionRecord` (summarizer
  ``imported``) whose summary is the user turn's text and whose ``retained_ids`` are the
  messages sent before it (the environment context); the acknowledgement is not imported
  (ignored). What the summary replaced is not in the share.

Message records (session JSON and recording):

* ``user`` → a user message (``content`` is a ``PartListUnion``); Gemini CLI's environment
  context is marked ``meta["synthetic"] = "setup_context"``. Function responses in a user
  record become a ``tool`` message before it.
* ``gemini`` (``model`` in some samples) → one assistant message: ``thoughts``
  (``{subject, description}`` summaries) as reasoning, the ``content`` text, then every
  ``toolCalls`` entry as a call (``args``; ``displayName``, ``description``, ``status`` and
  ``agentId`` kept in the part meta), followed by one ``tool`` message with the recorded
  ``result`` of each call (``status: error`` → ``is_error``). A call with no result stays
  unanswered (the sanitizer closes it when projecting); a cancelled or failed one gets its
  ``resultDisplay`` as an error result. ``tokens`` → usage (:func:`~._gemini_parts.usage_of`),
  ``model`` → the message model.
* ``info``, ``error`` and ``warning`` records are shown to the user only: ignored.

Entry ids are the message record ids (``<id>#<k>`` for a record's later messages), for a
share ``turn-<n>`` (``turn-<n>#<k>``). The session id is the metadata ``sessionId`` (a share:
a hash of the file); meta holds
``project_hash``, ``start_time``, ``last_updated``, ``kind``, ``directories``, the session
``summary``, the last ``model``, ``variant`` (``recording``, ``session-json``,
``share-markdown``, ``share-json``) and, for a subagent, ``parent_session_id`` (the folder
its file is in).

Tolerated drift (counted in the report, refused in strict mode): a message record without
an id (an id is made from its line, repaired), a record of no known kind or a message of an
unknown ``type`` (skipped), tool calls without an id or with ``null`` args and structured
outputs (repaired, :mod:`~._gemini_parts`), and everything :func:`~._build.iter_jsonl`
tolerates (a partial last line, lone surrogates).
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import orjson

from ctxengine.errors import TranscriptError
from ctxengine.importers._build import BOM, LogBuilder, file_digest, load_json, read_jsonl
from ctxengine.importers._gemini_parts import (
    PENDING_STATES,
    Content,
    GeminiParts,
    Where,
    part_list,
    tool_result,
    usage_of,
    user_meta,
)
from ctxengine.importers._gemini_share import (
    HEADER,
    ROLES,
    ContentReader,
    Turn,
    json_turns,
    parse_markdown,
)
from ctxengine.importers._lines import after_bad_lines
from ctxengine.importers._parts import SYNTHETIC, opt_str, title_of
from ctxengine.importers._peek import peek
from ctxengine.importers._text import bytes_digest
from ctxengine.importers.base import ImportedSession, start_report
from ctxengine.importers.report import ImportReport
from ctxengine.model import (
    CompactionRecord,
    Message,
    Part,
    ReasoningPart,
    TextPart,
    ToolCallPart,
    ToolResultPart,
)

NAME = "gemini-cli"
#: The element Gemini CLI's compression prompt asks the model to write its summary in.
SNAPSHOT_OPEN, SNAPSHOT_CLOSE = "<state_snapshot>", "</state_snapshot>"
#: How the model's turn after a compressed history starts (Gemini CLI writes it itself).
ACKNOWLEDGEMENT = "Got it. Thanks for the additional context"
#: Message record types never sent to the model.
_UI_TYPES = frozenset({"info", "error", "warning"})
_ASSISTANT_TYPES = frozenset({"gemini", "model"})
#: Metadata keys kept in the session meta, by the name they get there.
_META_KEYS = {
    "projectHash": "project_hash",
    "startTime": "start_time",
    "lastUpdated": "last_updated",
    "kind": "kind",
    "directories": "directories",
    "summary": "summary",
}


def _first_line(head: bytes) -> Any:
    line = head.split(b"\n", 1)[0]
    try:
        return orjson.loads(line)
    except orjson.JSONDecodeError:
        return None


def _variant(path: Path, head: bytes) -> str | None:
    """``"recording"``, ``"session-json"``, ``"share-markdown"``, ``"share-json"`` or
    ``None`` when ``head`` is none of them."""
    stripped = head.lstrip()
    if stripped.startswith(b"{"):
        # Both JSON variants have a "projectHash" key: a test that rules out a long first
        # line before it is parsed, and any other head before it is decoded.
        if stripped.find(b"\n") < 0 and b'"projectHash"' not in stripped:
            return None
        first = _first_line(stripped)
        if isinstance(first, dict) and "messages" not in first:
            return "recording" if _is_metadata(first) else None
        if b'"projectHash"' not in stripped:
            return None
        keys = set(peek(head).keys)
        known = "projectHash" in keys and bool(keys & {"sessionId", "startTime", "lastUpdated"})
        return "session-json" if known else None
    if stripped.startswith(b"["):
        items = peek(head).items("")
        # most of the leading items: the few others are skipped and counted on import
        good = sum(
            isinstance(i, dict) and i.get("role") in ("user", "model") and "parts" in i
            for i in items
        )
        return "share-json" if good * 2 > len(items) else None
    # 800 bytes hold at least the 200 characters looked at, whole (4 bytes at most each)
    m = HEADER.match(stripped[:800].decode("utf-8", errors="replace")[:200])
    return "share-markdown" if m is not None and m.group(1) in ROLES else None


def _is_metadata(obj: dict[str, Any]) -> bool:
    return isinstance(obj.get("sessionId"), str) and isinstance(obj.get("projectHash"), str)


class GeminiCliImporter:
    """Importer for Gemini CLI sessions (see the module docstring for the mapping)."""

    name = NAME
    label = "a Gemini CLI session"

    def sniff(self, path: Path, head: bytes) -> bool:
        """True for a chat recording (first line: metadata with ``sessionId`` and
        ``projectHash``), a session JSON, or a chat share (Markdown headers, or a JSON list
        of ``{role: user | model, parts}``)."""
        return _variant(path, head) is not None

    def read(self, path: Path, report: ImportReport | None = None) -> ImportedSession:
        """Parse ``path``, counting what is skipped, repaired and ignored in ``report``.

        Raises:
            TranscriptError: unreadable file, or none of the Gemini CLI formats; in strict
                mode the first skipped or repaired item, naming its line or JSON path.
        """
        report = start_report(path, report)
        try:
            with path.open("rb") as fh:
                head = fh.read(64 * 1024).removeprefix(BOM)
        except OSError as exc:
            raise TranscriptError(str(path), f"cannot read file: {exc.strerror}") from exc
        variant = _variant(path, head)
        if variant is None and _variant(path, after_bad_lines(head) or b"") == "recording":
            variant = "recording"  # torn or foreign first lines, skipped and counted
        if variant == "recording":
            return read_jsonl(path, _Recording(path, report), report)
        if variant == "session-json":
            data = load_json(path, report)
            reader = _Recording(path, report, "session-json")
            if not isinstance(data, dict) or not isinstance(data.get("messages"), list):
                raise TranscriptError(str(path), "expected an object with a `messages` list")
            reader.metadata({k: v for k, v in data.items() if k != "messages"})
            for i, rec in enumerate(data["messages"]):
                reader.record(rec, {"json_path": f"$.messages[{i}]"}, i + 1)
            return reader.finish()
        digest: str | None = None
        turns: Iterable[Turn]
        if variant == "share-json":
            turns = json_turns(load_json(path, report), report)
        elif variant == "share-markdown":
            try:
                data = path.read_bytes()
            except OSError as exc:
                raise TranscriptError(str(path), f"cannot read file: {exc.strerror}") from exc
            digest = bytes_digest(data)
            turns = parse_markdown(data.removeprefix(BOM), report)
        else:
            raise TranscriptError(
                str(path), "expected a Gemini CLI chat recording, session JSON or chat share"
            )
        share = ContentReader(report)
        builder = LogBuilder(digest or file_digest(path))
        contents = list(turns)
        acknowledged = False
        sent: list[str] = []  # the message entries so far, sent before a summary
        for n, turn in enumerate(contents):
            if acknowledged:  # the model's answer to a compressed history: never sent again
                acknowledged = False
                report.ignore("compression acknowledgement", **turn.where)
                continue
            messages = share.turn(turn)
            summary = _snapshot(messages, contents[n + 1] if n + 1 < len(contents) else None)
            if summary is not None:
                builder.add(_imported(summary, None, tuple(sent) or None))
                acknowledged = True
                sent.clear()
                continue
            for k, msg in enumerate(messages):
                entry = builder.add(msg, source_id=f"turn-{n}#{k}" if k else f"turn-{n}")
                sent.append(entry.id)
        entries = tuple(builder.entries)
        meta = {"variant": variant}
        return ImportedSession(
            builder.session_id, NAME, str(path), entries, title_of(entries), meta, report
        )


@dataclass
class _Compaction:
    summary: str
    first_kept: str | None


class _Recording:
    """Replays the records of a recording (or session JSON) into the conversation Gemini CLI
    holds at the end, keeping compacted stretches before their compaction record."""

    def __init__(self, path: Path, report: ImportReport, variant: str = "recording") -> None:
        self.path = path
        self.report = report
        self.variant = variant
        self.info: dict[str, Any] = {}
        #: latest version of each message record, with its location.
        self.records: dict[str, tuple[dict[str, Any], Where]] = {}
        #: the log: message ids and compactions, in order.
        self.log: list[str | _Compaction] = []
        #: ids of the conversation as Gemini CLI holds it now, in order.
        self.live: list[str] = []
        self.parts = GeminiParts(report)

    # -- records ------------------------------------------------------------------------

    def feed(self, line: int, obj: dict[str, Any]) -> None:
        """Take the record on 1-based ``line`` (see :class:`~._build.LineReader`)."""
        self.record(obj, {"line": line}, line)

    def metadata(self, obj: dict[str, Any]) -> None:
        """Merge a metadata line (or the session JSON's top level) into the session meta."""
        for key, value in obj.items():
            if key == "sessionId" and isinstance(value, str):
                self.info.setdefault("session_id", value)
            elif key in _META_KEYS and value is not None:
                self.info[_META_KEYS[key]] = value

    def record(self, obj: Any, where: Where, n: int) -> None:
        """Take one record (``n`` numbers it for generated ids)."""
        if not isinstance(obj, dict):
            self.report.skip("malformed record", "expected a record object", **where)
            return
        if isinstance(obj.get("$rewindTo"), str):
            self._rewind(obj["$rewindTo"], where)
        elif isinstance(obj.get("$set"), dict):
            update = obj["$set"]
            messages = update.get("messages")
            self.metadata({k: v for k, v in update.items() if k != "messages"})
            if isinstance(messages, list):
                self._replace(messages, where)
        elif (isinstance(obj.get("type"), str) and "content" in obj) or isinstance(
            obj.get("id"), str
        ):
            self._message(obj, where, n)
        elif _is_metadata(obj):
            self.metadata(obj)
        else:
            kind = next(iter(obj), "empty")
            self.report.skip(
                f"record:{kind}",
                "expected a message record, a metadata line, `$set` or `$rewindTo`, got a "
                f"record with {kind!r}",
                **where,
            )

    def _message(self, obj: dict[str, Any], where: Where, n: int) -> None:
        msg_id = opt_str(obj, "id")
        if msg_id is None:
            self.report.repair(
                "message without id", "expected a string `id` on a message record", **where
            )
            msg_id = f"record-{n}"
        if msg_id in self.records:
            self.records[msg_id] = (obj, where)
            if msg_id in self.live:
                return
        self.records[msg_id] = (obj, where)
        self.live.append(msg_id)
        self.log.append(msg_id)

    def _rewind(self, msg_id: str, where: Where) -> None:
        """Drop ``msg_id`` and every later message (all of them when it is not found, as
        Gemini CLI does)."""
        k = self.live.index(msg_id) if msg_id in self.live else 0
        dropped = set(self.live[k:])
        self.live = self.live[:k]
        for _ in dropped:
            self.report.ignore("rewound", **where)
        self.log = [i for i in self.log if not (isinstance(i, str) and i in dropped)]

    def _replace(self, messages: list[Any], where: Where) -> None:
        """A ``$set`` of the whole message list (see the module docstring)."""
        new: list[tuple[dict[str, Any], str]] = []
        kept: list[str] = []
        for rec in messages:
            rid = opt_str(rec, "id") if isinstance(rec, dict) else None
            if not isinstance(rec, dict) or rid is None:
                self.report.skip(
                    "malformed message", "expected message records with a string `id`", **where
                )
                continue
            if rid in self.live:
                kept.append(rid)
                self.records[rid] = (rec, where)
            else:
                new.append((rec, rid))
        dropped = [i for i in self.live if i not in set(kept)]
        summary = [r for r, _ in new if r.get("type") == "user"]
        if not dropped or not summary:
            for rec, _ in new:
                self._message(rec, where, 0)
            if dropped:
                self._rewind_ids(dropped, where)
            return
        text = "\n\n".join(_plain_text(r.get("content")) for r in summary)
        suffix = self.live[len(self.live) - len(kept) :] if kept else []
        first_kept = kept[0] if kept and suffix == kept else None
        self.log.append(_Compaction(text, first_kept))
        self.live = list(kept)
        for rec, rid in new:
            if rec.get("type") == "user":
                self.records[rid] = (rec, where)
                self.live.insert(0, rid)
            else:
                self.report.ignore("compression acknowledgement", **where)
        if kept and first_kept is None:
            for rid in kept:
                self.log.append(rid)

    def _rewind_ids(self, ids: list[str], where: Where) -> None:
        gone = set(ids)
        self.live = [i for i in self.live if i not in gone]
        self.log = [i for i in self.log if not (isinstance(i, str) and i in gone)]
        for _ in ids:
            self.report.ignore("rewound", **where)

    # -- messages -----------------------------------------------------------------------

    def finish(self) -> ImportedSession:
        """The session read so far."""
        sid = self.info.pop("session_id", None) or file_digest(self.path)
        builder = LogBuilder(sid)
        entry_of: dict[str, str] = {}
        last = next((i for i in reversed(self.log) if isinstance(i, str)), None)
        model: str | None = None
        for item in self.log:
            if isinstance(item, _Compaction):
                kept = entry_of.get(item.first_kept) if item.first_kept else None
                builder.add(_imported(item.summary, kept))
                continue
            rec, where = self.records[item]
            created = opt_str(rec, "timestamp")
            for k, msg in enumerate(self._convert(rec, where, item == last)):
                source = item if k == 0 else f"{item}#{k}"
                entry = builder.add(msg, source_id=source, created_at=created)
                entry_of.setdefault(item, entry.id)
                model = msg.model or model
        meta: dict[str, Any] = dict(self.info)
        meta["variant"] = self.variant
        if model:
            meta["model"] = model
        if meta.get("kind") == "subagent" and self.path.parent.name != "chats":
            meta["parent_session_id"] = self.path.parent.name
        entries = tuple(builder.entries)
        return ImportedSession(
            sid, NAME, str(self.path), entries, title_of(entries), meta, self.report
        )

    def _convert(self, rec: dict[str, Any], where: Where, last: bool) -> list[Message]:
        kind = rec.get("type")
        if kind == "user":
            return self._user(rec, where)
        if kind in _ASSISTANT_TYPES:
            return self._assistant(rec, where, last)
        if kind in _UI_TYPES:
            self.report.ignore(f"message:{kind}", **where)
            return []
        self.report.skip(
            f"message:{kind}" if isinstance(kind, str) else "message without type",
            f"expected a message `type` user, gemini, info, error or warning, got {kind!r}",
            **where,
        )
        return []

    def _content(self, rec: dict[str, Any], where: Where) -> list[Any]:
        items = part_list(rec.get("content", rec.get("parts")))
        if items is None:
            self.report.skip(
                "malformed content",
                "expected `content` that is a string, a part or a list of parts",
                **where,
            )
            return []
        return items

    def _user(self, rec: dict[str, Any], where: Where) -> list[Message]:
        results: list[ToolResultPart] = []
        parts: list[Part] = []
        for item in self._content(rec, where):
            fr = item.get("functionResponse") if isinstance(item, dict) else None
            if isinstance(fr, dict):
                rid = opt_str(fr, "id") or f"response_{len(results)}"
                call = ToolCallPart(self.parts.calls.result(rid), opt_str(fr, "name") or "", "")
                content, error = self.parts.response(fr, where)
                results.append(tool_result(call, content, error, {}))
                continue
            part = self.parts.content(item, where)
            if isinstance(part, ReasoningPart):
                part = TextPart(part.text)
            if part is not None:
                parts.append(part)
        out: list[Message] = [Message("tool", tuple(results))] if results else []
        if parts:
            out.append(Message("user", tuple(parts), meta=user_meta(parts)))
        return out

    def _assistant(self, rec: dict[str, Any], where: Where, last: bool) -> list[Message]:
        parts: list[Part] = []
        for thought in rec.get("thoughts") or ():
            if isinstance(thought, dict):
                subject = opt_str(thought, "subject") or ""
                text = opt_str(thought, "description") or ""
                body = f"**{subject}**\n{text}" if subject else text
                if body:
                    parts.append(ReasoningPart(body, meta={"provider": "gemini"}))
        for item in self._content(rec, where):
            fc = item.get("functionCall") if isinstance(item, dict) else None
            if isinstance(fc, dict):
                call = self.parts.call(fc.get("name"), fc.get("args"), fc.get("id"), where, {})
                if call is not None:
                    parts.append(call)
                continue
            part = self.parts.content(item, where)
            if part is not None and not (isinstance(part, TextPart) and not part.text):
                parts.append(part)
        results = self._tool_calls(rec, where, parts, last)
        calls = any(isinstance(p, ToolCallPart) for p in parts)
        model = opt_str(rec, "model")
        out: list[Message] = []
        if parts:
            msg = Message(
                "assistant",
                tuple(parts),
                usage=usage_of(rec.get("tokens")),
                model=model,
                stop_reason="tool_use" if calls else "stop",
            )
            out.append(msg)
        if results:
            out.append(Message("tool", tuple(results)))
        return out

    def _tool_calls(
        self, rec: dict[str, Any], where: Where, parts: list[Part], last: bool
    ) -> list[ToolResultPart]:
        raw = rec.get("toolCalls")
        if raw is None:
            return []
        if not isinstance(raw, list):
            self.report.skip("malformed toolCalls", "expected `toolCalls` to be a list", **where)
            return []
        results: list[ToolResultPart] = []
        for tc in raw:
            if not isinstance(tc, dict):
                self.report.skip("malformed tool call", "expected a tool call object", **where)
                continue
            meta = {
                k: tc[k]
                for k in ("displayName", "description", "status", "agentId")
                if isinstance(tc.get(k), str)
            }
            call = self.parts.call(tc.get("name"), tc.get("args"), tc.get("id"), where, meta)
            if call is None:
                continue
            parts.append(call)
            result = self._result(tc, where, last)
            if result is not None:
                content, error = result
                results.append(tool_result(call, content, error, {}))
        return results

    def _result(
        self, tc: dict[str, Any], where: Where, last: bool
    ) -> tuple[list[Content], bool] | None:
        status = opt_str(tc, "status") or ""
        found = self.parts.result_parts(tc.get("result"), where)
        if found is not None:
            content, error, _ = found
            return content, error or status == "error"
        if status in PENDING_STATES or (last and not status):
            return None
        shown = tc.get("resultDisplay")
        text = shown if isinstance(shown, str) else ""
        if status not in ("cancelled", "error"):
            self.report.repair(
                "tool call without result",
                "expected a `result` on a finished tool call",
                **where,
            )
        return [TextPart(text or f"[tool call {status or 'ended'}]")], status != "success"


def _imported(
    summary: str, first_kept_id: str | None, retained_ids: tuple[str, ...] | None = None
) -> CompactionRecord:
    """The record of a compression Gemini CLI made (``summary``: the text of the user turn
    that replaced the history; ``first_kept_id``: the first entry it kept, when known;
    ``retained_ids``: the entries sent before the summary, when any)."""
    return CompactionRecord(
        summary=summary,
        first_kept_id=first_kept_id,
        retained_ids=retained_ids,
        tokens_before=0,
        tokens_after=0,
        policy=NAME,
        summarizer="imported",
        reason="imported",
    )


def _snapshot(messages: list[Message], answer: Turn | None) -> str | None:
    """The summary of a compressed history in a chat share, else ``None``: ``messages`` (a
    user content's) are one user message of the user's own whose text holds a
    ``<state_snapshot>`` element, and ``answer``, the content after it, is the model's
    acknowledgement (:data:`ACKNOWLEDGEMENT`). Gemini CLI's ``/compress`` and automatic
    compression replace the history with that pair; a share written after one starts
    with it (after the environment context)."""
    if len(messages) != 1 or answer is None or answer.role != "MODEL":
        return None
    message = messages[0]
    if message.role != "user" or message.meta.get(SYNTHETIC):
        return None
    text = message.text
    start = text.find(SNAPSHOT_OPEN)
    if start < 0 or text.find(SNAPSHOT_CLOSE, start) < 0:
        return None
    said = "".join(
        p["text"] for p in answer.parts if isinstance(p, dict) and isinstance(p.get("text"), str)
    )
    return text if said.strip().startswith(ACKNOWLEDGEMENT) else None


def _plain_text(content: Any) -> str:
    """The text parts of a ``PartListUnion``, joined."""
    items = part_list(content) or []
    return "".join(
        i["text"] for i in items if isinstance(i, dict) and isinstance(i.get("text"), str)
    )


IMPORTER = GeminiCliImporter()
