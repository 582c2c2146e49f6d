"""pi ``AgentMessage`` objects (the ``message`` of a session entry) to messages."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import replace
from pathlib import Path
from typing import Any

from ctxengine.errors import TranscriptError
from ctxengine.importers._build import CallIds
from ctxengine.importers._images import image_from_base64
from ctxengine.importers._parts import SYNTHETIC, json_text, opt_dict, opt_int, opt_str
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
    """Converts the messages of one file, raising ``TranscriptError`` at ``path:line``."""

    def __init__(self, path: Path, calls: CallIds) -> None:
        self.path = path
        self.calls = calls
        self.names: dict[str, str] = {}

    def _fail(self, line: int, expected: str) -> TranscriptError:
        return TranscriptError(str(self.path), expected, line=line)

    def convert(self, line: int, msg: Any) -> Message | None:
        """The message of a ``message`` entry; ``None`` for a bash run excluded from context."""
        if not isinstance(msg, dict):
            raise self._fail(line, "expected a `message` object")
        role = msg.get("role")
        if not isinstance(role, str):
            raise self._fail(line, "expected a string `message.role`")
        if role == "user":
            return Message("user", self._content(line, msg.get("content")))
        if role == "assistant":
            return self._assistant(line, msg)
        if role == "toolResult":
            return self._tool_result(line, msg)
        if role == "bashExecution":
            if msg.get("excludeFromContext"):
                return None
            meta = {SYNTHETIC: "bashExecution", "command": str(msg.get("command", ""))}
            return Message("user", (TextPart(bash_execution_text(msg)),), meta=meta)
        if role in ("custom", "hookMessage"):
            return self.custom(line, msg)
        raise self._fail(line, f"expected `message.role` to be one of {_ROLES}, got {role!r}")

    def custom(self, line: int, obj: Mapping[str, Any]) -> Message:
        """An extension message (``custom`` role or ``custom_message`` entry) as user text."""
        kind = obj.get("customType")
        meta = {SYNTHETIC: f"custom:{kind}" if isinstance(kind, str) else "custom"}
        return Message("user", self._content(line, obj.get("content")), meta=meta)

    def _content(self, line: int, content: Any) -> tuple[TextPart | ImagePart, ...]:
        if isinstance(content, str):
            return (TextPart(content),)
        if not isinstance(content, list):
            raise self._fail(line, "expected `content` to be a string or a list of blocks")
        parts: list[TextPart | ImagePart] = []
        for block in content:
            part = self._block(line, block)
            if not isinstance(part, TextPart | ImagePart):
                raise self._fail(line, "expected only text and image blocks here")
            parts.append(part)
        return tuple(parts)

    def _block(self, line: int, block: Any) -> Part:
        kind = block.get("type") if isinstance(block, dict) else None
        if kind == "text" and isinstance(block.get("text"), str):
            sig = opt_str(block, "textSignature")
            return TextPart(block["text"], meta={"textSignature": sig} if sig else {})
        if kind == "image" and isinstance(block.get("data"), str):
            return image_from_base64(opt_str(block, "mimeType"), block["data"])
        if kind == "thinking":
            signature = opt_str(block, "thinkingSignature") or None
            text = opt_str(block, "thinking") or ""
            return ReasoningPart(text, signature=signature, redacted=bool(block.get("redacted")))
        if kind == "toolCall":
            call_id, name = opt_str(block, "id"), opt_str(block, "name")
            if call_id is None or name is None:
                raise self._fail(line, "expected string `id` and `name` on a toolCall block")
            unique = self.calls.call(call_id)
            self.names[unique] = name
            return ToolCallPart(unique, name, json_text(block.get("arguments", {})))
        raise self._fail(line, f"expected a text, image, thinking or toolCall block, got {kind!r}")

    def _assistant(self, line: int, msg: dict[str, Any]) -> Message:
        content = msg.get("content")
        if not isinstance(content, list):
            raise self._fail(line, "expected `content` to be a list of blocks")
        parts = tuple(self._block(line, block) for block in content)
        api = opt_str(msg, "api") or ""
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
        raw = opt_dict(msg, "usage")
        usage = None
        if raw:
            usage = Usage(
                input_tokens=opt_int(raw, "input"),
                output_tokens=opt_int(raw, "output"),
                cache_read_tokens=opt_int(raw, "cacheRead"),
                cache_write_tokens=opt_int(raw, "cacheWrite"),
            )
        stop = opt_str(msg, "stopReason")
        meta = {k: msg[k] for k in _ASSISTANT_META if isinstance(msg.get(k), str)}
        return Message(
            "assistant",
            parts,
            usage=usage,
            model=opt_str(msg, "model"),
            stop_reason=STOP_REASONS.get(stop) if stop else None,
            meta=meta,
        )

    def _tool_result(self, line: int, msg: dict[str, Any]) -> Message:
        call_id = opt_str(msg, "toolCallId")
        if call_id is None:
            raise self._fail(line, "expected a string `toolCallId` on a toolResult")
        unique = self.calls.result(call_id)
        result = ToolResultPart(
            unique,
            self._content(line, msg.get("content")),
            is_error=bool(msg.get("isError")),
            name=opt_str(msg, "toolName") or self.names.get(unique),
        )
        return Message("tool", (result,))
