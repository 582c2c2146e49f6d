"""Kimi (kosong) message content to parts, shared by the two Kimi readers.

kosong content parts: ``text`` (``text``), ``think`` (``think``, with ``encrypted`` as its
signature), ``image_url`` (``image_url.url``) and ``audio_url`` (not modelled: skipped). A
content that is a string is one text part.
"""

from __future__ import annotations

from typing import Any

from ctxengine.importers._images import image_from_url
from ctxengine.importers._parts import opt_str
from ctxengine.importers.report import ImportReport
from ctxengine.model import ImagePart, ReasoningPart, TextPart

#: The wrapper kimi-cli's ``system()`` puts around text it writes into a message.
SYSTEM_OPEN = "<system>"
SYSTEM_CLOSE = "</system>"

Content = TextPart | ImagePart | ReasoningPart


def content_parts(content: Any, report: ImportReport, line: int) -> list[Content] | None:
    """The parts of a kosong ``content`` (string or list of parts); ``None`` (skipped) when it
    is neither. Parts of an unknown type are skipped."""
    if isinstance(content, str):
        return [TextPart(content)] if content else []
    if not isinstance(content, list):
        report.skip(
            "message without content",
            "expected `content` to be a string or a list of parts",
            line=line,
        )
        return None
    parts: list[Content] = []
    for item in content:
        part = _part(item, report, line)
        if part is not None:
            parts.append(part)
    return parts


def _part(item: Any, report: ImportReport, line: int) -> Content | None:
    kind = item.get("type") if isinstance(item, dict) else None
    if kind == "text" and isinstance(item.get("text"), str):
        return TextPart(item["text"])
    if kind == "think" and isinstance(item.get("think"), str):
        signature = opt_str(item, "encrypted")
        return ReasoningPart(item["think"], signature=signature, meta={"provider": "kimi"})
    if kind == "image_url":
        ref = item.get("image_url")
        url = ref.get("url") if isinstance(ref, dict) else ref
        if isinstance(url, str):
            return image_from_url(url)
    report.skip(
        f"part:{kind}" if isinstance(kind, str) else "malformed part",
        f"expected a text, think or image_url part with its fields, got {kind!r}",
        line=line,
    )
    return None


def unwrap_system(text: str) -> str | None:
    """The text inside a ``<system>…</system>`` wrapper, or ``None`` when ``text`` is not
    wrapped."""
    stripped = text.strip()
    if stripped.startswith(SYSTEM_OPEN) and stripped.endswith(SYSTEM_CLOSE):
        return stripped[len(SYSTEM_OPEN) : -len(SYSTEM_CLOSE)]
    return None
