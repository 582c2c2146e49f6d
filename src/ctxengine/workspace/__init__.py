"""The working directory as the head sees it (I/O): rules files found from the user level
through the repository root down to the working directory
(:func:`~.rules_files.discover_rules`), the environment and a git status snapshot
(:mod:`.environment`)."""

from .environment import current_environment, git_status
from .rules_files import RulesDiscovery, discover_rules, find_root

__all__ = ["RulesDiscovery", "current_environment", "discover_rules", "find_root", "git_status"]
