"""The shared image-header parser: edge cases both importers and token estimates rely on."""

from __future__ import annotations

import base64
import struct

from ctxengine.model.images import decoded_size, pixel_size, pixel_size_from_base64

PNG_HEAD = b"\x89PNG\r\n\x1a\n\x00\x00\x00\rIHDR"


def test_a_zero_side_is_an_unknown_size() -> None:
    assert pixel_size(PNG_HEAD + struct.pack(">II", 0, 10)) is None
    assert pixel_size(PNG_HEAD + struct.pack(">II", 4, 3)) == (4, 3)


def test_a_lossy_webp_needs_its_frame_start_code() -> None:
    head = b"RIFF\x00\x00\x00\x00WEBPVP8 " + b"\x00" * 7
    size = struct.pack("<HH", 320, 240)
    assert pixel_size(head + b"\x9d\x01\x2a" + size) == (320, 240)
    assert pixel_size(head + b"\x00\x00\x00" + size) is None


def test_base64_with_line_breaks_and_spaces_reads_the_same() -> None:
    raw = PNG_HEAD + struct.pack(">II", 1920, 1080) + b"\x08\x06\0\0\0"
    text = base64.b64encode(raw).decode()
    wrapped = "\n".join(text[i : i + 8] for i in range(0, len(text), 8)) + " "
    assert pixel_size_from_base64(wrapped) == (1920, 1080)
    assert decoded_size(wrapped) == len(raw) == 29
    assert pixel_size_from_base64("not base64!") is None
