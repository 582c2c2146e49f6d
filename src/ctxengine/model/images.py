"""Image headers: media type and pixel size read from PNG, JPEG, GIF and WebP bytes.

Pure value-level helpers shared by importers (to fill :attr:`ImagePart.width` / ``height``)
and token estimates (to price an image by its pixels). Only the header is read, no pixels are
decoded; from a base64 payload at most :data:`HEAD_CHARS` characters are decoded. Nothing here
raises on malformed input: unknown formats and cut-short headers give ``None``.
"""

from __future__ import annotations

import base64
import binascii
import struct

#: Base64 characters decoded to find a header (48 KiB of image bytes; a JPEG's frame header
#: can sit behind EXIF and ICC blocks).
HEAD_CHARS = 64 * 1024

#: JPEG start-of-frame markers (SOF0..SOF15 except DHT, JPG and DAC).
_JPEG_SOF = frozenset(range(0xC0, 0xD0)) - {0xC4, 0xC8, 0xCC}


def sniff_media_type(head: bytes) -> str | None:
    """The image media type from magic bytes (``"image/png"``, ``"image/jpeg"``,
    ``"image/gif"``, ``"image/webp"``), or ``None`` for anything else."""
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
    """``(width, height)`` in pixels read from the start of a PNG, JPEG, GIF or WebP file, or
    ``None`` for other formats, cut-short headers and zero sides. Never raises."""
    kind = sniff_media_type(head)
    try:
        if kind == "image/png":
            return _png(head)
        if kind == "image/jpeg":
            return _jpeg(head)
        if kind == "image/gif":
            return _gif(head)
        if kind == "image/webp":
            return _webp(head)
    except (struct.error, IndexError):
        return None
    return None


def head_bytes(data: str) -> bytes:
    """The first bytes of a base64 payload: up to :data:`HEAD_CHARS` characters (whitespace
    ignored) decoded; ``b""`` when that is not valid base64."""
    chunk = "".join(data[: HEAD_CHARS + HEAD_CHARS // 64].split())[:HEAD_CHARS]
    chunk = chunk[: len(chunk) - len(chunk) % 4]
    try:
        return base64.b64decode(chunk, validate=False)
    except (binascii.Error, ValueError):
        return b""


def pixel_size_from_base64(data: str) -> tuple[int, int] | None:
    """Pixel size from a base64 payload (see :func:`head_bytes`, :func:`pixel_size`);
    ``None`` when unknown or not base64. Never raises."""
    return pixel_size(head_bytes(data))


def decoded_size(data: str) -> int:
    """Decoded size in bytes of a base64 string (padding, line breaks and spaces accounted
    for); never negative."""
    n = len(data) - data.count("\n") - data.count("\r") - data.count(" ")
    stripped = data.rstrip()
    return max(0, n * 3 // 4 - (len(stripped) - len(stripped.rstrip("="))))


def _sides(w: int, h: int) -> tuple[int, int] | None:
    return (int(w), int(h)) if w and h else None


def _png(b: bytes) -> tuple[int, int] | None:
    if len(b) < 24 or b[12:16] != b"IHDR":
        return None
    return _sides(*struct.unpack(">II", b[16:24]))


def _gif(b: bytes) -> tuple[int, int] | None:
    if len(b) < 10:
        return None
    return _sides(*struct.unpack("<HH", b[6:10]))


def _jpeg(b: bytes) -> tuple[int, int] | None:
    i = 2
    while i + 4 <= len(b):
        if b[i] != 0xFF:  # extraneous bytes before a marker: skip them, as decoders do
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
            return _sides(w, h)
        i += 2 + length
    return None


def _webp(b: bytes) -> tuple[int, int] | None:
    chunk = b[12:16]
    if chunk == b"VP8 " and len(b) >= 30 and b[23:26] == b"\x9d\x01\x2a":
        w, h = struct.unpack("<HH", b[26:30])
        return _sides(w & 0x3FFF, h & 0x3FFF)
    if chunk == b"VP8L" and len(b) >= 25 and b[20:21] == b"\x2f":
        bits = int.from_bytes(b[21:25], "little")
        return ((bits & 0x3FFF) + 1, ((bits >> 14) & 0x3FFF) + 1)
    if chunk == b"VP8X" and len(b) >= 30:
        return (int.from_bytes(b[24:27], "little") + 1, int.from_bytes(b[27:30], "little") + 1)
    return None
