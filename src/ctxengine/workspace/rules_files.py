"""Finding and reading the rules files of a working directory: AGENTS.md, CLAUDE.md, GEMINI.md,
Cursor, Cline and Copilot rules, from the user level through the repository root down to the
working directory, with ``@path`` imports.

Where each behaviour comes from:

* **Order.** User-level files first, then each folder from the repository root down to the
  working directory, so that the most specific file comes last and wins (Codex: "concatenates
  files from the root down … files closer to your current directory override earlier
  guidance", developers.openai.com/codex/guides/agents-md; Claude Code loads user memory
  before project memory, and the files of parent folders with them, docs.anthropic.com/en/
  docs/claude-code/memory; Gemini CLI loads ``~/.gemini/GEMINI.md`` then the project's,
  geminicli.com/docs/cli/gemini-md). Within a folder, the order of the names
  (:data:`~ctxengine.policy.defaults.RULES_PROJECT_NAMES`).
* **Repository root.** The nearest folder at or above the working directory holding a
  :data:`~ctxengine.policy.defaults.RULES_ROOT_MARKERS` entry (``.git``); without one only the
  working directory is read (Codex). Claude Code reads every folder up to ``/``: pass a
  ``root`` to start higher.
* **Overrides.** ``AGENTS.override.md|AGENTS.md``: the first that exists and is not empty,
  at most one per folder (Codex). Empty files are skipped (Codex).
* **Folders and globs.** ``.claude/rules/**/*.md`` and ``.cursor/rules/**/*.mdc`` load every
  match, by path; ``.clinerules`` is a file or a folder whose ``.md`` files are loaded by name
  ("numeric prefixes control the order", docs.cline.bot/features/cline-rules/overview). Their
  front matter may scope them to paths (:mod:`ctxengine.assembly.rules`).
* **Imports.** In the kinds of :data:`~ctxengine.policy.defaults.RULES_IMPORT_KINDS`
  (``CLAUDE.md``, ``GEMINI.md``), an ``@path`` that names an existing file — relative to the
  importing file, ``~/…`` or absolute — outside code spans and fenced code blocks imports it
  (Claude Code: "imports are not evaluated inside markdown code spans and code blocks",
  relative and absolute paths allowed). An imported file is loaded once, right after the file
  that first imports it, at most
  :data:`~ctxengine.policy.defaults.RULES_IMPORT_MAX_DEPTH` hops away (Claude Code: 5 hops;
  Gemini CLI: depth 5); a deeper import is left as text with a note. An ``@path`` that
  names no file is left as text, with a note when it looks like a path (it holds a ``/`` or
  ends in a file extension: ``@docs/style.md``, ``@~/notes``, not ``@alice``). An import
  that leads back to a file of its own chain is an error naming the cycle (Gemini CLI
  "detects and prevents circular imports").
* Nested rules files below the working directory (Claude Code loads them when a file of
  their folder is read; Gemini CLI's just-in-time context) are not searched.
"""

from __future__ import annotations

import os
import re
from collections.abc import Sequence
from dataclasses import dataclass, replace
from pathlib import Path

from ctxengine.assembly.rules import RuleFile, parse_rule, rule_kind
from ctxengine.errors import ConfigError, RulesFileError
from ctxengine.policy.defaults import (
    RULES_IMPORT_KINDS,
    RULES_IMPORT_MAX_DEPTH,
    RULES_PROJECT_NAMES,
    RULES_ROOT_MARKERS,
    RULES_USER_NAMES,
)

__all__ = ["RulesDiscovery", "discover_rules", "find_root"]

_FENCE = re.compile(r"^\s{0,3}(`{3,}|~{3,})")
_SPAN = re.compile(r"(`+)(?:(?!\1).)*?\1")
_IMPORT = re.compile(r"(?:(?<=\s)|^)@(\S+)")
_TRAILING = ".,;:!?)]}'\""
#: An ``@`` token that names a file when it holds a ``/`` or ends in an extension.
_PATH_LIKE = re.compile(r"/|\.[A-Za-z0-9]{1,10}$")


@dataclass(frozen=True, slots=True)
class RulesDiscovery:
    """The rules files of one working directory.

    Attributes:
        cwd: the working directory (absolute, POSIX).
        root: the repository root, or ``None`` when none was found.
        home: the home folder searched for user-level files, or ``None``.
        searched: the folders searched, in order (user level first).
        files: every rules file found, in load order, imported files right after their
            importer (each file once).
    """

    cwd: str
    root: str | None
    home: str | None
    searched: tuple[str, ...]
    files: tuple[RuleFile, ...]

    @property
    def base(self) -> str:
        """The folder path-scoped globs are relative to: the root, else the working
        directory."""
        return self.root or self.cwd


def find_root(cwd: Path, markers: Sequence[str] = RULES_ROOT_MARKERS) -> Path | None:
    """The nearest folder at or above ``cwd`` that holds one of ``markers``, or ``None``."""
    for folder in (cwd, *cwd.parents):
        if any((folder / m).exists() for m in markers):
            return folder
    return None


def discover_rules(
    cwd: str | os.PathLike[str],
    *,
    home: str | os.PathLike[str] | None = None,
    root: str | os.PathLike[str] | None = None,
    names: Sequence[str] = RULES_PROJECT_NAMES,
    user_names: Sequence[str] = RULES_USER_NAMES,
    import_kinds: Sequence[str] = RULES_IMPORT_KINDS,
    max_depth: int = RULES_IMPORT_MAX_DEPTH,
) -> RulesDiscovery:
    """Find and read the rules files for ``cwd`` (see the module docstring for the order).

    Args:
        cwd: the working directory.
        home: the user's home folder (default: the current user's); user-level files are
            looked up under it by ``user_names``.
        root: the repository root (default: :func:`find_root`); must be ``cwd`` or above it.
        names: the names looked for in each folder from the root down to ``cwd``: a path
            relative to the folder; ``a|b`` takes the first of the alternatives that exists and
            is not empty; a name with ``*``, ``?`` or ``[`` is a glob; a name that is a folder
            loads its ``.md`` files by name.
        user_names: the same, relative to ``home``.
        import_kinds: kinds (:func:`~ctxengine.assembly.rules.rule_kind`) whose ``@path``
            imports are expanded.
        max_depth: most hops an import chain may take.

    Returns:
        The :class:`RulesDiscovery`.

    Raises:
        ConfigError: ``cwd`` is not a folder, or ``root`` is not at or above it.
        RulesFileError: a file that cannot be read, malformed front matter, or an import
            cycle (naming every file of the cycle).
    """
    here = Path(cwd).expanduser().resolve()
    if not here.is_dir():
        raise ConfigError(f"{here}: not a folder")
    top = Path(root).expanduser().resolve() if root is not None else find_root(here)
    if top is not None and top != here and top not in here.parents:
        raise ConfigError(f"{top}: the repository root must be {here} or a folder above it")
    user = Path(home).expanduser().resolve() if home is not None else Path.home().resolve()
    base = top or here
    reader = _Reader(base, user, tuple(import_kinds), max_depth)
    searched: list[str] = []
    if user_names and user.is_dir():
        searched.append(user.as_posix())
        for name in user_names:
            for path, folder_file in _matches(user, name):
                reader.load(path, name, "user", folder_file)
    chain = [here]
    while top is not None and chain[-1] != top:
        chain.append(chain[-1].parent)
    for folder in reversed(chain):
        level = "root" if folder == top else "cwd" if folder == here else "directory"
        searched.append(folder.as_posix())
        for name in names:
            for path, folder_file in _matches(folder, name):
                reader.load(path, name, level, folder_file)
    return RulesDiscovery(
        cwd=here.as_posix(),
        root=top.as_posix() if top is not None else None,
        home=user.as_posix() if user_names else None,
        searched=tuple(dict.fromkeys(searched)),
        files=tuple(reader.files),
    )


def _read(path: Path, shown: str) -> str:
    try:
        return path.read_text(encoding="utf-8", errors="replace")
    except OSError as exc:
        raise RulesFileError(shown, f"cannot be read: {exc.strerror or exc}") from exc


def _matches(folder: Path, name: str) -> list[tuple[Path, bool]]:
    """The files ``name`` selects in ``folder``, each with whether it came from a folder or a
    glob (a modular rule file, whose front matter is read)."""
    if "|" in name:
        for alt in name.split("|"):
            path = folder / alt
            if path.is_file() and path.read_text(encoding="utf-8", errors="replace").strip():
                return [(path, False)]
        return []
    if any(ch in name for ch in "*?["):
        found = sorted((p for p in folder.glob(name) if p.is_file()), key=lambda p: p.as_posix())
        return [(p, True) for p in found]
    path = folder / name
    if path.is_dir():
        return [(p, True) for p in sorted(path.glob("*.md")) if p.is_file()]
    return [(path, False)] if path.is_file() else []


class _Reader:
    """Loads files once each, expanding imports."""

    def __init__(self, base: Path, home: Path, import_kinds: tuple[str, ...], max_depth: int):
        self.base = base
        self.home = home
        self.import_kinds = import_kinds
        self.max_depth = max_depth
        self.files: list[RuleFile] = []
        self.seen: set[Path] = set()

    def shown(self, path: Path) -> str:
        """``path`` as shown: relative to the base, else ``~/…``, else absolute."""
        for top, prefix in ((self.base, ""), (self.home, "~/")):
            try:
                return prefix + path.relative_to(top).as_posix()
            except ValueError:
                continue
        return path.as_posix()

    def load(self, path: Path, name: str, level: str, modular: bool) -> None:
        real = path.resolve()
        if real in self.seen:
            return
        shown = self.shown(path)
        text = _read(path, shown)
        if not text.strip():
            return
        self.seen.add(real)
        kind = rule_kind(name)
        rule = parse_rule(
            text, shown, kind=kind, level=level, base=self.base.as_posix(), front_matter=modular
        )
        at = len(self.files)
        self.files.append(rule)
        if kind in self.import_kinds:
            notes = self.expand(real, rule, (real,), 0, kind)
            if notes:
                self.files[at] = replace(self.files[at], notes=tuple(notes))

    def expand(
        self, path: Path, rule: RuleFile, chain: tuple[Path, ...], depth: int, kind: str
    ) -> list[str]:
        """Append the files ``rule`` (read from ``path``) imports, depth first; returns the
        notes on imports not followed."""
        notes: list[str] = []
        for line_no, token in _imports(rule.text):
            target = self.resolve(path.parent, token)
            if target is None:
                named = token.rstrip(_TRAILING) or token
                if _PATH_LIKE.search(named):
                    notes.append(f"@{named} (line {line_no}) not imported: no such file")
                continue
            if target in chain:
                cycle = " → ".join(self.shown(p) for p in (*chain, target))
                raise RulesFileError(rule.path, f"import cycle: {cycle}", line_no)
            if target in self.seen:
                continue
            if depth + 1 > self.max_depth:
                notes.append(
                    f"@{token} (line {line_no}) not imported: more than {self.max_depth} "
                    f"hops from {self.shown(chain[0])}"
                )
                continue
            shown = self.shown(target)
            text = _read(target, shown)
            self.seen.add(target)
            child = parse_rule(
                text,
                shown,
                kind=kind,
                level="import",
                base=self.base.as_posix(),
                front_matter=False,
                imported_by=rule.path,
                inherit=rule,
            )
            at = len(self.files)
            self.files.append(child)
            deeper = self.expand(target, child, (*chain, target), depth + 1, kind)
            if deeper:
                self.files[at] = replace(self.files[at], notes=tuple(deeper))
        return notes

    def resolve(self, folder: Path, token: str) -> Path | None:
        """The existing file ``token`` names (trailing punctuation tried off), or ``None``."""
        candidates = [token]
        stripped = token.rstrip(_TRAILING)
        if stripped and stripped != token:
            candidates.append(stripped)
        for cand in candidates:
            if cand.startswith("~/"):
                path = self.home / cand[2:]
            else:
                path = Path(cand) if os.path.isabs(cand) else folder / cand
            if path.is_file():
                return path.resolve()
        return None


def _imports(text: str) -> list[tuple[int, str]]:
    """``(line, path)`` of each ``@path`` outside fenced code blocks and code spans."""
    out: list[tuple[int, str]] = []
    fence: str | None = None
    for no, line in enumerate(text.split("\n"), start=1):
        m = _FENCE.match(line)
        if m is not None:
            mark = m.group(1)
            if fence is None:
                fence = mark[0] * len(mark)
            elif mark.startswith(fence):
                fence = None
            continue
        if fence is not None:
            continue
        visible = _SPAN.sub(lambda s: " " * len(s.group(0)), line)
        out.extend((no, hit.group(1)) for hit in _IMPORT.finditer(visible))
    return out
