"""A minimal PNG reader for screenshot tests: 8-bit RGB or RGBA, not interlaced (what
Chromium writes). Standard library only."""

from __future__ import annotations

import struct
import zlib
from collections import Counter
from pathlib import Path

SIGNATURE = b"\x89PNG\r\n\x1a\n"


def _add_bytes(a: bytes, b: bytes) -> bytearray:
    """Byte-wise ``(a + b) % 256`` of two equal-length strings, on two big integers (the high
    bit of every byte added apart so that no carry crosses a byte)."""
    n = len(a)
    low = int.from_bytes(b"\x7f" * n, "big")
    high = int.from_bytes(b"\x80" * n, "big")
    x, y = int.from_bytes(a, "big"), int.from_bytes(b, "big")
    total = ((x & low) + (y & low)) ^ ((x ^ y) & high)
    return bytearray(total.to_bytes(n, "big"))


def read_png(path: Path, rows: int | None = None) -> tuple[int, int, list[tuple[int, int, int]]]:
    """``(width, height, pixels)``: pixels as RGB tuples, row by row (only the first
    ``rows`` rows when given).

    Raises:
        ValueError: not a PNG this reader handles (the message says what).
    """
    data = path.read_bytes()
    if not data.startswith(SIGNATURE):
        raise ValueError(f"{path}: not a PNG")
    pos, idat = len(SIGNATURE), b""
    width = height = channels = 0
    while pos < len(data):
        (length,) = struct.unpack(">I", data[pos : pos + 4])
        kind = data[pos + 4 : pos + 8]
        body = data[pos + 8 : pos + 8 + length]
        pos += 12 + length
        if kind == b"IHDR":
            width, height, depth, colour, _, _, interlace = struct.unpack(">IIBBBBB", body)
            if depth != 8 or colour not in (2, 6) or interlace:
                raise ValueError(
                    f"{path}: depth {depth}, colour type {colour}, interlace {interlace}"
                )
            channels = 3 if colour == 2 else 4
        elif kind == b"IDAT":
            idat += body
        elif kind == b"IEND":
            break
    raw = zlib.decompress(idat)
    stride = width * channels
    rows_out: list[bytearray] = []
    previous = bytearray(stride)
    at = 0
    for _ in range(height if rows is None else min(rows, height)):
        kind, line = raw[at], bytearray(raw[at + 1 : at + 1 + stride])
        at += 1 + stride
        if kind in (0, 2):
            line = line if kind == 0 else _add_bytes(bytes(line), bytes(previous))
            rows_out.append(line)
            previous = line
            continue
        for i in range(stride):
            left = line[i - channels] if i >= channels else 0
            up = previous[i]
            corner = previous[i - channels] if i >= channels else 0
            if kind == 1:
                line[i] = (line[i] + left) & 0xFF
            elif kind == 2:
                line[i] = (line[i] + up) & 0xFF
            elif kind == 3:
                line[i] = (line[i] + (left + up) // 2) & 0xFF
            elif kind == 4:
                p = left + up - corner
                pa, pb, pc = abs(p - left), abs(p - up), abs(p - corner)
                best = left if pa <= pb and pa <= pc else up if pb <= pc else corner
                line[i] = (line[i] + best) & 0xFF
        rows_out.append(line)
        previous = line
    pixels = [
        (row[i], row[i + 1], row[i + 2]) for row in rows_out for i in range(0, stride, channels)
    ]
    return width, height, pixels


def colour_counts(path: Path, rows: int | None = None) -> Counter[tuple[int, int, int]]:
    """How many pixels of each RGB colour the PNG holds (in its first ``rows`` rows)."""
    return Counter(read_png(path, rows)[2])


def rgb(hex_colour: str) -> tuple[int, int, int]:
    """``"#1f77b4"`` as ``(31, 119, 180)``."""
    value = hex_colour.lstrip("#")
    return int(value[0:2], 16), int(value[2:4], 16), int(value[4:6], 16)
