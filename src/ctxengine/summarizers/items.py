"""The continuation state as typed items, and the one table that says what each is worth.

Every fact the state may show is an :class:`Item`: one line of a list (a rule, an error, a
path, an identifier, a done step, a command, a pinned item, a user message) or one block of
text (the goal, the next step, the current work, the turn context, the focus, a section of a
carried summary). Items of every type compete for one token budget
(:mod:`ctxengine.summarizers.select`) by their score, highest first:

    score = VALUES[kind] + RECENCY_WEIGHT × recency (+ FOCUS_BONUS when the item matches
            the focus text and is worth at least FOCUS_CORE_VALUE)

An item that matches the focus text but is worth less than :data:`FOCUS_CORE_VALUE` (a read
file, a command, an older user message, an identifier read in tool output) ranks just below
the core of the state, above every item of its own worth that does not match: the focus
reorders what the state shows, it does not push out the current work, the open errors or the
identifiers the user or the agent stated. The goal, the next step, the current work, the turn
context, the open errors and a carried summary's current work and next step rank with the
matching items whatever their text (:data:`FOCUS_KEEPS`).

``recency`` runs from 0 (the oldest item of its kind) to 1 (the newest): by the item's source
entry when it has one, else by its place in its ledger list. The values (:data:`VALUES`) put
the user's own words first (goal, next step, focus, pins, active rules, the newest user
messages), then what the work stands on (current work, open errors, modified files,
decisions, identifiers the user or the agent stated), then what helps (identifiers read in
tool output, fixed errors, scratch files, done steps, read files, lines that only count
failures), then what is cheap to find again (older user messages, superseded rules, replaced
identifiers, commands). The rest of a long goal, of a long user message and of a long
request the next step quotes (``goal.more``, ``user_message.more``, ``next_step.more``: a task
template's boilerplate, a paste) is worth less than the open errors and the identifiers;
their heads keep their kind's value. A carried summary's sections take their value from their
priority (:mod:`ctxengine.summarizers.carried`): :data:`CARRIED_BASE` + :data:`CARRIED_SCALE`
× priority.

Items are rendered grouped by type under headings (:mod:`ctxengine.summarizers.sections`);
``order`` is an item's place in its group.
"""

from __future__ import annotations

import re
from collections.abc import Collection, Sequence
from dataclasses import dataclass, replace

from ctxengine.model import IdentifierFact, Ledgers
from ctxengine.projection.wording import ENGLISH_FACTS, FactWords
from ctxengine.summarizers.fact_items import (
    RAN,
    decision_line,
    done_line,
    error_line,
    file_items,
    identifier_line,
    plain_errors,
    rule_line,
)
from ctxengine.summarizers.runs import command_key

#: The value of each kind of item (see the module docstring).
VALUES: dict[str, float] = {
    "goal": 100,
    "next_step": 100,
    "focus": 100,
    "pinned": 95,
    "rule": 90,
    "user_message": 85,
    "current_work": 80,
    "turn_context": 80,
    "error.open": 75,
    "file.modified": 72,
    "decision": 70,
    "identifier.stated": 60,
    "identifier": 50,
    "error.open.count": 40,
    "error.fixed": 50,
    "error.plain": 45,
    "file.scratch": 40,
    "done": 35,
    "file.read": 30,
    "user_message.older": 25,
    "current_work.more": 46,
    "goal.more": 55,
    "user_message.more": 42,
    "next_step.more": 42,
    "error.fixed.count": 25,
    "rule.superseded": 20,
    "identifier.earlier": 20,
    "command": 15,
}
#: Score added to the newest item of a kind (the oldest gets 0, linear in between).
RECENCY_WEIGHT = 10.0
#: Score added to an item of the core (worth at least :data:`FOCUS_CORE_VALUE`) that matches
#: the focus text: it outranks every other item.
FOCUS_BONUS = 200.0
#: Items worth at least this are the core of the state (goal, next step, rules, the newest
#: user messages, current work, open errors, modified files, decisions, stated identifiers):
#: an item worth less that matches the focus ranks just below them
#: (``FOCUS_CORE_VALUE - 1 + score / 100``), never above.
FOCUS_CORE_VALUE = 60.0
#: A carried summary section's value: ``CARRIED_BASE + CARRIED_SCALE × priority`` (current
#: work, priority 100, is worth 80, like our own current work; an analysis, 15, is worth 29).
CARRIED_BASE = 20.0
CARRIED_SCALE = 0.6
#: Kinds the focus never displaces: they are marked as matching it whatever their text, so
#: they rank with the items that match (the goal's head and the next step are required
#: anyway; the current work, the turn context and the open errors would otherwise give way
#: to a matching modified file or user message).
FOCUS_KEEPS = frozenset(("goal", "next_step", "current_work", "turn_context", "error.open"))
#: Priority of a carried section (:mod:`ctxengine.summarizers.carried`) the focus never
#: displaces either: 98 and above, the carried current work and next step.
FOCUS_KEEPS_CARRIED_PRIORITY = 98
#: Words of the focus text shorter than this are not matched on their own.
FOCUS_WORD_MIN_CHARS = 3
_FOCUS_STOPWORDS = frozenset(
    ("the", "and", "for", "with", "from", "that", "this", "into", "onto", "about", "keep"),
)


@dataclass(frozen=True, slots=True)
class Item:
    """One fact of the continuation state.

    Attributes:
        group: the heading it is listed under (``"errors"``, ``"files_modified"`` …, see
            :data:`~ctxengine.summarizers.sections.GROUPS`).
        kind: its key in :data:`VALUES` (``"error.open"``), or ``"carried"``.
        text: the exact line (a list item) or block (a text group, a carried section).
        order: its place in its group (ascending).
        recency: 0 (oldest of its kind) to 1 (newest).
        required: shown even when the budget is spent (the caller rejects the state when
            the required items alone do not fit).
        cut_floor: for text that may be shortened, the fewest characters a shortened copy
            keeps (the item is left out rather than cut below it, unless required); ``None``
            when the item is shown whole or not at all.
        value: the item's value when it is not ``VALUES[kind]`` (carried sections).
        label: what an omission note calls it (a carried section's title); for a later part
            of a text block, :data:`~ctxengine.summarizers.sections.JOINED` when it goes on
            where the part before it ended (``goal.more``), else it starts on a new line.
        focus: it matches the focus text (or the focus never displaces it:
            :func:`with_focus`).
        word_cut: a shortened copy ends at a word boundary
            (:func:`~ctxengine.summarizers.select.shortened`), never inside a word.
        quoted: a part of a quoted text that holds a heading-like line (the goal, the
            current work, the focus: :func:`~ctxengine.summarizers.sections.needs_quoting`),
            written with its later lines indented
            (:func:`~ctxengine.summarizers.sections.quoted_block`).
        entry: the id of the history entry that holds the whole text the item is part of
            (a user request, the agent's last message), named in the note of the characters
            a shortened copy leaves out; ``""`` when none is known.
    """

    group: str
    kind: str
    text: str
    order: float = 0.0
    recency: float = 0.0
    required: bool = False
    cut_floor: int | None = None
    value: float | None = None
    label: str = ""
    focus: bool = False
    word_cut: bool = False
    quoted: bool = False
    entry: str = ""

    @property
    def score(self) -> float:
        """``value + RECENCY_WEIGHT × recency``, plus :data:`FOCUS_BONUS` for a core item
        that matches the focus; a matching item below the core scores ``FOCUS_CORE_VALUE - 1
        + score / 100`` (see the module docstring). Higher is shown first."""
        base = self.value if self.value is not None else VALUES[self.kind]
        score = base + RECENCY_WEIGHT * self.recency
        if not self.focus:
            return score
        if base >= FOCUS_CORE_VALUE:
            return score + FOCUS_BONUS
        return FOCUS_CORE_VALUE - 1 + score / 100


def spread(n: int) -> list[float]:
    """Recency of ``n`` items in age order: ``0 … 1`` evenly (``[1.0]`` for one item)."""
    if n <= 1:
        return [1.0] * n
    return [i / (n - 1) for i in range(n)]


def by_source(sources: Sequence[int | None]) -> list[float]:
    """Recency from source indexes (0 for the lowest, 1 for the highest); an item without a
    source counts as the oldest."""
    known = [s for s in sources if s is not None]
    if not known:
        return [0.0] * len(sources)
    lo, hi = min(known), max(known)
    span = hi - lo
    return [0.0 if s is None else (1.0 if span == 0 else (s - lo) / span) for s in sources]


#: Fewest characters a command run is shortened to when its whole text does not fit (the
#: program and its first arguments: fewer say too little to be worth a line).
COMMAND_CUT_FLOOR_CHARS = 40


def _list(group: str, kind: str, texts: Sequence[str], **fields: object) -> list[Item]:
    recency = spread(len(texts))
    return [
        Item(group, kind, text, order=i, recency=recency[i], **fields)  # type: ignore[arg-type]
        for i, text in enumerate(texts)
    ]


def rule_items(ledgers: Ledgers, words: FactWords = ENGLISH_FACTS) -> list[Item]:
    """Rules: superseded ones first (labelled in the words of ``words``), then plain
    constraints no rule covers (older ledgers), then the active rules."""
    covered = {r.text for r in ledgers.rules}
    rules = ledgers.rules
    superseded = [r for r in rules if r.status == "superseded"]
    active = [r for r in rules if r.status == "active"]
    plain = [c for c in ledgers.constraints if c not in covered]
    out: list[Item] = []
    recency = by_source([r.source for r in rules])
    at = {id(r): recency[i] for i, r in enumerate(rules)}
    for r in superseded:
        line = rule_line(r, words)
        out.append(Item("constraints", "rule.superseded", line, recency=at[id(r)]))
    for i, c in enumerate(plain):
        out.append(Item("constraints", "rule", c, recency=spread(len(plain))[i] * 0.5))
    for r in active:
        out.append(Item("constraints", "rule", rule_line(r, words), recency=at[id(r)]))
    return [replace(item, order=i) for i, item in enumerate(out)]


#: A line that only counts failures (``1 failed, 7 passed in 0.93s``, ``Found 2 errors.``,
#: ``Tests: 1 failed, 4 passed``, ``test result: FAILED. …``, ``FAILED (failures=1)``): it says
#: that a run failed, not what failed.
_COUNTS_ONLY = re.compile(
    r"^=*\s*\d+ (?:failed|errors?)\b[\w\s,.()]*?(?:\bin [\d.]+m?s)?\s*=*$|"
    r"^Found \d+ errors?\b|^Tests:\s+\d+ failed\b|^Test Files\s+\d+ failed\b|"
    r"^test result: FAILED\b|^FAILED \((?:failures|errors)=\d+"
)


def counts_only(line: str) -> bool:
    """True for an error line that only counts failures (:data:`_COUNTS_ONLY`)."""
    return _COUNTS_ONLY.match(line.strip()) is not None


def error_items(ledgers: Ledgers, words: FactWords = ENGLISH_FACTS) -> list[Item]:
    """Errors: plain lines no fact covers (older ledgers), then fixed, then open, each in
    first-seen order (their status in the words of ``words``); one item per distinct line.
    A line that only counts failures (:func:`counts_only`) is worth less than one that says
    what failed (``.count``)."""
    facts = ledgers.error_facts
    fixed = [e for e in facts if e.status == "fixed"]
    open_ = [e for e in facts if e.status == "open"]
    recency = by_source([e.source for e in facts])
    at = {id(e): recency[i] for i, e in enumerate(facts)}
    out: list[Item] = _list("errors", "error.plain", plain_errors(ledgers))
    seen = {i.text for i in out}
    for fact in (*fixed, *open_):
        line = error_line(fact, words)
        if line in seen:
            continue
        seen.add(line)
        kind = "error.open" if fact.status == "open" else "error.fixed"
        if counts_only(fact.text):
            kind += ".count"
        out.append(Item("errors", kind, line, recency=at[id(fact)]))
    return [replace(item, order=i) for i, item in enumerate(out)]


def file_group_items(ledgers: Ledgers, status: str) -> list[Item]:
    """Paths of one status (``modified``, ``scratch``, ``read``) in first-seen order;
    modified paths are required."""
    paths = file_items(ledgers, status)
    sources = {f.path: f.source for f in ledgers.files}
    recency = by_source([sources.get(p) for p in paths])
    group = {"modified": "files_modified", "scratch": "files_scratch", "read": "files_read"}
    return [
        Item(
            group[status],
            f"file.{status}",
            path,
            order=i,
            recency=recency[i],
            required=status == "modified",
        )
        for i, path in enumerate(paths)
    ]


#: What a done step says when the same command failed again after that run (English).
FAILED_LATER = ENGLISH_FACTS.failed_later


def done_items(ledgers: Ledgers, words: FactWords = ENGLISH_FACTS) -> list[Item]:
    """Done steps, in order, in the words of ``words`` (:func:`~.fact_items.done_line`); a
    command that succeeded and whose latest run failed (an open error of the same command
    key) is never shown as simply succeeded: its step says it failed again later."""
    failing = {e.command for e in ledgers.error_facts if e.status == "open" and e.command}
    texts: list[str] = []
    for step in ledgers.done:
        found = RAN.match(step) if failing else None
        if found is not None and failed_later(found["command"], failing):
            texts.append(words.failed_later.format(command=found["command"]))
        else:
            texts.append(done_line(step, words))
    return _list("done", "done", texts)


def failed_later(shown: str, failing: Collection[str]) -> bool:
    """True when the command a done step shows (its first line, ``…`` when cut) is one of
    the ``failing`` command keys (:func:`~ctxengine.summarizers.runs.command_key`)."""
    cut = shown.endswith("…")
    key = command_key(shown.removesuffix("…").rstrip())
    if key in failing:
        return True
    return cut and any(k.startswith(key) for k in failing)


def _identifier_kind(fact: IdentifierFact) -> str:
    if fact.status == "earlier":
        return "identifier.earlier"
    return "identifier.stated" if fact.stated else "identifier"


def identifier_items(ledgers: Ledgers, words: FactWords = ENGLISH_FACTS) -> list[Item]:
    """``kind: text`` per identifier, in first-seen order; one the user or the agent stated
    is worth more (``identifier.stated``), one a newer identifier replaced less
    (``identifier.earlier``, marked in the words of ``words``)."""
    facts = ledgers.identifiers
    recency = by_source([f.source for f in facts])
    return [
        Item(
            "identifiers",
            _identifier_kind(f),
            identifier_line(f, words),
            order=i,
            recency=recency[i],
        )
        for i, f in enumerate(facts)
    ]


def decision_items(ledgers: Ledgers, words: FactWords = ENGLISH_FACTS) -> list[Item]:
    """Decisions, in first-seen order (:func:`~.fact_items.decision_line`)."""
    facts = ledgers.decisions
    recency = by_source([d.source for d in facts])
    return [
        Item("decisions", "decision", decision_line(d, words), order=i, recency=recency[i])
        for i, d in enumerate(facts)
    ]


def ledger_items(ledgers: Ledgers, words: FactWords = ENGLISH_FACTS) -> list[Item]:
    """Every ledger fact as an item: rules, decisions, done steps, modified, scratch and read
    files, errors, identifiers, commands and pinned items, the words around them in the
    state's language (``words``)."""
    return [
        *rule_items(ledgers, words),
        *decision_items(ledgers, words),
        *done_items(ledgers, words),
        *file_group_items(ledgers, "modified"),
        *file_group_items(ledgers, "scratch"),
        *file_group_items(ledgers, "read"),
        *error_items(ledgers, words),
        *identifier_items(ledgers, words),
        *_list("commands", "command", ledgers.commands, cut_floor=COMMAND_CUT_FLOOR_CHARS),
        *_list("pinned", "pinned", ledgers.pinned),
    ]


def focus_words(focus: str | None) -> tuple[str, ...]:
    """The words of ``focus`` an item is matched on (lower case, at least
    :data:`FOCUS_WORD_MIN_CHARS` characters, common words left out)."""
    if not focus:
        return ()
    words = re.findall(r"[\w./:-]+", focus.lower())
    return tuple(
        dict.fromkeys(
            w.strip(".:-")
            for w in words
            if len(w.strip(".:-")) >= FOCUS_WORD_MIN_CHARS
            and w.strip(".:-") not in _FOCUS_STOPWORDS
        )
    )


def matches_focus(text: str, words: Sequence[str]) -> bool:
    """True when ``text`` holds one of ``words`` (case-insensitive) between characters that
    are not letters or digits (``ast`` matches ``test_ast.py``, not ``last``)."""
    lowered = text.lower()
    return any(re.search(rf"(?<![^\W_]){re.escape(w)}(?![^\W_])", lowered) for w in words)


def with_focus(items: Sequence[Item], focus: str | None) -> list[Item]:
    """``items`` with ``focus`` set on those matching the focus text (:func:`focus_words`)
    and on those the focus never displaces (:data:`FOCUS_KEEPS`, carried sections of
    priority :data:`FOCUS_KEEPS_CARRIED_PRIORITY` or more): matching items rank before every
    other item, and with the goal, the next step, the current work, the turn context, the
    open errors and a carried summary's current work and next step by their own values (a
    match never lifts an item above them)."""
    words = focus_words(focus)
    if not words:
        return list(items)
    return [replace(i, focus=True) if _focused(i, words) else i for i in items]


def _focused(item: Item, words: Sequence[str]) -> bool:
    """``item`` ranks with the items matching the focus ``words``."""
    if item.kind in FOCUS_KEEPS:
        return True
    kept = CARRIED_BASE + CARRIED_SCALE * FOCUS_KEEPS_CARRIED_PRIORITY
    if item.kind == "carried" and (item.value or 0.0) >= kept:
        return True
    return matches_focus(item.text, words)


__all__ = [
    "CARRIED_BASE",
    "CARRIED_SCALE",
    "FOCUS_BONUS",
    "FOCUS_CORE_VALUE",
    "FOCUS_KEEPS",
    "FOCUS_KEEPS_CARRIED_PRIORITY",
    "RECENCY_WEIGHT",
    "VALUES",
    "Item",
    "by_source",
    "decision_items",
    "error_items",
    "file_group_items",
    "focus_words",
    "identifier_items",
    "ledger_items",
    "matches_focus",
    "rule_items",
    "spread",
    "with_focus",
]
