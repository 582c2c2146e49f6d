"""Finding and reading the skills of a working directory: every ``<folder>/<name>/SKILL.md``
of the skills folders, parsed into :class:`~ctxengine.assembly.skills.Skill` values.

Where each behaviour comes from:

* **Folders.** :data:`~ctxengine.policy.defaults.SKILL_PROJECT_DIRS` (``.claude/skills``,
  ``.agents/skills``) in every folder from the working directory up to the repository root,
  then :data:`~ctxengine.policy.defaults.SKILL_USER_DIRS` under the home folder (Claude Code
  reads ``.claude/skills`` of the project and ``~/.claude/skills``; Codex ``.agents/skills``
  of the repository and of the home folder). Folders the caller names come first.
* **A skill** is a sub-folder holding a ``SKILL.md`` (one level deep, by name); a named
  folder that holds a ``SKILL.md`` itself is one skill. The files of its ``references/`` and
  ``scripts/`` folders (:data:`~ctxengine.policy.defaults.SKILL_FILE_DIRS`) are listed by
  path, never read.
* **The same name twice.** The first found wins: a named folder, then the folder nearest
  the working directory, then the user level; each one it hides is kept in
  :attr:`SkillDiscovery.shadowed` with a note naming both files. The same file reached twice
  (a symbolic link) counts once.
"""

from __future__ import annotations

import os
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path

from ctxengine.assembly.skills import Skill, parse_skill
from ctxengine.errors import ConfigError, SkillFileError
from ctxengine.policy.defaults import (
    SKILL_FILE,
    SKILL_FILE_DIRS,
    SKILL_PROJECT_DIRS,
    SKILL_USER_DIRS,
)

from .rules_files import find_root

__all__ = ["SkillDiscovery", "discover_skills"]


@dataclass(frozen=True, slots=True)
class SkillDiscovery:
    """The skills of one working directory.

    Attributes:
        cwd: the working directory (absolute, POSIX).
        root: the repository root, or ``None`` when none was found.
        home: the home folder searched, or ``None``.
        searched: the skills folders searched that exist, in search order (as shown).
        skills: the skills in force, by name.
        shadowed: the skills hidden by a nearer one of the same name, in search order.
        notes: one line per hidden skill, and the notes of the skills in force
            (``"<path>: <note>"``).
    """

    cwd: str
    root: str | None
    home: str | None
    searched: tuple[str, ...]
    skills: tuple[Skill, ...]
    shadowed: tuple[Skill, ...] = ()
    notes: tuple[str, ...] = ()


def discover_skills(
    cwd: str | os.PathLike[str],
    *,
    home: str | os.PathLike[str] | None = None,
    root: str | os.PathLike[str] | None = None,
    dirs: Sequence[str] = SKILL_PROJECT_DIRS,
    user_dirs: Sequence[str] = SKILL_USER_DIRS,
    given: Sequence[str | os.PathLike[str]] = (),
) -> SkillDiscovery:
    """Find and read the skills for ``cwd`` (see the module docstring for the order).

    Args:
        cwd: the working directory.
        home: the user's home folder (default: the current user's); ``user_dirs`` are
            looked up under it.
        root: the repository root (default: :func:`~.rules_files.find_root`); must be
            ``cwd`` or above it.
        dirs: skills folders, relative to each folder from ``cwd`` up to the root.
        user_dirs: the same, relative to ``home`` (empty: no user level).
        given: skills folders named by the caller (a ``~/`` prefix is the home folder;
            relative ones are taken from ``cwd``), searched first, in order.

    Returns:
        The :class:`SkillDiscovery`.

    Raises:
        ConfigError: ``cwd`` is not a folder, ``root`` is not at or above it, or a
            ``given`` folder does not exist.
        SkillFileError: a ``SKILL.md`` that cannot be read or parsed (naming the file and
            the line).
    """
    here = Path(cwd).expanduser().resolve()
    if not here.is_dir():
        raise ConfigError(f"{here}: not a folder")
    top = Path(root).expanduser().resolve() if root is not None else find_root(here)
    if top is not None and top != here and top not in here.parents:
        raise ConfigError(f"{top}: the repository root must be {here} or a folder above it")
    user = Path(home).expanduser().resolve() if home is not None else Path.home().resolve()
    finder = _Finder(top or here, user)
    for folder in given:
        text = os.fspath(folder)
        path = user / text[2:] if text.startswith("~/") else here / Path(text).expanduser()
        if not path.is_dir():
            raise ConfigError(f"{path}: skills folder not found")
        finder.search(path.resolve(), "given")
    chain = [here]
    while top is not None and chain[-1] != top:
        chain.append(chain[-1].parent)
    for folder in chain:
        for name in dirs:
            finder.search(folder / name, "project")
    if user_dirs and user.is_dir():
        for name in user_dirs:
            finder.search(user / name, "user")
    skills = tuple(sorted(finder.found.values(), key=lambda s: s.name))
    notes = [f"{s.path}: {note}" for s in skills for note in s.notes]
    return SkillDiscovery(
        cwd=here.as_posix(),
        root=top.as_posix() if top is not None else None,
        home=user.as_posix() if user_dirs else None,
        searched=tuple(finder.searched),
        skills=skills,
        shadowed=tuple(finder.shadowed),
        notes=(*finder.notes, *notes),
    )


class _Finder:
    """Reads the skills of each folder once, the first of a name winning."""

    def __init__(self, base: Path, home: Path) -> None:
        self.base = base
        self.home = home
        self.found: dict[str, Skill] = {}
        self.shadowed: list[Skill] = []
        self.notes: list[str] = []
        self.searched: list[str] = []
        self.seen: set[Path] = set()

    def shown(self, path: Path) -> str:
        """``path`` as shown: relative to the base, else ``~/…``, else absolute."""
        for top, prefix in ((self.base, ""), (self.home, "~/")):
            try:
                return prefix + path.relative_to(top).as_posix()
            except ValueError:
                continue
        return path.as_posix()

    def search(self, folder: Path, level: str) -> None:
        if not folder.is_dir():
            return
        shown = self.shown(folder)
        if shown in self.searched:
            return
        self.searched.append(shown)
        own = folder / SKILL_FILE
        if own.is_file():
            self.load(own, folder, level)
            return
        for child in sorted(folder.iterdir(), key=lambda p: p.name):
            skill_file = child / SKILL_FILE
            if child.is_dir() and skill_file.is_file():
                self.load(skill_file, folder, level)

    def load(self, skill_file: Path, folder: Path, level: str) -> None:
        real = skill_file.resolve()
        if real in self.seen:
            return
        self.seen.add(real)
        shown = self.shown(skill_file)
        try:
            text = skill_file.read_text(encoding="utf-8", errors="replace")
        except OSError as exc:
            raise SkillFileError(shown, f"cannot be read: {exc.strerror or exc}") from exc
        files = tuple(
            self.shown(p)
            for sub in SKILL_FILE_DIRS
            for p in sorted((skill_file.parent / sub).rglob("*"), key=lambda p: p.as_posix())
            if p.is_file()
        )
        skill = parse_skill(text, shown, files=files, root=self.shown(folder), level=level)
        winner = self.found.get(skill.name)
        if winner is None:
            self.found[skill.name] = skill
            return
        self.shadowed.append(skill)
        self.notes.append(
            f"{skill.path}: skill {skill.name!r} is also defined by {winner.path}, "
            "which is nearer and wins"
        )
