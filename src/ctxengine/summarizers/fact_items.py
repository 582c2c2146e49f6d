"""Ledger facts as the continuation state writes them, one line each (the items and their
value are :mod:`ctxengine.summarizers.items`), with the plain lists of ledgers stored before
typed facts existed kept as they were:

- a rule verbatim, a superseded one labelled ``(superseded)``;
- an error as ``fixed: LINE`` or ``open: LINE``, with its location (``— at File "a.py",
  line 3, in f``) and, when short, the shell command that failed (a file tool's key,
  ``Edit(/repo/a.py)``, is not shown);
- a file under its one normalised path;
- an identifier as ``kind: text`` (``port: localhost:8080``), ``(earlier)`` after one a
  newer identifier of the same meaning replaced;
- a decision as ``WHO: TEXT`` (``user: …``, ``agent: …``).
"""

from __future__ import annotations

import re

from ctxengine.model import DecisionFact, ErrorFact, IdentifierFact, Ledgers, RuleFact

#: Longest failed command shown next to an error, in characters (longer ones are left out).
ERROR_COMMAND_MAX_CHARS = 60
_TOOL_KEY = re.compile(r"^\w+\(.*\)$")
#: Label before a superseded rule.
SUPERSEDED = "(superseded) "


def plain_errors(ledgers: Ledgers) -> tuple[str, ...]:
    """Error lines of ``ledgers.errors`` no error fact covers (ledgers stored before typed
    facts existed), in their order."""
    covered = {e.text for e in ledgers.error_facts}
    return tuple(e for e in ledgers.errors if e not in covered)


def rule_line(rule: RuleFact) -> str:
    """A rule as listed: its text, after :data:`SUPERSEDED` when it was superseded."""
    return SUPERSEDED + rule.text if rule.status == "superseded" else rule.text


def error_line(error: ErrorFact) -> str:
    """An error as listed: ``STATUS: LINE``, then ``— at WHERE`` when it has a location and
    ``— `COMMAND``` when its shell command is at most :data:`ERROR_COMMAND_MAX_CHARS`
    characters (a file tool's key, ``Edit(/repo/a.py)``, is not shown)."""
    out = f"{error.status}: {error.text}"
    if error.where:
        out += f" — at {error.where}"
    command = error.command
    if command and len(command) <= ERROR_COMMAND_MAX_CHARS and not _TOOL_KEY.match(command):
        out += f" — `{command}`"
    return out


#: Mark after an identifier replaced by a newer one of the same meaning.
EARLIER = " (earlier)"


def identifier_line(identifier: IdentifierFact) -> str:
    """``kind: text`` (``port: localhost:8080``), followed by :data:`EARLIER` when a newer
    identifier replaced it."""
    mark = EARLIER if identifier.status == "earlier" else ""
    return f"{identifier.kind}: {identifier.text}{mark}"


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


def decision_line(decision: DecisionFact) -> str:
    """``WHO: TEXT``: ``user`` or ``agent``, then the decision verbatim."""
    who = "agent" if decision.origin == "assistant" else "user"
    return f"{who}: {decision.text}"
