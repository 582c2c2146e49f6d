"""Image parts for importers, with pixel size read from the image header
(:mod:`ctxengine.model.images`).

Only the first bytes of the base64 payload are decoded and only the header is read; no pixels
are decoded. The pixel size fills :attr:`ctxengine.model.ImagePart.width` / ``height`` so the
token estimate of an image does not fall back to a fixed cost.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from ctxengine.model import ImagePart
from ctxengine.model.images import (
    HEAD_CHARS,
    decoded_size,
    head_bytes,
    pixel_size,
    sniff_media_type,
)

__all__ = [
    "HEAD_CHARS",
    "decoded_size",
    "head_bytes",
    "image_from_base64",
    "image_from_url",
    "pixel_size",
    "sniff_media_type",
]


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
