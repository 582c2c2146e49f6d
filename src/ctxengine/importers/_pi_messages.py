"""pi ``AgentMessage`` objects (the ``message`` of a session entry) to messages."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import replace
from pathlib import Path
from typing import Any

from ctxengine.importers._build import CallIds
from ctxengine.importers._calls import arguments_text
from ctxengine.importers._images import image_from_base64
from ctxengine.importers._parts import SYNTHETIC, opt_str
from ctxengine.importers.report import ImportReport
from ctxengine.model import (
    ImagePart,
    Message,
    Part,
    ReasoningPart,
    TextPart,
    ToolCallPart,
    ToolResultPart,
    Usage,
)

#: pi ``stopReason`` → our normalised stop reason.
STOP_REASONS: Mapping[str, str] = {
    "stop": "stop",
    "length": "length",
    "toolUse": "tool_use",
    "error": "error",
    "aborted": "aborted",
}
_ROLES = "user, assistant, toolResult, bashExecution, custom"
_ASSISTANT_META = ("api", "provider", "errorMessage")


def bash_execution_text(msg: Mapping[str, Any]) -> str:
    """The user-message text pi sends for a ``!command`` run (pi ``bashExecutionToText``)."""
    output = msg.get("output")
    text = f"Ran `{msg.get('command', '')}`\n"
    text += f"```\n{output}\n```" if output else "(no output)"
    code = msg.get("exitCode")
    if msg.get("cancelled"):
        text += "\n\n(command cancelled)"
    elif isinstance(code, int) and code != 0:
        text += f"\n\nCommand exited with code {code}"
    if msg.get("truncated") and msg.get("fullOutputPath"):
        text += f"\n\n[Output truncated. Full output: {msg['fullOutputPath']}]"
    return text


class PiMessages:
    """Converts the messages of one file, counting what it skips and repairs in ``report``."""

    def __init__(self, path: Path, calls: CallIds, report: ImportReport) -> None:
        self.path = path
        self.calls = calls
        self.report = report
        self.names: dict[str, str] = {}
        #: ``(source id, unique id)`` of every call, in order, and the answered unique ids.
        self.order: list[tuple[str, str]] = []
        self.answered: set[str] = set()

    def _skip(self, line: int, kind: str, expected: str) -> None:
        self.report.skip(kind, expected, line=line)

    def convert(self, line: int, msg: Any) -> Message | None:
        """The message of a ``message`` entry; ``None`` for a bash run excluded from context
        (ignored) or a message not understood (skipped)."""
        if not isinstance(msg, dict):
            self._skip(line, "malformed message", "expected a `message` object")
            return None
        role = msg.get("role")
        if not isinstance(role, str):
            self._skip(line, "message without role", "expected a string `message.role`")
            return None
        if role == "user":
            content = self._content(line, msg.get("content"))
            return None if content is None else Message("user", content)
        if role == "assistant":
            return self._assistant(line, msg)
        if role == "toolResult":
            return self._tool_result(line, msg)
        if role == "bashExecution":
            if msg.get("excludeFromContext"):
                self.report.ignore("excluded_bash", line=line)
                return None
            meta = {SYNTHETIC: "bashExecution", "command": str(msg.get("command", ""))}
            return Message("user", (TextPart(bash_execution_text(msg)),), meta=meta)
        if role in ("custom", "hookMessage"):
            return self.custom(line, msg)
        self._skip(
            line,
            f"message role {role}",
            f"expected `message.role` to be one of {_ROLES}, got {role!r}",
        )
        return None

    def custom(self, line: int, obj: Mapping[str, Any]) -> Message | None:
        """An extension message (``custom`` role or ``custom_message`` entry) as user text;
        ``None`` (skipped) when its content is not text or blocks."""
        kind = obj.get("customType")
        meta = {SYNTHETIC: f"custom:{kind}" if isinstance(kind, str) else "custom"}
        content = self._content(line, obj.get("content"))
        return None if content is None else Message("user", content, meta=meta)

    def _content(self, line: int, content: Any) -> tuple[TextPart | ImagePart, ...] | None:
        if isinstance(content, str):
            return (TextPart(content),)
        if isinstance(content, dict) and "type" in content:
            self.report.repair(
                "structured content",
                "expected `content` to be a string or a list of blocks, got one block object",
                line=line,
            )
            content = [content]
        if not isinstance(content, list):
            self._skip(
                line,
                "message without content",
                "expected `content` to be a string or a list of blocks",
            )
            return None
        parts: list[TextPart | ImagePart] = []
        for block in content:
            part = self._block(line, block)
            if part is None:
                continue
            if not isinstance(part, TextPart | ImagePart):
                self._skip(
                    line, f"{part.kind} block here", "expected only text and image blocks here"
                )
                continue
            parts.append(part)
        return tuple(parts)

    def _block(self, line: int, block: Any) -> Part | None:
        kind = block.get("type") if type(block) is dict else None
        if kind == "text":
            text = block.get("text")
            if type(text) is str:
                sig = block.get("textSignature")
                return TextPart(text, {"textSignature": sig} if type(sig) is str and sig else {})
        if kind == "image" and isinstance(block.get("data"), str):
            return image_from_base64(opt_str(block, "mimeType"), block["data"])
        if kind == "thinking":
            signature = opt_str(block, "thinkingSignature") or None
            text = opt_str(block, "thinking") or ""
            return ReasoningPart(text, signature=signature, redacted=bool(block.get("redacted")))
        if kind == "toolCall":
            return self._call(line, block)
        self._skip(
            line,
            f"block:{kind}" if isinstance(kind, str) else "malformed block",
            f"expected a text, image, thinking or toolCall block, got {kind!r}",
        )
        return None

    def _call(self, line: int, block: dict[str, Any]) -> ToolCallPart | None:
        name = opt_str(block, "name")
        if name is None:
            self._skip(
                line, "toolCall without name", "expected a string `name` on a toolCall block"
            )
            return None
        call_id = opt_str(block, "id")
        if call_id is None:
            self.report.repair(
                "toolCall without id", "expected a string `id` on a toolCall block", line=line
            )
            prefix = f"call_gen_{line}_"
            call_id = prefix + str(sum(1 for s, _ in self.order if s.startswith(prefix)))
        arguments = block.get("arguments", {})
        if arguments is None:
            self.report.repair(
                "null arguments", "expected an `arguments` object on a toolCall block", line=line
            )
            arguments = {}
        unique = self.calls.call(call_id)
        self.order.append((call_id, unique))
        self.names[unique] = name
        return ToolCallPart(
            unique, name, arguments_text(arguments, self.report, "arguments", line=line)
        )

    def _assistant(self, line: int, msg: dict[str, Any]) -> Message | None:
        content = msg.get("content")
        if not isinstance(content, list):
            self._skip(
                line, "assistant without content", "expected `content` to be a list of blocks"
            )
            return None
        block_part = self._block
        found: list[Part] = []
        for block in content:
            part = block_part(line, block)
            if part is not None:
                found.append(part)
        parts = tuple(found)
        # ``opt_str`` and ``opt_int`` inlined below: exact types (the values come from a JSON
        # parser: no subclasses, and a JSON number is never a bool)
        api = msg.get("api")
        if type(api) is not str:
            api = ""
        if api and not api.startswith("anthropic"):
            # Signatures from another provider's API (an OpenAI reasoning item stored as
            # ``thinkingSignature``) must never be echoed to Anthropic.
            source = "openai" if api.startswith("openai") else api
            parts = tuple(
                replace(p, meta={**p.meta, "provider": source})
                if isinstance(p, ReasoningPart)
                else p
                for p in parts
            )
        raw = msg.get("usage")
        usage = None
        if type(raw) is dict and raw:
            given, output = raw.get("input"), raw.get("output")
            read, write = raw.get("cacheRead"), raw.get("cacheWrite")
            usage = Usage(
                given if type(given) is int else 0,
                output if type(output) is int else 0,
                read if type(read) is int else 0,
                write if type(write) is int else 0,
            )
        stop = msg.get("stopReason")
        model = msg.get("model")
        meta = {k: v for k in _ASSISTANT_META if type(v := msg.get(k)) is str}
        return Message(
            "assistant",
            parts,
            usage,
            model if type(model) is str else None,
            STOP_REASONS.get(stop) if type(stop) is str and stop else None,
            meta,
        )

    def _tool_result(self, line: int, msg: dict[str, Any]) -> Message | None:
        call_id = opt_str(msg, "toolCallId")
        if call_id is not None:
            unique = self.calls.result(call_id)
        else:
            pending = next(((s, u) for s, u in self.order if u not in self.answered), None)
            if pending is None:
                self._skip(
                    line,
                    "toolResult without a call",
                    "expected a string `toolCallId` on a toolResult",
                )
                return None
            self.report.repair(
                "toolResult without toolCallId",
                "expected a string `toolCallId` on a toolResult",
                line=line,
            )
            call_id, unique = pending
            self.calls.answer(call_id, unique)
        self.answered.add(unique)
        content = self._content(line, msg.get("content"))
        result = ToolResultPart(
            unique,
            content or (),
            is_error=bool(msg.get("isError")),
            name=opt_str(msg, "toolName") or self.names.get(unique),
        )
        return Message("tool", (result,))
