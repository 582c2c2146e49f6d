"""The stable head: :class:`ContextAssembler` builds the system message (and the tool list)
that opens every request, from named sections in a fixed order. Pure: no file, clock or
process is read here; the caller hands in values, or functions that produce the volatile ones
(:mod:`ctxengine.workspace.environment` has the usual ones).

Sections, in this order (:data:`SECTIONS`):

1. ``base`` — the agent's own instructions, verbatim;
2. ``tools`` — the tool definitions, sent as the request's tool list (not as text): sorted
   by name, every object with its keys sorted, so that the same tools always serialize to the
   same bytes whatever order the caller (or an MCP server) lists them in;
3. ``rules`` — the rules files loaded now (:class:`~.rules.RuleFile`: always-on files, and
   path-scoped ones whose files were touched in this epoch), in the order they were found;
4. ``skills`` — the skill catalog: one ``name: description (path)`` line per skill, by name
   (:class:`~.skills.Skill`; a plain name → description mapping gives ``name: description``
   lines); the bodies enter the conversation only when a skill is activated
   (:mod:`ctxengine.projection.skills`);
5. ``memory`` — the memory index, verbatim;
6. ``environment`` — date, working directory and platform;
7. ``git_status`` — a git status snapshot.

Stable sections come first and volatile ones last, so that a change of date or of git status
leaves the longest prefix intact (providers cache prompts by prefix). The volatile sections
(``environment`` and ``git_status``) are read once per epoch, when its first head is built,
and reused for every later request of the epoch: within an epoch the head is byte-identical
unless a stable section is changed, which is reported as a :class:`CacheBreak` with its
cause (a changed tool list, a rules file added, changed or removed, a path-scoped rule
loaded because a matching file was read). Claude Code likewise takes its git status once,
as "a snapshot in time" that does not update during the conversation, and Anthropic's cache
hierarchy (tools, then system, then messages) invalidates everything after a changed tool
list (docs.anthropic.com prompt caching, "what invalidates the cache").
"""

from __future__ import annotations

from collections.abc import Callable, Collection, Mapping, Sequence
from dataclasses import dataclass
from itertools import pairwise
from typing import Any, Literal

import orjson

from ctxengine.errors import ConfigError
from ctxengine.model import Message, TextPart, ToolCallPart, system
from ctxengine.projection.tools import tool_name
from ctxengine.tokens.base import Estimator

from .rules import RuleFile, touched_paths
from .skills import Skill

__all__ = [
    "SCOPED_RULE_ATTACHMENT",
    "SECTIONS",
    "SYNTHETIC_SCOPED_RULE",
    "VOLATILE_SECTIONS",
    "CacheBreak",
    "ContextAssembler",
    "Environment",
    "Head",
    "HeadSection",
    "attachment_message",
]

#: The head's sections, in the order they are assembled.
SECTIONS: tuple[str, ...] = (
    "base",
    "tools",
    "rules",
    "skills",
    "memory",
    "environment",
    "git_status",
)
#: Sections read once per epoch (snapshotted) instead of on every request.
VOLATILE_SECTIONS: frozenset[str] = frozenset({"environment", "git_status"})

#: Headings of the text sections (``base`` has none: it is the agent's own text).
TITLES: Mapping[str, str] = {
    "rules": "# Rules",
    "skills": "# Skills",
    "memory": "# Memory",
    "environment": "# Environment",
    "git_status": "# Git status",
}
#: The line above each rules file's text.
RULE_HEADER = "Contents of {path}:"
RULE_HEADER_SCOPED = "Contents of {path} (applies to files matching {globs}):"
RULE_HEADER_IMPORTED = "Contents of {path} (imported by {parent}):"
#: A path-scoped rules file loaded mid-conversation (``scoped_rules="attach"``): the injected
#: user-role message appended after the tool result that touched a matching file.
SCOPED_RULE_ATTACHMENT = (
    "<system-reminder>\nContents of {path} (path-scoped rules for files matching {globs}; "
    "loaded because {hit} was touched):\n\n{text}\n</system-reminder>"
)
#: ``meta["synthetic"]`` of such a message; ``meta["rules_file"]`` names the file.
SYNTHETIC_SCOPED_RULE = "scoped_rule"
ENVIRONMENT_TEXT = "Date: {date}\nWorking directory: {cwd}\nPlatform: {platform}"
GIT_NOTE = (
    "The git status when this part of the conversation began; it is not updated as files change."
)

#: What names each stable section in a cache break's cause.
_LABELS: Mapping[str, str] = {
    "base": "base instructions",
    "tools": "tool definitions",
    "rules": "rules",
    "skills": "skill catalog",
    "memory": "memory index",
}


@dataclass(frozen=True, slots=True)
class Environment:
    """The environment section's values.

    Attributes:
        date: today's date (ISO ``YYYY-MM-DD``).
        cwd: the working directory.
        platform: the operating system (``linux``, ``darwin``, ``win32`` …).
    """

    date: str
    cwd: str
    platform: str


@dataclass(frozen=True, slots=True)
class HeadSection:
    """One section of a head.

    Attributes:
        name: one of :data:`SECTIONS`.
        text: its text in the head's system message (``""`` when empty, and for ``tools``,
            which is sent as the tool list).
        tokens: its size in tokens: ``estimator.text(text)``, or ``estimator.tools(tools)``.
        volatile: whether it is snapshotted once per epoch.
        sources: where it came from: the rules files' paths, the tools' or skills' names.
    """

    name: str
    text: str
    tokens: int
    volatile: bool
    sources: tuple[str, ...] = ()

    def to_dict(self) -> dict[str, Any]:
        """A JSON-ready view (without the text)."""
        return {
            "name": self.name,
            "tokens": self.tokens,
            "volatile": self.volatile,
            "sources": list(self.sources),
        }


@dataclass(frozen=True, slots=True)
class Head:
    """The head of one epoch's requests.

    Attributes:
        epoch: the id of the compaction that opened the epoch (``None``: the first epoch).
        sections: every section of :data:`SECTIONS`, in order (empty ones with 0 tokens).
        message: the system message holding the text sections, or ``None`` when they are
            all empty.
        tools: the tool definitions in their canonical order and form.
        tokens: what the head adds to a request: the message's tokens plus the tools'.
        rules: the rules files loaded into it, in order.
        instructions: the "Compact instructions" sections of those rules files, joined by
            blank lines (for the summarizer), or ``None``.
    """

    epoch: str | None
    sections: tuple[HeadSection, ...]
    message: Message | None
    tools: tuple[Mapping[str, Any], ...]
    tokens: int
    rules: tuple[RuleFile, ...] = ()
    instructions: str | None = None

    @property
    def text(self) -> str:
        """The system message's text (``""`` without one)."""
        return self.message.text if self.message is not None else ""

    @property
    def bytes(self) -> bytes:
        """The head as sent: the system text, a NUL, then the tools as canonical JSON."""
        return self.text.encode() + b"\0" + orjson.dumps(list(self.tools))

    def section(self, name: str) -> HeadSection:
        """The section called ``name``.

        Raises:
            KeyError: ``name`` is not one of :data:`SECTIONS`.
        """
        for s in self.sections:
            if s.name == name:
                return s
        raise KeyError(name)

    def to_dict(self) -> dict[str, Any]:
        """A JSON-ready view: the total tokens and each section's name, tokens, volatility and
        sources (the rules files loaded are the ``rules`` section's sources)."""
        return {
            "tokens": self.tokens,
            "sections": [s.to_dict() for s in self.sections],
        }


@dataclass(frozen=True, slots=True)
class CacheBreak:
    """A stable section of the head changed within an epoch: every request from then on
    misses the provider's prompt cache from that section onward.

    Attributes:
        epoch: the epoch it happened in (see :attr:`Head.epoch`).
        section: the section that changed (``tools``, ``rules``, ``base``, ``skills`` or
            ``memory``).
        cause: what changed, e.g. ``"tool definitions changed mid-epoch: added 'grep'"``.
        tokens_before / tokens_after: the head's tokens before and after.
    """

    epoch: str | None
    section: str
    cause: str
    tokens_before: int
    tokens_after: int


def canonical_tools(tools: Sequence[Mapping[str, Any]]) -> tuple[dict[str, Any], ...]:
    """``tools`` sorted by name, each with its keys sorted at every level.

    Raises:
        ConfigError: a definition that is not a JSON object, that cannot be serialized, or
            two definitions with the same name (providers refuse duplicates).
    """
    out: list[tuple[str, bytes, dict[str, Any]]] = []
    for i, tool in enumerate(tools):
        if not isinstance(tool, Mapping):
            raise ConfigError(f"tool definition {i} is not an object: {type(tool).__name__}")
        try:
            raw = orjson.dumps(tool, option=orjson.OPT_SORT_KEYS)
        except TypeError as exc:
            raise ConfigError(f"tool definition {i} cannot be serialized: {exc}") from exc
        out.append((tool_name(tool), raw, orjson.loads(raw)))
    out.sort(key=lambda t: (t[0], t[1]))
    for (a, _, _), (b, _, _) in pairwise(out):
        if a and a == b:
            raise ConfigError(f"tool {a!r} is defined twice")
    return tuple(t[2] for t in out)


@dataclass(frozen=True, slots=True)
class _Snapshot:
    epoch: str | None
    environment: Environment | None
    git_status: str | None


class ContextAssembler:
    """Builds the head of every request from named sections (see the module docstring for
    the order and the snapshot rule).

    Args:
        base: the agent's base instructions.
        tools: tool definitions (provider-neutral ``{"name", "description", "parameters"}``
            or OpenAI's ``{"type": "function", "function": {…}}``).
        rules: rules files, in the order found (see
            :func:`ctxengine.workspace.rules_files.discover_rules`).
        skills: the skill catalog: :class:`~.skills.Skill` values (see
            :func:`ctxengine.workspace.skills.discover_skills`), each shown as its
            :attr:`~.skills.Skill.catalog_line`, or a name → one-line description mapping.
        memory: the memory index text.
        environment: the environment, or a function returning it (called once per epoch).
        git_status: a git status text, or a function returning it or ``None`` (called once
            per epoch).
        cwd: the working directory: relative paths in tool calls are taken relative to it
            when matching path-scoped rules (default: each rule's ``base``).
        scoped_rules: where a path-scoped rules file goes once a matching file is touched:
            ``"attach"`` (the default): never into the head; a session appends it to the
            history as an injected user-role message right after the tool result that
            touched the file (:meth:`attachments`), once, so the head and every earlier
            message stay byte-identical (no cache break) and compactions re-inject it with
            the other rules (Claude Code loads nested rules the same way, as attachments
            in the transcript); ``"head"``: into the rules section of the head, rebuilt
            from the messages of each request (a cache break when one loads mid-epoch).

    Attributes:
        breaks: every :class:`CacheBreak` found so far, oldest first.

    Raises:
        ConfigError: invalid tool definitions (see :func:`canonical_tools`).
    """

    def __init__(
        self,
        *,
        base: str = "",
        tools: Sequence[Mapping[str, Any]] = (),
        rules: Sequence[RuleFile] = (),
        skills: Mapping[str, str] | Sequence[Skill] | None = None,
        memory: str = "",
        environment: Environment | Callable[[], Environment] | None = None,
        git_status: str | Callable[[], str | None] | None = None,
        cwd: str = "",
        scoped_rules: Literal["attach", "head"] = "attach",
    ) -> None:
        if scoped_rules not in ("attach", "head"):
            raise ConfigError(f"scoped_rules must be 'attach' or 'head', not {scoped_rules!r}")
        self.scoped_rules = scoped_rules
        self._base = base
        self._tools = canonical_tools(tools)
        self._rules = tuple(rules)
        self._skills, self._skill_values = _catalog(skills or {})
        self._memory = memory
        self._environment = environment
        self._git_status = git_status
        self.cwd = cwd
        self.breaks: list[CacheBreak] = []
        self._snapshot: _Snapshot | None = None
        self._last: Head | None = None
        self._cached: tuple[tuple[Any, ...], Head] | None = None
        self._version = 0
        self._effects: dict[tuple[str, str, str, int, int], tuple[str, ...]] = {}

    # ------------------------------------------------------------------ the stable sections

    @property
    def base(self) -> str:
        """The base instructions."""
        return self._base

    @property
    def tools(self) -> tuple[Mapping[str, Any], ...]:
        """The tool definitions, canonical (sorted by name, keys sorted)."""
        return self._tools

    @property
    def rules(self) -> tuple[RuleFile, ...]:
        """Every rules file given, loaded or not."""
        return self._rules

    @property
    def skills(self) -> Mapping[str, str]:
        """The skill catalog, by name: name → description."""
        return {name: desc for name, (desc, _) in self._skills.items()}

    @property
    def skill_values(self) -> tuple[Skill, ...]:
        """The skills given as :class:`~.skills.Skill` values, by name (bodies included)."""
        return tuple(self._skill_values.values())

    def skill(self, name: str) -> Skill | None:
        """The :class:`~.skills.Skill` called ``name``, or ``None``."""
        return self._skill_values.get(name)

    @property
    def memory(self) -> str:
        """The memory index."""
        return self._memory

    @property
    def scoped(self) -> bool:
        """Whether some rules file loads into the head only when a matching file is touched
        (``scoped_rules="head"``): the head then depends on the request's messages."""
        return self.scoped_rules == "head" and self._has_scoped()

    @property
    def attaches(self) -> bool:
        """Whether some rules file is attached to the history when a matching file is
        touched (``scoped_rules="attach"``, :meth:`attachments`)."""
        return self.scoped_rules == "attach" and self._has_scoped()

    def _has_scoped(self) -> bool:
        return any(r.activation == "scoped" for r in self._rules)

    def attachments(
        self, calls: Sequence[ToolCallPart], attached: Collection[str]
    ) -> tuple[tuple[RuleFile, str], ...]:
        """The path-scoped rules files that the files ``calls`` read or edited load, with
        the touched path that loaded each, in the order the rules were found: every scoped
        file not in ``attached`` (paths of files attached before) that matches, then the
        files it imports. Empty with ``scoped_rules="head"``.

        Each becomes one injected user-role message (:func:`attachment_message`), appended
        by the session after the tool result of the call that touched the file.
        """
        if not self.attaches or not calls:
            return ()
        one = (Message("assistant", tuple(calls)),)
        touched: dict[str, tuple[str, ...]] = {}
        found: dict[str, tuple[RuleFile, str]] = {}
        for rule in self._rules:
            if rule.path in attached or rule.path in found or rule.activation == "manual":
                continue
            if rule.activation == "scoped":
                if rule.base not in touched:
                    touched[rule.base] = touched_paths(
                        one, cwd=self.cwd or rule.base, base=rule.base
                    )
                hit = rule.matches(touched[rule.base])
                if hit is not None:
                    found[rule.path] = (rule, hit)
            elif rule.imported_by is not None and rule.imported_by in found:
                found[rule.path] = (rule, found[rule.imported_by][1])
        return tuple(found.values())

    def set_base(self, base: str) -> None:
        """Replace the base instructions (mid-epoch: a cache break)."""
        self._base = base
        self._version += 1

    def set_tools(self, tools: Sequence[Mapping[str, Any]]) -> None:
        """Replace the tool definitions (mid-epoch: a cache break when they differ).

        Raises:
            ConfigError: see :func:`canonical_tools`.
        """
        self._tools = canonical_tools(tools)
        self._version += 1

    def set_rules(self, rules: Sequence[RuleFile]) -> None:
        """Replace the rules files (mid-epoch: a cache break when the loaded ones differ)."""
        self._rules = tuple(rules)
        self._version += 1

    def set_skills(self, skills: Mapping[str, str] | Sequence[Skill]) -> None:
        """Replace the skill catalog (mid-epoch: a cache break when it differs).

        Raises:
            ConfigError: two skills with the same name.
        """
        self._skills, self._skill_values = _catalog(skills)
        self._version += 1

    def set_memory(self, memory: str) -> None:
        """Replace the memory index (mid-epoch: a cache break when it differs)."""
        self._memory = memory
        self._version += 1

    # ------------------------------------------------------------------ building

    def build(
        self,
        epoch: str | None,
        estimator: Estimator,
        *,
        messages: Sequence[Message] = (),
        provisional: bool = False,
    ) -> Head:
        """The head of a request of ``epoch``.

        Args:
            epoch: the id of the compaction that opened the epoch (``None``: the first).
            estimator: sizes the sections.
            messages: the request's other messages: the files their tool calls read or
                edited load the path-scoped rules that match them.
            provisional: the head of a request that may never be sent (measuring a
                tentative compaction): the volatile sections are not read for it when a
                snapshot exists (the current one is reused), no snapshot is kept, and no
                cache break is reported.

        Returns:
            The :class:`Head`. Within one epoch, heads built without a change to a stable
            section are byte-identical (:attr:`Head.bytes`); a change is appended to
            :attr:`breaks`.
        """
        snap = self._snap(epoch, provisional)
        loaded = self._loaded(messages)
        key = (epoch, snap, self._version, tuple((r.path, why) for r, why in loaded), id(estimator))
        if self._cached is not None and self._cached[0] == key:
            head = self._cached[1]
        else:
            head = self._assemble(epoch, snap, loaded, estimator)
            self._cached = (key, head)
        if not provisional:
            last = self._last
            if last is not None and last.epoch == epoch:
                self._report(last, head, loaded)
            self._last = head
        return head

    def _snap(self, epoch: str | None, provisional: bool) -> _Snapshot:
        snap = self._snapshot
        if snap is not None and (snap.epoch == epoch or provisional):
            return snap
        env = self._environment
        git = self._git_status
        fresh = _Snapshot(
            epoch,
            env() if callable(env) else env,
            git() if callable(git) else git,
        )
        if not provisional:
            self._snapshot = fresh
        return fresh

    def _loaded(self, messages: Sequence[Message]) -> list[tuple[RuleFile, str | None]]:
        """The rules files loaded now, each with the touched path that loaded it (``None``
        for an always-on file)."""
        touched: dict[str, tuple[str, ...]] = {}
        out: list[tuple[RuleFile, str | None]] = []
        loaded_paths: set[str] = set()
        for rule in self._rules:
            if rule.activation == "manual":
                continue
            if rule.activation == "always":
                if rule.imported_by is None or rule.imported_by in loaded_paths:
                    out.append((rule, None))
                    loaded_paths.add(rule.path)
                continue
            if self.scoped_rules == "attach":
                continue
            if rule.base not in touched:
                touched[rule.base] = self._touched(messages, rule.base)
            hit = rule.matches(touched[rule.base])
            if hit is not None:
                out.append((rule, hit))
                loaded_paths.add(rule.path)
        return out

    def _touched(self, messages: Sequence[Message], base: str) -> tuple[str, ...]:
        """Files read or edited in ``messages``, relative to ``base`` (per-call results are
        kept, so each call's arguments are parsed once)."""
        seen: dict[str, None] = {}
        for m in messages:
            for call in m.tool_calls:
                key = (base, call.id, call.name, len(call.arguments), hash(call.arguments))
                paths = self._effects.get(key)
                if paths is None:
                    one = Message("assistant", (call,))
                    paths = touched_paths((one,), cwd=self.cwd or base, base=base)
                    self._effects[key] = paths
                for p in paths:
                    seen.setdefault(p, None)
        return tuple(seen)

    def _assemble(
        self,
        epoch: str | None,
        snap: _Snapshot,
        loaded: list[tuple[RuleFile, str | None]],
        estimator: Estimator,
    ) -> Head:
        texts: dict[str, str] = {name: "" for name in SECTIONS}
        sources: dict[str, tuple[str, ...]] = {name: () for name in SECTIONS}
        texts["base"] = self._base
        sources["tools"] = tuple(tool_name(t) for t in self._tools)
        if loaded:
            texts["rules"] = (
                TITLES["rules"] + "\n\n" + "\n\n".join(_rule_block(r) for r, _ in loaded)
            )
            sources["rules"] = tuple(r.path for r, _ in loaded)
        if self._skills:
            lines = "\n".join(line for _, line in self._skills.values())
            texts["skills"] = f"{TITLES['skills']}\n\n{lines}"
            sources["skills"] = tuple(self._skills)
        if self._memory:
            texts["memory"] = f"{TITLES['memory']}\n\n{self._memory}"
        env = snap.environment
        if env is not None:
            body = ENVIRONMENT_TEXT.format(date=env.date, cwd=env.cwd, platform=env.platform)
            texts["environment"] = f"{TITLES['environment']}\n\n{body}"
        if snap.git_status:
            texts["git_status"] = f"{TITLES['git_status']}\n\n{GIT_NOTE}\n\n{snap.git_status}"
        sections = tuple(
            HeadSection(
                name,
                texts[name],
                estimator.tools(self._tools)
                if name == "tools" and self._tools
                else estimator.text(texts[name]),
                name in VOLATILE_SECTIONS,
                sources[name],
            )
            for name in SECTIONS
        )
        text = "\n\n".join(t for name in SECTIONS if (t := texts[name]))
        message = system(text) if text else None
        tokens = (estimator.message(message) if message is not None else 0) + (
            estimator.tools(self._tools) if self._tools else 0
        )
        found = [r.instructions for r, _ in loaded if r.instructions]
        return Head(
            epoch,
            sections,
            message,
            self._tools,
            tokens,
            tuple(r for r, _ in loaded),
            "\n\n".join(found) or None,
        )

    def _report(self, last: Head, head: Head, loaded: list[tuple[RuleFile, str | None]]) -> None:
        """Append a :class:`CacheBreak` for each stable section that differs from ``last``."""
        for name in ("base", "tools", "rules", "skills", "memory"):
            if name == "tools":
                if last.tools == head.tools:
                    continue
                detail = _diff_named(
                    {tool_name(t): t for t in last.tools}, {tool_name(t): t for t in head.tools}
                )
            elif name == "rules":
                if last.section("rules").text == head.section("rules").text:
                    continue
                detail = _diff_rules(last.rules, head.rules, dict((r.path, w) for r, w in loaded))
            else:
                before, after = last.section(name), head.section(name)
                if before.text == after.text:
                    continue
                detail = ""
                if name == "skills":
                    detail = _diff_named(
                        {s: s for s in before.sources}, {s: s for s in after.sources}
                    )
            cause = f"{_LABELS[name]} changed mid-epoch" + (f": {detail}" if detail else "")
            self.breaks.append(CacheBreak(head.epoch, name, cause, last.tokens, head.tokens))


def _catalog(
    skills: Mapping[str, str] | Sequence[Skill],
) -> tuple[dict[str, tuple[str, str]], dict[str, Skill]]:
    """``(name → (description, catalog line), name → Skill)``, both by name.

    Raises:
        ConfigError: two :class:`~.skills.Skill` values with the same name.
    """
    if isinstance(skills, Mapping):
        plain = {n: (d, f"- {n}: {d}") for n, d in sorted(skills.items())}
        return plain, {}
    values: dict[str, Skill] = {}
    for skill in skills:
        if not isinstance(skill, Skill):
            raise ConfigError(f"a skill must be a Skill value, not {type(skill).__name__}")
        other = values.get(skill.name)
        if other is not None:
            raise ConfigError(f"skill {skill.name!r} is given twice: {other.path} and {skill.path}")
        values[skill.name] = skill
    ordered = dict(sorted(values.items()))
    lines = {n: (s.description, s.catalog_line) for n, s in ordered.items()}
    return lines, ordered


def attachment_message(rule: RuleFile, hit: str) -> Message:
    """The injected user-role message that carries the path-scoped rules file ``rule``
    (or a file it imports), loaded because ``hit`` was touched (:data:`SCOPED_RULE_ATTACHMENT`;
    ``meta``: :data:`SYNTHETIC_SCOPED_RULE` and the file's path)."""
    globs = ", ".join(rule.scope) if rule.scope else f"those of {rule.imported_by}"
    text = SCOPED_RULE_ATTACHMENT.format(path=rule.path, globs=globs, hit=hit, text=rule.text)
    return Message(
        "user",
        (TextPart(text),),
        meta={"synthetic": SYNTHETIC_SCOPED_RULE, "rules_file": rule.path},
    )


def _rule_block(rule: RuleFile) -> str:
    if rule.imported_by is not None:
        header = RULE_HEADER_IMPORTED.format(path=rule.path, parent=rule.imported_by)
    elif rule.activation == "scoped":
        header = RULE_HEADER_SCOPED.format(path=rule.path, globs=", ".join(rule.scope))
    else:
        header = RULE_HEADER.format(path=rule.path)
    return f"{header}\n\n{rule.text}"


def _diff_named(before: Mapping[str, Any], after: Mapping[str, Any]) -> str:
    """``added 'a', 'b'; removed 'c'; changed 'd'`` between two name → value maps."""
    added = [n for n in after if n not in before]
    removed = [n for n in before if n not in after]
    changed = [n for n in after if n in before and before[n] != after[n]]
    parts = [
        f"{verb} {', '.join(repr(n) for n in names)}"
        for verb, names in (("added", added), ("removed", removed), ("changed", changed))
        if names
    ]
    return "; ".join(parts)


def _diff_rules(
    before: Sequence[RuleFile], after: Sequence[RuleFile], why: Mapping[str, str | None]
) -> str:
    """What changed between two lists of loaded rules files, naming the file that loaded a
    path-scoped one."""
    old = {r.path: r for r in before}
    new = {r.path: r for r in after}
    parts: list[str] = []
    for path, rule in new.items():
        if path not in old:
            hit = why.get(path)
            parts.append(
                f"added {path!r}"
                + (f" (path-scoped to {', '.join(rule.scope)}; {hit!r} was touched)" if hit else "")
            )
    parts.extend(f"removed {p!r}" for p in old if p not in new)
    parts.extend(f"changed {p!r}" for p in new if p in old and old[p] != new[p])
    return "; ".join(parts)
