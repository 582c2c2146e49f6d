"""The working directory as the head sees it (I/O): rules files found from the user level
through the repository root down to the working directory
(:func:`~.rules_files.discover_rules`), the skills of its skills folders
(:func:`~.skills.discover_skills`), the environment and a git status snapshot
(:mod:`.environment`)."""

from .environment import current_environment, git_status
from .rules_files import RulesDiscovery, discover_rules, find_root
from .skills import SkillDiscovery, discover_skills

__all__ = [
    "RulesDiscovery",
    "SkillDiscovery",
    "current_environment",
    "discover_rules",
    "discover_skills",
    "find_root",
    "git_status",
]
