"""Replays of recorded sessions under ctxengine's policies: the replay loop
(:mod:`.loop`), incremental rendering and validation (:mod:`.render`)."""

from ctxengine.replay.loop import (
    CacheSetup,
    ReplayResult,
    ReplayStep,
    parse_time,
    replay,
    request_times,
    source_messages,
)
from ctxengine.replay.render import RENDERERS, VALIDATED_PROVIDERS, RenderedRequest, RenderUpdate

__all__ = [
    "RENDERERS",
    "VALIDATED_PROVIDERS",
    "CacheSetup",
    "RenderUpdate",
    "RenderedRequest",
    "ReplayResult",
    "ReplayStep",
    "parse_time",
    "replay",
    "request_times",
    "source_messages",
]
