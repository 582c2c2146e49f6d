"""Headed sections of the extractive continuation state, their rendering, and the fixed order
in which they shrink until the whole text fits its token budget.

Shrink order (first applied first; each step stops as soon as the text fits). Optional
sections go first, then the earlier summary down to its head, then what the continuation
cannot do without:

 1. commands: keep the newest ones;
 2. files read: group by directory, then keep the newest;
 3. identifiers, then errors: keep the newest (errors are listed fixed first, open last);
 4. current work: cut from its end, down to nothing;
 5. user messages: keep the newest;
 6. turn context: cut, down to nothing;
 7. done: keep the newest;
 8. focus: cut, down to nothing;
 9. earlier summary (carried over): cut from its end down to its first
    :data:`CARRIED_KEEP_CHARS` characters (it holds the only record of the history before
    a compaction another system wrote, so it outranks the optional sections above);
10. next step, then goal: cut down to their first :data:`KEEP_CHARS` characters;
11. next step: cut down to nothing;
12. commands, files read, identifiers, errors, user messages, done: left out, omission
    notes too;
13. earlier summary: cut down to nothing;
14. only when the required sections alone are too big: constraints cut to
    :data:`SHORT_CONSTRAINT_CHARS` characters each, pinned items and then constraints keep the
    newest (active rules come last, so they stay), the scratch files are grouped by
    directory and then keep the newest, and last the modified paths are grouped by directory
    (``dir/: a.py, b.py``).

Grouping paths is skipped when it would not shorten the section.

Goal's first :data:`KEEP_CHARS` characters and every modified path (its directory and file
name) are never dropped; when even they do not fit, the summarizer rejects the summary.
Every cut is stated in the text (``[… N more characters not shown]``, ``(N earlier commands
not shown)``).
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, replace
from typing import Literal, TypeAlias

from ctxengine.projection.frame import neutralize

#: Characters of the goal (and of the latest request) that always survive.
KEEP_CHARS = 500
#: Characters of the carried earlier summary kept (its head) until only required sections
#: are left to shrink: about 500 tokens of prose.
CARRIED_KEEP_CHARS = 2_000
#: Length each constraint is cut to when constraints alone overflow the budget.
SHORT_CONSTRAINT_CHARS = 120

Kind: TypeAlias = Literal["text", "list", "paths"]


@dataclass(frozen=True, slots=True)
class Section:
    """One headed section.

    Attributes:
        key: stable identifier (``"goal"``, ``"commands"`` …).
        heading: the heading line's text.
        kind: ``text`` (one block), ``list`` (bullets), ``paths`` (bullets, groupable).
        items: the block (``text``) or the items, oldest first (newest first when
            ``newest_first``).
        noun: what an item is, for the omission note (``"commands"``).
        omitted: items dropped (lists) or characters cut (text).
        grouped: paths shown grouped by directory.
        newest_first: items are ordered newest first.
        tag: for a ``text`` section, wrap the block (and its cut note) in ``<tag>`` …
            ``</tag>`` lines, so that quoted text with headings of its own stays delimited.
    """

    key: str
    heading: str
    kind: Kind
    items: tuple[str, ...]
    noun: str = "items"
    omitted: int = 0
    grouped: bool = False
    newest_first: bool = False
    tag: str = ""


def group_paths(paths: tuple[str, ...]) -> tuple[str, ...]:
    """Paths grouped by directory, in first-seen order: ``("src/a.py", "src/b.py", "x")`` →
    ``("src/: a.py, b.py", "x")``."""
    groups: dict[str, list[str]] = {}
    for path in paths:
        directory, _, name = path.rpartition("/")
        groups.setdefault(directory, []).append(name)
    return tuple(
        f"{d}/: {', '.join(names)}" if d else ", ".join(names) for d, names in groups.items()
    )


def _noun(section: Section) -> str:
    return section.noun[:-1] if section.omitted == 1 else section.noun


def render_section(section: Section) -> str:
    """The section as Markdown: ``## heading`` then its body; ``""`` when it is empty. Every
    quoted text (the block, each item) has its frame tags neutralised
    (:func:`~ctxengine.projection.frame.neutralize`), so none can open or close the
    section's own ``<tag>`` or the continuation-state frame."""
    if section.kind == "text":
        body = neutralize(section.items[0]) if section.items else ""
        if not body:
            return ""
        if section.omitted:
            body += f"\n[… {section.omitted:,} more characters not shown]"
        if section.tag:
            body = f"<{section.tag}>\n{body}\n</{section.tag}>"
        return f"## {section.heading}\n{body}"
    items = group_paths(section.items) if section.grouped else section.items
    if not items and not section.omitted:
        return ""
    lines = [f"- {neutralize(item)}" for item in items]
    if section.omitted:
        age = "older" if section.newest_first else "earlier"
        lines.append(f"- ({section.omitted:,} {age} {_noun(section)} not shown)")
    return f"## {section.heading}\n" + "\n".join(lines)


def render(sections: tuple[Section, ...]) -> str:
    """All non-empty sections, in order, separated by blank lines."""
    return "\n\n".join(s for s in (render_section(x) for x in sections) if s)


Fits: TypeAlias = Callable[[tuple[Section, ...]], bool]


def _with(sections: tuple[Section, ...], new: Section) -> tuple[Section, ...]:
    return tuple(new if s.key == new.key else s for s in sections)


def _max_fitting(lo: int, hi: int, fits: Callable[[int], bool]) -> int:
    """Largest n in [lo, hi] with fits(n) (fits is monotone); ``lo`` when none fits."""
    if fits(hi):
        return hi
    best = lo
    while lo <= hi:
        mid = (lo + hi) // 2
        if fits(mid):
            best, lo = mid, mid + 1
        else:
            hi = mid - 1
    return best


def _keep_newest(section: Section, k: int) -> Section:
    total = len(section.items) + section.omitted
    items = section.items[:k] if section.newest_first else section.items[len(section.items) - k :]
    return replace(section, items=items, omitted=total - k)


def _cut_text(section: Section, n: int) -> Section:
    text = section.items[0] if section.items else ""
    total = len(text) + section.omitted
    return replace(section, items=(text[:n],), omitted=total - n)


Step: TypeAlias = Callable[[Section, Fits, tuple[Section, ...]], Section]


def keep_newest(section: Section, fits: Fits, all_: tuple[Section, ...]) -> Section:
    """Keep as many of the newest items as fit."""
    k = _max_fitting(0, len(section.items), lambda k: fits(_with(all_, _keep_newest(section, k))))
    return _keep_newest(section, k)


def keep_at_most(n: int) -> Step:
    """A step keeping only the newest ``n`` items of a long list, so that when the budget is
    short every list keeps its newest entries instead of the first lists shrunk losing all."""

    def step(section: Section, fits: Fits, all_: tuple[Section, ...]) -> Section:
        if len(section.items) <= n:
            return section
        return _keep_newest(section, n)

    return step


def cut_text(floor: int) -> Step:
    """A step cutting a text section from its end, never below ``floor`` characters."""

    def step(section: Section, fits: Fits, all_: tuple[Section, ...]) -> Section:
        text = section.items[0] if section.items else ""
        if len(text) <= floor:
            return section
        n = _max_fitting(floor, len(text), lambda n: fits(_with(all_, _cut_text(section, n))))
        return _cut_text(section, n)

    return step


def group(section: Section, fits: Fits, all_: tuple[Section, ...]) -> Section:
    """Show paths grouped by directory, unless that is no shorter (one file per directory)."""
    grouped = replace(section, grouped=True)
    if len(render_section(grouped)) >= len(render_section(section)):
        return section
    return grouped


def hide(section: Section, fits: Fits, all_: tuple[Section, ...]) -> Section:
    """Leave the section out, omission note included."""
    return replace(section, items=(), omitted=0)


def shorten_items(limit: int) -> Step:
    """A step cutting every item to ``limit`` characters (ending with "…")."""

    def step(section: Section, fits: Fits, all_: tuple[Section, ...]) -> Section:
        items = tuple(i if len(i) <= limit else i[: limit - 1] + "…" for i in section.items)
        return replace(section, items=items)

    return step


#: (section key, step, note template) in the order they are tried.
#: Newest items a long list keeps in the first, balancing pass of :data:`SHRINK_ORDER`.
BALANCED_ITEMS = 12

SHRINK_ORDER: tuple[tuple[str, Step], ...] = (
    # First a balancing pass: long lists are capped to their newest items, so that a short
    # budget leaves every list its newest entries (a greedy pass alone would empty the
    # first lists it meets whenever a later one is long).
    ("commands", keep_at_most(BALANCED_ITEMS)),
    ("errors", keep_at_most(BALANCED_ITEMS)),
    ("identifiers", keep_at_most(BALANCED_ITEMS)),
    ("files_read", keep_at_most(2 * BALANCED_ITEMS)),
    ("done", keep_at_most(2 * BALANCED_ITEMS)),
    ("user_messages", keep_at_most(BALANCED_ITEMS)),
    ("commands", keep_newest),
    ("files_read", group),
    ("files_read", keep_newest),
    ("identifiers", keep_newest),
    ("errors", keep_newest),
    ("current_work", cut_text(0)),
    ("user_messages", keep_newest),
    ("turn_context", cut_text(0)),
    ("done", keep_newest),
    ("focus", cut_text(0)),
    ("earlier_summary", cut_text(CARRIED_KEEP_CHARS)),
    ("next_step", cut_text(KEEP_CHARS)),
    ("goal", cut_text(KEEP_CHARS)),
    ("next_step", cut_text(0)),
    ("commands", hide),
    ("files_read", hide),
    ("identifiers", hide),
    ("errors", hide),
    ("user_messages", hide),
    ("done", hide),
    ("earlier_summary", cut_text(0)),
    ("constraints", shorten_items(SHORT_CONSTRAINT_CHARS)),
    ("pinned", keep_newest),
    ("constraints", keep_newest),
    ("files_scratch", group),
    ("files_scratch", keep_newest),
    ("files_modified", group),
)


def shrink(sections: tuple[Section, ...], fits: Fits) -> tuple[tuple[Section, ...], list[str]]:
    """Apply :data:`SHRINK_ORDER` until ``fits``; returns the sections and one note per
    section that changed (``"commands: 3 earlier not shown"``). The result may still not fit."""
    notes: dict[str, str] = {}
    for key, step in SHRINK_ORDER:
        if fits(sections):
            break
        section = next((s for s in sections if s.key == key), None)
        if section is None or not (section.items or section.omitted):
            continue
        new = step(section, fits, sections)
        if new != section:
            sections = _with(sections, new)
            notes[key] = _note(new)
    return sections, list(notes.values())


def _note(section: Section) -> str:
    if not section.items and not section.omitted:
        return f"{section.key}: left out"
    if section.kind == "text":
        return f"{section.key}: {section.omitted:,} characters cut"
    parts = []
    if section.grouped:
        parts.append("grouped by directory")
    if section.omitted:
        parts.append(f"{section.omitted:,} {_noun(section)} not shown")
    return f"{section.key}: " + (", ".join(parts) or "items shortened")
