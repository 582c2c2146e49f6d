"""How the continuation state is written: its items grouped by type under headings, in a
fixed order, each line exact, and a note where items were left out.

Groups (:data:`GROUPS`, in the order they are written; empty ones are left out)::

    ## Goal                           text: the first substantive request, verbatim
    ## Earlier summary (carried over) a carried summary, between <earlier-summary> tags,
                                      every line indented by four spaces
    ## User messages (newest first)   list
    ## Constraints                    list: user rules, "(superseded)" before replaced ones
    ## Decisions                      list: "user: TEXT" / "agent: TEXT", verbatim with reason
    ## Done                           list
    ## Files modified                 list: one normalised path each
    ## Scratch files (…)              list
    ## Files read                     list
    ## Errors                         list: "open: LINE" / "fixed: LINE", exact
    ## Identifiers                    list: "kind: text"
    ## Commands run                   list
    ## Current work                   text
    ## Next step                      text
    ## Turn context                   text
    ## Pinned                         list
    ## Focus                          text
    ## Not shown (no room left)       what was left out, and where it is

A list item of several lines (a quoted user message) has its later lines indented by four
spaces, and a carried summary every line, so that no quoted line reads as a heading
(``## …``, a forged ``## Next step`` of an imported summary) or a label (``Notes:``) of the
state.

When items are left out (only when the budget is spent), a closing group says what and where
the full lists are::

    ## Not shown (no room left)
    - 3 more commands run, 2 errors, 1 file read: entries 120–388 of the history

naming the history entries the state covers when the caller knows them
(:attr:`StateLayout.entries`). A shortened text ends with ``[… N more characters not
shown]``; a carried summary that shows some of its sections ends with ``[… N more sections
not shown (no room left): M characters]``.

Headings come from the language tables of :mod:`ctxengine.projection.wording` (English by
default; the layout takes another); every quoted text passes through :func:`neutralise`
(frame tags made inert) before it is written.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Literal, TypeAlias

from ctxengine.projection.frame import CARRIED_TAG, neutralize
from ctxengine.projection.wording import ENGLISH, Headings
from ctxengine.summarizers.select import Selection, Shown

Kind: TypeAlias = Literal["text", "list", "carried"]

#: Heading of the closing note of what was left out (English; not in the language tables yet).
NOT_SHOWN_HEADING = "Not shown (no room left)"


@dataclass(frozen=True, slots=True)
class Group:
    """A group of items under one heading.

    Attributes:
        key: the group key items name (``"errors"``); also the name of its heading in
            :class:`~ctxengine.projection.wording.Headings`.
        kind: ``text`` (one block), ``list`` (one bullet per item), ``carried`` (the
            sections of a carried summary, joined, between :data:`CARRIED_TAG` tags).
        noun: (singular, plural) of an item in the closing note of what was left out.
    """

    key: str
    kind: Kind
    noun: tuple[str, str] = ("item", "items")


#: Every group, in the order the state is written.
GROUPS: tuple[Group, ...] = (
    Group("goal", "text"),
    Group(
        "earlier_summary",
        "carried",
        ("section of the earlier summary", "sections of the earlier summary"),
    ),
    Group("user_messages", "list", ("user message", "user messages")),
    Group("constraints", "list", ("constraint", "constraints")),
    Group("decisions", "list", ("decision", "decisions")),
    Group("done", "list", ("done step", "done steps")),
    Group("files_modified", "list", ("modified file", "modified files")),
    Group("files_scratch", "list", ("scratch file", "scratch files")),
    Group("files_read", "list", ("file read", "files read")),
    Group("errors", "list", ("error", "errors")),
    Group("identifiers", "list", ("identifier", "identifiers")),
    Group("commands", "list", ("command run", "commands run")),
    Group("current_work", "text"),
    Group("next_step", "text"),
    Group("turn_context", "text"),
    Group("pinned", "list", ("pinned item", "pinned items")),
    Group("focus", "text"),
)
GROUP_BY_KEY: dict[str, Group] = {g.key: g for g in GROUPS}


def neutralise(text: str) -> str:
    """Quoted text as written into the state: frame tags made inert
    (:func:`~ctxengine.projection.frame.neutralize`), so that no quoted text can open or
    close the carried summary's tags or the continuation-state frame."""
    return neutralize(text)


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


#: Indent of the second and later lines of a list item (a quoted multi-line message): four
#: spaces, so that no quoted line reads as a heading or a label of the state.
CONTINUATION_INDENT = "    "


def _indented(text: str) -> str:
    """``text`` with its second and later non-blank lines indented by
    :data:`CONTINUATION_INDENT` (blank lines stay empty)."""
    if "\n" not in text:
        return text
    first, *rest = text.split("\n")
    return "\n".join([first, *(CONTINUATION_INDENT + ln if ln.strip() else "" for ln in rest)])


def indent_all(text: str) -> str:
    """``text`` with every non-blank line indented by :data:`CONTINUATION_INDENT` (blank
    lines stay empty): how a carried summary is quoted in the state."""
    return "\n".join(CONTINUATION_INDENT + ln if ln.strip() else "" for ln in text.split("\n"))


def dedent_all(text: str) -> str:
    """:func:`indent_all` undone: one :data:`CONTINUATION_INDENT` removed from every line
    that starts with it."""
    return "\n".join(ln.removeprefix(CONTINUATION_INDENT) for ln in text.split("\n"))


def _chars_note(cut: int) -> str:
    return f"[… {cut:,} more characters not shown]"


@dataclass(frozen=True, slots=True)
class StateLayout:
    """Writes a :class:`~ctxengine.summarizers.select.Selection` as Markdown.

    Attributes:
        headings: the group headings (default English,
            :data:`ctxengine.projection.wording.ENGLISH`; a group's heading is the field named
            by its key).
        entries: first and last history entry (seq) the state covers, named in the closing
            note of what was left out; ``None`` when unknown.
        intro: a line written before the first group (the hybrid ledger block's), or ``""``.
        not_shown: the closing note's heading.
    """

    headings: Headings = field(default_factory=lambda: ENGLISH.headings)
    entries: tuple[int, int] | None = None
    intro: str = ""
    not_shown: str = NOT_SHOWN_HEADING

    def heading(self, group: str) -> str:
        """``## HEADING`` of ``group``."""
        return f"## {getattr(self.headings, group)}"

    def frame(self, group: str) -> str:
        """Heading line and the blank line that separates groups (and the carried tags)."""
        if GROUP_BY_KEY[group].kind == "carried":
            return f"{self.heading(group)}\n<{CARRIED_TAG}>\n\n</{CARRIED_TAG}>\n\n"
        return f"{self.heading(group)}\n\n\n"

    def line(self, shown: Shown) -> str:
        """One item as written in its group (a list bullet, a text block, a carried
        section), with the note of characters cut."""
        kind = GROUP_BY_KEY[shown.item.group].kind
        text = neutralise(shown.text)
        if kind == "list":
            text = _indented(text)
            return f"- {text} {_chars_note(shown.cut)}" if shown.cut else f"- {text}"
        if kind == "carried":
            text = indent_all(text)
            if not shown.cut:
                return text
            return f"{text}\n[… {shown.cut:,} more characters of this section not shown]\n"
        return f"{text}\n{_chars_note(shown.cut)}" if shown.cut else text

    def note(self, group: str, omitted: int) -> str:
        """For a carried summary that shows some sections, the note counting the
        ``omitted`` others (its size in characters estimated); for a text group that shows
        its first part (the current work's head), the note of the characters left out
        (estimated); ``""`` for any other group (its items left out are counted in the
        closing note)."""
        kind = GROUP_BY_KEY[group].kind
        if kind == "text":
            return "\n" + _chars_note(99_999)
        if kind != "carried":
            return ""
        return f"\n[… {omitted:,} more sections not shown (no room left): 99,999 characters]"

    def _where(self) -> str:
        if self.entries is None:
            return ""
        first, last = self.entries
        return f": entries {first}–{last} of the history"

    def closing(self, group: str, omitted: int, partial: bool) -> str:
        """``3 more commands run, `` (``partial``: the group shows others) or ``4 files read,
        ``; ``""`` for a text group and for a carried summary that shows some sections."""
        spec = GROUP_BY_KEY[group]
        if not omitted or spec.kind == "text" or (partial and spec.kind == "carried"):
            return ""
        singular, plural = spec.noun
        more = "more " if partial else ""
        return f"{omitted:,} {more}{singular if omitted == 1 else plural}, "

    def closing_frame(self) -> str:
        """The closing note's heading and line, without its parts."""
        return f"\n\n## {self.not_shown}\n- {self._where()}"

    def _carried(self, shown: list[Shown], omitted: list[tuple[float, str, int]]) -> str:
        """The carried sections shown, in their order, then one note counting those left
        out."""
        body = "".join(self.line(s) for s in shown).strip("\n").rstrip()
        if omitted:
            chars = sum(n for _, _, n in omitted)
            noun = "section" if len(omitted) == 1 else "sections"
            body += (
                f"\n[… {len(omitted):,} more {noun} not shown (no room left): {chars:,} characters]"
            )
        return f"<{CARRIED_TAG}>\n{body}\n</{CARRIED_TAG}>"

    def _text(self, shown: list[Shown], omitted: list[tuple[float, str, int]]) -> str:
        """A text group: its parts in order up to the first one left out (a later part is
        never shown without the earlier ones), then the note of the characters left out."""
        first_gone = min((order for order, _, _ in omitted), default=None)
        parts = [s for s in shown if first_gone is None or s.item.order < first_gone]
        if not parts:
            return ""
        body = "\n".join(self.line(s) for s in parts)
        chars = sum(n for _, _, n in omitted) + sum(
            len(s.item.text) for s in shown if s not in parts
        )
        return f"{body}\n{_chars_note(chars)}" if chars else body

    def render(self, selection: Selection) -> str:
        """The whole text: the groups of :data:`GROUPS` that show or leave out something,
        separated by blank lines."""
        shown: dict[str, list[Shown]] = {}
        for s in selection.shown:
            shown.setdefault(s.item.group, []).append(s)
        left: dict[str, list[tuple[float, str, int]]] = {}
        for item in selection.omitted:
            left.setdefault(item.group, []).append((item.order, item.label, len(item.text)))
        blocks: list[str] = [self.intro] if self.intro else []
        closing: list[str] = []
        for group in GROUPS:
            items = sorted(shown.get(group.key, []), key=lambda s: s.item.order)
            gone = left.get(group.key, [])
            part = self.closing(group.key, len(gone), bool(items))
            if part:
                closing.append(part[:-2])
            if not items:
                continue
            if group.kind == "carried":
                body = self._carried(items, gone)
            elif group.kind == "text":
                body = self._text(items, gone)
                if not body:
                    continue
            else:
                body = "\n".join(self.line(s) for s in items)
            blocks.append(f"{self.heading(group.key)}\n{body}")
        if closing:
            what = ", ".join(closing)
            blocks.append(f"## {self.not_shown}\n- {what}{self._where()}")
        return "\n\n".join(blocks)


def notes(selection: Selection) -> tuple[str, ...]:
    """One line per group that lost something (``"commands: 5 not shown"``, ``"goal: 1,306
    characters cut"``, ``"files_modified: grouped by directory"``), in group order."""
    cut: dict[str, int] = {}
    for s in selection.shown:
        if s.cut:
            cut[s.item.group] = cut.get(s.item.group, 0) + s.cut
    gone = selection.groups_omitted()
    grouped = {s.item.group for s in selection.shown if s.item.kind.endswith(".grouped")}
    out: list[str] = []
    for group in GROUPS:
        bits: list[str] = []
        if group.key in grouped:
            bits.append("grouped by directory")
        if group.key in gone:
            bits.append(f"{gone[group.key]:,} not shown")
        if group.key in cut:
            bits.append(f"{cut[group.key]:,} characters cut")
        if bits:
            out.append(f"{group.key}: " + ", ".join(bits))
    return tuple(out)


__all__ = [
    "CARRIED_TAG",
    "GROUPS",
    "GROUP_BY_KEY",
    "NOT_SHOWN_HEADING",
    "Group",
    "StateLayout",
    "dedent_all",
    "group_paths",
    "indent_all",
    "neutralise",
    "notes",
]
