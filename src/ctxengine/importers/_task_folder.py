"""Cline and Roo Code task folders (``…/tasks/<taskId>/``), read from their
``api_conversation_history.json`` with the ``ui_messages.json`` and ``task_metadata.json``
beside it when present.

``api_conversation_history.json`` is the list of Anthropic ``MessageParam`` objects the agent
sends, each with extra fields (``ts`` …); blocks map as in
:mod:`ctxengine.importers.anthropic_messages` (``tool_result`` blocks of a user message become
a ``tool`` message before the rest of it; older Cline versions put tool calls as XML in the
text, which stays text). Per agent:

* Roo Code condenses and truncates without deleting: a message with ``isSummary`` is the
  summary that replaces the messages tagged ``condenseParent``, a message with
  ``isTruncationMarker`` stands for those tagged ``truncationParent``. Each becomes a
  compaction record (summary: its text) placed where it is, so the messages after it are the
  verbatim tail (the first task message Roo keeps in front of a truncation marker is not
  repeated). A top-level ``{"type": "reasoning", …}`` item (OpenAI encrypted reasoning) is
  reasoning of the next assistant message.
* Cline truncates by ``conversationHistoryDeletedRange`` ``[start, end]`` (recorded on its
  UI messages): each new range becomes a compaction record after the API message the UI
  message names (``conversationHistoryIndex``), keeping the messages after ``end`` (the first
  ``start`` messages Cline keeps are not repeated). The usage of a request
  (``api_req_started`` ``tokensIn`` / ``tokensOut`` / ``cacheReads`` / ``cacheWrites``) goes to
  the assistant message after the API message it names; without that index (Roo), the n-th
  request's usage goes to the n-th assistant message when both counts agree.
* ``task_metadata.json`` gives the model (last ``model_usage`` entry) and the files in
  context (``files_in_context`` with ``record_state`` ``active``); the UI's ``task`` message
  gives the title.

The session id is the task folder's name. The task folder itself is a target too (its
``api_conversation_history.json`` is read).
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import orjson

from ctxengine.importers._build import CallIds, load_json
from ctxengine.importers._chat import iso_time
from ctxengine.importers._log import Cut, Rows
from ctxengine.importers._parts import TITLE_CHARS, opt_int, opt_str, title_of
from ctxengine.importers.anthropic_messages import _Blocks, _message
from ctxengine.importers.base import ImportedSession
from ctxengine.importers.report import ImportReport
from ctxengine.model import Message, ReasoningPart, Usage

HISTORY = "api_conversation_history.json"
#: Keys that mark a Roo Code history (non-destructive condense and truncation).
ROO_KEYS = (b'"condenseParent"', b'"isSummary"', b'"truncationParent"', b'"isTruncationMarker"')
#: Folder names of the Roo Code and Kilo Code VS Code extensions.
ROO_FOLDERS = ("rooveterinaryinc.roo-cline", "kilocode.kilo-code")
TRUNCATED = "[Earlier messages of this task were removed to keep the context within the window]"


def history_of(path: Path) -> tuple[Path, bytes] | None:
    """The task's ``api_conversation_history.json`` and its first bytes, for ``path`` that
    is that file or the task folder holding it (``…/tasks/<taskId>/``); ``None`` for
    anything else or an unreadable file."""
    found = path / HISTORY if path.is_dir() else path
    if found.name != HISTORY:
        return None
    try:
        with found.open("rb") as fh:
            return found, fh.read(64 * 1024)
    except OSError:
        return None


def is_roo(path: Path, head: bytes) -> bool:
    """True for a task of Roo Code (or Kilo Code): under its extension folder, or with Roo's
    condense / truncation keys in the head."""
    parts = {p.lower() for p in path.parts}
    return any(f in parts for f in ROO_FOLDERS) or any(k in head for k in ROO_KEYS)


def read_task(path: Path, report: ImportReport, agent: str) -> ImportedSession:
    """Import the task whose ``api_conversation_history.json`` is ``path`` as ``agent``
    (``"cline"`` or ``"roo-code"``).

    Raises:
        TranscriptError: unreadable or invalid JSON, a history that is not a list, a
            malformed block field (with its JSON path); in strict mode the first skip or
            repair.
    """
    data = load_json(path, report)
    blocks = _Blocks(path, CallIds(), report)
    if not isinstance(data, list):
        raise blocks.fail("$", "expected a list of messages")
    ui = _json_beside(path, "ui_messages.json")
    truncations = _truncations(ui if isinstance(ui, list) else [])
    rows = Rows()
    row_of: list[int] = []
    assistants: list[int] = []
    pending: list[ReasoningPart] = []
    for i, item in enumerate(data):
        jp = f"$[{i}]"
        row_of.append(len(rows))
        if isinstance(item, dict) and item.get("type") == "reasoning" and "role" not in item:
            pending.append(_reasoning(item))
            report.ignore("reasoning item", json_path=jp)
        elif isinstance(item, dict) and (item.get("isSummary") or item.get("isTruncationMarker")):
            text = _text_of(item)
            kind = "condense" if item.get("isSummary") else "truncation"
            rows.add(Cut(summary=text, policy="roo-code"), meta={"source": kind})
        else:
            for msg in _message(blocks, item, jp):
                if msg.role == "assistant" and pending:
                    msg = Message(
                        "assistant", (*pending, *msg.parts), msg.usage, msg.model,
                        msg.stop_reason, msg.meta,
                    )  # fmt: skip
                    pending = []
                if msg.role == "assistant":
                    assistants.append(len(rows))
                rows.add(msg, created_at=_iso(item), key=item)
        for start, end in truncations.get(i, ()):
            kept = row_of[end + 1] if end + 1 < len(row_of) else None
            if end + 1 <= i:
                rows.add(Cut(summary=TRUNCATED, policy="cline", kept=kept),
                         meta={"deleted_range": [start, end]})  # fmt: skip
    _attach_usage(rows, row_of, assistants, ui if isinstance(ui, list) else [], data)
    sid = path.parent.name or path.stem
    entries = rows.build(sid)
    meta = _metadata(path)
    title = _task_text(ui if isinstance(ui, list) else []) or title_of(entries)
    return ImportedSession(sid, agent, str(path), entries, title, meta, report)


def _task_text(ui: list[Any]) -> str | None:
    """The first line of the task as the user typed it (the UI's ``task`` message), cut to
    :data:`~ctxengine.importers._parts.TITLE_CHARS`."""
    for msg in ui:
        if isinstance(msg, dict) and msg.get("say") == "task" and opt_str(msg, "text"):
            line = msg["text"].strip().splitlines()[0].strip() if msg["text"].strip() else ""
            if line:
                return line if len(line) <= TITLE_CHARS else line[: TITLE_CHARS - 1] + "…"
    return None


def _json_beside(path: Path, name: str) -> Any:
    try:
        return orjson.loads(path.with_name(name).read_bytes())
    except (OSError, orjson.JSONDecodeError):
        return None


def _truncations(ui: list[Any]) -> dict[int, list[tuple[int, int]]]:
    """Each new ``conversationHistoryDeletedRange`` of the UI messages, by the API message
    index it follows."""
    found: dict[int, list[tuple[int, int]]] = {}
    last: tuple[int, int] | None = None
    for msg in ui:
        if not isinstance(msg, dict):
            continue
        rng, at = msg.get("conversationHistoryDeletedRange"), msg.get("conversationHistoryIndex")
        if (
            isinstance(rng, list)
            and len(rng) == 2
            and all(isinstance(x, int) for x in rng)
            and isinstance(at, int)
        ):
            current = (rng[0], rng[1])
            if current != last:
                found.setdefault(at, []).append(current)
                last = current
    return found


def _requests(ui: list[Any]) -> list[tuple[int | None, Usage]]:
    """``(conversationHistoryIndex, usage)`` of every ``api_req_started`` with token counts."""
    found: list[tuple[int | None, Usage]] = []
    for msg in ui:
        if not isinstance(msg, dict) or msg.get("say") != "api_req_started":
            continue
        try:
            info = orjson.loads(msg.get("text") or "")
        except (orjson.JSONDecodeError, TypeError):
            continue
        if not isinstance(info, dict) or not isinstance(info.get("tokensIn"), int):
            continue
        usage = Usage(
            input_tokens=opt_int(info, "tokensIn"),
            output_tokens=opt_int(info, "tokensOut"),
            cache_read_tokens=opt_int(info, "cacheReads"),
            cache_write_tokens=opt_int(info, "cacheWrites"),
        )
        at = msg.get("conversationHistoryIndex")
        found.append((at if isinstance(at, int) else None, usage))
    return found


def _attach_usage(
    rows: Rows, row_of: list[int], assistants: list[int], ui: list[Any], data: list[Any]
) -> None:
    requests = _requests(ui)
    if not requests:
        return
    targets: list[tuple[int, Usage]] = []
    if all(at is not None for at, _ in requests):
        for at, usage in requests:
            assert at is not None
            reply = at + 1
            item = data[reply] if 0 <= reply < len(data) else None
            if isinstance(item, dict) and item.get("role") == "assistant":
                targets.append((row_of[reply], usage))
    elif len(requests) == len(assistants):
        targets = [(row, usage) for row, (_, usage) in zip(assistants, requests, strict=True)]
    for row, usage in targets:
        body = rows.rows[row].body
        if isinstance(body, Message) and body.role == "assistant" and body.usage is None:
            rows.replace(
                row, Message(body.role, body.parts, usage, body.model, body.stop_reason, body.meta)
            )


def _reasoning(item: dict[str, Any]) -> ReasoningPart:
    texts = [
        s["text"]
        for s in item.get("summary") or ()
        if isinstance(s, dict) and isinstance(s.get("text"), str)
    ]
    return ReasoningPart(
        "\n\n".join(texts),
        signature=opt_str(item, "encrypted_content"),
        meta={"provider": "openai"},
    )


def _text_of(item: dict[str, Any]) -> str:
    content = item.get("content")
    if isinstance(content, str):
        return content
    if isinstance(content, list):
        return "\n".join(
            b["text"] for b in content if isinstance(b, dict) and isinstance(b.get("text"), str)
        )
    return ""


def _iso(item: Any) -> str | None:
    ts = item.get("ts") if isinstance(item, dict) else None
    if isinstance(ts, int | float) and not isinstance(ts, bool):
        return iso_time(ts / 1000)
    return None


def _metadata(path: Path) -> dict[str, Any]:
    meta: dict[str, Any] = {}
    data = _json_beside(path, "task_metadata.json")
    if not isinstance(data, dict):
        return meta
    usage = data.get("model_usage")
    last = usage[-1] if isinstance(usage, list) and usage else None
    if isinstance(last, dict) and opt_str(last, "model_id"):
        meta["model"] = last["model_id"]
    files = data.get("files_in_context")
    if isinstance(files, list):
        active = sorted(
            {
                f["path"]
                for f in files
                if isinstance(f, dict)
                and isinstance(f.get("path"), str)
                and f.get("record_state") == "active"
            }
        )
        if active:
            meta["files_in_context"] = active
    return meta
