"""The head ``ctxengine inspect --rules-from DIR`` shows: the rules files and the skills found
for a working directory, the head a :class:`~ctxengine.assembly.ContextAssembler` builds from
them (with the environment and a git status snapshot), and each section's tokens."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from ctxengine.assembly import ContextAssembler, Head, RuleFile
from ctxengine.model import CompactionRecord, Entry, Message
from ctxengine.policy.defaults import RULES_PROJECT_NAMES
from ctxengine.tokens.base import Estimator
from ctxengine.workspace import (
    RulesDiscovery,
    SkillDiscovery,
    current_environment,
    discover_rules,
    discover_skills,
    git_status,
)

from .output import Grid, say, show


@dataclass(frozen=True, slots=True)
class HeadView:
    """A discovery and the head built from it.

    Attributes:
        discovery: the rules files found.
        head: the head (rules loaded given the files the session touched).
        estimator: what sized it.
        skills: the skills found (their catalog is the head's skills section).
    """

    discovery: RulesDiscovery
    head: Head
    estimator: Estimator
    skills: SkillDiscovery | None = None


def build_head(
    directory: Path,
    estimator: Estimator,
    *,
    home: Path | None = None,
    names: Sequence[str] = (),
    entries: Sequence[Entry] = (),
    skill_dirs: Sequence[Path] = (),
) -> HeadView:
    """Discover the rules of ``directory`` and build the head of a session working there.

    Args:
        directory: the working directory.
        estimator: sizes the sections.
        home: the user-level folder (default: the current user's home).
        names: rules-file names replacing
            :data:`~ctxengine.policy.defaults.RULES_PROJECT_NAMES` (empty: the defaults).
        entries: a session's log: the files its messages since the latest compaction read or
            edited load the path-scoped rules that match them.
        skill_dirs: skills folders searched before the usual ones
            (:func:`~ctxengine.workspace.skills.discover_skills`).

    Raises:
        ConfigError: ``directory`` is not a folder, or a ``skill_dirs`` folder is missing.
        RulesFileError: a rules file that cannot be loaded (front matter, import cycle).
        SkillFileError: a ``SKILL.md`` that cannot be loaded (front matter, name,
            description).
    """
    discovery = discover_rules(directory, home=home, names=tuple(names) or RULES_PROJECT_NAMES)
    skills = discover_skills(directory, home=home, given=tuple(skill_dirs))
    assembler = ContextAssembler(
        rules=discovery.files,
        skills=skills.skills,
        environment=current_environment(directory),
        git_status=git_status(directory),
        cwd=discovery.cwd,
        scoped_rules="head",  # shown with the others, named by the file that loaded each
    )
    head = assembler.build(None, estimator, messages=_epoch_messages(entries))
    return HeadView(discovery, head, estimator, skills)


def _epoch_messages(entries: Sequence[Entry]) -> list[Message]:
    """The messages logged after the latest compaction record (all without one)."""
    start = 0
    for i, e in enumerate(entries):
        if isinstance(e.body, CompactionRecord):
            start = i + 1
    return [m for e in entries[start:] if (m := e.message) is not None]


def _loads(rule: RuleFile, head: Head) -> str:
    if rule.activation == "manual":
        return "manual (never by itself)"
    loaded = any(r.path == rule.path for r in head.rules)
    if rule.activation == "scoped":
        state = "loaded" if loaded else "not loaded"
        return f"when {', '.join(rule.scope)} is touched ({state})"
    return "always" if loaded else "not loaded"


def head_json(view: HeadView) -> dict[str, Any]:
    """The ``head`` object of ``inspect --json`` (``schemas/inspect.json``)."""
    d = view.discovery
    loaded = {r.path for r in view.head.rules}
    return {
        "cwd": d.cwd,
        "root": d.root,
        "home": d.home,
        "searched": list(d.searched),
        "tokens": view.head.tokens,
        "sections": [s.to_dict() for s in view.head.sections],
        "rules": [
            {
                "path": r.path,
                "kind": r.kind,
                "level": r.level,
                "activation": r.activation,
                "scope": list(r.scope),
                "imported_by": r.imported_by,
                "loaded": r.path in loaded,
                "tokens": view.estimator.text(r.text),
                "compact_instructions": r.instructions is not None,
                "notes": list(r.notes),
            }
            for r in d.files
        ],
        "skills": [
            {
                "name": s.name,
                "description": s.description,
                "path": s.path,
                "level": s.level,
                "catalog_tokens": view.estimator.text(s.catalog_line),
                "body_tokens": view.estimator.text(s.body),
                "files": list(s.files),
            }
            for s in (view.skills.skills if view.skills is not None else ())
        ],
        "skill_notes": list(view.skills.notes) if view.skills is not None else [],
    }


def show_head(view: HeadView) -> None:
    """Print the head's sections and the rules files found."""
    d = view.discovery
    where = d.root or d.cwd
    say(
        f"Head for {d.cwd}: {view.head.tokens:,} tokens (estimated); rules searched in "
        f"{len(d.searched)} folders"
        + (f", repository root {where}" if d.root else ", no repository root")
    )
    sections = Grid(("section", "tokens", "volatile", "from"), title="Head", right=frozenset({1}))
    for s in view.head.sections:
        sections.add(s.name, f"{s.tokens:,}", "yes" if s.volatile else "", ", ".join(s.sources))
    show(sections)
    rules = Grid(
        ("rules file", "level", "kind", "tokens", "loads"),
        title="Rules files",
        right=frozenset({3}),
        keep=frozenset({0}),
    )
    for r in d.files:
        rules.add(
            r.path if r.imported_by is None else f"{r.path} (imported by {r.imported_by})",
            r.level,
            r.kind,
            f"{view.estimator.text(r.text):,}",
            _loads(r, view.head),
        )
    show(rules)
    for r in d.files:
        for line in r.notes:
            say(f"{r.path}: {line}")
    found = view.skills
    if found is None or not (found.skills or found.notes):
        return
    skills = Grid(
        ("skill", "level", "catalog", "body", "files", "path"),
        title=f"Skills (catalog {view.head.section('skills').tokens:,} tokens; bodies load "
        "when activated)",
        right=frozenset({2, 3, 4}),
        keep=frozenset({0}),
    )
    for skill in found.skills:
        skills.add(
            skill.name,
            skill.level,
            f"{view.estimator.text(skill.catalog_line):,}",
            f"{view.estimator.text(skill.body):,}",
            f"{len(skill.files):,}",
            skill.path,
        )
    show(skills)
    for line in found.notes:
        say(line)
