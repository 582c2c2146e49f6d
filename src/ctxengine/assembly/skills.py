"""Skills as values: :class:`Skill` (a ``SKILL.md`` parsed: name, description, body, the paths
of its reference and script files), its catalog line in the head and the text that activates
it. Pure: the files are found and read by :mod:`ctxengine.workspace.skills`.

A skill is a folder holding a ``SKILL.md`` file: YAML front matter with ``name`` and
``description``, then Markdown instructions (the body), optionally with ``references/``
(read on demand) and ``scripts/`` (run) next to it (agentskills.io specification; Claude
Code, Codex, OpenCode and Gemini CLI read the same layout). The catalog line (name,
description, path) sits in the head from the start; the body enters the conversation only
when the skill is activated (:mod:`ctxengine.projection.skills`).
"""

from __future__ import annotations

import posixpath
import re
from dataclasses import dataclass

from ctxengine.errors import RulesFileError, SkillFileError
from ctxengine.policy.defaults import (
    SKILL_DESCRIPTION_MAX_CHARS,
    SKILL_NAME_MAX_CHARS,
    SKILL_NAME_PATTERN,
)
from ctxengine.projection.skills import activation_text, notice_text

from .rules import FrontMatter, split_front_matter

__all__ = ["CATALOG_LINE", "Skill", "parse_skill"]

#: One skill's line in the head's skills section.
CATALOG_LINE = "- {name}: {description} ({path})"

_NAME = re.compile(SKILL_NAME_PATTERN)
#: YAML block-scalar indicators (``description: >`` followed by indented lines).
_BLOCK_SCALARS = frozenset({"|", ">", "|-", ">-", "|+", ">+"})


@dataclass(frozen=True, slots=True)
class Skill:
    """One skill.

    Attributes:
        name: its ``name`` (1–64 lowercase letters, digits and hyphens).
        description: its ``description``, on one line (runs of whitespace collapsed).
        path: its ``SKILL.md`` as shown: relative to the repository root for a project skill
            (``.claude/skills/pdf/SKILL.md``), ``~/…`` for a user-level one, else absolute.
        body: the text below the front matter (blank lines around it removed).
        files: the files of its ``references/`` and ``scripts/`` folders, as shown, sorted:
            listed with the body when it is activated, never inlined.
        root: the skills folder it was found in, as shown.
        level: ``"given"`` (a folder named by the caller), ``"project"`` (from the working
            directory up to the repository root) or ``"user"`` (the home folder).
        notes: what is unusual but accepted (a name that differs from its folder, a
            description over the specification's 1,024 characters).
    """

    name: str
    description: str
    path: str
    body: str
    files: tuple[str, ...] = ()
    root: str = ""
    level: str = "project"
    notes: tuple[str, ...] = ()

    @property
    def folder(self) -> str:
        """The skill's folder, as shown."""
        return posixpath.dirname(self.path)

    @property
    def catalog_line(self) -> str:
        """Its line in the head (:data:`CATALOG_LINE`)."""
        return CATALOG_LINE.format(name=self.name, description=self.description, path=self.path)

    def activation(self) -> str:
        """The text that activates it: the body and its files' paths
        (:func:`~ctxengine.projection.skills.activation_text`)."""
        return activation_text(self.name, self.path, self.body, self.files)

    def notice(self) -> str:
        """The one line a second activation adds while the body is in the context."""
        return notice_text(self.name, self.path)


def _value_lines(lines: list[str], key_line: int) -> list[str]:
    """The indented lines that continue the value whose key is on ``key_line`` (1-based)."""
    out: list[str] = []
    for raw in lines[key_line:]:
        line = raw.rstrip("\r")
        if line == "---":
            break
        if line.strip() and line[:1] not in (" ", "\t"):
            break
        out.append(line)
    return out


def _text_field(front: FrontMatter, lines: list[str], key: str, path: str) -> str | None:
    """The text of front-matter field ``key`` with its continuation lines (a block scalar
    or a plain multi-line value), whitespace collapsed; ``None`` when absent.

    Raises:
        SkillFileError: a list or a boolean (naming the line).
    """
    if key not in front.fields:
        return None
    value = front.fields[key]
    line = front.lines[key]
    if isinstance(value, bool) or (isinstance(value, tuple) and value):
        raise SkillFileError(path, f"{key!r} must be a text, not a list or a boolean", line)
    head = "" if isinstance(value, tuple) else value
    more = [s.strip() for s in _value_lines(lines, line)]
    words = ([] if head in _BLOCK_SCALARS else [head]) + more
    text = " ".join(" ".join(words).split())
    if len(text) >= 2 and text[0] == text[-1] and text[0] in "\"'":
        text = text[1:-1].strip()
    return text


def parse_skill(
    text: str,
    path: str,
    *,
    files: tuple[str, ...] = (),
    root: str = "",
    level: str = "project",
) -> Skill:
    """A :class:`Skill` from the text of its ``SKILL.md``.

    Args:
        text: the whole file.
        path: the file as shown (in errors and in the catalog).
        files: its reference and script files, as shown.
        root / level: see :class:`Skill`.

    Returns:
        The skill, with notes on a name that differs from its folder and on a description
        longer than :data:`~ctxengine.policy.defaults.SKILL_DESCRIPTION_MAX_CHARS`.

    Raises:
        SkillFileError: no front matter; malformed front matter (an unclosed block, a line
            that is not ``key: value``); a missing or empty ``name`` or ``description``;
            either given as a list or a boolean; a name outside the specification's
            pattern (:data:`~ctxengine.policy.defaults.SKILL_NAME_PATTERN`). Each names the
            file and the line.
    """
    text = text.replace("\r\n", "\n")
    lines = text.split("\n")
    if not lines or lines[0].lstrip("\ufeff") != "---":
        raise SkillFileError(
            path, "no front matter: a SKILL.md opens with a '---' block giving name and "
            "description", 1,
        )  # fmt: skip
    try:
        front, body = split_front_matter(text, path)
    except RulesFileError as exc:
        raise SkillFileError(exc.path, exc.reason, exc.line) from exc
    name = _text_field(front, lines, "name", path)
    if name is None:
        raise SkillFileError(path, "the front matter has no 'name'", 1)
    if not name:
        raise SkillFileError(path, "'name' is empty", front.lines["name"])
    if len(name) > SKILL_NAME_MAX_CHARS or _NAME.fullmatch(name) is None:
        raise SkillFileError(
            path,
            f"'name' must be 1-{SKILL_NAME_MAX_CHARS} lowercase letters, digits and single "
            f"hyphens, neither first nor last: {name[:80]!r}",
            front.lines["name"],
        )
    description = _text_field(front, lines, "description", path)
    if description is None:
        raise SkillFileError(path, "the front matter has no 'description'", 1)
    if not description:
        raise SkillFileError(path, "'description' is empty", front.lines["description"])
    notes: list[str] = []
    folder = posixpath.basename(posixpath.dirname(path))
    if folder and folder != name:
        notes.append(f"name {name!r} differs from its folder {folder!r}")
    if len(description) > SKILL_DESCRIPTION_MAX_CHARS:
        notes.append(
            f"description of {len(description):,} characters (the specification allows "
            f"{SKILL_DESCRIPTION_MAX_CHARS:,})"
        )
    return Skill(
        name=name,
        description=description,
        path=path,
        body=body.strip("\n").rstrip(),
        files=tuple(files),
        root=root,
        level=level,
        notes=tuple(notes),
    )
