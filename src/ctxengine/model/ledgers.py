"""Ledgers: deterministic, cumulative records carried across compactions."""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from dataclasses import dataclass, fields
from typing import Any

from ctxengine.model.facts import (
    DecisionFact,
    ErrorFact,
    FileFact,
    IdentifierFact,
    RuleFact,
    facts_from_plain,
    mark_earlier,
    merge_decisions,
    merge_errors,
    merge_files,
    merge_identifiers,
    merge_rules,
)


def _union(old: tuple[str, ...], new: Iterable[str]) -> tuple[str, ...]:
    """``old`` followed by the items of ``new`` not already in it (order kept, no duplicates)."""
    seen = set(old)
    out = list(old)
    for item in new:
        if item not in seen:
            seen.add(item)
            out.append(item)
    return tuple(out)


@dataclass(frozen=True, slots=True)
class Ledgers:
    """What a compaction must never forget. Every field only grows across compactions
    (DESIGN invariant 6), except ``goal``, which is fixed once set, the statuses of the typed
    facts, which only move forward (open → fixed, active → superseded), and ``passed``.

    The string fields are the plain lists every summarizer renders; the typed fields
    (``error_facts``, ``files``, ``identifiers``, ``rules``, ``decisions``, see
    :mod:`ctxengine.model.facts`)
    hold the same facts with their status, source index and exact text. Ledgers stored before
    the typed fields existed have them empty.

    Attributes:
        goal: the session's first real user request, verbatim.
        files_read: paths read (and not modified), in first-seen order.
        files_modified: paths written or edited, in first-seen order (backups and scratch
            files excluded when they were known as such).
        constraints: user sentences stating rules (must / never / don't / 不要 …), verbatim.
        errors: exact error lines from failed tool results.
        commands: shell commands run.
        done: steps completed with a successful result (e.g. ``"edited src/app.py"``).
        pinned: items pinned by the user or the agent.
        error_facts: errors with status (open/fixed), command, test and location.
        files: files with status (modified/scratch/read) under one normalised path each.
        identifiers: ticket ids, commit hashes, ports, URLs, variable names, versions, names.
        rules: user rules with status (active/superseded).
        cwd: the session's working directory, once known (``""`` until then).
        decisions: choices the user or the agent stated, with their reasons.
        passed: commands (``cmd:…``) and tests (``test:…``) that passed in the range these
            ledgers were read from; :meth:`merge` uses the newer side's to fix older open
            errors, and keeps none.
    """

    goal: str = ""
    files_read: tuple[str, ...] = ()
    files_modified: tuple[str, ...] = ()
    constraints: tuple[str, ...] = ()
    errors: tuple[str, ...] = ()
    commands: tuple[str, ...] = ()
    done: tuple[str, ...] = ()
    pinned: tuple[str, ...] = ()
    error_facts: tuple[ErrorFact, ...] = ()
    files: tuple[FileFact, ...] = ()
    identifiers: tuple[IdentifierFact, ...] = ()
    rules: tuple[RuleFact, ...] = ()
    cwd: str = ""
    passed: tuple[str, ...] = ()
    decisions: tuple[DecisionFact, ...] = ()

    def merge(self, newer: Ledgers) -> Ledgers:
        """Return the union of ``self`` (older) and ``newer``; nothing in ``self`` is lost.

        A path that moved from read to modified is listed only as modified. Typed facts
        combine as :mod:`ctxengine.model.facts` describes.
        """
        modified = _union(self.files_modified, newer.files_modified)
        mod_set = set(modified)
        read = tuple(p for p in _union(self.files_read, newer.files_read) if p not in mod_set)
        rules = merge_rules(self.rules, newer.rules)
        identifiers = mark_earlier(merge_identifiers(self.identifiers, newer.identifiers), rules)
        return Ledgers(
            goal=self.goal or newer.goal,
            files_read=read,
            files_modified=modified,
            constraints=_union(self.constraints, newer.constraints),
            errors=_union(self.errors, newer.errors),
            commands=_union(self.commands, newer.commands),
            done=_union(self.done, newer.done),
            pinned=_union(self.pinned, newer.pinned),
            error_facts=merge_errors(self.error_facts, newer.error_facts, newer.passed),
            files=merge_files(self.files, newer.files),
            identifiers=identifiers,
            rules=rules,
            cwd=self.cwd or newer.cwd,
            decisions=merge_decisions(self.decisions, newer.decisions),
        )

    def is_empty(self) -> bool:
        """True when no field holds anything."""
        return not any(getattr(self, f.name) for f in fields(self))

    @classmethod
    def from_plain(cls, raw: Mapping[str, Any]) -> Ledgers:
        """Ledgers from their stored dict (lists for tuples, dicts for typed facts); fields a
        stored dict lacks (older stores) take their defaults.

        Raises:
            TypeError: an unknown field, or a typed fact with unknown or missing fields.
        """
        plain: dict[str, Any] = {
            k: (tuple(v) if isinstance(v, list) else v)
            for k, v in raw.items()
            if k not in ("error_facts", "files", "identifiers", "rules", "decisions")
        }
        plain.update(facts_from_plain(raw))
        return cls(**plain)
