"""Context assembly: the stable head of every request (:class:`ContextAssembler`, built from
named sections in a fixed order) and rules files as values (:class:`RuleFile`, front matter,
path scopes). Pure: discovery on disk is :mod:`ctxengine.workspace`."""

from .head import (
    SECTIONS,
    VOLATILE_SECTIONS,
    CacheBreak,
    ContextAssembler,
    Environment,
    Head,
    HeadSection,
)
from .rules import RuleFile, glob_matches, touched_paths

__all__ = [
    "SECTIONS",
    "VOLATILE_SECTIONS",
    "CacheBreak",
    "ContextAssembler",
    "Environment",
    "Head",
    "HeadSection",
    "RuleFile",
    "glob_matches",
    "touched_paths",
]
