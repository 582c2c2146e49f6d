"""Context assembly: the stable head of every request (:class:`ContextAssembler`, built from
named sections in a fixed order), rules files as values (:class:`RuleFile`, front matter,
path scopes) and skills (:class:`Skill`, the ``skill`` tool). Pure: discovery on disk is
:mod:`ctxengine.workspace`."""

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
from .skill_tool import SKILL_TOOL, run_skill_tool
from .skills import Skill, parse_skill

__all__ = [
    "SECTIONS",
    "SKILL_TOOL",
    "VOLATILE_SECTIONS",
    "CacheBreak",
    "ContextAssembler",
    "Environment",
    "Head",
    "HeadSection",
    "RuleFile",
    "Skill",
    "glob_matches",
    "parse_skill",
    "run_skill_tool",
    "touched_paths",
]
