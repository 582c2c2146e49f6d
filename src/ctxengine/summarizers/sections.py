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
spaces, a carried summary every line, and the goal, the current work and the focus their
later lines (the first too when it starts with ``#``) when a line of them starts with ``#``
(:func:`quoted_block`; the next step indents the later lines of the request it quotes:
:func:`~ctxengine.summarizers.next_step.quote_lines`), so that no quoted line reads as a
heading (``## …``, a task template's ``## Submission``, a forged ``## Next step`` of an
imported summary or a paste) or a label (``Notes:``) of the state.

A long text may come in parts (:mod:`ctxengine.summarizers.extractive_state`): the goal's first
characters and the rest, a user message's head and the rest (written under its head in the
same bullet), the next step's request head, the rest of the request, and its closing lines;
a part left out leaves the note of its characters in its place.

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

import re
from dataclasses import dataclass, field
from typing import Literal, TypeAlias

from ctxengine.projection.frame import CARRIED_TAG, neutralize
from ctxengine.projection.wording import ENGLISH, Headings
from ctxengine.summarizers.items import Item
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
_KINDS: dict[str, Kind] = {g.key: g.kind for g in GROUPS}


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


#: Kind suffix of the later part of a text shown in two parts (``goal.more``,
#: ``current_work.more``, ``user_message.more``, ``next_step.more``): its lines are later
#: lines of the text it belongs to, written indented when that text is (a list item's and the
#: next step's request always; in a list, under its head in the same bullet), except what goes
#: on on the line where the part before it ended.
MORE = ".more"
#: ``Item.label`` of a later part of a text that goes on where the part before it ended (no
#: line break between them: the goal cut at a fixed number of characters, a request or a
#: user message cut at a space).
JOINED = "joined"
_HEADING_LIKE = re.compile(r"^[ \t]*#", re.MULTILINE)


def needs_quoting(text: str) -> bool:
    """True when a line of ``text`` starts with ``#`` (after spaces): written as it is, it
    would read as a heading of the state (``## Submission``, a pasted ``## Next step``). The
    goal, the current work and the focus (``Item.quoted``) are then written quoted
    (:func:`quoted_block`); a text without such a line is written verbatim (indenting it
    would cost about a token a line in every state and change nothing a reader sees)."""
    return _HEADING_LIKE.search(text) is not None


def quoted_block(text: str) -> str:
    """``text`` as a quoting text group writes a text that needs quoting: its second and
    later non-blank lines indented by :data:`CONTINUATION_INDENT`, and its first too when it
    starts with ``#`` (:func:`indent_all`)."""
    return indent_all(text) if text.lstrip().startswith("#") else _indented(text)


def _indents(item: Item) -> bool:
    """``StateLayout.line`` indents every line of ``item``: the later part of a quoted text
    (its first line's indent is dropped where it goes on on the line before)."""
    if not item.kind.endswith(MORE):
        return False
    return item.quoted or item.group in ("next_step", "user_messages")


def _rest_chars(item: Item) -> int:
    """Characters of a list item's text that its rest, ``item``, stands for when it is not
    written: its own and the line break before it (unless it goes on on the head's line)."""
    return len(item.text) + (0 if item.label == JOINED else 1)


def _chars_note(cut: int, entry: str = "") -> str:
    """The note of ``cut`` characters not shown, naming the history entry that holds the
    whole text when ``entry`` is given (as a truncated tool output names its entry:
    :data:`~ctxengine.projection.transform.TRUNCATION_MARKER`)."""
    if entry:
        return f"[… {cut:,} more characters not shown; full text kept in history as entry {entry}]"
    return f"[… {cut:,} more characters not shown]"


@dataclass(frozen=True, slots=True)
class _Block:
    """A group's body as :meth:`StateLayout.render` last wrote it, and what from."""

    items: tuple[Shown, ...]
    gone: list[tuple[float, str, int, str]]
    rest_left: dict[float, int]
    body: str


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
    #: per group, the last body :meth:`render` wrote and what it was written from (see
    #: :meth:`_block`); not part of the layout's value
    _blocks: dict[str, _Block] = field(
        default_factory=dict, init=False, repr=False, compare=False, hash=False
    )

    def heading(self, group: str) -> str:
        """``## HEADING`` of ``group``."""
        return f"## {getattr(self.headings, group)}"

    def frame(self, group: str) -> str:
        """Heading line and the blank line that separates groups (and the carried tags)."""
        if GROUP_BY_KEY[group].kind == "carried":
            return f"{self.heading(group)}\n<{CARRIED_TAG}>\n\n</{CARRIED_TAG}>\n\n"
        return f"{self.heading(group)}\n\n\n"

    def _body(self, shown: Shown) -> str:
        """A text group's part as written, without the note of characters cut."""
        text = neutralise(shown.text)
        if _indents(shown.item):
            return indent_all(text)
        return quoted_block(text) if shown.item.quoted else text

    def line(self, shown: Shown) -> str:
        """One item as written in its group (a list bullet, a text block, a carried
        section), with the note of characters cut."""
        kind = GROUP_BY_KEY[shown.item.group].kind
        text = neutralise(shown.text)
        if kind == "list" and shown.item.kind.endswith(MORE):
            text = indent_all(text)
            return f"{text} {_chars_note(shown.cut, shown.item.entry)}" if shown.cut else text
        if kind == "list":
            text = _indented(text)
            if not shown.cut:
                return f"- {text}"
            return f"- {text} {_chars_note(shown.cut, shown.item.entry)}"
        if kind == "carried":
            text = indent_all(text)
            if not shown.cut:
                return text
            return f"{text}\n[… {shown.cut:,} more characters of this section not shown]\n"
        text = self._body(shown)
        return f"{text}\n{_chars_note(shown.cut, shown.item.entry)}" if shown.cut else text

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

    def _carried(self, shown: list[Shown], omitted: list[tuple[float, str, int, str]]) -> str:
        """The carried sections shown, in their order, then one note counting those left
        out."""
        body = "".join(self.line(s) for s in shown).strip("\n").rstrip()
        if omitted:
            chars = sum(n for _, _, n, _ in omitted)
            noun = "section" if len(omitted) == 1 else "sections"
            body += (
                f"\n[… {len(omitted):,} more {noun} not shown (no room left): {chars:,} characters]"
            )
        return f"<{CARRIED_TAG}>\n{body}\n</{CARRIED_TAG}>"

    def _text(self, shown: list[Shown], omitted: list[tuple[float, str, int, str]]) -> str:
        """A text group: its parts in order; after a part left out or shortened, only the
        required parts (the next step's plan and closing lines) are shown (an optional later
        part never is without the earlier ones whole); one note of the characters not shown
        where they are missing (a shortened part's cut and the parts left out after it)."""
        events: list[tuple[float, Shown | None, int, str]] = [
            (s.item.order, s, 0, s.item.entry) for s in shown
        ]
        events += [(order, None, chars, entry) for order, _, chars, entry in omitted]
        events.sort(key=lambda e: e[0])
        texts: list[str] = []  # blocks of text
        cuts: list[int] = []  # the characters not shown after each block
        entries: list[str] = []  # the entry holding each block's whole text
        pending = 0
        pending_entry = ""
        gap = False
        for _, s, chars, entry in events:
            if s is None or (gap and not s.item.required):
                pending += chars if s is None else len(s.item.text)
                pending_entry = pending_entry or entry
                gap = True
                continue
            body = self._body(s)
            if pending and texts:
                cuts[-1] += pending
                entries[-1] = entries[-1] or pending_entry
            elif pending:
                texts.append("")
                cuts.append(pending)
                entries.append(pending_entry)
            elif texts and s.item.label == JOINED:  # goes on where the part before ended
                if _indents(s.item) and not texts[-1].endswith("\n"):
                    body = body.removeprefix(CONTINUATION_INDENT)
                texts[-1] += body
                cuts[-1] = s.cut
                entries[-1] = entries[-1] or entry
                gap = gap or bool(s.cut)
                continue
            pending, pending_entry = 0, ""
            texts.append(body)
            cuts.append(s.cut)
            entries.append(entry)
            gap = gap or bool(s.cut)
        if not texts:
            return ""
        cuts[-1] += pending
        entries[-1] = entries[-1] or pending_entry
        out: list[str] = []
        for text, cut, entry in zip(texts, cuts, entries, strict=True):
            if cut:
                note = _chars_note(cut, entry)
                text = text.rstrip("\n") + "\n" + note if text else note
            out.append(text)
        return "\n".join(out)

    def _list(self, items: list[Shown], rest_left: dict[float, int]) -> str:
        """A list group: one bullet per item, the rest of a two-part item under its head
        (left out when its head is shortened or left out), a head whose rest is not written
        followed by the note of every character of the item not shown."""
        whole = {s.item.order for s in items if not s.item.kind.endswith(MORE) and not s.cut}
        rests = dict(rest_left)
        for s in items:  # a rest shown after a shortened head is not written
            if s.item.kind.endswith(MORE) and s.item.order - 0.5 not in whole:
                rests[s.item.order] = _rest_chars(s.item)
        lines: list[str] = []
        for s in items:
            if s.item.kind.endswith(MORE):
                if s.item.order - 0.5 not in whole:
                    continue
                line = self.line(s)
                if s.item.label == JOINED:  # goes on on the head's last line
                    lines[-1] += line.removeprefix(CONTINUATION_INDENT)
                else:
                    lines.append(line)
                continue
            rest = rests.get(s.item.order + 0.5, 0)
            lines.append(self.line(Shown(s.item, s.text, s.cut + rest)))
        return "\n".join(lines)

    def _block(
        self,
        group: Group,
        items: list[Shown],
        gone: list[tuple[float, str, int, str]],
        rest_left: dict[float, int],
    ) -> str:
        """The body of ``group`` showing ``items`` (in order), with ``gone`` (a text or
        carried group's parts left out) and ``rest_left`` (a list item's rests left out);
        the body of the last render again when it was written from the same shown copies
        (the same objects: a :class:`Shown` is immutable) and the same parts left out, as
        the selection's measures in turn find it for every group but the one that
        changed."""
        memo = self._blocks.get(group.key)
        if (
            memo is not None
            and len(memo.items) == len(items)
            and all(a is b for a, b in zip(memo.items, items, strict=True))
            and memo.gone == gone
            and memo.rest_left == rest_left
        ):
            return memo.body
        if group.kind == "carried":
            body = self._carried(items, gone)
        elif group.kind == "text":
            body = self._text(items, gone)
        else:
            body = self._list(items, rest_left)
        self._blocks[group.key] = _Block(tuple(items), list(gone), dict(rest_left), body)
        return body

    def render(self, selection: Selection) -> str:
        """The whole text: the groups of :data:`GROUPS` that show or leave out something,
        separated by blank lines."""
        shown: dict[str, list[Shown]] = {}
        for s in selection.shown:
            shown.setdefault(s.item.group, []).append(s)
        left: dict[str, list[tuple[float, str, int, str]]] = {}
        counted: dict[str, int] = {}  # a list group's items left out (only counted)
        rest_left: dict[str, dict[float, int]] = {}  # a list item's rest left out
        for item in selection.omitted:
            key = item.group
            if _KINDS[key] == "list":
                if item.kind.endswith(MORE):
                    rest_left.setdefault(key, {})[item.order] = _rest_chars(item)
                else:
                    counted[key] = counted.get(key, 0) + 1
                continue
            left.setdefault(key, []).append((item.order, item.label, len(item.text), item.entry))
        blocks: list[str] = [self.intro] if self.intro else []
        closing: list[str] = []
        for group in GROUPS:
            items = sorted(shown.get(group.key, []), key=lambda s: s.item.order)
            gone = left.get(group.key, [])
            part = self.closing(group.key, len(gone) or counted.get(group.key, 0), bool(items))
            if part:
                closing.append(part[:-2])
            if not items:
                continue
            body = self._block(group, items, gone, rest_left.get(group.key, {}))
            if body:
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
    gone: dict[str, int] = {}
    for item in selection.omitted:  # a later part of a shown text or list item is a cut
        part = item.kind.endswith(MORE) or (
            GROUP_BY_KEY[item.group].kind == "text" and item.order > 0
        )
        if part and any(s.item.group == item.group for s in selection.shown):
            chars = _rest_chars(item) if GROUP_BY_KEY[item.group].kind == "list" else len(item.text)
            cut[item.group] = cut.get(item.group, 0) + chars
        else:
            gone[item.group] = gone.get(item.group, 0) + 1
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
    "JOINED",
    "MORE",
    "NOT_SHOWN_HEADING",
    "Group",
    "StateLayout",
    "dedent_all",
    "group_paths",
    "indent_all",
    "needs_quoting",
    "neutralise",
    "notes",
    "quoted_block",
]
