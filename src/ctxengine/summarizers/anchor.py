"""The anchor of a compaction: what carries over from the previous one, and the goal.

Ledgers carry over as data. The previous compaction's *text* carries over too when that text
holds what no ledger does:

- written by another system (``summarizer == "imported"``: a Claude Code ``compact_boundary``,
  a pi or Codex compaction): its ledgers are empty, and its summary is the only record of the
  history before it; the harness's instructions to the agent around it ("continue the
  conversation … without asking the user any further questions") are dropped
  (:func:`~ctxengine.summarizers.carried.without_wrapper`);
- written by a model (``"llm"``, or the narrative of ``"hybrid"`` without its ledger block):
  the narrative is more than the ledgers, and an extractive fallback must not drop it;
- written by the extractive summarizer: only the earlier summary it carried itself (found
  between the ``<earlier-summary>`` tags under its heading, in any language of
  :mod:`ctxengine.projection.wording`, and unindented), with the count of characters
  already cut from it.

Paths an imported summary names as created or modified are added to the modified-files
ledger (:func:`modified_paths_in`): only those with an explicit verb right next to them, so a
path the summary merely mentions (read, a plan, a reference) is never listed as modified
(the verb may end in a colon: Gemini CLI's ``- MODIFIED: `path` …`` lines). The goal such a
summary states in an element of its own (Gemini CLI's ``<overall_goal>``) is the session's
goal when no earlier goal of ours or the caller's is known (:func:`goal_in`).
"""

from __future__ import annotations

import re
from dataclasses import replace

from ctxengine.model import CompactionRecord, ErrorFact, Ledgers
from ctxengine.model.roles import is_injected_text
from ctxengine.policy.defaults import RETURNED_STEPS_KEPT, SUMMARIZER_NAMES
from ctxengine.projection.frame import CARRIED_TAG as CARRIED_TAG
from ctxengine.projection.wording import WORDINGS
from ctxengine.summarizers.acknowledge import is_acknowledgement, is_substantive
from ctxengine.summarizers.base import SummaryRequest
from ctxengine.summarizers.carried import without_wrapper
from ctxengine.summarizers.constraints import real_user_texts
from ctxengine.summarizers.fact_items import RETURNED, STARTED
from ctxengine.summarizers.ledgers import ledgers_and_evidence
from ctxengine.summarizers.paths import guessed_cwd, rebased
from ctxengine.summarizers.prompts import narrative_of
from ctxengine.summarizers.sections import dedent_all
from ctxengine.summarizers.walk import ENDED_KEY

#: Heading of the carried earlier summary in the extractive continuation state (English; the
#: state's language may give another, :mod:`ctxengine.projection.wording`).
CARRIED_HEADING = WORDINGS["en"].headings.earlier_summary
#: The carried-summary heading in every language, English first.
CARRIED_HEADINGS: tuple[str, ...] = tuple(w.headings.earlier_summary for w in WORDINGS.values())
#: Summarizers whose ledgers are ours; anything else (``"imported"``) is foreign.
OWN_SUMMARIZERS = frozenset(SUMMARIZER_NAMES)

_CUT_NOTE = re.compile(
    r"\n\[… ([\d,]+) more characters not shown(?:; full text kept in history as entry [^\]\n]+)?\]$"
)
_PATH = (
    r"(?<![\w./@+:-])((?:~?/|\.\.?/)?(?:[\w@+-][\w.@+-]*/)+"
    r"[\w@+-][\w.@+-]*\.[A-Za-z][A-Za-z0-9]{0,7})(?![\w/@+-])(?!\.\w)"
)
_QUOTE = r"[`'\"*]*"
_VERBS = r"(?:created|modified|edited|updated|changed|wrote|rewrote|rewritten|written)"
_VERB_THEN_PATH = re.compile(rf"\b{_VERBS}:?[ \t]+{_QUOTE}{_PATH}", re.IGNORECASE)
_PATH_THEN_NOTE = re.compile(rf"{_PATH}{_QUOTE}[ \t]*\([ \t]*(?:{_VERBS}|new)\b", re.IGNORECASE)
_OVERALL_GOAL = re.compile(r"<overall_goal>(.*?)</overall_goal>", re.DOTALL)
_NEGATED = re.compile(r"(?:\bnot|n't|\bnever|\bbe|\bwill|\bto|\bshould|\bmust)[ \t]*$", re.I)


def prior_texts(request: SummaryRequest) -> tuple[str, ...]:
    """The caller's real user texts before the range, oldest first, injected blocks
    dropped."""
    return tuple(t for t in request.prior_user_messages if not is_injected_text(t))


def user_texts(request: SummaryRequest) -> tuple[str, ...]:
    """Real user texts of the whole session up to the cut, oldest first: the caller's prior
    ones (injected blocks dropped), then those of the range."""
    return prior_texts(request) + real_user_texts(request.all_messages)


def choose_goal(request: SummaryRequest, texts: tuple[str, ...] | None = None) -> str:
    """The session's goal, verbatim: the first of the previous goal, the caller's goal, the
    goal a foreign previous summary states (:func:`goal_in`) and the user ``texts`` (default
    :func:`user_texts`) that is substantive (:func:`is_substantive`);
    when none is, the first of them that is neither injected nor an acknowledgement (a
    session of slash commands only); else ``""`` (acknowledgements are never a goal)."""
    texts = user_texts(request) if texts is None else texts
    previous = request.previous.ledgers.goal if request.previous else ""
    earlier = request.previous
    mined = goal_in(earlier.summary) if earlier is not None and is_foreign(earlier) else ""
    candidates = (previous, request.goal, mined, *texts)
    found = next((g for g in candidates if g and is_substantive(g)), None)
    if found is not None:
        return found
    return next(
        (
            g
            for g in (previous, request.goal, *texts[:1])
            if not is_injected_text(g) and not is_acknowledgement(g)
        ),
        "",
    )


def goal_in(summary: str) -> str:
    """The goal a summary written by another system states in an element of its own: Gemini
    CLI's ``<overall_goal>`` (its compression prompt asks for the user's high-level
    objective there), its lines stripped; ``""`` when it has none or it is empty."""
    found = _OVERALL_GOAL.search(summary)
    if found is None:
        return ""
    return "\n".join(line.strip() for line in found.group(1).strip().splitlines())


def is_foreign(previous: CompactionRecord | None) -> bool:
    """True when ``previous`` was written by another system (not one of
    :data:`OWN_SUMMARIZERS`)."""
    return previous is not None and previous.summarizer not in OWN_SUMMARIZERS


def carried_summary(previous: CompactionRecord | None) -> tuple[str, int]:
    """The earlier summary to carry forward and the characters already cut from it (see the
    module docstring): ``("", 0)`` when there is none."""
    if previous is None:
        return "", 0
    if is_foreign(previous):
        return without_wrapper(narrative_of(previous.summary)), 0
    if previous.summarizer != "extractive":
        return narrative_of(previous.summary).strip(), 0
    return _own_carried(previous.summary)


def _own_carried(summary: str) -> tuple[str, int]:
    start, head = -1, ""
    for heading in CARRIED_HEADINGS:
        head = f"## {heading}\n<{CARRIED_TAG}>\n"
        start = summary.find(head)
        if start >= 0:
            break
    if start < 0 or (start > 0 and not summary[:start].endswith("\n\n")):
        return "", 0
    body_start = start + len(head)
    end = summary.find(f"\n</{CARRIED_TAG}>", body_start)
    if end < 0:
        return "", 0
    body = dedent_all(summary[body_start:end])
    cut = _CUT_NOTE.search(body)
    if cut is None:
        return body, 0
    return body[: cut.start()], int(cut.group(1).replace(",", ""))


def modified_paths_in(text: str) -> tuple[str, ...]:
    """Paths (with a ``/`` and an extension) that ``text`` states were created or modified, in
    first-seen order: a verb right before the path (``Created `src/a.py```, ``edited
    lib/b.ex``) or a parenthesized note right after it (```src/a.py` (MODIFIED - task 1)``,
    ``(new)``). A verb preceded by a negation or a modal (``not``, ``never``, ``will``,
    ``to`` …) does not count. Matching is case-insensitive."""
    found: list[tuple[int, str]] = []
    for match in _VERB_THEN_PATH.finditer(text):
        if not _NEGATED.search(text, max(0, match.start() - 12), match.start()):
            found.append((match.start(1), match.group(1)))
    found.extend((m.start(1), m.group(1)) for m in _PATH_THEN_NOTE.finditer(text))
    return tuple(dict.fromkeys(path for _, path in sorted(found)))


def anchor_ledgers(previous: CompactionRecord | None) -> Ledgers:
    """The previous compaction's ledgers; for a foreign one, plus the modified paths its
    summary names (:func:`modified_paths_in`)."""
    if previous is None:
        return Ledgers()
    if not is_foreign(previous):
        return previous.ledgers
    mined = Ledgers(files_modified=modified_paths_in(previous.summary))
    return previous.ledgers.merge(mined)


def cumulative_ledgers(request: SummaryRequest, texts: tuple[str, ...] | None = None) -> Ledgers:
    """The anchor ledgers (:func:`anchor_ledgers`) merged with those of the range (only
    grow, :func:`carry`), the pinned items added, the goal fixed (:func:`choose_goal` of the
    user ``texts``, default :func:`user_texts`), and the open errors the kept tail shows
    fixed marked so (:func:`settled_ledgers`)."""
    return settled_ledgers(request, texts)[0]


def settled_ledgers(
    request: SummaryRequest, texts: tuple[str, ...] | None = None
) -> tuple[Ledgers, tuple[ErrorFact, ...]]:
    """:func:`cumulative_ledgers` and the errors open at the cut that the messages kept
    verbatim after it (``request.kept``) fixed, as they were before (in the ledgers' order).

    The kept tail counts as evidence only (:class:`~ctxengine.summarizers.ledgers.
    LaterEvidence`): its successful runs fix the open errors of the state as a later range's
    would (the same command, the same test, a whole-suite pass, a rerun, a retry right after
    the cut), and none of its own facts is added, since it follows the state verbatim. The
    ledgers stored with the state keep those errors fixed, so the next compaction, whose
    range starts with this tail, does not bring them back as open."""
    goal = choose_goal(request, texts)
    anchor = anchor_ledgers(request.previous)
    new, later = ledgers_and_evidence(
        request.all_messages,
        goal,
        cwd=request.cwd or anchor.cwd,
        start=request.range_start,
        earlier_done=anchor.done,
        later=request.kept,
    )
    merged = replace(carry(anchor, new).merge(Ledgers(pinned=request.pinned)), goal=goal)
    settled = later.settle(merged)
    fixed = tuple(
        old
        for old, now in zip(merged.error_facts, settled.error_facts, strict=True)
        if old.status == "open" and now.status == "fixed"
    )
    return settled, fixed


def carry(anchor: Ledgers, new: Ledgers) -> Ledgers:
    """``anchor`` (the previous compaction's ledgers) merged with ``new`` (this range's);
    when only ``new`` knows the working directory, the anchor's relative paths are joined
    to it first (:func:`~ctxengine.summarizers.paths.rebased`); when neither does, the
    directory their paths suggest together (an absolute path ending with a relative one,
    :func:`~ctxengine.summarizers.paths.guessed_cwd`) is taken, so that a file edited by
    absolute path and listed relative by ``git status`` is one file. The guess reads every
    path the ledgers hold: the typed file facts and the plain lists (an imported summary's
    modified paths are in ``files_modified`` only, relative as that summary wrote them).
    An anchor's step ``started `COMMAND` in the background (id ID)`` is dropped when ``new``
    saw that task end (``background:ID`` in ``new.passed``: its outcome is in ``new``); of
    the returned steps only the newest are kept (:func:`_newest_returned`)."""
    ended = {k.removeprefix(ENDED_KEY) for k in new.passed if k.startswith(ENDED_KEY)}
    if ended:
        # a background command this range saw end: its "started" step is superseded
        done = [d for d in anchor.done if (m := STARTED.match(d)) is None or m["id"] not in ended]
        anchor = replace(anchor, done=tuple(done))
    merged = _newest_returned(rebased(anchor, new.cwd).merge(new))
    if merged.cwd:
        return merged
    paths = [f.path for f in merged.files] + [*merged.files_modified, *merged.files_read]
    return rebased(merged, guessed_cwd((), paths))


def _newest_returned(ledgers: Ledgers) -> Ledgers:
    """``ledgers`` with at most :data:`~ctxengine.policy.defaults.RETURNED_STEPS_KEPT` of its
    returned steps (```CALL` returned: …``), the newest: a long session of queries and
    fetches carries what it found last, not every call it ever made."""
    returned = [d for d in ledgers.done if RETURNED.match(d)]
    if len(returned) <= RETURNED_STEPS_KEPT:
        return ledgers
    dropped = set(returned[:-RETURNED_STEPS_KEPT])
    return replace(ledgers, done=tuple(d for d in ledgers.done if d not in dropped))
