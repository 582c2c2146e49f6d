"""Anthropic Messages content blocks (as Claude Code stores them) to message parts.

Tolerated (counted in the :class:`~ctxengine.importers.report.ImportReport`):

* a ``tool_use`` block without an ``id`` gets ``"toolu_gen_<line uuid>_<n>"`` (``n`` counts
  the id-less calls of that line from 0). A ``tool_result`` whose ``tool_use_id`` names no
  call answers such a call (repaired): the first unanswered one of the assistant line its
  record names in ``sourceToolAssistantUUID``, else of its ``parentUuid``, else the oldest
  unanswered one. A ``tool_result`` without ``tool_use_id`` answers the first unanswered
  call found the same way among all calls;
* ``null`` tool input becomes ``{}``; a ``tool_result`` whose ``content`` is one block object
  instead of a list is read as a list of that block;
* a block that is not an object, has no ``type``, lacks a required field or has a type we do
  not read is skipped (an assistant block of an unknown type is kept whole in the message's
  ``meta["other_blocks"]``); ``tool_reference`` blocks (a ToolSearch result naming a tool
  whose schema the API loads) are ignored.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

from ctxengine.importers._build import CallIds
from ctxengine.importers._calls import arguments_text
from ctxengine.importers._images import image_from_base64, image_from_url
from ctxengine.importers._server_blocks import ProviderBlocks, is_provider_block
from ctxengine.importers.report import ImportReport
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

#: Content blocks understood and deliberately not imported.
IGNORED_BLOCKS = frozenset({"tool_reference"})


class Blocks:
    """Converts the blocks of one file, counting what it skips and repairs in ``report``."""

    def __init__(self, path: Path, calls: CallIds, report: ImportReport) -> None:
        self.path = path
        self.calls = calls
        self.report = report
        self.provider = ProviderBlocks()
        self.call_names: dict[str, str] = {}
        #: ``(source id, unique id)`` of the calls of each assistant line, by line uuid.
        self.line_calls: dict[str, list[tuple[str, str]]] = {}
        #: every call, in order: ``(source id, unique id)``.
        self.order: list[tuple[str, str]] = []
        self.answered: set[str] = set()
        #: source ids generated for tool_use blocks without ``id``.
        self.generated: set[str] = set()

    def _string(self, obj: dict[str, Any], key: str, line: int, what: str) -> str | None:
        value = obj.get(key)
        if isinstance(value, str):
            return value
        self.report.skip(f"{what} without {key}", f"expected a string `{key}` on {what}", line=line)
        return None

    def check(self, block: Any, line: int) -> dict[str, Any] | None:
        """``block`` when it is an object with a string ``type``, else ``None`` (skipped)."""
        if isinstance(block, dict) and isinstance(block.get("type"), str):
            result: dict[str, Any] = block
            return result
        self.report.skip(
            "malformed block", "expected a content block object with a string `type`", line=line
        )
        return None

    def content(self, block: dict[str, Any], line: int) -> Content | None:
        """A text, image or document block as a part; ``None`` (counted) for any other."""
        kind = block["type"]
        if kind == "text":
            text = self._string(block, "text", line, "a text block")
            return None if text is None else TextPart(text)
        if kind == "image":
            return self._image(block, line)
        if kind == "document":
            return self._document(block, line)
        if kind in IGNORED_BLOCKS:
            self.report.ignore(f"block:{kind}", line=line)
            return None
        self.report.skip(
            f"block:{kind}", f"expected a text, image or document block, got {kind!r}", line=line
        )
        return None

    def assistant(self, block: dict[str, Any], line: int, line_uuid: str) -> Part | None:
        """An assistant block as a part (tool-call ids made unique); ``None`` for a block
        not read (counted), which the caller keeps in meta."""
        kind = block["type"]
        if kind == "thinking":
            sig = block.get("signature")
            return ReasoningPart(str(block.get("thinking", "")), signature=sig or None)
        if kind == "redacted_thinking":
            return ReasoningPart("", signature=str(block.get("data", "")), redacted=True)
        if kind == "tool_use":
            return self._tool_use(block, line, line_uuid)
        if is_provider_block(kind):
            return self.provider.part(block)
        return self.content(block, line)

    def _tool_use(self, block: dict[str, Any], line: int, line_uuid: str) -> ToolCallPart | None:
        name = self._string(block, "name", line, "a tool_use block")
        if name is None:
            return None
        source_id = block.get("id")
        own = self.line_calls.setdefault(line_uuid, [])
        if not isinstance(source_id, str) or not source_id:
            generated = sum(1 for s, _ in own if s.startswith("toolu_gen_"))
            source_id = f"toolu_gen_{line_uuid}_{generated}"
            self.generated.add(source_id)
            self.report.repair(
                "tool_use without id", "expected a string `id` on a tool_use block", line=line
            )
        raw_input = block.get("input", {})
        if raw_input is None:
            raw_input = {}
            self.report.repair(
                "null tool input", "expected an `input` object on a tool_use block", line=line
            )
        unique = self.calls.call(source_id)
        own.append((source_id, unique))
        self.order.append((source_id, unique))
        self.call_names[unique] = name
        return ToolCallPart(
            unique, name, arguments_text(raw_input, self.report, "input", line=line)
        )

    def tool_result(
        self, block: dict[str, Any], line: int, links: tuple[str | None, ...]
    ) -> ToolResultPart | None:
        """A ``tool_result`` block paired to its call; ``links`` are the line uuids that may
        hold the call when the block has no ``tool_use_id`` (``sourceToolAssistantUUID``,
        then ``parentUuid``). ``None`` (counted) when no call is left to answer."""
        source_id = block.get("tool_use_id")
        orphan = (
            self._pair(links, generated=True)
            if isinstance(source_id, str) and source_id and not self.calls.known(source_id)
            else None
        )
        if orphan is not None:
            self.report.repair(
                "tool_result paired to a tool_use without id",
                f"expected the `tool_use_id` of a tool_result ({source_id!r}) to name a "
                "tool_use block",
                line=line,
            )
            source_id, unique = orphan
            self.calls.answer(source_id, unique)
        elif isinstance(source_id, str) and source_id:
            unique = self.calls.result(source_id)
        else:
            found = self._pair(links)
            if found is None:
                self.report.skip(
                    "tool_result without a call",
                    "expected a string `tool_use_id` on a tool_result block",
                    line=line,
                )
                return None
            self.report.repair(
                "tool_result without tool_use_id",
                "expected a string `tool_use_id` on a tool_result block",
                line=line,
            )
            source_id, unique = found
            self.calls.answer(source_id, unique)
        self.answered.add(unique)
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
            for item in raw:
                checked = self.check(item, line)
                part = self.content(checked, line) if checked is not None else None
                if part is not None:
                    parts.append(part)
        return ToolResultPart(
            unique,
            tuple(parts),
            is_error=bool(block.get("is_error")),
            name=self.call_names.get(unique),
        )

    def _pair(
        self, links: tuple[str | None, ...], *, generated: bool = False
    ) -> tuple[str, str] | None:
        """The first unanswered call of the first linked line that has one, else the oldest
        unanswered call; with ``generated``, only calls whose id was generated (they had
        none)."""
        for link in links:
            for source_id, unique in self.line_calls.get(link or "", ()):
                if unique not in self.answered and (not generated or source_id in self.generated):
                    return source_id, unique
        for source_id, unique in self.order:
            if unique not in self.answered and (not generated or source_id in self.generated):
                return source_id, unique
        return None

    def _image(self, block: dict[str, Any], line: int) -> ImagePart | None:
        source = block.get("source")
        if not isinstance(source, dict):
            self.report.skip(
                "image block without source", "expected an object `source` on an image block",
                line=line,
            )  # fmt: skip
            return None
        if source.get("type") == "url":
            url = self._string(source, "url", line, "an image source")
            return None if url is None else image_from_url(url)
        data = self._string(source, "data", line, "an image source")
        if data is None:
            return None
        media = source.get("media_type")
        return image_from_base64(media if isinstance(media, str) else None, data)

    def _document(self, block: dict[str, Any], line: int) -> DocumentPart | None:
        source = block.get("source")
        if not isinstance(source, dict):
            self.report.skip(
                "document block without source",
                "expected an object `source` on a document block",
                line=line,
            )
            return None
        title = block.get("title") if isinstance(block.get("title"), str) else None
        media = str(source.get("media_type") or "application/octet-stream")
        kind = source.get("type")
        if kind == "text":
            return DocumentPart(media, title=title, text=str(source.get("data", "")))
        if kind == "url":
            return DocumentPart(media, title=title, url=str(source.get("url", "")))
        data = str(source.get("data", ""))
        return DocumentPart(media, title=title, data=data, byte_size=len(data) * 3 // 4)
