"""Rules files as values: :class:`RuleFile`, front matter, path scopes and the files a
session has touched. Pure: the files are found and read by :mod:`ctxengine.workspace.rules_files`.

Path-scoped rules (a ``paths:`` or ``globs:`` list in the front matter) are loaded only once a
file they match has been read or edited: Claude Code loads a ``.claude/rules`` file with
``paths`` "when Claude works with files matching the patterns", Cursor attaches a ``.mdc`` rule
with ``globs`` when a matching file is in context ("Auto Attached"), and Cline activates a
conditional rule when the files of the task match it (docs.anthropic.com/en/docs/claude-code/
memory; docs.cline.bot/features/cline-rules/conditional-rules). After a compaction Claude Code
loses path-scoped rules "until a matching file is read again" (code.claude.com/docs/en/
context-window): the touched files are therefore read from the context of the current epoch.
"""

from __future__ import annotations

import posixpath
import re
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from functools import lru_cache
from typing import Literal

from ctxengine.errors import RulesFileError
from ctxengine.model import Message
from ctxengine.policy.defaults import RULES_SCOPE_FIELDS
from ctxengine.summarizers.factory import compact_instructions

__all__ = [
    "Activation",
    "FrontMatter",
    "RuleFile",
    "glob_matches",
    "parse_rule",
    "rule_kind",
    "scope_of",
    "split_front_matter",
    "touched_paths",
]

#: How a rules file is loaded: ``always``; ``scoped`` once a file matching its globs is
#: touched; ``manual`` never by itself (a Cursor rule with neither ``globs`` nor
#: ``alwaysApply: true`` is only attached when the user or the agent asks for it).
Activation = Literal["always", "scoped", "manual"]

#: A parsed front-matter value: a string, a list of strings or a boolean.
FrontValue = str | bool | tuple[str, ...]


@dataclass(frozen=True, slots=True)
class FrontMatter:
    """The ``---`` block at the top of a rules file.

    Attributes:
        fields: every ``key: value`` it holds (lists as tuples, ``true``/``false`` as bools).
        lines: the 1-based line of each key in the file (for error messages).
        body_line: the 1-based line the body starts on (1 without front matter).
    """

    fields: Mapping[str, FrontValue] = field(default_factory=dict)
    lines: Mapping[str, int] = field(default_factory=dict)
    body_line: int = 1


@dataclass(frozen=True, slots=True)
class RuleFile:
    """One rules file as it is loaded into the head.

    Attributes:
        path: the file as shown: relative to the repository root for a project file
            (``pkg/AGENTS.md``), ``~/…`` for a user-level file, else absolute.
        text: its body: front matter removed, otherwise verbatim.
        kind: the system it belongs to (:func:`rule_kind`): ``agents``, ``claude``,
            ``gemini``, ``cursor``, ``cline``, ``copilot`` or ``custom``.
        level: where it was found: ``user`` (the home folder), ``root`` (the repository
            root), ``directory`` (between the root and the working directory), ``cwd`` (the
            working directory), or ``import`` (expanded from an ``@path`` of ``imported_by``).
        activation: see :data:`Activation`.
        scope: the globs of a scoped rule, relative to ``base``; ``()`` otherwise.
        base: the folder (absolute, POSIX) that ``scope`` globs and touched paths are taken
            relative to: the repository root, else the working directory.
        imported_by: the file whose ``@path`` brought it in, or ``None``.
        instructions: the body of its "Compact instructions" section, if any
            (:func:`ctxengine.summarizers.factory.compact_instructions`).
        notes: what was not done while loading it (an import past the depth limit, or one
            naming no file).
    """

    path: str
    text: str
    kind: str = "custom"
    level: str = "cwd"
    activation: Activation = "always"
    scope: tuple[str, ...] = ()
    base: str = ""
    imported_by: str | None = None
    instructions: str | None = None
    notes: tuple[str, ...] = ()

    def matches(self, touched: Iterable[str]) -> str | None:
        """The first of ``touched`` (paths relative to :attr:`base`) that one of
        :attr:`scope`'s globs matches, or ``None``."""
        for path in touched:
            if any(glob_matches(g, path) for g in self.scope):
                return path
        return None


def rule_kind(name: str) -> str:
    """The system a rules-file name belongs to: ``AGENTS*`` → ``agents``, ``CLAUDE*`` and
    ``.claude/…`` → ``claude``, ``GEMINI*`` and ``.gemini/…`` → ``gemini``, ``.cursor/…`` →
    ``cursor``, ``.clinerules`` → ``cline``, ``copilot`` → ``copilot``, else ``custom``."""
    lower = name.lower()
    base = posixpath.basename(lower)
    if base.startswith("agents"):
        return "agents"
    if base.startswith("claude") or ".claude/" in lower:
        return "claude"
    if base.startswith("gemini") or ".gemini/" in lower:
        return "gemini"
    if ".cursor/" in lower or base.endswith(".mdc"):
        return "cursor"
    if ".clinerules" in lower:
        return "cline"
    if "copilot" in lower or base.endswith(".instructions.md"):
        return "copilot"
    return "custom"


_KEY = re.compile(r"^([A-Za-z_][\w-]*)\s*:\s*(.*?)\s*$")
_ITEM = re.compile(r"^\s*-\s*(.*?)\s*$")


def _scalar(raw: str) -> str | bool:
    if len(raw) >= 2 and raw[0] == raw[-1] and raw[0] in "\"'":
        return raw[1:-1]
    if raw.lower() in ("true", "false"):
        return raw.lower() == "true"
    return raw


def _inline_list(raw: str) -> tuple[str, ...]:
    inner = raw[1:-1].strip()
    if not inner:
        return ()
    return tuple(str(_scalar(p.strip())) for p in _split_commas(inner) if p.strip())


def split_front_matter(text: str, path: str) -> tuple[FrontMatter, str]:
    """Split the YAML-style front matter off a rules file.

    The block opens with a ``---`` first line and closes with the next ``---`` line. It is
    read as flat ``key: value`` lines, ``key: [a, b]`` lists and ``key:`` followed by
    ``- item`` lines (what ``.claude/rules``, ``.cursor/rules`` and ``.clinerules`` files
    use); indented lines continue the previous value and are ignored. ``# …`` lines are
    comments.

    Args:
        text: the whole file.
        path: the file as shown in error messages.

    Returns:
        The front matter (empty without a block) and the body after it, unchanged.

    Raises:
        RulesFileError: an opened block never closed, an inline list never closed, a scope
            field (``paths``, ``globs``, ``applyTo``) indented (it would be read as the
            continuation of another value and the rule loaded always), an indented first
            line, or a line that is none of the above (naming the file and line).
    """
    lines = text.split("\n")
    if not lines or lines[0].rstrip("\r").lstrip("\ufeff") != "---":
        return FrontMatter(), text
    fields: dict[str, FrontValue] = {}
    where: dict[str, int] = {}
    current: str | None = None
    for i, raw in enumerate(lines[1:], start=2):
        line = raw.rstrip("\r")
        if line == "---":
            return FrontMatter(fields, where, i + 1), "\n".join(lines[i:])
        if not line.strip() or line.lstrip().startswith("#"):
            continue
        item = _ITEM.match(line)
        if item is not None and current is not None:
            value = fields.get(current, ())
            if not isinstance(value, tuple):
                raise RulesFileError(path, f"{current!r} mixes a value and a list", i)
            fields[current] = (*value, str(_scalar(item.group(1))))
            continue
        key = _KEY.match(line)
        if key is not None:
            name, raw_value = key.group(1), key.group(2)
            where[name] = i
            current = name
            if not raw_value:
                fields[name] = ()
            elif raw_value.startswith("[") and raw_value.endswith("]"):
                fields[name] = _inline_list(raw_value)
            elif raw_value.startswith("["):
                raise RulesFileError(path, f"{name!r}: a list opened with '[' is never closed", i)
            else:
                fields[name] = _scalar(raw_value)
            continue
        if line[:1] in (" ", "\t"):
            nested = _KEY.match(line.strip())
            if nested is not None and (current is None or nested.group(1) in RULES_SCOPE_FIELDS):
                key_name = nested.group(1)
                raise RulesFileError(
                    path, f"{key_name!r} is indented: front matter keys start the line", i
                )
            if current is None:
                raise RulesFileError(path, "an indented line with no key above it", i)
            continue  # the continuation of a multi-line value
        raise RulesFileError(path, f"front matter line is not 'key: value': {line[:60]!r}", i)
    raise RulesFileError(path, "front matter opened with '---' is never closed", 1)


def _split_commas(text: str) -> list[str]:
    """``text`` split at the commas outside ``{…}`` braces."""
    out: list[str] = []
    depth = 0
    start = 0
    for i, ch in enumerate(text):
        if ch == "{":
            depth += 1
        elif ch == "}":
            depth = max(0, depth - 1)
        elif ch == "," and depth == 0:
            out.append(text[start:i])
            start = i + 1
    out.append(text[start:])
    return out


def scope_of(front: FrontMatter, kind: str, path: str) -> tuple[Activation, tuple[str, ...]]:
    """How a rules file with front matter ``front`` is loaded, and its globs.

    ``alwaysApply: true`` loads it always (Cursor); a non-empty ``paths``, ``globs`` or
    ``applyTo`` (:data:`~ctxengine.policy.defaults.RULES_SCOPE_FIELDS`; a list, or one string
    of comma-separated globs as Cursor writes them) scopes it; a Cursor rule with neither is
    ``manual``; anything else is loaded always.

    Raises:
        RulesFileError: ``alwaysApply`` that is not ``true``/``false``, or a scope field that
            is a boolean.
    """
    always = front.fields.get("alwaysApply")
    if always is not None and not isinstance(always, bool):
        raise RulesFileError(
            path, "'alwaysApply' must be true or false", front.lines["alwaysApply"]
        )
    globs: list[str] = []
    for name in RULES_SCOPE_FIELDS:
        value = front.fields.get(name)
        if value is None:
            continue
        if isinstance(value, bool):
            raise RulesFileError(
                path, f"{name!r} must be a glob or a list of globs", front.lines[name]
            )
        items = value if isinstance(value, tuple) else tuple(_split_commas(value))
        globs.extend(g.strip() for g in items if g.strip())
    if always is True:
        return "always", ()
    if globs:
        return "scoped", tuple(dict.fromkeys(globs))
    if kind == "cursor":
        return "manual", ()
    return "always", ()


@lru_cache(maxsize=512)
def _glob_regex(pattern: str) -> re.Pattern[str]:
    """The regular expression of one glob (see :func:`glob_matches`)."""
    p = pattern.strip().replace("\\", "/")
    while p.startswith("./"):
        p = p[2:]
    anchored = "/" in p.rstrip("/")
    p = p.lstrip("/")
    if p.endswith("/"):
        p += "**"
    out = [] if anchored else ["(?:.*/)?"]
    i = 0
    while i < len(p):
        ch = p[i]
        if p.startswith("**/", i):
            out.append("(?:.*/)?")
            i += 3
        elif p.startswith("**", i):
            out.append(".*")
            i += 2
        elif ch == "*":
            out.append("[^/]*")
            i += 1
        elif ch == "?":
            out.append("[^/]")
            i += 1
        elif ch == "{":
            end = p.find("}", i)
            if end < 0:
                out.append(re.escape(ch))
                i += 1
                continue
            options = p[i + 1 : end].split(",")
            out.append("(?:" + "|".join(_glob_regex_body(o) for o in options) + ")")
            i = end + 1
        elif ch == "[":
            end = p.find("]", i + 1)
            if end < 0:
                out.append(re.escape(ch))
                i += 1
                continue
            body = p[i + 1 : end]
            if body.startswith("!"):
                body = "^" + body[1:]
            out.append("[" + body.replace("\\", "\\\\") + "]")
            i = end + 1
        else:
            out.append(re.escape(ch))
            i += 1
    return re.compile("".join(out) + "(?:/.*)?")


def _glob_regex_body(option: str) -> str:
    """One ``{a,b}`` alternative: ``*`` and ``?`` keep their meaning, nothing else does."""
    return "".join(
        "[^/]*" if ch == "*" else "[^/]" if ch == "?" else re.escape(ch) for ch in option
    )


def glob_matches(pattern: str, path: str) -> bool:
    """Whether ``path`` (relative, ``/``-separated) matches the glob ``pattern``.

    gitignore-like rules, as Claude Code, Cursor and Cline glob fields are written: ``*``
    and ``?`` stay within one path segment, ``**`` crosses segments (``**/`` also matches
    none), ``{a,b}`` is a choice, ``[…]`` a character class; a pattern without an inner ``/``
    matches at any depth (``*.py`` matches ``src/a.py``); a pattern that matches a folder
    matches everything under it.
    """
    if not pattern.strip():
        return False
    return _glob_regex(pattern).fullmatch(path.replace("\\", "/")) is not None


def _relative(path: str, cwd: str, base: str) -> str | None:
    """``path`` (absolute, or relative to ``cwd``) relative to ``base``, or ``None`` when it
    lies outside it."""
    p = path.replace("\\", "/")
    if not posixpath.isabs(p):
        p = posixpath.join(cwd or base, p)
    p = posixpath.normpath(p)
    root = posixpath.normpath(base) if base else ""
    if not root:
        return posixpath.normpath(path.replace("\\", "/"))
    if p == root:
        return ""
    prefix = root.rstrip("/") + "/"
    return p[len(prefix) :] if p.startswith(prefix) else None


def touched_paths(messages: Sequence[Message], *, cwd: str, base: str) -> tuple[str, ...]:
    """The files read or edited by the tool calls of ``messages``, relative to ``base``
    (absolute, POSIX), oldest first, each once; a relative path is taken relative to ``cwd``.
    Files outside ``base`` and calls that name no file are left out. Effects come from
    :func:`~ctxengine.summarizers.tools.call_effects` (names and arguments of read, edit,
    write, patch and shell calls)."""
    from ctxengine.summarizers.shell import CURRENT_FILE
    from ctxengine.summarizers.tools import call_effects

    seen: dict[str, None] = {}
    for m in messages:
        for call in m.tool_calls:
            for effect in call_effects(call):
                if effect.path == CURRENT_FILE:
                    continue
                rel = _relative(effect.path, cwd, base)
                if rel:
                    seen.setdefault(rel, None)
    return tuple(seen)


def parse_rule(
    text: str,
    path: str,
    *,
    kind: str,
    level: str,
    base: str,
    front_matter: bool,
    imported_by: str | None = None,
    inherit: RuleFile | None = None,
) -> RuleFile:
    """A :class:`RuleFile` from a file's text.

    Args:
        text: the whole file.
        path: the file as shown.
        kind / level / base / imported_by: see :class:`RuleFile`.
        front_matter: read a leading ``---`` block (files of a rules folder:
            ``.claude/rules``, ``.cursor/rules``, ``.clinerules/``); a file with a fixed name
            such as ``CLAUDE.md`` is taken verbatim, as a Markdown thematic break may open it.
        inherit: the importing file, whose activation and scope an imported file takes (it
            loads with it).

    Raises:
        RulesFileError: malformed front matter (see :func:`split_front_matter` and
            :func:`scope_of`).
    """
    body = text
    activation: Activation = "always"
    scope: tuple[str, ...] = ()
    if front_matter:
        front, body = split_front_matter(text, path)
        activation, scope = scope_of(front, kind, path)
    if inherit is not None:
        activation, scope = inherit.activation, inherit.scope
    return RuleFile(
        path=path,
        text=body,
        kind=kind,
        level=level,
        activation=activation,
        scope=scope,
        base=base,
        imported_by=imported_by,
        instructions=compact_instructions(body),
    )
