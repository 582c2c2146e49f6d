"""Anthropic Messages content blocks (as Claude Code stores them) to message parts."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from ctxengine.errors import TranscriptError
from ctxengine.importers._build import CallIds, expect
from ctxengine.importers._images import image_from_base64, image_from_url
from ctxengine.importers._parts import json_text
from ctxengine.model import (
    DocumentPart,
    ImagePart,
    Part,
    ReasoningPart,
    TextPart,
    ToolCallPart,
    ToolResultPart,
)

Content = TextPart | ImagePart | DocumentPart


class Blocks:
    """Converts the blocks of one file, raising ``TranscriptError`` at ``path:line``."""

    def __init__(self, path: Path, calls: CallIds) -> None:
        self.path = path
        self.calls = calls
        self.call_names: dict[str, str] = {}

    def string(self, obj: dict[str, Any], key: str, line: int, what: str) -> str:
        """``obj[key]`` when it is a string, else raise "expected a string `key` on <what>"."""
        value = obj.get(key)
        if not isinstance(value, str):
            raise TranscriptError(str(self.path), f"expected a string `{key}` on {what}", line=line)
        return value

    def obj(self, owner: dict[str, Any], key: str, line: int, what: str) -> dict[str, Any]:
        """``owner[key]`` when it is an object, else raise."""
        value = owner.get(key)
        if not isinstance(value, dict):
            raise TranscriptError(
                str(self.path), f"expected an object `{key}` on {what}", line=line
            )
        result: dict[str, Any] = value
        return result

    def check(self, block: Any, line: int) -> dict[str, Any]:
        """``block`` when it is an object with a string ``type``, else raise."""
        expect(
            self.path,
            isinstance(block, dict) and isinstance(block.get("type"), str),
            "expected a content block object with a string `type`",
            line=line,
        )
        result: dict[str, Any] = block
        return result

    def content(self, block: dict[str, Any], line: int) -> Content | None:
        """A text, image or document block as a part; ``None`` for any other type."""
        kind = block["type"]
        if kind == "text":
            return TextPart(self.string(block, "text", line, "a text block"))
        if kind == "image":
            return self._image(self.obj(block, "source", line, "an image block"), line)
        if kind == "document":
            return self._document(block, line)
        return None

    def assistant(self, block: dict[str, Any], line: int) -> Part | None:
        """An assistant block as a part (tool-call ids made unique); ``None`` for types we
        do not model (server tools …), which the caller keeps in meta."""
        kind = block["type"]
        if kind == "thinking":
            sig = block.get("signature")
            return ReasoningPart(str(block.get("thinking", "")), signature=sig or None)
        if kind == "redacted_thinking":
            return ReasoningPart("", signature=str(block.get("data", "")), redacted=True)
        if kind == "tool_use":
            call_id = self.string(block, "id", line, "a tool_use block")
            name = self.string(block, "name", line, "a tool_use block")
            unique = self.calls.call(call_id)
            self.call_names[unique] = name
            return ToolCallPart(unique, name, json_text(block.get("input", {})))
        return self.content(block, line)

    def tool_result(self, block: dict[str, Any], line: int) -> ToolResultPart:
        """A ``tool_result`` block paired to its call."""
        unique = self.calls.result(self.string(block, "tool_use_id", line, "a tool_result block"))
        raw = block.get("content")
        parts: list[Content] = []
        if isinstance(raw, str):
            parts.append(TextPart(raw))
        elif isinstance(raw, list):
            for item in raw:
                part = self.content(self.check(item, line), line)
                if part is not None:
                    parts.append(part)
        return ToolResultPart(
            unique,
            tuple(parts),
            is_error=bool(block.get("is_error")),
            name=self.call_names.get(unique),
        )

    def _image(self, source: dict[str, Any], line: int) -> ImagePart:
        if source.get("type") == "url":
            return image_from_url(self.string(source, "url", line, "an image source"))
        data = self.string(source, "data", line, "an image source")
        media = source.get("media_type")
        return image_from_base64(media if isinstance(media, str) else None, data)

    def _document(self, block: dict[str, Any], line: int) -> DocumentPart:
        source = self.obj(block, "source", line, "a document block")
        title = block.get("title") if isinstance(block.get("title"), str) else None
        media = str(source.get("media_type") or "application/octet-stream")
        kind = source.get("type")
        if kind == "text":
            return DocumentPart(media, title=title, text=str(source.get("data", "")))
        if kind == "url":
            return DocumentPart(media, title=title, url=str(source.get("url", "")))
        data = str(source.get("data", ""))
        return DocumentPart(media, title=title, data=data, byte_size=len(data) * 3 // 4)
