"""Fitting typed items into a token budget by value (pure; a layout renders the text).

:func:`select` decides which items (:mod:`ctxengine.summarizers.items`) a continuation state
shows, whole or shortened, so that the rendered text fits ``budget`` tokens:

1. required items first, whole; when they alone overflow the budget, the shortenable ones
   (the goal, the next step) are cut by measure towards their floors, lowest score first,
   and nothing else is shown;
2. every other item in score order: shown whole when it fits the tokens left (alone, or with
   the rest of its group, since showing a group whole drops its part of the closing note),
   else shortened to the tokens left when it may be (never below its floor, never below
   :data:`MIN_CUT_TOKENS`), else left out; what the state says about items left out (the
   closing note, a carried summary's section notes) is priced too;
3. the text is rendered and measured (the per-item costs are estimates, the measure is
   exact): while it is over the budget, the lowest-scored items shown are shortened or
   go; while it is under, the items left out or shortened are tried again in score order
   with the tokens the measure leaves free, and at the end a few by measure alone.

So items are left out only when the budget is spent. ``select`` never raises: when the
required items alone do not fit, the selection holds them at their floors (the same
selection whatever the budget) and the caller measures it.
"""

from __future__ import annotations

from bisect import bisect_right
from collections import defaultdict
from collections.abc import Callable, Iterator, Sequence
from dataclasses import dataclass, field
from heapq import heapify, heappop, heappush
from typing import Protocol, cast

from ctxengine.policy.defaults import STATE_WORD_CUT_MAX_CHARS
from ctxengine.summarizers.items import Item
from ctxengine.tokens.base import Estimator

#: Fewest tokens worth showing of a shortened optional item (less, and it is left out).
MIN_CUT_TOKENS = 24
#: The characters a shortened copy cut at words may end before (``Item.word_cut``).
_SPACES = (" ", "\n", "\t")
#: Rounds of measuring and filling again after the first pass.
REFILL_ROUNDS = 4
#: Parts of the closing note the first pass keeps room for when not everything fits.
CLOSING_PARTS = 3
#: Largest share of the budget kept for the closing note in the first pass.
CLOSING_RESERVE_MAX_RATIO = 0.1
#: Items (or whole groups) tried by measure at the end, at most.
EXACT_TRIALS = 8
#: A floor cost not estimated yet (no estimate is negative).
_UNSET = -1
#: How far over the free room an item's estimated cost may be and still be tried by
#: measure (the per-line estimates round up).
EXACT_SLACK = 8


@dataclass(frozen=True, slots=True)
class Shown:
    """An item as shown: ``text`` is its first characters when ``cut`` (the number of
    characters left out) is above 0."""

    item: Item
    text: str
    cut: int = 0


@dataclass(frozen=True, slots=True)
class Selection:
    """What a continuation state shows and leaves out, each in the items' input order."""

    shown: tuple[Shown, ...] = ()
    omitted: tuple[Item, ...] = ()

    def groups_omitted(self) -> dict[str, int]:
        """Items left out per group."""
        out: dict[str, int] = {}
        for item in self.omitted:
            out[item.group] = out.get(item.group, 0) + 1
        return out


class Layout(Protocol):
    """How a selection is written: the whole text, and the parts :func:`select` prices."""

    def render(self, selection: Selection) -> str:
        """The whole text."""
        ...

    def line(self, shown: Shown) -> str:
        """The text one shown item adds to its group."""
        ...

    def frame(self, group: str) -> str:
        """The text a group adds around its items (heading, separators, tags)."""
        ...

    def note(self, group: str, omitted: int) -> str:
        """What a group that shows some of its items writes among them about the ``omitted``
        others (``""`` when nothing)."""
        ...

    def closing(self, group: str, omitted: int, partial: bool) -> str:
        """What the closing note says of a group's ``omitted`` items (``partial``: the group
        shows others); ``""`` when it says nothing."""
        ...

    def closing_frame(self) -> str:
        """The closing note without its parts."""
        ...


def shortened(item: Item, keep: int) -> Shown:
    """``item`` showing its first ``keep`` characters (trailing spaces dropped); for an item
    cut at words (``Item.word_cut``) up to the last whitespace at most
    :data:`~ctxengine.policy.defaults.STATE_WORD_CUT_MAX_CHARS` characters before the cut and
    not below its floor (``Item.cut_floor``), else up to the first whitespace as near after
    it, so that no word is split (at the cut when there is neither)."""
    if keep >= len(item.text):
        return Shown(item, item.text)
    end = keep
    text = item.text
    if item.word_cut and keep > 0 and not text[keep].isspace() and not text[keep - 1].isspace():
        floor = max(1, item.cut_floor or 0)
        before = max(text.rfind(c, 0, keep) for c in _SPACES)
        after = min((i for i in (text.find(c, keep) for c in _SPACES) if i >= 0), default=-1)
        if before >= floor and keep - before <= STATE_WORD_CUT_MAX_CHARS:
            end = before
        elif after >= 0 and after - keep <= STATE_WORD_CUT_MAX_CHARS:
            end = after
    text = text[:end].rstrip()
    return Shown(item, text, len(item.text) - len(text))


@dataclass(slots=True)
class Costs:
    """Estimates that selections with one estimator and one layout share (the same result,
    without estimating or writing the same text twice).

    Attributes:
        texts: estimated tokens by text (lines, notes, headings); valid for the estimator
            alone, so a caller may keep it across layouts.
        lines: estimated tokens of an item's line shown whole, by the item (its id, the item
            kept with it); valid for one layout.
        notes / listing / frames: what the layout writes about a group (see
            :meth:`_State._note`, :meth:`_State._listed`, :meth:`_State._frame`).
    """

    texts: dict[str, int] = field(default_factory=dict)
    lines: dict[int, tuple[Item, int]] = field(default_factory=dict)
    notes: dict[tuple[str, int, bool], int] = field(default_factory=dict)
    listing: dict[tuple[str, int, bool], bool] = field(default_factory=dict)
    frames: dict[str, int] = field(default_factory=dict)


class _State:
    """The selection being built and its estimated cost in tokens (``total``)."""

    def __init__(
        self,
        items: Sequence[Item],
        estimator: Estimator,
        layout: Layout,
        costs: Costs | None = None,
    ) -> None:
        self.items = items
        self.est = estimator
        self.layout = layout
        shared = costs if costs is not None else Costs()
        self.costs = shared.texts
        self._shared_lines = shared.lines
        self.groups = [item.group for item in items]
        #: each item's place in score order (set by :func:`select`)
        self.rank = [0] * len(items)
        self._whole_costs: list[int | None] = [None] * len(items)
        #: floor costs by item, :data:`_UNSET` until asked
        self._floor_costs: list[int | None] = [_UNSET] * len(items)
        # per group, a count bumped whenever its (cost, shown, left) changes; ``_lver``
        # whenever ``listed`` changes: the offsets below are cached against them
        self._gver: dict[str, int] = defaultdict(int)
        self._lver = 0
        self._offsets: dict[tuple[str, bool], tuple[int, int, int]] = {}
        self._group_offsets: dict[str, tuple[int, int, int]] = {}
        self.shown: dict[int, Shown] = {}
        self.omitted: set[int] = set()
        self.cost: dict[int, int] = {}
        self.g_cost: dict[str, int] = defaultdict(int)
        self.g_shown: dict[str, int] = defaultdict(int)
        self.g_left: dict[str, int] = defaultdict(int)
        self.total = 0
        self._frames = shared.frames
        self._notes = shared.notes
        self._lines: dict[tuple[int, int], int] = {}
        self._listing = shared.listing
        self.listed: set[str] = set()
        self._closing_frame_cost: int | None = None
        self.g_omitted: dict[str, set[int]] = defaultdict(set)
        self.g_left_cost: dict[str, int] = defaultdict(int)
        self._wholes: dict[int, Shown] = {}
        self._cuts: dict[tuple[int, int], Shown] = {}
        self._version = 0
        self._measured: tuple[int, int] | None = None

    def cut(self, index: int, keep: int) -> Shown:
        """Item ``index`` shortened to ``keep`` characters (:func:`shortened`)."""
        key = (index, keep)
        found = self._cuts.get(key)
        if found is None:
            found = self._cuts[key] = shortened(self.items[index], keep)
        return found

    def whole(self, index: int) -> Shown:
        """Item ``index`` shown whole."""
        found = self._wholes.get(index)
        if found is None:
            item = self.items[index]
            found = self._wholes[index] = Shown(item, item.text)
        return found

    def tokens(self, text: str) -> int:
        """Estimated tokens of ``text`` (remembered in :attr:`costs`, which a caller may
        share between selections with the same estimator)."""
        found = self.costs.get(text)
        if found is None:
            found = self.costs[text] = self.est.text(text)
        return found

    def line_cost(self, shown: Shown) -> int:
        """Estimated tokens of ``shown``'s line. Every copy of an item shown is its text or
        a prefix of it (:func:`shortened`), so the item and the length of the copy name
        the line."""
        key = (id(shown.item), len(shown.text))
        cost = self._lines.get(key)
        if cost is None:
            cost = self._lines[key] = self.tokens(self.layout.line(shown))
        return cost

    def whole_cost(self, index: int) -> int:
        """Estimated tokens of item ``index``'s line shown whole."""
        cost = self._whole_costs[index]
        if cost is None:
            item = self.items[index]
            hit = self._shared_lines.get(id(item))
            if hit is not None and hit[0] is item:
                cost = hit[1]
            else:
                cost = self.line_cost(self.whole(index))
                self._shared_lines[id(item)] = (item, cost)
            self._whole_costs[index] = cost
        return cost

    def whole_costs(self) -> list[int]:
        """:meth:`whole_cost` of every item, by index (all estimated now)."""
        for i, cost in enumerate(self._whole_costs):
            if cost is None:
                self.whole_cost(i)
        return cast(list[int], self._whole_costs)  # every entry is set now

    def floor_cost(self, index: int) -> int | None:
        """Estimated tokens of item ``index`` shortened to its floor (the shortest copy
        :func:`_longest` tries), ``None`` when it is never shortened or its floor leaves
        nothing to cut."""
        cost = self._floor_costs[index]
        if cost != _UNSET:
            return cost
        item = self.items[index]
        floor = item.cut_floor
        cost = None
        if floor is not None and floor <= len(item.text) - 1:
            cost = self.line_cost(self.cut(index, floor))
        self._floor_costs[index] = cost
        return cost

    def offset(self, group: str, fresh: bool) -> int:
        """Change of ``total``, less the new line's own cost, when an item of ``group``
        that is not shown (``fresh``: neither shown nor left out; else left out) is shown
        (whole or shortened): the same for every such item of the group (:meth:`delta` is
        this plus :meth:`line_cost`)."""
        cost, shown, left = self.g_cost[group], self.g_shown[group], self.g_left[group]
        if fresh and shown:
            # the group already shows something and keeps its items left out: neither its
            # heading, nor its notes, nor whether the closing note names it changes
            # (``listed`` holds the group exactly when ``_listed`` says so for its state)
            return 0
        key = (group, fresh)
        gver = self._gver[group]
        hit = self._offsets.get(key)
        if hit is not None and hit[0] == gver and hit[1] == self._lver:
            return hit[2]
        after = left if fresh else left - 1
        before = self._group(group, cost, shown, left)
        _, frame = self._frame_change(group, shown + 1, after)
        found = self._group(group, cost, shown + 1, after) - before + frame
        self._offsets[key] = (gver, self._lver, found)
        return found

    def group_offset(self, group: str) -> int:
        """:meth:`group_delta` of ``group`` without an extra item: its heading (when it
        shows nothing yet) and every item left out shown, its notes gone, the closing note
        gone when it named only this group."""
        cost, shown, left = self.g_cost[group], self.g_shown[group], self.g_left[group]
        after = self._frame(group) + cost + self.g_left_cost[group] if shown + left else 0
        found = after - (self._frame(group) + cost if shown else 0) - self._note(group, left, shown)
        listed = self.listed
        if group in listed and len(listed) == 1:
            found -= self._closing_frame()
        return found

    def _frame(self, group: str) -> int:
        if group not in self._frames:
            self._frames[group] = self.tokens(self.layout.frame(group))
        return self._frames[group]

    def _note(self, group: str, left: int, shown: int) -> int:
        """Tokens of what the group writes about its ``left`` items left out: its own note
        and its part of the closing note."""
        key = (group, left, bool(shown))
        if key not in self._notes:
            cost = 0
            if left:
                inline = self.layout.note(group, left) if shown else ""
                part = self.layout.closing(group, left, bool(shown))
                cost = (self.tokens(inline) if inline else 0) + (self.tokens(part) if part else 0)
            self._notes[key] = cost
        return self._notes[key]

    def _listed(self, group: str, shown: int, left: int) -> bool:
        """The closing note names ``group``."""
        if not left:
            return False
        key = (group, left, bool(shown))
        found = self._listing.get(key)
        if found is None:
            found = self._listing[key] = bool(self.layout.closing(group, left, bool(shown)))
        return found

    def _group(self, group: str, cost: int, shown: int, left: int) -> int:
        """Tokens a group adds: its heading and items when it shows something, and what it
        writes about the items left out."""
        body = self._frame(group) + cost if shown else 0
        return body + self._note(group, left, shown)

    def _closing_frame(self) -> int:
        """Tokens of the closing note without its parts."""
        if self._closing_frame_cost is None:
            self._closing_frame_cost = self.tokens(self.layout.closing_frame())
        return self._closing_frame_cost

    def _closing_cost(self) -> int:
        return self._closing_frame() if self.listed else 0

    def _after(self, index: int, new: Shown | None) -> tuple[int, int, int, int]:
        """The group's (cost, shown, left) once ``index`` becomes ``new`` (``None``: left
        out), and the line cost of ``new``."""
        group = self.items[index].group
        cost, shown, left = self.g_cost[group], self.g_shown[group], self.g_left[group]
        if index in self.shown:
            cost, shown = cost - self.cost[index], shown - 1
        elif index in self.omitted:
            left -= 1
        line = 0
        if new is None:
            left += 1
        else:
            line = self.line_cost(new)
            cost, shown = cost + line, shown + 1
        return cost, shown, left, line

    def _frame_change(self, group: str, shown: int, left: int) -> tuple[set[str], int]:
        """The groups the closing note names once ``group`` has (``shown``, ``left``) items,
        and the change of the closing note's frame cost."""
        now = self._listed(group, shown, left)
        if now == (group in self.listed):
            return self.listed, 0
        listed = set(self.listed)
        if now:
            listed.add(group)
        else:
            listed.discard(group)
        before = self._closing_cost()
        saved = self.listed
        self.listed = listed
        after = self._closing_cost()
        self.listed = saved
        return listed, after - before

    def delta(self, index: int, new: Shown | None) -> int:
        """Change of ``total`` if ``index`` became ``new``."""
        group = self.items[index].group
        cost, shown, left, _ = self._after(index, new)
        before = self._group(group, self.g_cost[group], self.g_shown[group], self.g_left[group])
        _, frame = self._frame_change(group, shown, left)
        return self._group(group, cost, shown, left) - before + frame

    def set(self, index: int, new: Shown | None) -> None:
        """Make item ``index`` ``new`` (``None``: left out) and update ``total``."""
        if new is None and index in self.omitted:
            return  # left out already: nothing changes
        self._version += 1
        group = self.groups[index]
        self._gver[group] += 1
        before = self._group(group, self.g_cost[group], self.g_shown[group], self.g_left[group])
        cost, shown, left, line = self._after(index, new)
        listed, frame = self._frame_change(group, shown, left)
        if listed is not self.listed:
            self.listed = listed
            self._lver += 1
        self.total += frame
        self.shown.pop(index, None)
        self.cost.pop(index, None)
        if index in self.omitted:
            self.omitted.discard(index)
            self.g_omitted[group].discard(index)
            self.g_left_cost[group] -= self.whole_cost(index)
        if new is None:
            self.omitted.add(index)
            self.g_omitted[group].add(index)
            self.g_left_cost[group] += self.whole_cost(index)
        else:
            self.shown[index] = new
            self.cost[index] = line
        self.g_cost[group], self.g_shown[group], self.g_left[group] = cost, shown, left
        self.total += self._group(group, cost, shown, left) - before

    def omit(self, index: int) -> None:
        """Leave out item ``index``, neither shown nor left out yet (:meth:`set` with
        ``None``, without what does not apply: the group's heading and items stay, its
        notes count one more item, the closing note may come to name it)."""
        self._version += 1
        group = self.groups[index]
        self._gver[group] += 1
        shown, left = self.g_shown[group], self.g_left[group]
        change = self._note(group, left + 1, shown) - self._note(group, left, shown)
        if self._listed(group, shown, left + 1) != (group in self.listed):
            listed = set(self.listed)
            if group in listed:
                listed.discard(group)
            else:
                listed.add(group)
            if bool(listed) != bool(self.listed):  # the closing note comes or goes
                frame = self._closing_frame()
                change += frame if listed else -frame
            self.listed = listed
            self._lver += 1
        self.omitted.add(index)
        self.g_omitted[group].add(index)
        self.g_left_cost[group] += self.whole_cost(index)
        self.g_left[group] = left + 1
        self.total += change

    def group_delta(self, group: str, extra: int | None = None) -> int:
        """Change of ``total`` if every item of ``group`` left out, and item ``extra`` (not
        shown), were shown whole."""
        cost = self.g_cost[group] + self.g_left_cost[group]
        shown = self.g_shown[group] + self.g_left[group]
        if extra is not None and extra not in self.omitted:
            cost += self.line_cost(self.whole(extra))
            shown += 1
        before = self._group(group, self.g_cost[group], self.g_shown[group], self.g_left[group])
        _, frame = self._frame_change(group, shown, 0)
        return self._group(group, cost, shown, 0) - before + frame

    def show_group(self, group: str, extra: int | None = None) -> list[tuple[int, Shown | None]]:
        """Show every item of ``group`` left out (and ``extra``) whole; returns what each
        was before, for :meth:`undo`."""
        indices = sorted(self.g_omitted[group])
        if extra is not None and extra not in self.omitted:
            indices.append(extra)
        before = [(j, self.shown.get(j)) for j in indices]
        for j in indices:
            self.set(j, self.whole(j))
        return before

    def undo(self, before: list[tuple[int, Shown | None]]) -> None:
        """Put back what :meth:`show_group` changed (an item that was neither shown nor left
        out is left out)."""
        for j, shown in reversed(before):
            self.set(j, shown)

    def selection(self) -> Selection:
        shown = tuple(self.shown[i] for i in sorted(self.shown))
        return Selection(shown, tuple(self.items[i] for i in sorted(self.omitted)))

    def measure(self) -> int:
        """Tokens of the rendered selection (measured once per state of the selection)."""
        if self._measured is not None and self._measured[0] == self._version:
            return self._measured[1]
        tokens = self.est.text(self.layout.render(self.selection()))
        self._measured = (self._version, tokens)
        return tokens


def _longest(state: _State, index: int, limit: int, floor: int) -> Shown | None:
    """The longest shortened copy of item ``index`` (at least ``floor`` characters) that
    keeps ``total`` within ``limit``, or ``None``."""
    item = state.items[index]
    lo, hi = floor, len(item.text) - 1
    best: Shown | None = None
    if lo <= hi:
        # A longer copy costs at least as much: when the shortest does not fit, none does
        # (the usual case once the budget is spent, answered without the search).
        candidate = state.cut(index, lo)
        if state.total + state.delta(index, candidate) > limit:
            return None
        best, lo = candidate, lo + 1
    while lo <= hi:
        mid = (lo + hi) // 2
        candidate = state.cut(index, mid)
        if state.total + state.delta(index, candidate) <= limit:
            best, lo = candidate, mid + 1
        else:
            hi = mid - 1
    return best if best is not None and best.text else None


def _with_group(state: _State, index: int, limit: int) -> bool:
    """Show item ``index`` together with every other item of its group left out, when all of
    them fit ``limit`` at once (showing a group whole drops its note, which one item at a
    time never pays for); True when done."""
    group = state.items[index].group
    omitted = state.g_omitted[group]
    if not omitted or (len(omitted) == 1 and index in omitted):
        return False
    if state.total + state.group_delta(group, index) > limit:
        return False
    state.show_group(group, index)
    return True


def _place(state: _State, index: int, limit: int) -> None:
    """Show item ``index`` whole (alone, or with the rest of its group), or shortened, within
    ``limit``; else leave it out."""
    if index not in state.shown and not _may_show(state, index, limit):
        if index not in state.omitted:
            state.omit(index)
        return
    item = state.items[index]
    whole = state.whole(index)
    if state.total + state.delta(index, whole) <= limit:
        state.set(index, whole)
        return
    if _with_group(state, index, limit):
        return
    if item.cut_floor is not None:
        cut = _longest(state, index, limit, item.cut_floor)
        current = state.shown.get(index)
        if (
            cut is not None
            and (item.cut_floor > 0 or state.line_cost(cut) >= MIN_CUT_TOKENS)
            and (current is None or len(cut.text) > len(current.text))
        ):
            state.set(index, cut)
            return
        if current is not None:
            return  # keep the shorter copy it has
    state.set(index, None)


def _first_pass(state: _State, order: list[int], limit: int) -> None:
    """:func:`_place` every optional item in score order within ``limit``. Each is fresh
    when its turn comes (a group shown whole takes only items already met and the one at
    hand), so one that does not fit in any way (:func:`_may_show`) is left out at once
    (:meth:`_State.omit`)."""
    items, groups = state.items, state.groups
    g_shown, g_omitted = state.g_shown, state.g_omitted
    whole = state.whole_costs()
    for i in order:
        if items[i].required:
            continue
        group = groups[i]
        room = limit - state.total
        offset = 0 if g_shown[group] else state.offset(group, True)
        line = whole[i]
        if line + offset > room and not (
            g_omitted[group] and state.group_offset(group) + line <= room
        ):
            floor = state.floor_cost(i)
            if floor is None or floor + offset > room:
                state.omit(i)
                continue
        _place(state, i, limit)


def _may_show(state: _State, index: int, limit: int) -> bool:
    """False when :func:`_place` would leave item ``index`` (not shown) out: its line, its
    group with it and its shortest shortened copy each exceed ``limit``; True when one of
    them fits (then :func:`_place` decides). The same tests :func:`_place` runs first, from
    the cached offsets (:meth:`_State.offset`, :meth:`_State.group_offset`)."""
    group = state.groups[index]
    fresh = index not in state.omitted
    room = limit - state.total
    offset = state.offset(group, fresh)
    line = state.whole_cost(index)
    if line + offset <= room:
        return True
    omitted = state.g_omitted[group]
    if (
        omitted
        and not (len(omitted) == 1 and index in omitted)
        and state.group_offset(group) + (line if fresh else 0) <= room
    ):
        return True
    floor = state.floor_cost(index)
    return floor is not None and floor + offset <= room


def _fit_required(state: _State, order: list[int], budget: int) -> None:
    """Show the required items whole, then shorten the shortenable ones, lowest score
    first, while the estimate is over ``budget``."""
    for i in order:
        if state.items[i].required:
            state.set(i, state.whole(i))
    for i in reversed(order):
        item = state.items[i]
        if state.total <= budget:
            return
        if item.required and item.cut_floor is not None and item.cut_floor < len(item.text):
            cut = _longest(state, i, budget, item.cut_floor) or shortened(item, item.cut_floor)
            state.set(i, cut)


def _evict(state: _State, order: list[int], excess: int, settled: set[int]) -> bool:
    """Free ``excess`` estimated tokens from the lowest-scored optional items shown: shorten
    one that may be shortened, else leave it out; the items touched join ``settled`` (not
    filled again). False when nothing could go."""
    freed = 0
    changed = False
    for i in reversed(order):
        if freed >= excess:
            break
        shown = state.shown.get(i)
        item = state.items[i]
        if shown is None or item.required:
            continue
        before = state.total
        floor = item.cut_floor
        cut = None
        if floor is not None:
            cut = _longest(state, i, state.total - (excess - freed), floor)
            if cut is not None and (
                len(cut.text) >= len(shown.text)
                or (floor == 0 and state.line_cost(cut) < MIN_CUT_TOKENS)
            ):
                cut = None
        state.set(i, cut)
        settled.add(i)
        freed += before - state.total
        changed = True
    return changed


def select(
    items: Sequence[Item],
    budget: int,
    estimator: Estimator,
    layout: Layout,
    costs: Costs | None = None,
) -> Selection:
    """The items to show within ``budget`` tokens of ``layout.render`` (see the module
    docstring); the result exceeds the budget only when the required items alone do.
    ``costs``: estimates filled as they are made; a caller that selects again with the same
    ``estimator`` and ``layout`` may pass the same :class:`Costs` (the result is the same,
    the estimates are not made twice)."""
    order = sorted(range(len(items)), key=lambda i: (-items[i].score, i))
    state = _State(items, estimator, layout, costs)
    for n, i in enumerate(order):
        state.rank[i] = n
    _fit_required(state, order, budget)
    settled: set[int] = set()
    if any(s.cut for s in state.shown.values()):  # the required items alone overflow
        for i in order:
            if not items[i].required:
                state.set(i, None)
        return _squeeze(state, order, budget, settled)
    limit = budget - _closing_reserve(state, budget)
    _first_pass(state, order, limit)
    for _ in range(REFILL_ROUNDS):
        tokens = state.measure()
        offset = tokens - state.total
        if tokens > budget:
            if not _evict(state, order, tokens - budget, settled):
                break
            continue
        waiting = [
            i
            for i in order
            if not items[i].required
            and i not in settled
            and (i in state.omitted or (i in state.shown and state.shown[i].cut))
        ]
        before = (len(state.omitted), sum(s.cut for s in state.shown.values()))
        _place_all(state, waiting, budget - offset)
        if (len(state.omitted), sum(s.cut for s in state.shown.values())) == before:
            break
    return _squeeze(state, order, budget, settled)


def _place_all(state: _State, indices: list[int], limit: int) -> None:
    """:func:`_place` each of ``indices`` (in score order) in turn within ``limit``, passing
    over the items left out of a group while it cannot take any of them: the cheapest of
    them (whole or at its floor) does not fit alone, nor the whole group (:func:`_blocked`).
    For such an item :func:`_place` would change nothing; the items shown (shortened) are
    placed again whatever the room."""
    least: dict[str, int] = {}
    whole = state.whole_costs()
    for i in indices:
        if i in state.omitted:
            cost = whole[i]
            floor = state.floor_cost(i)
            if floor is not None and floor < cost:
                cost = floor
            group = state.groups[i]
            if cost < least.get(group, cost + 1):
                least[group] = cost
    for i in _visit(state, indices, lambda g: _blocked(state, g, least[g], limit)):
        _place(state, i, limit)


def _visit(state: _State, indices: list[int], blocked: Callable[[str], bool]) -> Iterator[int]:
    """``indices`` (in score order; each left out or shown), less the items left out of a
    group while ``blocked(group)`` holds, in that order. ``blocked`` is asked again whenever
    the selection changes (between two items given), so an item passed over is one the
    group could not take at the time the walk came to it."""
    rank = state.rank
    lists: dict[str | None, list[int]] = {}  # per group (None: shown items), ranks in order
    at: dict[int, int] = {}
    for i in indices:
        key = state.groups[i] if i in state.omitted else None
        lists.setdefault(key, []).append(rank[i])
        at[rank[i]] = i
    heap = [(ranks[0], 0, key) for key, ranks in lists.items()]
    heapify(heap)
    parked: list[str] = []
    found: dict[str, bool] = {}
    version = state._version
    last = -1
    while heap or parked:
        if state._version != version:
            version = state._version
            found.clear()
            for group in parked:  # asked again from the item after the last one given
                ranks = lists[group]
                n = bisect_right(ranks, last)
                if n < len(ranks):
                    heappush(heap, (ranks[n], n, group))
            parked.clear()
        if not heap:
            return
        r, n, key = heappop(heap)
        if key is not None:
            stop = found.get(key)
            if stop is None:
                stop = found[key] = blocked(key)
            if stop:
                parked.append(key)
                continue
        last = r
        ranks = lists[key]
        if n + 1 < len(ranks):
            heappush(heap, (ranks[n + 1], n + 1, key))
        yield at[r]


def _blocked(state: _State, group: str, cheapest: int, limit: int) -> bool:
    """No item of ``group`` left out (the cheapest costing ``cheapest`` tokens) can be
    shown within ``limit``: alone, or with the rest of the group."""
    room = limit - state.total
    if cheapest + state.offset(group, False) <= room:
        return False
    return len(state.g_omitted[group]) <= 1 or state.group_offset(group) > room


def _closing_reserve(state: _State, budget: int) -> int:
    """Tokens the first pass keeps for the closing note when not everything can fit: its
    frame and :data:`CLOSING_PARTS` parts, at most :data:`CLOSING_RESERVE_MAX_RATIO` of the
    budget (else the first item left out would push the text over the budget, and the
    eviction that follows would take out more than it must)."""
    everything = sum(state.whole_costs())
    everything += sum(state._frame(g) for g in {item.group for item in state.items})
    if everything <= budget:
        return 0
    part = state.est.text("99 more items, ")
    reserve = state.est.text(state.layout.closing_frame()) + CLOSING_PARTS * part
    return min(reserve, int(budget * CLOSING_RESERVE_MAX_RATIO))


def _top_up(state: _State, order: list[int], budget: int, tokens: int) -> None:
    """Fill what the measured text leaves free: first the items left out whose estimated
    cost fits, in score order, as one batch (taken back and retried with half the room when
    the measure finds it over); then, by measure, up to :data:`EXACT_TRIALS` items (alone,
    or with the rest of their group) whose estimate is within :data:`EXACT_SLACK` tokens of
    the room."""
    room = budget - tokens
    for _ in range(REFILL_ROUNDS):
        if room <= 0:
            break
        added = _add_batch(state, order, room)
        if not added:
            break
        measured = state.measure()
        if measured <= budget:
            room = budget - measured
            continue
        for i in reversed(added):
            state.set(i, None)
        room //= 2
    _exact(state, order, budget)


def _add_batch(state: _State, order: list[int], room: int) -> list[int]:
    """Show whole, in score order, each optional item left out whose estimated cost still
    fits ``room`` with those added before it; returns the items added. A group whose
    cheapest item left out does not fit is passed over (none of its items would) until the
    selection changes (:func:`_visit`)."""
    added: list[int] = []
    spent = 0
    candidates = [i for i in order if i in state.omitted and not state.items[i].required]
    least: dict[str, int] = {}
    whole = state.whole_costs()
    for i in candidates:
        group = state.groups[i]
        cost = whole[i]
        if cost < least.get(group, cost + 1):
            least[group] = cost

    def blocked(group: str) -> bool:
        return least[group] + state.offset(group, False) > room - spent

    for i in _visit(state, candidates, blocked):
        cost = whole[i] + state.offset(state.groups[i], False)
        if spent + cost <= room:
            state.set(i, state.whole(i))
            added.append(i)
            spent += cost
    return added


def _exact(state: _State, order: list[int], budget: int) -> None:
    """Try, by measure, the best item left out of each group alone, then the whole group, in
    the order of their best items (see :func:`_top_up`)."""
    tokens = state.measure()
    trials = 0
    tried: set[str] = set()
    for i in order:
        if trials >= EXACT_TRIALS or tokens >= budget:
            return
        item = state.items[i]
        if i not in state.omitted or item.required or item.group in tried:
            continue
        tried.add(item.group)
        room = budget - tokens + EXACT_SLACK
        options: list[int | None] = [i]
        if len(state.g_omitted[item.group]) > 1:
            options.append(None)
        for option in options:
            if option is not None:
                if state.delta(option, state.whole(option)) > room:
                    continue
                before = [(option, state.shown.get(option))]
                state.set(option, state.whole(option))
            else:
                if state.group_delta(item.group) > room:
                    continue
                before = state.show_group(item.group)
            trials += 1
            measured = state.measure()
            if measured <= budget:
                tokens = measured
                break
            state.undo(before)


def _squeeze(state: _State, order: list[int], budget: int, settled: set[int]) -> Selection:
    """Leave out optional items until the measured text fits; when the required items alone
    do not fit, shorten them by measure (to their floors when even those are over the
    budget, so that such a result is the same whatever the budget); when nothing required is
    shortened, fill what is left free (:func:`_top_up`)."""
    while True:
        tokens = state.measure()
        if tokens <= budget or not _evict(state, order, tokens - budget, settled):
            break
    cuttable = [
        i
        for i in reversed(order)
        if i in state.shown and state.items[i].required and state.items[i].cut_floor is not None
    ]
    if tokens > budget or any(state.shown[i].cut for i in cuttable):
        _floors_then_longest(state, cuttable, budget)
    if not any(state.shown[i].cut for i in cuttable):
        _top_up(state, order, budget, state.measure())
    return state.selection()


def _floors_then_longest(state: _State, cuttable: list[int], budget: int) -> None:
    """Set the required items that may be shortened to their floors (so that a result over
    the budget is the same whatever the budget), then lengthen them again by measure,
    highest score first, while the text fits."""
    for i in cuttable:
        item = state.items[i]
        state.set(i, shortened(item, item.cut_floor or 0))
    for i in reversed(cuttable):
        item = state.items[i]
        lo, hi = len(state.shown[i].text) + 1, len(item.text)
        best = state.shown[i]
        while lo <= hi:  # measured, not estimated: this path is rare and must be exact
            mid = (lo + hi) // 2
            state.set(i, shortened(item, mid))
            if state.measure() <= budget:
                best, lo = state.shown[i], mid + 1
            else:
                hi = mid - 1
        state.set(i, best)


__all__ = ["MIN_CUT_TOKENS", "Costs", "Layout", "Selection", "Shown", "select", "shortened"]
