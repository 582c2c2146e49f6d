"""Message parts: the content units of a message.

Parts are frozen, slotted values with no identity of their own; identity (ids, parent links)
belongs to entries. Every part has a ``kind`` tag. Fields a source format has that we do not
model go into ``meta`` so an exporter can round-trip them; ``==`` compares ``meta`` like every
field, ``hash`` leaves it out (a dict cannot be hashed).
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any, Literal, TypeAlias

from ctxengine.model._fast_init import fast_eq, fast_init

Meta: TypeAlias = Mapping[str, Any]


def _no_meta() -> dict[str, Any]:
    return {}


@fast_eq
@fast_init
@dataclass(frozen=True, slots=True)
class TextPart:
    """Plain text."""

    text: str
    meta: Meta = field(default_factory=_no_meta, hash=False)
    kind: Literal["text"] = "text"


@fast_eq
@fast_init
@dataclass(frozen=True, slots=True)
class ImagePart:
    """An image, inline (base64 ``data``) or by ``url``.

    Attributes:
        media_type: e.g. ``"image/png"``.
        data: base64 payload without the ``data:`` prefix, or ``None``.
        url: remote URL, or ``None``.
        byte_size: decoded size in bytes when known.
        width / height: pixel size when known (drives the token estimate).
    """

    media_type: str
    data: str | None = None
    url: str | None = None
    byte_size: int | None = None
    width: int | None = None
    height: int | None = None
    meta: Meta = field(default_factory=_no_meta, hash=False)
    kind: Literal["image"] = "image"


@fast_eq
@fast_init
@dataclass(frozen=True, slots=True)
class DocumentPart:
    """A document (PDF, text file …), inline text, base64 ``data`` or by ``url``."""

    media_type: str
    title: str | None = None
    text: str | None = None
    data: str | None = None
    url: str | None = None
    byte_size: int | None = None
    meta: Meta = field(default_factory=_no_meta, hash=False)
    kind: Literal["document"] = "document"


@fast_eq
@fast_init
@dataclass(frozen=True, slots=True)
class ToolCallPart:
    """A tool call made by the assistant.

    Attributes:
        id: the call id, unique within a session (importers disambiguate reused ids).
        name: tool name.
        arguments: the arguments as a JSON string (kept verbatim, even when not valid JSON).
    """

    id: str
    name: str
    arguments: str
    meta: Meta = field(default_factory=_no_meta, hash=False)
    kind: Literal["tool_call"] = "tool_call"


ResultContent: TypeAlias = "TextPart | ImagePart | DocumentPart"


@fast_eq
@fast_init
@dataclass(frozen=True, slots=True)
class ToolResultPart:
    """The result of one tool call.

    Attributes:
        call_id: id of the matching :class:`ToolCallPart`.
        content: text, image and document parts.
        is_error: the tool reported failure.
        name: tool name when the source records it on the result.
    """

    call_id: str
    content: tuple[TextPart | ImagePart | DocumentPart, ...]
    is_error: bool = False
    name: str | None = None
    meta: Meta = field(default_factory=_no_meta, hash=False)
    kind: Literal["tool_result"] = "tool_result"

    @property
    def text(self) -> str:
        """All text content joined by newlines (images and documents excluded)."""
        return "\n".join(p.text for p in self.content if isinstance(p, TextPart))


@fast_eq
@fast_init
@dataclass(frozen=True, slots=True)
class ReasoningPart:
    """Model reasoning (thinking).

    Attributes:
        text: visible reasoning text (may be empty for redacted or encrypted reasoning).
        signature: provider signature (Anthropic ``signature``) or encrypted payload
            (OpenAI ``encrypted_content``); must be echoed byte-exact or dropped whole.
        redacted: Anthropic ``redacted_thinking`` (``signature`` holds its ``data``).
    """

    text: str
    signature: str | None = None
    redacted: bool = False
    meta: Meta = field(default_factory=_no_meta, hash=False)
    kind: Literal["reasoning"] = "reasoning"


@fast_eq
@fast_init
@dataclass(frozen=True, slots=True)
class NativeCompactionPart:
    """An opaque provider-side compaction item (Anthropic compaction block, OpenAI
    encrypted compaction item), passed through unchanged.

    Attributes:
        provider: ``"anthropic"`` or ``"openai"``.
        payload: the provider item as a JSON string.
    """

    provider: str
    payload: str
    meta: Meta = field(default_factory=_no_meta, hash=False)
    kind: Literal["native_compaction"] = "native_compaction"


Part: TypeAlias = (
    TextPart
    | ImagePart
    | DocumentPart
    | ToolCallPart
    | ToolResultPart
    | ReasoningPart
    | NativeCompactionPart
)
PART_KINDS: tuple[str, ...] = (
    "text",
    "image",
    "document",
    "tool_call",
    "tool_result",
    "reasoning",
    "native_compaction",
)
