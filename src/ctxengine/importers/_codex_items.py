"""Codex (OpenAI Responses API) rollout items to message parts."""

from __future__ import annotations

import re
from pathlib import Path
from typing import Any

import orjson

from ctxengine.errors import TranscriptError
from ctxengine.importers._build import CallIds
from ctxengine.importers._images import image_from_url
from ctxengine.importers._parts import SYNTHETIC, json_text, opt_dict, opt_str
from ctxengine.model import (
    ImagePart,
    Message,
    Part,
    ReasoningPart,
    TextPart,
    ToolCallPart,
    ToolResultPart,
)

#: Opening tags of user-role messages that Codex writes itself.
_SYNTHETIC_TAGS = ("environment_context", "user_instructions", "user_shell_command", "turn_aborted")
_AGENTS_MD = "# AGENTS.md instructions"
_EXIT_HEADER = re.compile(r"\AExit code: (-?\d+)")
#: Output prefixes of tool failures reported as plain text (sandbox denials, patch errors).
_FAILURE_PREFIXES = ("failed in sandbox", "error:", "execution error:")


def tool_output_is_error(text: str) -> bool:
    """True when a Codex tool output reports failure: JSON ``metadata.exit_code`` ≠ 0 (0.3x),
    an ``Exit code: N`` header with N ≠ 0 (later versions), or a sandbox / patch failure."""
    if text.startswith("{") and '"exit_code"' in text[-400:]:
        try:
            data = orjson.loads(text)
        except orjson.JSONDecodeError:
            data = None
        if isinstance(data, dict):
            code = opt_dict(data, "metadata").get("exit_code")
            return isinstance(code, int) and code != 0
    match = _EXIT_HEADER.match(text)
    if match:
        return int(match.group(1)) != 0
    return text.lstrip().lower().startswith(_FAILURE_PREFIXES)


class Items:
    """Converts the response items of one rollout, raising ``TranscriptError`` at ``path:line``."""

    def __init__(self, path: Path, calls: CallIds) -> None:
        self.path = path
        self.calls = calls
        self.names: dict[str, str] = {}

    def _fail(self, line: int, expected: str) -> TranscriptError:
        return TranscriptError(str(self.path), expected, line=line)

    def _content(self, line: int, payload: dict[str, Any]) -> list[TextPart | ImagePart]:
        content = payload.get("content")
        if not isinstance(content, list):
            raise self._fail(line, "expected a `content` list on a message item")
        parts: list[TextPart | ImagePart] = []
        for item in content:
            if not isinstance(item, dict):
                raise self._fail(line, "expected content items to be objects")
            kind = item.get("type")
            if kind in ("input_text", "output_text", "text", "refusal"):
                text = item.get("text", item.get("refusal"))
                if not isinstance(text, str):
                    raise self._fail(line, f"expected a string `text` on a {kind} item")
                parts.append(TextPart(text, meta={"refusal": True} if kind == "refusal" else {}))
            elif kind == "input_image" and isinstance(item.get("image_url"), str):
                parts.append(image_from_url(item["image_url"]))
        return parts

    def message(self, line: int, payload: dict[str, Any]) -> Message:
        """A user, developer or system ``message`` item."""
        role = payload.get("role")
        if role not in ("user", "developer", "system"):
            raise self._fail(line, "expected `role` user, assistant, developer or system")
        parts = self._content(line, payload)
        meta: dict[str, Any] = {}
        first = parts[0].text.lstrip() if parts and isinstance(parts[0], TextPart) else ""
        for tag in _SYNTHETIC_TAGS:
            if first.startswith(f"<{tag}>"):
                meta[SYNTHETIC] = tag
        if first.startswith(_AGENTS_MD):
            meta[SYNTHETIC] = "user_instructions"
        return Message(role, tuple(parts), meta=meta)

    def assistant(
        self, line: int, payload: dict[str, Any], parts: list[Part], meta: dict[str, Any]
    ) -> None:
        """Append the parts of one assistant-side item to the open response."""
        kind = payload["type"]
        if kind == "message":
            parts.extend(self._content(line, payload))
        elif kind == "reasoning":
            parts.append(self._reasoning(payload))
        elif kind == "web_search_call":
            meta.setdefault("web_search_calls", []).append(opt_dict(payload, "action"))
        else:
            parts.append(self._call(line, kind, payload))

    def _reasoning(self, payload: dict[str, Any]) -> ReasoningPart:
        texts = [
            s["text"]
            for s in payload.get("summary") or ()
            if isinstance(s, dict) and isinstance(s.get("text"), str)
        ]
        raw = [
            c["text"]
            for c in payload.get("content") or ()
            if isinstance(c, dict) and isinstance(c.get("text"), str)
        ]
        meta: dict[str, str] = {"provider": "openai"}
        if raw:
            meta["content"] = "\n\n".join(raw)
        signature = opt_str(payload, "encrypted_content") or None
        return ReasoningPart("\n\n".join(texts), signature=signature, meta=meta)

    def _call(self, line: int, kind: str, payload: dict[str, Any]) -> ToolCallPart:
        source_id = opt_str(payload, "call_id") or opt_str(payload, "id")
        if source_id is None:
            raise self._fail(line, f"expected a string `call_id` on a {kind} item")
        meta: dict[str, Any] = {}
        if kind == "function_call":
            name = opt_str(payload, "name")
            arguments = payload.get("arguments")
        elif kind == "custom_tool_call":
            name, arguments = opt_str(payload, "name"), payload.get("input")
            meta["freeform"] = True
        else:
            name, arguments = "local_shell", opt_dict(payload, "action")
        if name is None or arguments is None:
            raise self._fail(line, f"expected `name` and arguments on a {kind} item")
        unique = self.calls.call(source_id)
        self.names[unique] = name
        return ToolCallPart(unique, name, json_text(arguments), meta=meta)

    def output(self, line: int, payload: dict[str, Any]) -> Message:
        """A ``function_call_output`` / ``custom_tool_call_output`` item as a tool message."""
        source_id = opt_str(payload, "call_id")
        if source_id is None:
            raise self._fail(line, "expected a string `call_id` on a tool output item")
        unique = self.calls.result(source_id)
        out = payload.get("output")
        if isinstance(out, dict):
            out = out.get("content", out.get("output"))
        parts: list[TextPart | ImagePart] = []
        if isinstance(out, str):
            parts.append(TextPart(out))
        elif isinstance(out, list):
            parts.extend(self._content(line, {"content": out}))
        else:
            raise self._fail(line, "expected `output` text on a tool output item")
        text = "\n".join(p.text for p in parts if isinstance(p, TextPart))
        result = ToolResultPart(
            unique, tuple(parts), is_error=tool_output_is_error(text), name=self.names.get(unique)
        )
        return Message("tool", (result,))
