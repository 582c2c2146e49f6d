"""Which pinned items a projection shows after a compaction, within their budget.

The items of an epoch are fixed by the history before its compaction record, so they stay
the same for every request of the epoch (it only grows at its tail):

1. every pin record logged before the compaction whose own place is not in the context (a
   pin record inside the kept tail is shown where it stands, by
   :func:`~ctxengine.projection.project`), unless the entry it pins is shown verbatim;
2. with ``"first_request"`` in ``policy.auto_pins``: the session's first user request, when
   its message is not in the kept tail;
3. with ``"rules"``: the active rules the user stated before the compaction
   (:func:`~ctxengine.summarizers.rules.rule_facts`), each from a message not in the kept
   tail and not pinned whole (as a pin record's entry or as the first request), oldest
   first.

Pin records come first and must fit the budget together
(:class:`~ctxengine.errors.PinBudgetExceeded` otherwise); the automatic items follow while
they fit, and one that does not is left to the continuation state, which carries the first
request and the rules too. An item's size is its text's estimate, in tokens.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence

from ctxengine.errors import PinBudgetExceeded
from ctxengine.model import CompactionRecord, Message, PinRecord
from ctxengine.policy import Budget, Policy
from ctxengine.projection.pins import Pinned
from ctxengine.tokens.base import Estimator

from .history import History

#: Characters of a pinned text that name it in an error.
LABEL_CHARS = 50


def pin_label(text: str) -> str:
    """A short name of a pinned text: its first line, cut to :data:`LABEL_CHARS`."""
    line = text.strip().splitlines()[0] if text.strip() else ""
    return repr(line if len(line) <= LABEL_CHARS else line[: LABEL_CHARS - 1] + "…")


def check_budget(records: Sequence[PinRecord], budget: int, estimator: Estimator) -> None:
    """Raise when the texts of ``records`` together take more than ``budget`` tokens.

    Raises:
        PinBudgetExceeded: naming the largest pins.
    """
    sizes = [(pin_label(r.text), estimator.text(r.text)) for r in records]
    total = sum(n for _, n in sizes)
    if total > budget:
        largest = tuple(sorted(sizes, key=lambda item: -item[1]))
        raise PinBudgetExceeded(total, budget, largest)


def epoch_pins(
    history: History,
    policy: Policy,
    budget: Budget,
    estimator: Estimator,
    *,
    at: int,
    record: CompactionRecord,
) -> tuple[Pinned, ...]:
    """The pinned items shown after ``record``, a compaction at position ``at`` of
    ``history`` (``len(history)`` for one not appended yet); see the module docstring.

    Raises:
        PinBudgetExceeded: the pin records to show exceed ``budget.pins_max``.
    """
    first = record.first_kept_id
    start = history.index.get(first, at) if first is not None else at
    kept = set(record.retained_ids or ())

    def shown(entry_id: str | None) -> bool:
        if entry_id is None:
            return False
        pos = history.index.get(entry_id)
        return pos is not None and (pos < history.head_end or start <= pos or entry_id in kept)

    records: list[PinRecord] = []
    for pos in history.pin_positions:
        if pos >= at or start <= pos:
            continue
        body = history.entries[pos].body
        assert isinstance(body, PinRecord)
        if not shown(body.entry_id):
            records.append(body)
    check_budget(records, budget.pins_max, estimator)
    items = [Pinned(r.text, "pin", r.reason, r.entry_id) for r in records]
    used = sum(estimator.text(r.text) for r in records)
    whole = {r.entry_id for r in records if r.entry_id is not None}
    for item in _automatic(history, policy, at, shown):
        if item.origin == "rule" and item.entry_id in whole:
            continue  # its whole message is pinned already
        size = estimator.text(item.text)
        if used + size <= budget.pins_max:
            items.append(item)
            used += size
            if item.origin == "first_request" and item.entry_id is not None:
                whole.add(item.entry_id)
    return tuple(items)


def _automatic(
    history: History, policy: Policy, at: int, shown: Callable[[str | None], bool]
) -> list[Pinned]:
    """The automatic candidates of ``policy.auto_pins`` before position ``at`` that are not
    ``shown`` verbatim, first request first."""
    out: list[Pinned] = []
    if "first_request" in policy.auto_pins and history.goal is not None:
        pos = history.index.get(history.goal_id or "", at)
        if pos < at and not shown(history.goal_id):
            out.append(Pinned(history.goal, "first_request", None, history.goal_id))
    if "rules" in policy.auto_pins:
        positions = [p for p in history.real_user_positions() if p < at]
        messages: list[Message] = [
            m for e in history.entries[: history.head_end] if (m := e.message) is not None
        ]
        offset = len(messages)
        for p in positions:
            m = history.entries[p].message
            assert m is not None
            messages.append(m)
        from ctxengine.summarizers.rules import rule_facts

        for rule in rule_facts(messages):
            if rule.status != "active":
                continue
            entry_id = history.entries[positions[rule.source - offset]].id
            if not shown(entry_id):
                out.append(Pinned(rule.text, "rule", None, entry_id))
    return out
