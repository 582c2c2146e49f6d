"""OpenCode messages and parts to log bodies, as OpenCode's ``toModelMessages`` sends them
(``packages/opencode/src/session/message-v2.ts``).

* A user message → one user message: ``text`` parts (except ``ignored`` ones), ``file``
  parts as images or documents (``text/plain`` files and directories are skipped, as
  OpenCode sends their content as synthetic text parts), a ``subtask`` part as "The
  following tool was executed by the user". A message whose text parts are all
  ``synthetic`` is marked ``meta["synthetic"] = "opencode"``.
* An assistant message → one assistant message per model step (a ``step-start`` part opens
  a step), each followed by a ``tool`` message with the results of its calls: ``text`` →
  text, ``reasoning`` → reasoning (the Anthropic signature from its ``metadata`` kept),
  ``tool`` → a call (``callID``, ``tool``, ``state.input``) and its result: a completed
  call's ``output`` (``"[Old tool result content cleared]"`` once ``time.compacted`` is
  set; image attachments follow the text), an error's ``error`` (``is_error``), and
  ``"[Tool execution was interrupted]"`` (``is_error``) for a call still pending or running.
  ``step-finish`` gives the step's usage (``input`` is uncached, ``output`` + ``reasoning``
  → output, ``cache.read`` / ``cache.write``) and stop reason. An assistant message with an
  ``error`` is not sent (ignored), unless it was aborted after producing more than reasoning.
* Compaction: a user message with a ``compaction`` part whose reply is a finished
  ``summary`` assistant message becomes a :class:`CompactionRecord` (summary = the reply's
  text; ``first_kept_id`` = the message ``tail_start_id`` names, when present and earlier);
  the two messages are not repeated. Without such a reply the request stays a user message
  ("What did we do so far?").
* ``step-start``, ``snapshot``, ``patch``, ``agent``, ``retry`` parts, and a ``compaction``
  part outside a user message, are never sent: ignored.

Tolerated drift (counted, refused in strict mode): a tool part without ``callID``
(generated, repaired), ``null`` tool input (repaired to ``{}``), a non-string ``output``
(repaired into its JSON text), an unknown part type or message role (skipped).
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from datetime import UTC, datetime
from typing import Any

from ctxengine.importers._build import CallIds
from ctxengine.importers._calls import arguments_text, json_text
from ctxengine.importers._images import image_from_url
from ctxengine.importers._parts import SYNTHETIC, opt_dict, opt_int, opt_str
from ctxengine.importers.report import ImportReport
from ctxengine.model import (
    CompactionRecord,
    DocumentPart,
    ImagePart,
    Message,
    Part,
    ReasoningPart,
    TextPart,
    ToolCallPart,
    ToolResultPart,
    Usage,
)

Where = Mapping[str, Any]
#: Text OpenCode sends for a compaction request and for a subtask part.
COMPACTION_PROMPT = "What did we do so far?"
SUBTASK_TEXT = "The following tool was executed by the user"
CLEARED = "[Old tool result content cleared]"
INTERRUPTED = "[Tool execution was interrupted]"
_IGNORED_PARTS = frozenset({"step-start", "step-finish", "snapshot", "patch", "agent", "retry"})
#: OpenCode finish reasons → ours.
_FINISH = {"stop": "stop", "tool-calls": "tool_use", "length": "length", "error": "error"}


@dataclass
class RawMessage:
    """One OpenCode message: its info, its parts in order, and where each is."""

    info: dict[str, Any]
    where: Where
    parts: list[tuple[dict[str, Any], Where]] = field(default_factory=list)

    @property
    def id(self) -> str:
        return str(self.info.get("id", ""))


@dataclass
class Built:
    """A body of the log and the OpenCode message it came from."""

    body: Message | CompactionRecord
    source: str
    created: str | None
    kept_from: str | None = None


def usage_of(tokens: Any) -> Usage | None:
    """OpenCode ``tokens`` as :class:`Usage` (``None`` when absent or all zero)."""
    if not isinstance(tokens, dict):
        return None
    cache = opt_dict(tokens, "cache")
    usage = Usage(
        input_tokens=opt_int(tokens, "input"),
        output_tokens=opt_int(tokens, "output") + opt_int(tokens, "reasoning"),
        cache_read_tokens=opt_int(cache, "read"),
        cache_write_tokens=opt_int(cache, "write"),
    )
    return None if usage.is_zero else usage


def _iso(ms: Any) -> str | None:
    if isinstance(ms, int | float) and not isinstance(ms, bool):
        return datetime.fromtimestamp(ms / 1000, tz=UTC).isoformat()
    return None


class Converter:
    """Converts the messages of one session (see the module docstring)."""

    def __init__(self, report: ImportReport) -> None:
        self.report = report
        self.calls = CallIds()
        self.generated = 0

    def session(self, messages: list[RawMessage]) -> list[Built]:
        """The bodies of a session's messages, in order."""
        summaries = {
            str(m.info.get("parentID")): m
            for m in messages
            if m.info.get("role") == "assistant"
            and m.info.get("summary") is True
            and m.info.get("finish")
            and not m.info.get("error")
        }
        out: list[Built] = []
        done: set[str] = set()
        for m in messages:
            if m.id in done:
                continue
            role = m.info.get("role")
            created = _iso(opt_dict(m.info, "time").get("created"))
            if role == "user":
                compaction = next((p for p, _ in m.parts if p.get("type") == "compaction"), None)
                reply = summaries.get(m.id)
                if compaction is not None and reply is not None:
                    done.add(reply.id)
                    out.append(self._compaction(compaction, reply, created, m.id))
                    continue
                msg = self._user(m)
                if msg is not None:
                    out.append(Built(msg, m.id, created))
            elif role == "assistant":
                for k, msg in enumerate(self._assistant(m)):
                    out.append(Built(msg, m.id if k == 0 else f"{m.id}#{k}", created))
            else:
                self.report.skip(
                    f"message role {role}" if isinstance(role, str) else "message without role",
                    f"expected a message `role` user or assistant, got {role!r}",
                    **m.where,
                )
        return out

    def _compaction(
        self, part: dict[str, Any], reply: RawMessage, created: str | None, source: str
    ) -> Built:
        texts = [
            p["text"]
            for p, _ in reply.parts
            if p.get("type") == "text" and isinstance(p.get("text"), str)
        ]
        record = CompactionRecord(
            summary="\n".join(texts),
            first_kept_id=None,
            tokens_before=0,
            tokens_after=0,
            policy="opencode",
            summarizer="imported",
            reason="imported",
        )
        return Built(record, source, created, kept_from=opt_str(part, "tail_start_id"))

    def _user(self, m: RawMessage) -> Message | None:
        parts: list[Part] = []
        synthetic = True
        for p, where in m.parts:
            kind = p.get("type")
            if kind == "text":
                if p.get("ignored") or not isinstance(p.get("text"), str):
                    continue
                synthetic = synthetic and bool(p.get("synthetic"))
                parts.append(TextPart(p["text"]))
            elif kind == "file":
                media = self._file(p)
                if media is not None:
                    parts.append(media)
                    synthetic = False
            elif kind == "compaction":
                parts.append(TextPart(COMPACTION_PROMPT))
            elif kind == "subtask":
                parts.append(TextPart(SUBTASK_TEXT))
            elif kind in _IGNORED_PARTS:
                self.report.ignore(f"part:{kind}", **where)
            else:
                self._unknown(kind, where)
        if not parts:
            return None
        meta = {SYNTHETIC: "opencode"} if synthetic else {}
        return Message("user", tuple(parts), meta=meta)

    def _file(self, p: dict[str, Any]) -> ImagePart | DocumentPart | None:
        mime = opt_str(p, "mime") or "application/octet-stream"
        url = opt_str(p, "url")
        if mime in ("text/plain", "application/x-directory") or url is None:
            return None
        if mime.startswith("image/"):
            return image_from_url(url, {"filename": p["filename"]} if p.get("filename") else None)
        return DocumentPart(mime, title=opt_str(p, "filename"), url=url)

    def _unknown(self, kind: Any, where: Where) -> None:
        self.report.skip(
            f"part:{kind}" if isinstance(kind, str) else "part without type",
            f"expected a known OpenCode part type, got {kind!r}",
            **where,
        )

    def _assistant(self, m: RawMessage) -> list[Message]:
        info = m.info
        error = opt_dict(info, "error")
        if error:
            aborted = error.get("name") == "MessageAbortedError"
            useful = any(p.get("type") not in ("step-start", "reasoning") for p, _ in m.parts)
            if not (aborted and useful):
                self.report.ignore("assistant with error", **m.where)
                return []
        model = opt_str(info, "modelID") or opt_str(opt_dict(info, "model"), "modelID")
        steps: list[tuple[list[Part], list[ToolResultPart], dict[str, Any]]] = []
        current: tuple[list[Part], list[ToolResultPart], dict[str, Any]] = ([], [], {})
        for p, where in m.parts:
            kind = p.get("type")
            if kind == "step-start":
                if current[0]:
                    steps.append(current)
                current = ([], [], {})
                continue
            if kind == "step-finish":
                current[2]["finish"] = p
                continue
            if kind == "text":
                if isinstance(p.get("text"), str) and p["text"]:
                    current[0].append(TextPart(p["text"]))
            elif kind == "reasoning":
                current[0].append(_reasoning(p))
            elif kind == "tool":
                found = self._tool(p, where)
                if found is not None:
                    current[0].append(found[0])
                    current[1].append(found[1])
            elif kind in _IGNORED_PARTS or kind in ("compaction", "file", "subtask"):
                self.report.ignore(f"part:{kind}", **where)
            else:
                self._unknown(kind, where)
        if current[0]:
            steps.append(current)
        out: list[Message] = []
        for k, (parts, results, extra) in enumerate(steps):
            finish = extra.get("finish")
            last = k == len(steps) - 1
            usage = usage_of(finish.get("tokens")) if finish else None
            if usage is None and last:
                usage = usage_of(info.get("tokens"))
            reason = opt_str(finish, "reason") if finish else None
            if reason is None and last:
                reason = opt_str(info, "finish")
            stop = "tool_use" if results else _FINISH.get(reason or "", reason or "stop")
            if last and error:
                stop = "aborted"
            out.append(
                Message("assistant", tuple(parts), usage=usage, model=model, stop_reason=stop)
            )
            if results:
                out.append(Message("tool", tuple(results)))
        return out

    def _tool(self, p: dict[str, Any], where: Where) -> tuple[ToolCallPart, ToolResultPart] | None:
        name = opt_str(p, "tool")
        state = p.get("state")
        if name is None or not isinstance(state, dict):
            self.report.skip(
                "malformed tool part",
                "expected a tool part with `tool` and a `state` object",
                **where,
            )
            return None
        source = opt_str(p, "callID")
        if source is None:
            self.report.repair(
                "tool part without callID", "expected a string `callID` on a tool part", **where
            )
            self.generated += 1
            source = f"call_gen_{self.generated}"
        args = state.get("input")
        if args is None:
            self.report.repair(
                "null arguments", "expected a tool `state.input` object, got null", **where
            )
            args = {}
        text = arguments_text(args, self.report, "state.input", **where)
        call = ToolCallPart(self.calls.call(source), name, text)
        status = state.get("status")
        content: list[TextPart | ImagePart | DocumentPart]
        failed = False
        if status == "completed":
            output = state.get("output")
            if opt_dict(state, "time").get("compacted"):
                content = [TextPart(CLEARED)]
            else:
                if not isinstance(output, str):
                    self.report.repair(
                        "structured tool output",
                        f"expected a string `state.output`, got {type(output).__name__}",
                        **where,
                    )
                    output = json_text(output) if output is not None else ""
                content = [TextPart(output)]
                for att in state.get("attachments") or ():
                    media = self._file(att) if isinstance(att, dict) else None
                    if media is not None:
                        content.append(media)
        elif status == "error":
            meta = opt_dict(state, "metadata")
            interrupted = meta.get("interrupted") is True and isinstance(meta.get("output"), str)
            content = [TextPart(meta["output"] if interrupted else str(state.get("error", "")))]
            failed = not interrupted
        else:
            content = [TextPart(INTERRUPTED)]
            failed = True
        return call, ToolResultPart(call.id, tuple(content), is_error=failed, name=name)


def _reasoning(p: dict[str, Any]) -> ReasoningPart:
    meta = opt_dict(p, "metadata")
    signature = opt_str(opt_dict(meta, "anthropic"), "signature")
    return ReasoningPart(opt_str(p, "text") or "", signature=signature)
