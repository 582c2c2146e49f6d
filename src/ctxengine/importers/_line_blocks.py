"""Anthropic-shaped content blocks of line-based agent logs (Cursor transcripts, Factory droid
session stores) to messages, with drift counted by line.

An assistant line becomes one assistant message (``thinking`` → reasoning, ``text``,
``tool_use`` → tool call); a user line becomes a ``tool`` message of its ``tool_result``
blocks followed by a user message of its other blocks (text, images).

Call ids: with ``ids_recorded`` a ``tool_use`` without ``id`` gets ``"<prefix>_<line>_<n>"``
and a ``tool_result`` without ``tool_use_id`` answers the oldest unanswered call, both
repaired. Without it (a format that records no call ids) the same happens silently, and a
result whose ``tool_use_id`` names no known call answers the oldest unanswered call (its own
id kept in the part's ``meta["tool_use_id"]``).

Drift always counted: ``null`` tool input (``{}``), a ``tool_result`` whose ``content`` is one
block object (read as a list of it), blocks without their fields or of unknown types
(skipped), a result with no call left to answer (skipped).
"""

from __future__ import annotations

from typing import Any

from ctxengine.importers._calls import Calls, arguments_text
from ctxengine.importers._images import image_from_base64, image_from_url
from ctxengine.importers._parts import opt_str
from ctxengine.importers.report import ImportReport
from ctxengine.model import (
    ImagePart,
    Message,
    Part,
    ReasoningPart,
    TextPart,
    ToolCallPart,
    ToolResultPart,
)

Content = TextPart | ImagePart


class LineBlocks:
    """Converts the content blocks of one file.

    Args:
        report: where drift is counted.
        prefix: first word of generated call ids.
        ids_recorded: whether the format records call ids (see the module docstring).
    """

    def __init__(self, report: ImportReport, prefix: str, *, ids_recorded: bool) -> None:
        self.report = report
        self.calls = Calls(report)
        self.prefix = prefix
        self.ids_recorded = ids_recorded

    def blocks(self, line: int, content: list[Any]) -> list[dict[str, Any]]:
        """The blocks of ``content`` that are objects with a string ``type`` (the others are
        skipped)."""
        for block in content:
            if type(block) is not dict or type(block.get("type")) is not str:
                break
        else:
            return content  # every block is one (the common case): no copy
        found: list[dict[str, Any]] = []
        for block in content:
            if isinstance(block, dict) and isinstance(block.get("type"), str):
                found.append(block)
            else:
                self.report.skip(
                    "malformed block",
                    "expected a content block object with a string `type`",
                    line=line,
                )
        return found

    def assistant(self, line: int, content: list[Any]) -> list[Part]:
        """The parts of an assistant line (empty text blocks dropped)."""
        parts: list[Part] = []
        for n, block in enumerate(self.blocks(line, content)):
            kind = block["type"]
            if kind == "text" and type(text := block.get("text")) is str:
                if text:
                    parts.append(TextPart(text))
            elif kind == "thinking" and isinstance(block.get("thinking"), str):
                sig = opt_str(block, "signature")
                parts.append(ReasoningPart(block["thinking"], signature=sig))
            elif kind == "redacted_thinking" and isinstance(block.get("data"), str):
                parts.append(ReasoningPart("", signature=block["data"], redacted=True))
            elif kind == "tool_use" and isinstance(block.get("name"), str):
                parts.append(self._call(line, n, block))
            else:
                self.report.skip(
                    f"block:{kind}",
                    f"expected a text, thinking or tool_use block with its fields, got {kind!r}",
                    line=line,
                )
        return parts

    def _call(self, line: int, n: int, block: dict[str, Any]) -> ToolCallPart:
        arguments = block.get("input", {})
        if arguments is None:
            self.report.repair(
                "null tool input", "expected an `input` object on a tool_use block", line=line
            )
            arguments = {}
        unique = self.calls.call(
            block.get("id"),
            block["name"],
            f"{self.prefix}_{line}_{n}",
            what="tool_use",
            line=line,
            repair=self.ids_recorded,
        )
        text = arguments_text(arguments, self.report, "input", line=line)
        return ToolCallPart(unique, block["name"], text)

    def user(self, line: int, content: list[Any]) -> list[Message]:
        """A ``tool`` message of the line's results, then a user message of its other
        blocks (each only when non-empty)."""
        results: list[ToolResultPart] = []
        parts: list[Content] = []
        for block in self.blocks(line, content):
            if block["type"] == "tool_result":
                result = self._result(line, block)
                if result is not None:
                    results.append(result)
            else:
                part = self.content(line, block)
                if part is not None:
                    parts.append(part)
        out: list[Message] = []
        if results:
            out.append(Message("tool", tuple(results)))
        if parts:
            out.append(Message("user", tuple(parts)))
        return out

    def _result(self, line: int, block: dict[str, Any]) -> ToolResultPart | None:
        source = block.get("tool_use_id")
        meta: dict[str, Any] = {}
        if self.ids_recorded or self.calls.known(source):
            unique = self.calls.result(source, what="tool_result", line=line)
        else:
            unique = self.calls.result(None, what="tool_result", line=line, repair=False)
            if isinstance(source, str):
                meta["tool_use_id"] = source
        if unique is None:
            return None
        raw = block.get("content")
        if isinstance(raw, dict):
            self.report.repair(
                "structured tool output",
                "expected tool_result `content` to be a string or a list of blocks, got an object",
                line=line,
            )
            raw = [raw]
        parts: list[Content] = []
        if isinstance(raw, str):
            parts.append(TextPart(raw))
        elif isinstance(raw, list):
            for item in self.blocks(line, raw):
                part = self.content(line, item)
                if part is not None:
                    parts.append(part)
        return ToolResultPart(
            unique,
            tuple(parts) or (TextPart(""),),
            is_error=block.get("is_error") is True,
            name=self.calls.name_of(unique),
            meta=meta,
        )

    def content(self, line: int, block: dict[str, Any]) -> Content | None:
        """A text or image block as a part; ``None`` (skipped) for any other."""
        kind = block["type"]
        if kind == "text" and isinstance(block.get("text"), str):
            return TextPart(block["text"])
        if kind == "image":
            source = block.get("source")
            if isinstance(source, dict) and isinstance(source.get("data"), str):
                return image_from_base64(opt_str(source, "media_type"), source["data"])
            if isinstance(source, dict) and isinstance(source.get("url"), str):
                return image_from_url(source["url"])
        self.report.skip(
            f"block:{kind}",
            f"expected a text or image block with its fields, got {kind!r}",
            line=line,
        )
        return None


def assistant_message(parts: list[Part], **kwargs: Any) -> Message:
    """An assistant message of ``parts``; its stop reason is ``"tool_use"`` when it calls a
    tool (unless ``stop_reason`` is given)."""
    stop = kwargs.pop("stop_reason", None)
    if stop is None and ToolCallPart in map(type, parts):
        stop = "tool_use"
    return Message("assistant", tuple(parts), stop_reason=stop, **kwargs)
