"""Image costs: pixel size from provider blocks, the Anthropic scaling rule, never base64 length."""

from __future__ import annotations

import base64
import struct

import pytest
from token_helpers import make_png, png_base64

from ctxengine.model import ImagePart, Message, TextPart
from ctxengine.tokens import (
    HeuristicEstimator,
    estimate_tokens_for_image,
    image_part_from_provider_block,
    image_size,
)
from ctxengine.tokens.constants import MAX_IMAGE_TOKENS
from ctxengine.tokens.images import openai_image_tokens

DATA = png_base64(1920, 1080)


def provider_blocks() -> dict[str, dict[str, object]]:
    return {
        "anthropic": {
            "type": "image",
            "source": {"type": "base64", "media_type": "image/png", "data": DATA},
        },
        "openai_chat": {
            "type": "image_url",
            "image_url": {"url": f"data:image/png;base64,{DATA}", "detail": "high"},
        },
        "openai_responses": {
            "type": "input_image",
            "image_url": f"data:image/png;base64,{DATA}",
            "detail": "auto",
        },
    }


class TestImageRule:
    def test_full_hd_is_scaled_to_the_area_cap(self) -> None:
        # scale = sqrt(1_150_000 / 2_073_600) → 1429 × 804 = 1_148_916 px → 1532 tokens
        assert estimate_tokens_for_image(1920, 1080) == 1532

    def test_small_image_is_not_scaled(self) -> None:
        assert estimate_tokens_for_image(200, 200) == 54  # 40_000 / 750 = 53.3

    def test_long_side_cap_applies_to_a_thin_strip(self) -> None:
        # 4000 × 100 → long side 1568 → 1568 × 39 = 61_152 px → 82 tokens
        assert estimate_tokens_for_image(4000, 100) == 82

    def test_unknown_or_bad_size_costs_the_default(self) -> None:
        assert estimate_tokens_for_image(None, 100) == MAX_IMAGE_TOKENS == 1534
        assert estimate_tokens_for_image(0, 0) == 1534
        assert estimate_tokens_for_image(-5, 10, default=3000) == 3000

    def test_tiny_image_costs_at_least_one(self) -> None:
        assert estimate_tokens_for_image(1, 1) == 1


class TestOpenAIImageRule:
    """85 + 170 per 512 px tile, after fitting a 2,048 px square and a 768 px shortest side
    (OpenAI's published examples: 1,024 × 1,024 costs 765, 2,048 × 4,096 costs 1,105)."""

    def test_the_published_examples(self) -> None:
        assert openai_image_tokens(1024, 1024) == 85 + 170 * 4 == 765  # 768 × 768: 2 × 2
        assert openai_image_tokens(2048, 4096) == 85 + 170 * 6 == 1105  # 768 × 1,536: 2 × 3

    def test_small_and_narrow_images_cost_more_than_under_anthropics_rule(self) -> None:
        assert openai_image_tokens(200, 200) == 255  # one tile, not scaled up
        # 100 × 4,000 → 51 × 2,048 (its short side under 768 stays): 1 × 4 tiles
        assert openai_image_tokens(100, 4000) == 765
        assert openai_image_tokens(8000, 500) == 765  # 2,048 × 128: 4 × 1
        # 1,920 × 1,080 → 1,365 × 768: 3 × 2 tiles, under Anthropic's 1,532
        assert openai_image_tokens(1920, 1080) == 1105

    def test_low_detail_and_unknown_sizes(self) -> None:
        assert openai_image_tokens(1920, 1080, detail="low") == 85
        assert openai_image_tokens(None, None, detail="low") == 85
        assert openai_image_tokens(None, 100) == MAX_IMAGE_TOKENS
        assert openai_image_tokens(0, 10, default=3000) == 3000

    def test_an_estimator_for_an_openai_encoding_uses_it(self) -> None:
        small = ImagePart("image/png", width=200, height=200)
        low = ImagePart("image/png", width=1920, height=1080, meta={"detail": "low"})
        for encoding in ("o200k_base", "cl100k_base"):
            est = HeuristicEstimator(encoding=encoding)
            assert (est.part(small), est.part(low)) == (2 + 255, 2 + 85)
        # the default (tokenizer unknown: Claude, Gemini …) keeps Anthropic's rule
        assert (HeuristicEstimator().part(small), HeuristicEstimator().part(low)) == (
            2 + 54,
            2 + 1532,
        )


class TestProviderBlocks:
    def test_each_shape_reads_the_pixel_size_from_the_png_header(self) -> None:
        for name, block in provider_blocks().items():
            part = image_part_from_provider_block(block)
            assert (part.media_type, part.width, part.height) == ("image/png", 1920, 1080), name
            assert part.data == DATA
            assert part.byte_size == len(make_png(1920, 1080))

    def test_the_three_shapes_get_the_same_estimate_never_the_base64_length(self) -> None:
        est = HeuristicEstimator()
        costs = {
            n: est.part(image_part_from_provider_block(b)) for n, b in provider_blocks().items()
        }
        assert costs == {"anthropic": 1534, "openai_chat": 1534, "openai_responses": 1534}
        assert max(costs.values()) <= 1.1 * min(costs.values())
        assert len(DATA) > 5_000
        assert all(c < len(DATA) // 4 for c in costs.values())

    def test_detail_and_file_id_go_to_meta(self) -> None:
        part = image_part_from_provider_block(provider_blocks()["openai_chat"])
        assert part.meta == {"detail": "high"}
        by_file = image_part_from_provider_block({"type": "input_image", "file_id": "file-1"})
        assert (by_file.data, by_file.meta) == (None, {"file_id": "file-1"})

    def test_remote_url_keeps_the_reference(self) -> None:
        block = {"type": "image", "source": {"type": "url", "url": "https://x.test/a.png"}}
        part = image_part_from_provider_block(block)
        assert (part.url, part.width, part.data) == ("https://x.test/a.png", None, None)

    def test_gemini_inline_data(self) -> None:
        part = image_part_from_provider_block(
            {"inline_data": {"mime_type": "image/png", "data": DATA}}
        )
        assert (part.width, part.height) == (1920, 1080)

    def test_unknown_block_is_a_value_error(self) -> None:
        with pytest.raises(ValueError, match="not a provider image block"):
            image_part_from_provider_block({"type": "text", "text": "hi"})


class TestHeaders:
    def test_gif_jpeg_and_webp_headers(self) -> None:
        gif = b"GIF89a" + struct.pack("<HH", 640, 480) + b"\x00" * 8
        jpeg = (
            b"\xff\xd8\xff\xe0"
            + struct.pack(">H", 16)
            + b"JFIF\x00"
            + b"\x00" * 9
            + b"\xff\xc0"
            + struct.pack(">HBHH", 17, 8, 600, 800)
            + b"\x00" * 10
        )
        webp = (
            b"RIFF\x00\x00\x00\x00WEBPVP8X"
            + b"\x00" * 8
            + (799).to_bytes(3, "little")
            + (599).to_bytes(3, "little")
        )
        assert image_size(gif) == (640, 480)
        assert image_size(jpeg) == (800, 600)
        assert image_size(webp) == (800, 600)

    def test_cut_short_or_foreign_bytes_give_none(self) -> None:
        assert image_size(make_png(10, 10)[:20]) is None
        assert image_size(b"\xff\xd8\xff\xe0\x00") is None
        assert image_size(b"hello world") is None

    def test_estimator_reads_the_header_when_the_part_lacks_a_size(self) -> None:
        bare = ImagePart("image/png", data=base64.b64encode(make_png(300, 150)).decode())
        assert HeuristicEstimator().part(bare) == 2 + 60  # 45_000 / 750
        broken = ImagePart("image/png", data="not base64 at all!")
        assert HeuristicEstimator(image_tokens=3000).part(broken) == 3002

    def test_an_image_message_costs_overhead_plus_image(self) -> None:
        msg = Message(
            "user",
            (TextPart("look"), image_part_from_provider_block(provider_blocks()["anthropic"])),
        )
        assert HeuristicEstimator().message(msg) == 4 + 1 + 1534
