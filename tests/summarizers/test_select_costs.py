"""What makes :func:`~ctxengine.summarizers.select.select` cheap changes nothing it selects:
estimates shared between selections (:class:`~ctxengine.summarizers.select.Costs`) give the
same selection as fresh ones, and a long ledger whose older lines cannot fit (the passes
that skip a group that can take none of its lines) still shows exactly the newest lines that
fit. Sizes by :class:`QuarterEstimator` (one token per started 4 characters)."""

from __future__ import annotations

from hypothesis import given, settings
from hypothesis import strategies as st
from summarizer_helpers import (
    QuarterEstimator,
    claude_code_history,
    codex_history,
    openhands_history,
    pi_history,
    swe_agent_history,
)

from ctxengine.errors import SummaryRejected
from ctxengine.summarizers.base import Summary, SummaryRequest
from ctxengine.summarizers.extractive import ExtractiveSummarizer
from ctxengine.summarizers.items import VALUES, Item, spread
from ctxengine.summarizers.sections import JOINED, StateLayout
from ctxengine.summarizers.select import Costs, Selection, Shown, select

EST = QuarterEstimator()
LAYOUT = StateLayout(entries=(1, 900))
LIST_GROUPS = ("user_messages", "constraints", "done", "files_read", "errors", "commands")
TEXT_GROUPS = ("goal", "current_work", "next_step", "turn_context")
WORDS = ("fix", "the", "parser", "src/app.py", "error:", "line", "12", "pytest -q", "## Head")


@st.composite
def item_lists(draw: st.DrawFn) -> list[Item]:
    """Items of list, text and carried groups: required or not, cut at words or not, with
    floors, labels and focus marks."""
    out: list[Item] = []
    for j in range(draw(st.integers(0, 30))):
        group = draw(st.sampled_from((*LIST_GROUPS, *TEXT_GROUPS, "earlier_summary")))
        kind = "carried" if group == "earlier_summary" else draw(st.sampled_from(sorted(VALUES)))
        text = " ".join(draw(st.lists(st.sampled_from(WORDS), min_size=1, max_size=40)))
        out.append(
            Item(
                group,
                kind,
                text,
                order=draw(st.sampled_from((0, 0.5, 1, j))),
                recency=draw(st.floats(0, 1)),
                required=draw(st.booleans()) and draw(st.booleans()),
                cut_floor=draw(st.sampled_from((None, None, 0, 10, 40))),
                value=draw(st.floats(10, 90)) if kind == "carried" else None,
                label=draw(st.sampled_from(("", JOINED, "Section"))),
                focus=draw(st.booleans()) and draw(st.booleans()),
                word_cut=draw(st.booleans()),
            )
        )
    return out


@settings(max_examples=300, deadline=None)
@given(item_lists(), st.lists(st.integers(0, 600), min_size=1, max_size=4))
def test_shared_estimates_select_the_same(items: list[Item], budgets: list[int]) -> None:
    shared = Costs()
    for budget in budgets:
        fresh = select(items, budget, EST, LAYOUT)
        assert select(items, budget, EST, LAYOUT, shared) == fresh
        # and again, every estimate now remembered
        assert select(items, budget, EST, LAYOUT, shared) == fresh


def _done(n: int) -> list[Item]:
    """A required goal and ``n`` done steps of 5 tokens each as listed (``- edited
    src/mNNN.py``, 20 characters), oldest first."""
    recency = spread(n)
    steps = [
        Item("done", "done", f"edited src/m{k:03d}.py", order=k, recency=recency[k])
        for k in range(n)
    ]
    return [Item("goal", "goal", "Port the app.", required=True, cut_floor=13), *steps]


def _shown_newest(items: list[Item], k: int) -> Selection:
    """The goal and the newest ``k`` done steps shown, the others left out."""
    steps = items[1:]
    cut = len(steps) - k
    shown = (Shown(items[0], items[0].text), *(Shown(i, i.text) for i in steps[cut:]))
    return Selection(shown, tuple(steps[:cut]))


def test_a_long_ledger_shows_the_newest_steps_that_fit() -> None:
    items = _done(600)
    chosen = select(items, 400, EST, LAYOUT)
    text = LAYOUT.render(chosen)
    # the newest 70 steps, the closing note counting the 530 others
    assert chosen == _shown_newest(items, 70)
    assert text.startswith("## Goal\nPort the app.\n\n## Done\n- edited src/m530.py\n")
    assert text.endswith(
        "- edited src/m599.py\n\n## Not shown (no room left)\n"
        "- 530 more done steps: entries 1–900 of the history"
    )
    assert EST.text(text) == 396
    # one more step would not fit
    assert EST.text(LAYOUT.render(_shown_newest(items, 71))) == 401


def test_a_summarizer_that_remembers_estimates_writes_the_same_states() -> None:
    """The estimates an extractive summarizer keeps between compactions change none of its
    states: each history summarized at tight budgets by one summarizer (after all the
    others) and by a new one gives the same summary."""
    histories = [
        claude_code_history(),
        codex_history(),
        pi_history(),
        openhands_history(),
        swe_agent_history(),
    ]
    kept = ExtractiveSummarizer(user_messages_budget=200)
    requests: list[SummaryRequest] = []
    first: list[Summary] = []
    for messages in histories:
        for budget in range(100, 420, 20):
            request = SummaryRequest(messages, None, "", budget)
            try:
                first.append(kept.summarize(request, EST))
            except SummaryRejected:
                continue  # the required items alone need more
            requests.append(request)
    assert sum("Not shown" in s.text for s in first) == 19  # budgets that leave items out
    for request, summary in zip(requests, first, strict=True):
        assert kept.summarize(request, EST) == summary
        assert ExtractiveSummarizer(user_messages_budget=200).summarize(request, EST) == summary
