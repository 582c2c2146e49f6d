"""Image header parsing used by importers: pixel size, media type, decoded byte size."""

from __future__ import annotations

import base64
import struct

from ctxengine.importers._images import (
    decoded_size,
    image_from_base64,
    image_from_url,
    pixel_size,
    sniff_media_type,
)
from ctxengine.model import ImagePart

PNG = b"\x89PNG\r\n\x1a\n\x00\x00\x00\rIHDR" + struct.pack(">II", 1920, 1080) + b"\x08\x06\0\0\0"
GIF = b"GIF89a" + struct.pack("<HH", 640, 480) + b"\x00\x00\x00"
#: SOI, an APP0 segment of 16 bytes, then a baseline SOF0 frame header (height 600, width 800).
JPEG = (
    b"\xff\xd8"
    + b"\xff\xe0\x00\x10JFIF\x00\x01\x01\x00\x00\x01\x00\x01\x00\x00"
    + b"\xff\xc0\x00\x11\x08"
    + struct.pack(">HH", 600, 800)
    + b"\x03\x01\x22\x00\x02\x11\x01\x03\x11\x01"
)
WEBP_VP8X = b"RIFF\x00\x00\x00\x00WEBPVP8X\x0a\x00\x00\x00\x00\x00\x00\x00" + (
    (1023).to_bytes(3, "little") + (767).to_bytes(3, "little")
)


class TestPixelSize:
    def test_png(self) -> None:
        assert pixel_size(PNG) == (1920, 1080)
        assert sniff_media_type(PNG) == "image/png"

    def test_gif(self) -> None:
        assert pixel_size(GIF) == (640, 480)

    def test_jpeg_skips_segments_before_the_frame_header(self) -> None:
        assert pixel_size(JPEG) == (800, 600)
        assert sniff_media_type(JPEG) == "image/jpeg"

    def test_webp_extended(self) -> None:
        assert pixel_size(WEBP_VP8X) == (1024, 768)

    def test_cut_header_and_unknown_bytes_give_none(self) -> None:
        assert pixel_size(PNG[:20]) is None
        assert pixel_size(JPEG[:22]) is None
        assert pixel_size(b"plain text") is None


class TestParts:
    def test_decoded_size_accounts_for_padding(self) -> None:
        for raw in (b"a", b"ab", b"abc", PNG):
            assert decoded_size(base64.b64encode(raw).decode()) == len(raw)

    def test_inline_image_from_base64_sniffs_a_missing_media_type(self) -> None:
        data = base64.b64encode(JPEG).decode()
        assert image_from_base64(None, data) == ImagePart(
            "image/jpeg", data=data, byte_size=len(JPEG), width=800, height=600
        )

    def test_data_url_becomes_an_inline_image_and_a_remote_url_stays_a_reference(self) -> None:
        data = base64.b64encode(PNG).decode()
        assert image_from_url(f"data:image/png;base64,{data}") == ImagePart(
            "image/png", data=data, byte_size=len(PNG), width=1920, height=1080
        )
        assert image_from_url("https://example.com/a.png") == ImagePart(
            "image/*", url="https://example.com/a.png"
        )
