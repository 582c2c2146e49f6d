"""Projection: the context of one model call, derived from the session log, and the
renderers and validator of provider request bodies."""

from ctxengine.projection.context import Context, SanitizeReport, Truncation
from ctxengine.projection.injection import frame_messages
from ctxengine.projection.project import CONTINUATION_PREFIX, continuation_message, project
from ctxengine.projection.settings import ProjectionSettings
from ctxengine.projection.transform import PRUNE_PLACEHOLDER, TRUNCATION_MARKER

__all__ = [
    "CONTINUATION_PREFIX",
    "PRUNE_PLACEHOLDER",
    "TRUNCATION_MARKER",
    "Context",
    "ProjectionSettings",
    "SanitizeReport",
    "Truncation",
    "continuation_message",
    "frame_messages",
    "project",
]
