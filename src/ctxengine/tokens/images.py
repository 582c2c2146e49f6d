"""Image token cost and provider image blocks.

An image costs what the provider charges for its pixels, never its base64 length. We use
Anthropic's published rule, the most expensive of the three big providers for a typical
screenshot: the image is scaled (aspect ratio kept) until its long side is at most 1,568 px
and its area at most 1.15 megapixels, then costs ``width × height / 750`` tokens (at most
about 1,533). OpenAI (512 px tiles, 85 + 170 per tile after fitting 2,048 / 768 px) and Gemini
(258 per 768 px tile) charge less for the same image, so the estimate stays on the safe side.

The pixel size is read from the image header (PNG, GIF, JPEG, WebP) without decoding pixels:
only the first :data:`HEADER_B64_CHARS` base64 characters are decoded.
"""

from __future__ import annotations

import base64
import binascii
import math
import re
import struct
from collections.abc import Mapping
from typing import Any

from ctxengine.model import ImagePart
from ctxengine.tokens.constants import (
    IMAGE_MAX_LONG_SIDE_PX,
    IMAGE_MAX_PIXELS,
    IMAGE_PIXELS_PER_TOKEN,
    MAX_IMAGE_TOKENS,
)

#: Base64 characters decoded to find a pixel size (48 KiB of image bytes; a JPEG's frame
#: header can sit behind an EXIF block).
HEADER_B64_CHARS = 64 * 1024

_DATA_URL = re.compile(r"data:(?P<type>[\w.+-]+/[\w.+-]+)?(?P<params>(?:;[^;,]*)*),", re.ASCII)
#: JPEG start-of-frame markers (SOF0..SOF15 except DHT, JPG and DAC).
_SOF = frozenset(range(0xC0, 0xD0)) - {0xC4, 0xC8, 0xCC}


def estimate_tokens_for_image(
    width: int | None, height: int | None, *, default: int = MAX_IMAGE_TOKENS
) -> int:
    """Tokens of an image of ``width`` × ``height`` pixels (Anthropic rule, see module doc).

    Returns ``default`` (tokens; :data:`MAX_IMAGE_TOKENS` = 1,534 unless given, callers with
    a policy pass ``policy.defaults.DEFAULT_IMAGE_TOKENS``) when either side is unknown or
    not positive. Never raises;
    the result is at least 1. Example: 1920 × 1080 is scaled to 1429 × 804 and costs 1,532.
    """
    if not width or not height or width <= 0 or height <= 0:
        return max(1, default)
    scale = min(
        1.0,
        IMAGE_MAX_LONG_SIDE_PX / max(width, height),
        math.sqrt(IMAGE_MAX_PIXELS / (width * height)),
    )
    w = max(1, int(width * scale))
    h = max(1, int(height * scale))
    return max(1, math.ceil(w * h / IMAGE_PIXELS_PER_TOKEN))


def image_size(head: bytes) -> tuple[int, int] | None:
    """``(width, height)`` in pixels from the start of a PNG, GIF, JPEG or WebP file, or
    ``None`` for other formats and cut-short headers. Never raises."""
    try:
        if head.startswith(b"\x89PNG\r\n\x1a\n") and head[12:16] == b"IHDR":
            w, h = struct.unpack(">II", head[16:24])
            return int(w), int(h)
        if head[:6] in (b"GIF87a", b"GIF89a"):
            w, h = struct.unpack("<HH", head[6:10])
            return int(w), int(h)
        if head.startswith(b"\xff\xd8\xff"):
            return _jpeg_size(head)
        if head[:4] == b"RIFF" and head[8:12] == b"WEBP":
            return _webp_size(head)
    except (struct.error, IndexError):
        return None
    return None


def _jpeg_size(data: bytes) -> tuple[int, int] | None:
    i, n = 2, len(data)
    while i + 4 <= n:
        if data[i] != 0xFF:
            return None
        marker = data[i + 1]
        if marker == 0xFF:
            i += 1
            continue
        if marker in (0xD8, 0x01) or 0xD0 <= marker <= 0xD7:
            i += 2
            continue
        (length,) = struct.unpack(">H", data[i + 2 : i + 4])
        if marker in _SOF:
            h, w = struct.unpack(">HH", data[i + 5 : i + 9])
            return int(w), int(h)
        i += 2 + length
    return None


def _webp_size(data: bytes) -> tuple[int, int] | None:
    chunk = data[12:16]
    if chunk == b"VP8 " and data[23:26] == b"\x9d\x01\x2a":
        w, h = struct.unpack("<HH", data[26:30])
        return int(w & 0x3FFF), int(h & 0x3FFF)
    if chunk == b"VP8L" and data[20:21] == b"\x2f":
        (bits,) = struct.unpack("<I", data[21:25])
        return int((bits & 0x3FFF) + 1), int(((bits >> 14) & 0x3FFF) + 1)
    if chunk == b"VP8X" and len(data) >= 30:
        return int.from_bytes(data[24:27], "little") + 1, int.from_bytes(data[27:30], "little") + 1
    return None


def image_size_from_base64(data: str) -> tuple[int, int] | None:
    """Pixel size from a base64 payload, decoding at most :data:`HEADER_B64_CHARS`
    characters; ``None`` when unknown or not base64. Never raises."""
    head = "".join(data[: HEADER_B64_CHARS + HEADER_B64_CHARS // 64].split())[:HEADER_B64_CHARS]
    head = head[: len(head) - len(head) % 4]
    try:
        raw = base64.b64decode(head)
    except (binascii.Error, ValueError):
        return None
    return image_size(raw)


def _base64_bytes(data: str) -> int:
    n = len(data) - data.count("\n") - data.count("\r") - data.count(" ")
    return max(0, n * 3 // 4 - (len(data.rstrip()) - len(data.rstrip().rstrip("="))))


def _inline(media_type: str | None, data: str, meta: dict[str, Any]) -> ImagePart:
    size = image_size_from_base64(data)
    return ImagePart(
        media_type or "application/octet-stream",
        data=data,
        byte_size=_base64_bytes(data),
        width=size[0] if size else None,
        height=size[1] if size else None,
        meta=meta,
    )


def _from_url(url: str, meta: dict[str, Any]) -> ImagePart:
    m = _DATA_URL.match(url)
    if m is not None and ";base64" in m.group("params").lower():
        return _inline(m.group("type"), url[m.end() :], meta)
    return ImagePart("image/*", url=url, meta=meta)


def image_part_from_provider_block(block: Mapping[str, Any]) -> ImagePart:
    """Convert one provider image block to an :class:`ImagePart` with pixel size when the
    payload is inline.

    Accepted shapes:

    - Anthropic ``{"type": "image", "source": {"type": "base64", "media_type", "data"}}``
      (or ``source.type`` ``"url"`` / ``"file"``);
    - OpenAI Chat Completions ``{"type": "image_url", "image_url": {"url", "detail"}}``
      (``url`` a ``data:`` URL or a remote URL; ``image_url`` may also be a plain string);
    - OpenAI Responses ``{"type": "input_image", "image_url": "...", "detail"}`` or
      ``{"type": "input_image", "file_id": "..."}``;
    - Gemini ``{"inline_data": {"mime_type", "data"}}`` (camelCase too).

    ``detail`` and ``file_id`` go to ``meta``.

    Raises:
        ValueError: the block is none of these shapes.
    """
    kind = block.get("type")
    if kind == "image" and isinstance(block.get("source"), Mapping):
        return _anthropic(block["source"])
    if kind == "image_url":
        inner = block.get("image_url")
        if isinstance(inner, str):
            return _from_url(inner, {})
        if isinstance(inner, Mapping) and isinstance(inner.get("url"), str):
            meta = {"detail": inner["detail"]} if "detail" in inner else {}
            return _from_url(inner["url"], meta)
    if kind == "input_image":
        meta = {"detail": block["detail"]} if "detail" in block else {}
        if isinstance(block.get("image_url"), str):
            return _from_url(block["image_url"], meta)
        if isinstance(block.get("file_id"), str):
            return ImagePart("image/*", meta={**meta, "file_id": block["file_id"]})
    inline = block.get("inline_data", block.get("inlineData"))
    if isinstance(inline, Mapping) and isinstance(inline.get("data"), str):
        media = inline.get("mime_type", inline.get("mimeType"))
        return _inline(media if isinstance(media, str) else None, inline["data"], {})
    raise ValueError(f"not a provider image block: type={kind!r}, keys={sorted(block)}")


def _anthropic(source: Mapping[str, Any]) -> ImagePart:
    kind = source.get("type")
    if kind == "base64" and isinstance(source.get("data"), str):
        media = source.get("media_type")
        return _inline(media if isinstance(media, str) else None, source["data"], {})
    if kind == "url" and isinstance(source.get("url"), str):
        return _from_url(source["url"], {})
    if kind == "file" and isinstance(source.get("file_id"), str):
        return ImagePart("image/*", meta={"file_id": source["file_id"]})
    raise ValueError(f"not an Anthropic image source: type={kind!r}")
