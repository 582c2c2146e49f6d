"""Image token cost and provider image blocks.

An image costs what the provider charges for its pixels, never its base64 length. We use
Anthropic's published rule, the most expensive of the three big providers for a typical
screenshot: the image is scaled (aspect ratio kept) until its long side is at most 1,568 px
and its area at most 1.15 megapixels, then costs ``width × height / 750`` tokens (at most
about 1,533). Gemini (258 per 768 px tile) charges less for the same image. OpenAI's rule
(:func:`openai_image_tokens`: 512 px tiles, 85 + 170 per tile after fitting 2,048 / 768 px)
charges less for a large image and more for a small or narrow one; an estimator calibrated
for an OpenAI tokenizer uses it.

The pixel size is read from the image header (PNG, GIF, JPEG, WebP) without decoding pixels:
only the first :data:`HEADER_B64_CHARS` base64 characters are decoded.
"""

from __future__ import annotations

import math
import re
from collections.abc import Mapping
from typing import Any

from ctxengine.model import ImagePart
from ctxengine.model.images import HEAD_CHARS, decoded_size, pixel_size, pixel_size_from_base64
from ctxengine.tokens.constants import (
    IMAGE_MAX_LONG_SIDE_PX,
    IMAGE_MAX_PIXELS,
    IMAGE_PIXELS_PER_TOKEN,
    MAX_IMAGE_TOKENS,
    OPENAI_IMAGE_BASE_TOKENS,
    OPENAI_IMAGE_MAX_SIDE_PX,
    OPENAI_IMAGE_SHORT_SIDE_PX,
    OPENAI_IMAGE_TILE_PX,
    OPENAI_IMAGE_TILE_TOKENS,
)

#: Base64 characters decoded to find a pixel size (:data:`ctxengine.model.images.HEAD_CHARS`).
HEADER_B64_CHARS = HEAD_CHARS

_DATA_URL = re.compile(r"data:(?P<type>[\w.+-]+/[\w.+-]+)?(?P<params>(?:;[^;,]*)*),", re.ASCII)


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


def openai_image_tokens(
    width: int | None,
    height: int | None,
    *,
    detail: str | None = None,
    default: int = MAX_IMAGE_TOKENS,
) -> int:
    """Tokens of an image of ``width`` × ``height`` pixels under OpenAI's rule
    (:data:`~ctxengine.tokens.constants.OPENAI_IMAGE_TILE_TOKENS`: scaled down to fit 2,048 px,
    then until its shortest side is at most 768 px; 85 + 170 per 512 px tile). ``detail``:
    the request's ``detail`` (``"low"``: 85 whatever the size; ``"high"``, ``"auto"`` or
    ``None``: by tiles). Returns ``default`` when a side is unknown or not positive (and the
    detail is not ``"low"``). Never raises. Examples: 200 × 200 costs 255; 1,920 × 1,080 is
    scaled to 1,365 × 768 and costs 1,105.
    """
    if detail == "low":
        return OPENAI_IMAGE_BASE_TOKENS
    if not width or not height or width <= 0 or height <= 0:
        return max(1, default)
    scale = min(1.0, OPENAI_IMAGE_MAX_SIDE_PX / max(width, height))
    w, h = width * scale, height * scale
    scale = min(1.0, OPENAI_IMAGE_SHORT_SIDE_PX / min(w, h))
    w, h = max(1, int(w * scale)), max(1, int(h * scale))
    tiles = math.ceil(w / OPENAI_IMAGE_TILE_PX) * math.ceil(h / OPENAI_IMAGE_TILE_PX)
    return OPENAI_IMAGE_BASE_TOKENS + OPENAI_IMAGE_TILE_TOKENS * tiles


#: ``(width, height)`` in pixels from an image header (PNG, GIF, JPEG, WebP), or ``None``.
image_size = pixel_size
#: Pixel size from a base64 payload (at most :data:`HEADER_B64_CHARS` characters decoded).
image_size_from_base64 = pixel_size_from_base64


def _inline(media_type: str | None, data: str, meta: dict[str, Any]) -> ImagePart:
    size = image_size_from_base64(data)
    return ImagePart(
        media_type or "application/octet-stream",
        data=data,
        byte_size=decoded_size(data),
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
