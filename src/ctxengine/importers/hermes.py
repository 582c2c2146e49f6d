"""Hermes agent session JSON (NousResearch hermes-agent session logs: ``{"session_id",
"model", "platform", "session_start", "system_prompt", "tools", "messages": […]}``).

``system_prompt`` becomes the first message (role ``system``); ``messages`` are OpenAI
chat-completions messages, mapped as in :mod:`ctxengine.importers._chat`, plus Hermes'
``reasoning`` text as reasoning when there is no ``reasoning_content``. ``session_meta``
records never reach the model (ignored). ``tools``, ``model``, ``platform`` and the working
directory (``cwd`` or ``model_config.cwd``) go to the session meta. Hermes' compaction
archive (``compacted`` rows) lives in its SQLite state, not in these files.

Tolerated drift is that of :mod:`ctxengine.importers._chat` (counted with its JSON path,
refused in strict mode).
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

from ctxengine.importers._build import LogBuilder, load_json, read_file
from ctxengine.importers._chat import ChatReader, as_object
from ctxengine.importers._log import key_digest
from ctxengine.importers._parts import opt_str, title_of
from ctxengine.importers._peek import peek
from ctxengine.importers._text import bytes_digest
from ctxengine.importers.base import ImportedSession, start_report
from ctxengine.importers.report import ImportReport
from ctxengine.model import Message, ReasoningPart, TextPart

#: Top-level keys of a Hermes session besides ``session_id`` and ``messages``.
_HERMES_KEYS = frozenset({"platform", "session_start", "message_count", "last_updated"})
_IGNORED_ROLES = frozenset({"session_meta"})


class HermesImporter:
    """Importer for Hermes session JSON (see the module docstring)."""

    name = "hermes"
    label = "a Hermes session"

    def sniff(self, path: Path, head: bytes) -> bool:
        """True for an object with ``session_id``, ``messages`` and one of Hermes' session
        keys (``platform``, ``session_start``, ``message_count``, ``last_updated``)."""
        p = peek(head)
        keys = set(p.keys)
        return (
            p.kind == "object"
            and "session_id" in keys
            and "messages" in keys
            and bool(keys & _HERMES_KEYS)
        )

    def read(self, path: Path, report: ImportReport | None = None) -> ImportedSession:
        """Import the whole file.

        Raises:
            TranscriptError: not an object with a ``messages`` list, or a malformed message
                field (JSON path); in strict mode the first skip or repair.
        """
        report = start_report(path, report)
        raw = read_file(path)  # parsed and hashed from the same bytes
        data = load_json(path, report, raw)
        reader = ChatReader(path, report=report)
        if not isinstance(data, dict) or not isinstance(data.get("messages"), list):
            raise reader.fail("$.messages", "expected an object with a `messages` list")
        sid = opt_str(data, "session_id") or bytes_digest(raw)
        log = LogBuilder(sid)
        prompt = opt_str(data, "system_prompt")
        if prompt:
            _add(log, Message("system", (TextPart(prompt),)), prompt)
        for i, m in enumerate(data["messages"]):
            jp = f"$.messages[{i}]"
            if isinstance(m, dict) and m.get("role") in _IGNORED_ROLES:
                report.ignore(str(m["role"]), json_path=jp)
                continue
            msg = reader.message(m, jp)
            if msg is None:
                continue
            reasoning = m.get("reasoning") if isinstance(m, dict) else None
            if (
                msg.role == "assistant"
                and isinstance(reasoning, str)
                and reasoning
                and not msg.reasoning
            ):
                msg = Message(
                    "assistant", (ReasoningPart(reasoning), *msg.parts), msg.usage, msg.model,
                    msg.stop_reason, msg.meta,
                )  # fmt: skip
            _add(log, msg, m)
        entries = tuple(log.entries)
        meta: dict[str, Any] = {}
        for key in ("model", "platform", "session_start", "last_updated", "cwd"):
            if opt_str(data, key):
                meta[key] = data[key]
        cwd = opt_str(as_object(data.get("model_config")), "cwd")
        if cwd and "cwd" not in meta:
            meta["cwd"] = cwd
        if isinstance(data.get("tools"), list):
            meta["tools"] = data["tools"]
        return ImportedSession(sid, self.name, str(path), entries, title_of(entries), meta, report)


def _add(log: LogBuilder, msg: Message, source: Any) -> None:
    """Append ``msg``, its id chained from the digest of the record it came from (the ids
    :class:`~ctxengine.importers._log.Rows` gives)."""
    digest = key_digest(source)
    if digest is None:
        log.add(msg)
    else:
        log.add_keyed(msg, digest)


IMPORTER = HermesImporter()
