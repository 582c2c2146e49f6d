"""Ledgers: deterministic, cumulative records carried across compactions."""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass, fields


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
    (DESIGN invariant 6), except ``goal``, which is fixed once set.

    Attributes:
        goal: the session's first real user request, verbatim.
        files_read: paths read (and not modified), in first-seen order.
        files_modified: paths written or edited, in first-seen order.
        constraints: user sentences stating rules (must / never / don't / 不要 …), verbatim.
        errors: exact error lines from failed tool results.
        commands: shell commands run.
        done: steps completed with a successful result (e.g. ``"edited src/app.py"``).
        pinned: items pinned by the user or the agent.
    """

    goal: str = ""
    files_read: tuple[str, ...] = ()
    files_modified: tuple[str, ...] = ()
    constraints: tuple[str, ...] = ()
    errors: tuple[str, ...] = ()
    commands: tuple[str, ...] = ()
    done: tuple[str, ...] = ()
    pinned: tuple[str, ...] = ()

    def merge(self, newer: Ledgers) -> Ledgers:
        """Return the union of ``self`` (older) and ``newer``; nothing in ``self`` is lost.

        A path that moved from read to modified is listed only as modified.
        """
        modified = _union(self.files_modified, newer.files_modified)
        mod_set = set(modified)
        read = tuple(p for p in _union(self.files_read, newer.files_read) if p not in mod_set)
        return Ledgers(
            goal=self.goal or newer.goal,
            files_read=read,
            files_modified=modified,
            constraints=_union(self.constraints, newer.constraints),
            errors=_union(self.errors, newer.errors),
            commands=_union(self.commands, newer.commands),
            done=_union(self.done, newer.done),
            pinned=_union(self.pinned, newer.pinned),
        )

    def is_empty(self) -> bool:
        """True when no field holds anything."""
        return not any(getattr(self, f.name) for f in fields(self))
