"""Exact typed checkers: did a planted fact reach the request the model receives?

A :class:`RequestView` is one rendered request read for checking (:mod:`ctxengine.bench.text`);
:func:`check` answers, for one fact, whether it *survived*, whether it is *corrupted* (a
near-miss shown while the fact is not) and whether it is *stale* (a superseded fact shown as
current). The rules per kind are in :mod:`ctxengine.bench.facts`.
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from ctxengine.bench.facts import DECISION_WINDOW_CHARS, RULE_WINDOW_CHARS, Fact
from ctxengine.bench.text import (
    collapse,
    cooccur,
    has_line,
    has_token,
    is_acknowledgement,
    is_done_heading,
    is_history_heading,
    modified_paths,
    next_step_of,
    payload_texts,
    sections,
    state_of,
)
from ctxengine.projection.wording import WORDINGS

#: A superseded rule shown on a line with one of these words is marked as no longer in force
#: (English, and the superseded labels of every language ctxengine writes).
SUPERSEDED_MARK = re.compile(
    r"supersed|replaced|no longer|obsolete|outdated|overrid|revoked|formerly|previously|"
    r"[(\[]old[)\]]|已废弃|已替换|不再有效|"
    + "|".join(re.escape(w.facts.superseded.strip("()（）")) for w in WORDINGS.values()),
    re.IGNORECASE,
)


@dataclass(frozen=True, slots=True)
class RequestView:
    """One request as the checkers read it.

    Attributes:
        text: every content string of the rendered request, joined by blank lines.
        collapsed: ``text`` with whitespace collapsed (for exact error lines).
        state: the continuation-state text (``""`` without one).
        modified: normalised paths the state shows as modified.
        next_step: the state's next-step section, or ``None``.
        verbatim: indexes of the session's messages shown verbatim in the request.
        pruned_calls: ids of tool calls whose results are shown as placeholders.
    """

    text: str
    collapsed: str
    state: str
    modified: frozenset[str]
    next_step: str | None
    verbatim: frozenset[int]
    pruned_calls: frozenset[str]


def view_of(
    payload: Mapping[str, Any],
    *,
    roots: Iterable[str] = (),
    verbatim: Iterable[int] = (),
    pruned_calls: Iterable[str] = (),
) -> RequestView:
    """Read a rendered request body (``ctxengine.replay.RENDERERS[p](context)``).

    Args:
        payload: the rendered body.
        roots: project roots stripped from paths.
        verbatim: indexes of the session messages the request shows verbatim.
        pruned_calls: call ids whose results are pruned in the request.
    """
    texts = payload_texts(payload)
    text = "\n\n".join(texts)
    state = state_of(texts)
    return RequestView(
        text=text,
        collapsed=collapse(text),
        state=state,
        modified=modified_paths(state, roots),
        next_step=next_step_of(state),
        verbatim=frozenset(verbatim),
        pruned_calls=frozenset(pruned_calls),
    )


def view_of_text(text: str, *, state: str = "", roots: Iterable[str] = ()) -> RequestView:
    """A view of plain ``text`` (with ``state`` as its continuation state): for checking one
    message, or a hand-written request in tests."""
    return RequestView(
        text=text,
        collapsed=collapse(text),
        state=state,
        modified=modified_paths(state, roots),
        next_step=next_step_of(state),
        verbatim=frozenset(),
        pruned_calls=frozenset(),
    )


@dataclass(frozen=True, slots=True)
class Outcome:
    """The check of one fact on one request.

    Attributes:
        survived: the fact is shown (``None`` for a superseded rule: it is checked for
            staleness only).
        corrupted: a distractor is shown and the fact is not.
        stale: a superseded fact is shown as current.
        bare_next_step: for a next step: the state's next step is a bare acknowledgement.
    """

    survived: bool | None
    corrupted: bool = False
    stale: bool = False
    bare_next_step: bool = False


def shown(fact: Fact, view: RequestView) -> bool:
    """Is the fact itself shown (before the next-step and staleness rules)?"""
    kind = fact.kind
    if kind in ("rule", "rule_cjk", "rule_superseded", "next_step"):
        return cooccur(view.text, fact.keys, RULE_WINDOW_CHARS)
    if kind == "decision":
        return cooccur(view.text, fact.keys, DECISION_WINDOW_CHARS)
    if kind in ("identifier", "identifier_cjk"):
        return has_token(view.text, fact.surface)
    if kind == "error":
        return has_line(view.collapsed, fact.surface)
    if kind == "file_modified":
        return file_shown(fact, view)
    if kind == "failed_outcome":
        return has_line(view.collapsed, fact.surface) and not claimed_done(fact, view)
    raise ValueError(f"unknown fact kind {kind!r}")


def claimed_done(fact: Fact, view: RequestView) -> bool:
    """A failed command is claimed as done when the continuation state says it ran and
    succeeded (``ran `CMD` (succeeded)``, in any language the state is written in), lists a
    path it failed to write as modified, or names such a path in a section of what was done.
    Quoted user messages are history, not claims."""
    command, targets = fact.keys[0], fact.keys[1:]
    if any(t in view.modified for t in targets):
        return True
    claims = [w.facts.ran.format(command=command) for w in WORDINGS.values()]
    for heading, body in sections(view.state):
        if is_history_heading(heading):
            continue
        if any(c in body for c in claims):
            return True
        if is_done_heading(heading) and any(t in body for t in targets):
            return True
    return False


def file_shown(fact: Fact, view: RequestView) -> bool:
    """A modified file is shown when the state lists it as modified, or when the message of
    its modifying action is shown verbatim and, for an action read from a tool result (an
    indirect edit), that result is not pruned."""
    path = fact.keys[0]
    if path in view.modified:
        return True
    if fact.message not in view.verbatim:
        return False
    return fact.variant != "indirect" or fact.call_id not in view.pruned_calls


def distractor_shown(fact: Fact, view: RequestView) -> bool:
    """Is one of the fact's near-miss distractors shown, matched as the fact would be (a
    whole token, an exact line, or a path listed as modified)?"""
    for d in fact.distractors:
        if fact.kind in ("identifier", "identifier_cjk") and has_token(view.text, d):
            return True
        if fact.kind == "error" and has_line(view.collapsed, d):
            return True
        if fact.kind == "file_modified" and d in view.modified:
            return True
    return False


def stale_rule(fact: Fact, view: RequestView) -> bool:
    """A superseded rule is stale when a line of the continuation state shows it (its keys
    co-occur on that line) without a supersession mark (:data:`SUPERSEDED_MARK`) beside it.

    Quoted history is not read for staleness: the verbatim tail, and a section of the state
    quoting the user's messages verbatim (:func:`~ctxengine.bench.text.is_history_heading`),
    show the old rule as what it was, a message, together with the newer message that
    replaced it."""
    surface = collapse(fact.surface).lower()
    for heading, body in sections(view.state):
        if is_history_heading(heading):
            continue
        for line in body.splitlines():
            if not cooccur(line, fact.keys, RULE_WINDOW_CHARS):
                continue
            # the mark must be the state's own words, not part of the rule's text
            rest = collapse(line).lower().replace(surface, " ")
            if SUPERSEDED_MARK.search(rest) is None:
                return True
    return False


def check(fact: Fact, view: RequestView, earlier_steps: Sequence[Fact] = ()) -> Outcome:
    """Check ``fact`` on ``view``.

    Args:
        fact: the fact.
        view: the request.
        earlier_steps: for a ``next_step`` fact, the earlier (completed) next steps: the
            state showing one of them as its next step while not showing this one is stale.
    """
    if fact.kind == "rule_superseded":
        return Outcome(None, stale=stale_rule(fact, view))
    if fact.kind == "failed_outcome":
        return Outcome(shown(fact, view), stale=claimed_done(fact, view))
    present = shown(fact, view)
    corrupted = not present and distractor_shown(fact, view)
    if fact.kind != "next_step":
        return Outcome(present, corrupted=corrupted)
    section = view.next_step
    bare = section is not None and is_acknowledgement(section)
    stale = (
        section is not None
        and not cooccur(section, fact.keys, RULE_WINDOW_CHARS)
        and any(cooccur(section, e.keys, RULE_WINDOW_CHARS) for e in earlier_steps)
    )
    return Outcome(present and not bare, corrupted=corrupted, stale=stale, bare_next_step=bare)
