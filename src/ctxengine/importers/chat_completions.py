"""OpenAI chat-completions messages JSON: a list of messages, or an object with ``messages``
(a request body, or a mini-swe-agent trajectory ``{"info": …, "messages": […]}``).

Message mapping is in :mod:`ctxengine.importers._chat`. Records that are not chat messages
are skipped and counted in ``meta["skipped"]``: mini-swe-agent ends a run with a
``{"role": "exit"}`` record whose ``exit_status`` and exception text go to the session meta.
When the run was submitted, the final command's output (the submission, after the marker line)
appears only in that record: if the record follows an assistant message whose single call
is unanswered and carries a submission (``extra.submission``, else the ``content`` of a record
whose ``exit_status`` is ``Submitted``), it becomes
that call's result (a ``tool`` message with ``meta["source"] = "exit"``) instead of being
skipped.
The session id is the file's ``session_id`` when it has one, else a hash of the file bytes
(mini-swe-agent's ``instance_id`` names a task, not a run, and is kept in meta).
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

from ctxengine.importers._build import LogBuilder, load_json, read_file
from ctxengine.importers._chat import CHAT_ROLES, ChatReader, as_object, iso_time, title_from
from ctxengine.importers._peek import peek
from ctxengine.importers._text import bytes_digest
from ctxengine.importers.base import ImportedSession, start_report
from ctxengine.importers.report import ImportReport
from ctxengine.model import Message, TextPart, ToolResultPart

#: Non-chat records skipped on import (mini-swe-agent's final ``exit`` record).
SKIPPED_ROLES: frozenset[str] = frozenset({"exit"})

#: ``info`` fields of a mini-swe-agent trajectory kept in the session meta.
_INFO_KEYS = ("exit_status", "mini_version", "model_stats")


def _is_chat_message(m: Any) -> bool:
    """True for a message of the shapes the API accepts: a chat role (or ``exit``), and
    ``content`` a string, a list of typed parts, or ``null`` with ``content`` or a call."""
    if not isinstance(m, dict):
        return False
    role = m.get("role")
    if role in SKIPPED_ROLES:
        return True
    if role not in CHAT_ROLES:
        return False
    content = m.get("content")
    if content is None:
        return "content" in m or "tool_calls" in m or "function_call" in m
    if isinstance(content, list):
        return all(isinstance(p, dict) and isinstance(p.get("type"), str) for p in content)
    return isinstance(content, str)


def _has_chat_role(m: Any) -> bool:
    """True for an object with a chat role (or ``exit``) and a ``content`` of any shape."""
    return (
        isinstance(m, dict)
        and (m.get("role") in CHAT_ROLES or m.get("role") in SKIPPED_ROLES)
        and "content" in m
    )


def _looks_like_chat(items: tuple[Any, ...]) -> bool:
    """True when ``items`` (the leading messages of a file, not empty) read as chat
    messages: more than half are well-formed (:func:`_is_chat_message`), or every one has a
    chat role and a ``content`` (only content shapes are off). The others are skipped and
    counted on import."""
    good = sum(map(_is_chat_message, items))
    return good * 2 > len(items) or all(map(_has_chat_role, items))


class ChatCompletionsImporter:
    """Importer for chat-completions message lists (see the module docstring)."""

    name = "chat-completions"
    label = "a chat-completions message list"

    def sniff(self, path: Path, head: bytes) -> bool:
        """True when the head is a list of chat messages or an object whose ``messages``
        are chat messages: most of the leading messages have ``role`` and ``content`` of the
        shapes the API accepts, or every one has a chat role and a ``content`` (a few
        malformed messages are skipped on import, not a reason to refuse the file). Objects
        with SWE-agent keys (``history``, ``trajectory``) and event lists are rejected."""
        p = peek(head)
        if p.kind == "array":
            key = ""
        elif p.kind == "object" and "messages" in p.keys:
            if "history" in p.keys or "trajectory" in p.keys:
                return False
            key = "messages"
        else:
            return False
        items = p.items(key)
        if items:
            return _looks_like_chat(items)
        snippet = "".join(p.snippets.get(key, "").split())
        return snippet.startswith(tuple(f'[{{"role":"{r}"' for r in CHAT_ROLES))

    def read(self, path: Path, report: ImportReport | None = None) -> ImportedSession:
        """Import the whole file; messages not understood are skipped and drift repaired
        into ``report`` (:mod:`ctxengine.importers._chat`).

        Raises:
            TranscriptError: not a list / ``messages`` list, or a malformed message field
                (with its JSON path, e.g. ``$.messages[3].tool_calls``); in strict mode the
                first skip or repair.
        """
        report = start_report(path, report)
        raw = read_file(path)  # parsed and hashed from the same bytes
        data = load_json(path, report, raw)
        top: dict[str, Any] = data if isinstance(data, dict) else {}
        reader = ChatReader(path, report=report)
        if isinstance(data, list):
            messages, base = data, "$"
        elif isinstance(top.get("messages"), list):
            messages, base = top["messages"], "$.messages"
        elif isinstance(data, dict):
            raise reader.fail("$.messages", "expected a list of messages")
        else:
            raise reader.fail("$", "expected a list of messages or an object with `messages`")
        sid = top.get("session_id")
        builder = LogBuilder(sid if isinstance(sid, str) and sid else bytes_digest(raw))
        meta = _session_meta(top)
        imported: list[Message] = []
        for i, m in enumerate(messages):
            if isinstance(m, dict) and m.get("role") in SKIPPED_ROLES:
                final = _submission_result(imported, m)
                if final is None:
                    _note_skipped(meta, m)
                    continue
                _note_exit(meta, m)
                builder.add(final, created_at=iso_time(as_object(m.get("extra")).get("timestamp")))
                imported.append(final)
                continue
            msg = reader.message(m, f"{base}[{i}]")
            if msg is None:
                continue
            extra = as_object(m.get("extra"))
            builder.add(msg, created_at=iso_time(extra.get("timestamp")))
            imported.append(msg)
        instance = top.get("instance_id")
        return ImportedSession(
            session_id=builder.session_id,
            format=self.name,
            source_path=str(path),
            entries=tuple(builder.entries),
            title=instance if isinstance(instance, str) else title_from(imported),
            meta=meta,
            report=report,
        )


def _session_meta(top: dict[str, Any]) -> dict[str, Any]:
    meta: dict[str, Any] = {}
    for key in ("instance_id", "trajectory_format", "model"):
        if isinstance(top.get(key), str):
            meta[key] = top[key]
    if isinstance(top.get("tools"), list):
        meta["tools"] = top["tools"]
    info = top.get("info")
    if isinstance(info, dict):
        meta.update({k: info[k] for k in _INFO_KEYS if k in info})
    return meta


def _submission_result(imported: list[Message], record: dict[str, Any]) -> Message | None:
    """The submission of a mini-swe-agent ``exit`` record as the result of the final call,
    when the last imported message is an assistant message with one (unanswered) call."""
    if not imported or imported[-1].role != "assistant" or len(imported[-1].tool_calls) != 1:
        return None
    extra = as_object(record.get("extra"))
    submission = extra.get("submission")
    if submission is None and extra.get("exit_status") == "Submitted":
        submission = record.get("content")
    if not isinstance(submission, str) or not submission:
        return None
    result = ToolResultPart(imported[-1].tool_calls[0].id, (TextPart(submission),))
    return Message("tool", (result,), meta={"source": "exit"})


def _note_skipped(meta: dict[str, Any], record: dict[str, Any]) -> None:
    skipped: dict[str, int] = meta.setdefault("skipped", {})
    role = str(record.get("role"))
    skipped[role] = skipped.get(role, 0) + 1
    _note_exit(meta, record)


def _note_exit(meta: dict[str, Any], record: dict[str, Any]) -> None:
    extra = record.get("extra")
    if isinstance(extra, dict):
        for key in ("exit_status", "exception_str"):
            if isinstance(extra.get(key), str) and extra[key]:
                meta[key] = extra[key]


IMPORTER = ChatCompletionsImporter()
