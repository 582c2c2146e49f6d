"""Image parts for importers: pixel size read from PNG, JPEG, GIF and WebP headers.

Only the first bytes of the base64 payload are decoded and only the header is read; no pixels
are decoded. The pixel size fills :attr:`ctxengine.model.ImagePart.width` / ``height`` so the
token estimate of an image does not fall back to a fixed cost.
"""

from __future__ import annotations

import base64
import binascii
import struct
from collections.abc import Mapping
from typing import Any

from ctxengine.model import ImagePart

#: Base64 characters decoded to find a header (48 KiB of image bytes; JPEG frame headers can
#: sit behind EXIF and ICC blocks).
HEAD_CHARS = 64 * 1024

#: JPEG start-of-frame markers (SOF0..SOF15 except DHT, JPG and DAC).
_JPEG_SOF = frozenset(range(0xC0, 0xD0)) - {0xC4, 0xC8, 0xCC}


def sniff_media_type(head: bytes) -> str | None:
    """The image media type from magic bytes (``"image/png"`` …), or ``None``."""
    if head.startswith(b"\x89PNG\r\n\x1a\n"):
        return "image/png"
    if head.startswith(b"\xff\xd8"):
        return "image/jpeg"
    if head.startswith((b"GIF87a", b"GIF89a")):
        return "image/gif"
    if head[:4] == b"RIFF" and head[8:12] == b"WEBP":
        return "image/webp"
    return None


def pixel_size(head: bytes) -> tuple[int, int] | None:
    """``(width, height)`` in pixels read from an image header, or ``None`` when the format
    is not PNG/JPEG/GIF/WebP or the header is cut short."""
    kind = sniff_media_type(head)
    if kind == "image/png":
        return _png(head)
    if kind == "image/jpeg":
        return _jpeg(head)
    if kind == "image/gif":
        return _gif(head)
    if kind == "image/webp":
        return _webp(head)
    return None


def decoded_size(data: str) -> int:
    """Decoded byte size of a base64 string (padding and line breaks accounted for)."""
    n = len(data) - data.count("\n") - data.count("\r")
    pad = 2 if data.rstrip().endswith("==") else 1 if data.rstrip().endswith("=") else 0
    return max(0, n * 3 // 4 - pad)


def head_bytes(data: str) -> bytes:
    """The first bytes of a base64 payload (up to :data:`HEAD_CHARS` characters decoded);
    ``b""`` when it is not valid base64."""
    chunk = data[:HEAD_CHARS].replace("\n", "").replace("\r", "")
    chunk = chunk[: len(chunk) - len(chunk) % 4]
    try:
        return base64.b64decode(chunk, validate=False)
    except (binascii.Error, ValueError):
        return b""


def image_from_base64(
    media_type: str | None, data: str, meta: Mapping[str, Any] | None = None
) -> ImagePart:
    """An inline :class:`ImagePart` with byte size and, when the header allows, pixel size.

    ``media_type`` falls back to the type sniffed from the header, then ``"image/png"``.
    """
    head = head_bytes(data)
    size = pixel_size(head)
    return ImagePart(
        media_type=media_type or sniff_media_type(head) or "image/png",
        data=data,
        byte_size=decoded_size(data),
        width=size[0] if size else None,
        height=size[1] if size else None,
        meta=dict(meta) if meta else {},
    )


def image_from_url(url: str, meta: Mapping[str, Any] | None = None) -> ImagePart:
    """An :class:`ImagePart` from a URL; a ``data:<type>;base64,<payload>`` URL becomes an
    inline image (:func:`image_from_base64`), any other URL is kept by reference."""
    if url.startswith("data:") and ";base64," in url[:200]:
        header, _, payload = url.partition(",")
        media_type = header[5:].split(";", 1)[0] or None
        return image_from_base64(media_type, payload, meta)
    return ImagePart(media_type="image/*", url=url, meta=dict(meta) if meta else {})


def _png(b: bytes) -> tuple[int, int] | None:
    if len(b) < 24 or b[12:16] != b"IHDR":
        return None
    w, h = struct.unpack(">II", b[16:24])
    return (w, h) if w and h else None


def _gif(b: bytes) -> tuple[int, int] | None:
    if len(b) < 10:
        return None
    w, h = struct.unpack("<HH", b[6:10])
    return (w, h) if w and h else None


def _jpeg(b: bytes) -> tuple[int, int] | None:
    i = 2
    while i + 4 <= len(b):
        if b[i] != 0xFF:
            i += 1
            continue
        marker = b[i + 1]
        if marker == 0xFF:
            i += 1
            continue
        if marker in (0xD8, 0x01) or 0xD0 <= marker <= 0xD7:
            i += 2
            continue
        (length,) = struct.unpack(">H", b[i + 2 : i + 4])
        if marker in _JPEG_SOF:
            if i + 9 > len(b):
                return None
            h, w = struct.unpack(">HH", b[i + 5 : i + 9])
            return (w, h) if w and h else None
        i += 2 + length
    return None


def _webp(b: bytes) -> tuple[int, int] | None:
    chunk = b[12:16]
    if chunk == b"VP8 " and len(b) >= 30:
        w, h = struct.unpack("<HH", b[26:30])
        return (w & 0x3FFF, h & 0x3FFF)
    if chunk == b"VP8L" and len(b) >= 25:
        bits = int.from_bytes(b[21:25], "little")
        return ((bits & 0x3FFF) + 1, ((bits >> 14) & 0x3FFF) + 1)
    if chunk == b"VP8X" and len(b) >= 30:
        w = int.from_bytes(b[24:27], "little") + 1
        h = int.from_bytes(b[27:30], "little") + 1
        return (w, h)
    return None
