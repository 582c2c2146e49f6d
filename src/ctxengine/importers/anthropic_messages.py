"""Anthropic Messages JSON: ``{"system": str | [blocks], "messages": [...], "tools": …}``
(a request body, or a saved conversation).

Mapping: ``system`` → one system message; ``text`` → text; ``image``/``document`` (base64,
URL or plain-text source) → image (byte and pixel size) / document; ``thinking`` → reasoning
with its signature kept byte-exact; ``redacted_thinking`` → redacted reasoning (``data`` as
signature); ``tool_use`` → tool call (input serialised as JSON, reused ids made unique);
``compaction`` → an opaque native-compaction part; provider-side tool blocks of an assistant
message (``server_tool_use``, ``mcp_tool_use``, ``web_search_tool_result`` and every other
``*_tool_result``, ``container_upload``) → one text part each stating the call or its result,
the block kept whole in the part's ``meta["provider_block"]`` (they are answered on the
provider's side, so they never become tool calls; see
:mod:`ctxengine.importers._server_blocks`). A user message's ``tool_result`` blocks
become one ``tool`` message; the other blocks of that user message (text the user typed
alongside) follow as a separate user message. Optional ``usage``, ``model`` and
``stop_reason`` on assistant messages are kept. Block fields we do not model
(``cache_control``, ``citations`` …) go to the part's meta. The session id is the file's
``session_id`` when present, else a hash of the file bytes.
"""

from __future__ import annotations

from collections.abc import Mapping
from pathlib import Path
from typing import Any

from ctxengine.importers._anthropic import STOP_REASONS, usage_of
from ctxengine.importers._build import CallIds, LogBuilder, load_json, read_file
from ctxengine.importers._calls import arguments_text
from ctxengine.importers._chat import CHAT_ROLES, ChatReader, title_from
from ctxengine.importers._images import image_from_base64, image_from_url
from ctxengine.importers._peek import peek
from ctxengine.importers._server_blocks import ProviderBlocks, is_provider_block
from ctxengine.importers._text import bytes_digest
from ctxengine.importers.base import ImportedSession, start_report
from ctxengine.importers.report import ImportReport
from ctxengine.model import (
    DocumentPart,
    ImagePart,
    Message,
    NativeCompactionPart,
    Part,
    ReasoningPart,
    TextPart,
    ToolCallPart,
    ToolResultPart,
)
from ctxengine.model.codec import canonical_json

#: Block types found only in Anthropic content (used by the sniffer).
_ANTHROPIC_BLOCKS = frozenset(
    {
        "tool_use",
        "tool_result",
        "thinking",
        "redacted_thinking",
        "server_tool_use",
        "mcp_tool_use",
        "web_search_tool_result",
        "mcp_tool_result",
    }
)
#: The roles of Anthropic messages.
_ROLES: tuple[str, ...] = ("user", "assistant")
#: Top-level fields kept in the session meta.
_TOP_KEYS = ("model", "max_tokens", "tools", "tool_choice", "thinking")

Content = TextPart | ImagePart | DocumentPart


def _anthropic_blocks(m: dict[str, Any]) -> bool:
    content = m.get("content")
    if not isinstance(content, list):
        return False
    for b in content:
        kind = b.get("type") if isinstance(b, dict) else None
        if kind in _ANTHROPIC_BLOCKS or (kind in ("image", "document") and "source" in b):
            return True
    return False


class _Blocks(ChatReader):
    """Converts Anthropic content blocks; what it skips and repairs is counted with its JSON
    path, and errors name a JSON path."""

    def __init__(self, path: Path, calls: CallIds, report: ImportReport) -> None:
        super().__init__(path, calls, report)
        self.provider = ProviderBlocks()

    def block_content(self, value: Any, jp: str) -> list[Content]:
        """``content`` of a user message or a ``tool_result``: a string or text/image/
        document blocks."""
        if isinstance(value, str):
            return [TextPart(value)] if value else []
        if value is None:
            return []
        if isinstance(value, dict) and "type" in value:
            self.report.repair(
                "structured content",
                "expected `content` to be a string or a list of blocks, got one block object",
                json_path=jp,
            )
            value = [value]
        if not isinstance(value, list):
            raise self.fail(jp, "expected `content` to be a string or a list of blocks")
        out: list[Content] = []
        for i, block in enumerate(value):
            part = self.block(block, f"{jp}[{i}]")
            if part is None:
                continue
            if not isinstance(part, TextPart | ImagePart | DocumentPart):
                raise self.fail(f"{jp}[{i}].type", "expected a text, image or document block")
            out.append(part)
        return out

    def block(self, block: Any, jp: str) -> Part | None:
        """One content block as a part (``tool_result`` is handled by the caller); ``None``
        (skipped) for a block that is not an object or has a type we do not read."""
        if not isinstance(block, dict) or not isinstance(block.get("type"), str):
            self.skip("malformed block", jp, "expected a content block object with a string `type`")
            return None
        kind = block["type"]
        if kind == "text":
            return TextPart(self.string(block, "text", jp), meta=_rest(block, "text"))
        if kind == "image":
            return self._image(block, jp)
        if kind == "document":
            return self._document(block, jp)
        if kind == "thinking":
            sig = block.get("signature")
            text = self.string(block, "thinking", jp)
            return ReasoningPart(text, signature=sig if isinstance(sig, str) else None)
        if kind == "redacted_thinking":
            return ReasoningPart("", signature=self.string(block, "data", jp), redacted=True)
        if kind == "tool_use":
            name = self.string(block, "name", jp)
            call_id = self.new_call(block.get("id"), f"{jp}.id", "tool_use block")
            meta = _rest(block, "id", "name", "input")
            args = self.arguments(block.get("input", {}), f"{jp}.input")
            text = arguments_text(args, self.report, "input", json_path=f"{jp}.input")
            return ToolCallPart(call_id, name, text, meta)
        if kind == "compaction":
            return NativeCompactionPart("anthropic", canonical_json(block).decode())
        if is_provider_block(kind):
            raise self.fail(f"{jp}.type", f"expected {kind} only in assistant messages")
        self.skip(
            f"block:{kind}",
            f"{jp}.type",
            "expected one of text, image, document, thinking, redacted_thinking, tool_use, "
            "tool_result, compaction or a provider-side tool block (server_tool_use, "
            f"mcp_tool_use, *_tool_result, container_upload); got {kind!r}",
        )
        return None

    def _source(self, block: dict[str, Any], jp: str) -> dict[str, Any]:
        source = block.get("source")
        if not isinstance(source, dict) or not isinstance(source.get("type"), str):
            raise self.fail(f"{jp}.source", "expected a source object with a string `type`")
        result: dict[str, Any] = source
        return result

    def _image(self, block: dict[str, Any], jp: str) -> ImagePart:
        src = self._source(block, jp)
        meta = _rest(block, "source")
        if src["type"] == "base64":
            media = src.get("media_type")
            data = self.string(src, "data", f"{jp}.source")
            return image_from_base64(media if isinstance(media, str) else None, data, meta)
        if src["type"] == "url":
            return image_from_url(self.string(src, "url", f"{jp}.source"), meta)
        raise self.fail(f"{jp}.source.type", "expected an image source of type base64 or url")

    def _document(self, block: dict[str, Any], jp: str) -> DocumentPart:
        src = self._source(block, jp)
        title = block.get("title") if isinstance(block.get("title"), str) else None
        meta = _rest(block, "source", "title")
        media = src.get("media_type") if isinstance(src.get("media_type"), str) else None
        sjp = f"{jp}.source"
        if src["type"] == "base64":
            data = self.string(src, "data", sjp)
            kind = media or "application/pdf"
            return DocumentPart(kind, title, data=data, byte_size=len(data) * 3 // 4, meta=meta)
        if src["type"] == "text":
            text = self.string(src, "data", sjp)
            size = len(text.encode())
            return DocumentPart(media or "text/plain", title, text=text, byte_size=size, meta=meta)
        if src["type"] == "url":
            url = self.string(src, "url", sjp)
            return DocumentPart(media or "application/pdf", title, url=url, meta=meta)
        raise self.fail(f"{sjp}.type", "expected a document source of type base64, text or url")

    def tool_result(self, block: dict[str, Any], jp: str) -> ToolResultPart | None:
        """A ``tool_result`` block, paired with its (possibly renamed) call; ``None``
        (skipped) when it names none and no call is left to answer."""
        call_id = self.answer(block.get("tool_use_id"), f"{jp}.tool_use_id", "tool_result block")
        if call_id is None:
            return None
        content = tuple(self.block_content(block.get("content"), f"{jp}.content"))
        meta = _rest(block, "tool_use_id", "content", "is_error")
        return ToolResultPart(
            call_id, content or (TextPart(""),), is_error=block.get("is_error") is True, meta=meta
        )


def _rest(block: Mapping[str, Any], *modeled: str) -> dict[str, Any]:
    return {k: v for k, v in block.items() if k != "type" and k not in modeled}


class AnthropicMessagesImporter:
    """Importer for Anthropic Messages JSON (see the module docstring)."""

    name = "anthropic-messages"
    label = "an Anthropic Messages conversation"

    def sniff(self, path: Path, head: bytes) -> bool:
        """True for an object with ``messages`` whose roles are ``user``/``assistant``
        and that has a top-level ``system`` or an Anthropic-only block (``tool_use``,
        ``tool_result``, ``thinking``, an image or document with a ``source``). A minority
        of leading messages that are not objects or have no or an unknown role (skipped on
        import) is tolerated; one with another chat-completions role (``system``, ``tool``
        …) is not, as Anthropic has none."""
        p = peek(head)
        if p.kind != "object" or "messages" not in p.keys:
            return False
        items = p.items("messages")
        roles = [m.get("role") if isinstance(m, dict) else None for m in items]
        if any(r in CHAT_ROLES and r not in _ROLES for r in roles):
            return False
        records = [m for m, r in zip(items, roles, strict=True) if r in _ROLES]
        if items and len(records) * 2 <= len(items):
            return False
        return "system" in p.keys or any(_anthropic_blocks(m) for m in records)

    def read(self, path: Path, report: ImportReport | None = None) -> ImportedSession:
        """Import the whole file; messages and blocks not understood are skipped and drift
        repaired into ``report``.

        Raises:
            TranscriptError: not an object with a ``messages`` list, or a malformed block
                field (with its JSON path, e.g. ``$.messages[2].content[0].source``); in
                strict mode the first skip or repair.
        """
        report = start_report(path, report)
        raw = read_file(path)  # parsed and hashed from the same bytes
        data = load_json(path, report, raw)
        blocks = _Blocks(path, CallIds(), report)
        if not isinstance(data, dict):
            raise blocks.fail("$", "expected an object with `messages`")
        messages = data.get("messages")
        if not isinstance(messages, list):
            raise blocks.fail("$.messages", "expected a list of messages")
        sid = data.get("session_id")
        builder = LogBuilder(sid if isinstance(sid, str) and sid else bytes_digest(raw))
        out: list[Message] = []
        if "system" in data:
            system = blocks.block_content(data["system"], "$.system")
            out.append(Message("system", tuple(system)))
        for i, m in enumerate(messages):
            out.extend(_message(blocks, m, f"$.messages[{i}]"))
        for msg in out:
            builder.add(msg)
        return ImportedSession(
            session_id=builder.session_id,
            format=self.name,
            source_path=str(path),
            entries=tuple(builder.entries),
            title=title_from(out),
            meta={k: data[k] for k in _TOP_KEYS if k in data},
            report=report,
        )


def _message(blocks: _Blocks, m: Any, jp: str) -> list[Message]:
    """One source message as one message, or (user with tool results) a tool message
    followed by a user message with the remaining blocks."""
    if not isinstance(m, dict):
        blocks.skip("malformed message", jp, "expected a message object")
        return []
    role = m.get("role")
    if role not in ("user", "assistant"):
        kind = f"message role {role}" if isinstance(role, str) else "message without role"
        blocks.skip(kind, f"{jp}.role", 'expected "user" or "assistant"')
        return []
    meta = {k: v for k, v in m.items() if k not in ("role", "content", "usage", "stop_reason")}
    content = m.get("content")
    if isinstance(content, str) or content is None:
        parts: list[Part] = list(blocks.block_content(content, f"{jp}.content"))
        results: list[ToolResultPart] = []
    elif isinstance(content, list):
        parts, results = [], []
        for i, block in enumerate(content):
            bjp = f"{jp}.content[{i}]"
            if isinstance(block, dict) and block.get("type") == "tool_result":
                if role != "user":
                    raise blocks.fail(f"{bjp}.type", "expected tool_result only in user messages")
                result = blocks.tool_result(block, bjp)
                if result is not None:
                    results.append(result)
            elif (
                role == "assistant"
                and isinstance(block, dict)
                and is_provider_block(block.get("type"))
            ):
                parts.append(blocks.provider.part(block))
            else:
                part = blocks.block(block, bjp)
                if part is not None:
                    parts.append(part)
    else:
        raise blocks.fail(f"{jp}.content", "expected `content` to be a string or a list of blocks")
    if role == "user":
        out = [Message("tool", tuple(results), meta=meta)] if results else []
        if parts or not results:
            out.append(Message("user", tuple(parts), meta=meta))
        return out
    stop = m.get("stop_reason")
    model = meta.pop("model", None)
    return [
        Message(
            "assistant",
            tuple(parts),
            usage=usage_of(m.get("usage")),
            model=model if isinstance(model, str) else None,
            stop_reason=STOP_REASONS.get(stop, stop) if isinstance(stop, str) else None,
            meta=meta,
        )
    ]


IMPORTER = AnthropicMessagesImporter()
