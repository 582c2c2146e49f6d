"""Gemini API content (``Part`` objects) and Gemini CLI message records to our parts and
messages; shared by the recording, session-JSON and chat-share readers of
:mod:`ctxengine.importers.gemini_cli`.

Parts (``@google/genai`` ``Part``): ``text`` → text (``thought: true`` → reasoning),
``inlineData`` → an image (``image/*``) or a document, ``fileData`` → the same by URI,
``functionCall`` → a tool call, ``functionResponse`` → a tool result. A ``PartListUnion`` (a
string, one part or a list of parts and strings) is read as a list of parts.

A function response's ``response`` becomes the result text: its ``output`` (or ``error``,
then ``is_error``) when that is all it holds, otherwise the whole object as compact JSON (key
order kept). An ``output`` that is not a string (drift) is repaired into its JSON text.
``functionResponse.parts`` (multimodal responses) become image or document parts.

Every ``where`` argument is the location handed to the report: ``{"line": n}`` for line
formats, ``{"json_path": "…"}`` for documents.
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from typing import Any

from ctxengine.importers._build import CallIds
from ctxengine.importers._calls import arguments_text, json_text
from ctxengine.importers._images import image_from_base64, image_from_url
from ctxengine.importers._parts import SYNTHETIC, opt_int, opt_str
from ctxengine.importers.report import ImportReport
from ctxengine.model import (
    DocumentPart,
    ImagePart,
    Part,
    ReasoningPart,
    TextPart,
    ToolCallPart,
    ToolResultPart,
    Usage,
)

Where = Mapping[str, Any]
Content = TextPart | ImagePart | DocumentPart

#: The environment context Gemini CLI (and ports of it) sends as the first user turn:
#: "This is the Gemini CLI. We are setting up the context for our chat." (older versions), or
#: a ``<session_context>`` block (newer ones).
_SETUP = re.compile(
    r"\A\s*(?:This is the [^\n.]+\. We are setting up the context|<session_context>)"
)
#: ``meta["synthetic"]`` of that message.
SETUP_CONTEXT = "setup_context"
#: Tool-call states after which Gemini CLI records no result (the call did not finish).
PENDING_STATES = frozenset({"scheduled", "validating", "awaiting_approval", "executing"})
#: A function response whose only keys are these is read as its output (and error).
_RESPONSE_KEYS = frozenset({"output", "error"})


def is_setup(text: str) -> bool:
    """True for the environment context Gemini CLI sends before the first request."""
    return _SETUP.match(text) is not None


def part_list(value: Any) -> list[Any] | None:
    """A ``PartListUnion`` as a list (strings become ``{"text": …}``); ``None`` when it is
    none of a string, a part object, a list or null."""
    if value is None:
        return []
    if isinstance(value, str):
        return [{"text": value}] if value else []
    if isinstance(value, dict):
        return [value]
    if isinstance(value, list):
        return [{"text": v} if isinstance(v, str) else v for v in value]
    return None


def usage_of(tokens: Any) -> Usage | None:
    """Gemini CLI ``tokens`` (``input`` = prompt tokens with cached ones, ``cached``,
    ``output`` without thoughts, ``thoughts``, ``tool`` = tool-use prompt tokens) as
    :class:`Usage`: input = input − cached + tool, output = output + thoughts."""
    if not isinstance(tokens, dict):
        return None
    cached = opt_int(tokens, "cached")
    usage = Usage(
        input_tokens=max(0, opt_int(tokens, "input") - cached) + opt_int(tokens, "tool"),
        output_tokens=opt_int(tokens, "output") + opt_int(tokens, "thoughts"),
        cache_read_tokens=cached,
    )
    return None if usage.is_zero else usage


class GeminiParts:
    """Converts Gemini parts, counting what it skips and repairs in ``report``."""

    def __init__(self, report: ImportReport, calls: CallIds | None = None) -> None:
        self.report = report
        self.calls = calls or CallIds()
        self.generated = 0

    def content(self, part: Any, where: Where) -> Content | ReasoningPart | None:
        """A text, inline-data or file-data part; ``None`` (skipped) for anything else."""
        if not isinstance(part, dict):
            self.report.skip("malformed part", "expected a part object", **where)
            return None
        text = part.get("text")
        if isinstance(text, str):
            if part.get("thought") is True:
                return ReasoningPart(text, meta={"provider": "gemini"})
            return TextPart(text)
        media = _media(part)
        if media is not None:
            return media
        kind = next(iter(part), "empty")
        self.report.skip(
            f"part:{kind}",
            f"expected a text, inlineData or fileData part, got {kind!r}",
            **where,
        )
        return None

    def call(
        self, name: Any, args: Any, source_id: Any, where: Where, meta: dict[str, Any]
    ) -> ToolCallPart | None:
        """A tool call; a missing id is generated (``call_gen_<n>``) and repaired, ``null``
        arguments repaired to ``{}``; ``None`` (skipped) without a name."""
        if not isinstance(name, str) or not name:
            self.report.skip(
                "tool call without name", "expected a string `name` on a tool call", **where
            )
            return None
        if args is None:
            self.report.repair(
                "null arguments", "expected tool-call `args` (an object), got null", **where
            )
            args = {}
        if not isinstance(source_id, str) or not source_id:
            self.report.repair(
                "tool call without id", "expected a string `id` on a tool call", **where
            )
            self.generated += 1
            source_id = f"call_gen_{self.generated}"
        if isinstance(args, str):
            text = arguments_text(args, self.report, "args", **where)
        else:  # what arguments_text gives for a value that is not text, without reading
            # ``where`` (a Markdown share counts a location's line only when it is read)
            text = json_text(args)
        return ToolCallPart(self.calls.call(source_id), name, text, meta=meta)

    def response(self, fr: dict[str, Any], where: Where) -> tuple[list[Content], bool]:
        """The content of a ``functionResponse`` and whether it reports an error."""
        resp = fr.get("response")
        error = False
        if isinstance(resp, dict) and resp and resp.keys() <= _RESPONSE_KEYS:
            texts: list[str] = []
            out = resp.get("output")
            if isinstance(out, str):
                texts.append(out)
            elif out is not None:
                self.report.repair(
                    "structured tool output",
                    f"expected a string `output` in a function response, got {type(out).__name__}",
                    **where,
                )
                texts.append(json_text(out))
            err = resp.get("error")
            if err is not None:
                error = True
                texts.append(err if isinstance(err, str) else json_text(err))
            text = "\n".join(texts)
        elif isinstance(resp, str):
            text = resp
        elif resp is None:
            text = ""
        else:
            text = json_text(resp)
        content: list[Content] = [TextPart(text)]
        extra = fr.get("parts")
        if isinstance(extra, list):
            for item in extra:
                media = _media(item) if isinstance(item, dict) else None
                if media is not None:
                    content.append(media)
        return content, error

    def result_parts(
        self, result: Any, where: Where
    ) -> tuple[list[Content], bool, str | None] | None:
        """A tool call's recorded ``result`` (a ``PartListUnion``): its content, whether it
        reports an error, and the function-response id; ``None`` when there is none."""
        items = part_list(result)
        if items is None:
            self.report.skip(
                "malformed tool result",
                "expected a tool call `result` that is a string, a part or a list of parts",
                **where,
            )
            return None
        if not items:
            return None
        content: list[Content] = []
        error = False
        response_id: str | None = None
        for item in items:
            fr = item.get("functionResponse") if isinstance(item, dict) else None
            if isinstance(fr, dict):
                found, failed = self.response(fr, where)
                content.extend(found)
                error = error or failed
                response_id = response_id or opt_str(fr, "id")
                continue
            part = self.content(item, where)
            if isinstance(part, ReasoningPart):
                content.append(TextPart(part.text))
            elif part is not None:
                content.append(part)
        return content, error, response_id


def _media(part: dict[str, Any]) -> ImagePart | DocumentPart | None:
    """An ``inlineData`` / ``fileData`` part as an image or document part."""
    inline = part.get("inlineData")
    if isinstance(inline, dict) and isinstance(inline.get("data"), str):
        mime = opt_str(inline, "mimeType") or "application/octet-stream"
        if mime.startswith("image/"):
            return image_from_base64(mime, inline["data"])
        data = inline["data"]
        return DocumentPart(mime, data=data, byte_size=len(data) * 3 // 4)
    ref = part.get("fileData")
    if isinstance(ref, dict) and isinstance(ref.get("fileUri"), str):
        mime = opt_str(ref, "mimeType") or "application/octet-stream"
        if mime.startswith("image/"):
            return image_from_url(ref["fileUri"], {"mime_type": mime})
        return DocumentPart(mime, url=ref["fileUri"])
    return None


def user_meta(parts: list[Part]) -> dict[str, Any]:
    """``{"synthetic": "setup_context"}`` for Gemini CLI's environment context, else ``{}``."""
    first = next((p.text for p in parts if isinstance(p, TextPart)), "")
    return {SYNTHETIC: SETUP_CONTEXT} if is_setup(first) else {}


def tool_result(
    call: ToolCallPart, content: list[Content], error: bool, meta: dict[str, Any]
) -> ToolResultPart:
    """The result of ``call`` (an empty text when ``content`` is empty)."""
    return ToolResultPart(
        call.id, tuple(content) or (TextPart(""),), is_error=error, name=call.name, meta=meta
    )
