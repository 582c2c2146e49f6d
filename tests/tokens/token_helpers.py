"""Helpers for the token tests: a real PNG built with zlib and struct (no imaging library)."""

from __future__ import annotations

import base64
import struct
import zlib


def _chunk(kind: bytes, body: bytes) -> bytes:
    crc = zlib.crc32(kind + body) & 0xFFFFFFFF
    return struct.pack(">I", len(body)) + kind + body + struct.pack(">I", crc)


def make_png(width: int, height: int) -> bytes:
    """A valid black RGB PNG of ``width`` × ``height`` pixels."""
    header = struct.pack(">IIBBBBB", width, height, 8, 2, 0, 0, 0)
    row = b"\x00" + b"\x00" * (3 * width)
    pixels = zlib.compress(row * height, 9)
    return (
        b"\x89PNG\r\n\x1a\n"
        + _chunk(b"IHDR", header)
        + _chunk(b"IDAT", pixels)
        + _chunk(b"IEND", b"")
    )


def png_base64(width: int, height: int) -> str:
    """``make_png`` as base64 text."""
    return base64.b64encode(make_png(width, height)).decode("ascii")
