"""The ledger lists as the extractive text shows them: typed facts turned into section items,
with the plain lists of ledgers stored before typed facts existed kept as they were.

- rules: the active ones verbatim; superseded ones first, labelled ``(superseded)``;
- errors: ``fixed: LINE`` first, then ``open: LINE``, each with its location (``— at
  File "a.py", line 3, in f``) and, when short, the shell command that failed (a file tool's
  key, ``Edit(/repo/a.py)``, is not shown);
- files: modified, scratch and read paths, one normalised path each;
- identifiers: ``kind: text`` (``port: localhost:8080``).

Each list is ordered oldest (or least useful) first, so that a budget that keeps the newest
items keeps the open errors and the active rules.
"""

from __future__ import annotations

import re

from ctxengine.model import Ledgers

#: Longest failed command shown next to an error, in characters (longer ones are left out).
ERROR_COMMAND_MAX_CHARS = 60
_TOOL_KEY = re.compile(r"^\w+\(.*\)$")
#: Label before a superseded rule.
SUPERSEDED = "(superseded) "


def rule_items(ledgers: Ledgers) -> tuple[str, ...]:
    """Rules: superseded ones (labelled) first, then the active ones, then plain constraints
    no rule fact covers (older ledgers)."""
    covered = {r.text for r in ledgers.rules}
    superseded = [SUPERSEDED + r.text for r in ledgers.rules if r.status == "superseded"]
    active = [r.text for r in ledgers.rules if r.status == "active"]
    plain = [c for c in ledgers.constraints if c not in covered]
    return (*superseded, *plain, *active)


def error_items(ledgers: Ledgers) -> tuple[str, ...]:
    """Errors: ``fixed: …`` then ``open: …`` (each in first-seen order), after the plain
    error lines no fact covers (older ledgers)."""
    covered = {e.text for e in ledgers.error_facts}
    plain = [e for e in ledgers.errors if e not in covered]

    def item(text: str, status: str, where: str, command: str) -> str:
        out = f"{status}: {text}"
        if where:
            out += f" — at {where}"
        if command and len(command) <= ERROR_COMMAND_MAX_CHARS and not _TOOL_KEY.match(command):
            out += f" — `{command}`"
        return out

    facts = ledgers.error_facts
    fixed = [item(e.text, "fixed", e.where, e.command) for e in facts if e.status == "fixed"]
    open_ = [item(e.text, "open", e.where, e.command) for e in facts if e.status == "open"]
    return tuple(dict.fromkeys([*plain, *fixed, *open_]))


def file_items(ledgers: Ledgers, status: str) -> tuple[str, ...]:
    """Paths of one status (``modified``, ``scratch``, ``read``) in first-seen order; for
    ``modified`` and ``read``, plus the plain paths no fact covers (older ledgers)."""
    covered = {f.path for f in ledgers.files}
    facts = [f.path for f in ledgers.files if f.status == status]
    if status == "modified":
        plain = [p for p in ledgers.files_modified if p not in covered]
    elif status == "read":
        modified = set(ledgers.files_modified)
        plain = [p for p in ledgers.files_read if p not in covered and p not in modified]
    else:
        plain = []
    return tuple(dict.fromkeys([*plain, *facts]))


def identifier_items(ledgers: Ledgers) -> tuple[str, ...]:
    """``kind: text`` per identifier, in first-seen order."""
    return tuple(f"{i.kind}: {i.text}" for i in ledgers.identifiers)
