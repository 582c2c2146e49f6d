"""A text the continuation state shows cut names the history entry that holds it whole, as a
truncated tool output does, so that the agent can read the rest (the recall tool's
``entry``)."""

from __future__ import annotations

import re

from ctxengine.engine import Session
from ctxengine.model import assistant, system, user
from ctxengine.recall import HistoryIndex, run_recall_tool
from ctxengine.recall.search import whole_lines
from ctxengine.summarizers.extractive_state import current_work_items
from hand_estimator import HandEstimator

_NOTE = re.compile(
    r"\[… ([\d,]+) more characters not shown; full text kept in history as entry ([^\]]+)\]"
)


def _session() -> tuple[Session, str, str]:
    """A session whose first request (10,817 characters, 121 lines) and the agent's last message
    summarized are cut at the first compaction of a 4,000-token window."""
    goal = "Port the parser.\n" + "".join(
        f"step{i:04d}" + ("\n" if i % 10 == 9 else " ") for i in range(1200)
    )
    session = Session(4000, estimator=HandEstimator())
    session.append(system("You are a coding agent."))
    first = session.append(user(goal))
    for i in range(40):
        session.append(assistant(f"Working on part {i}. " + "detail " * 60))
        session.append(user(f"Go on with part {i}, " + "more words " * 30))
    return session, first.id, goal


def test_the_cut_goal_and_current_work_name_their_entries_and_recall_reads_them_whole() -> None:
    session, goal_id, goal = _session()
    context = session.prepare()
    assert [e.step for e in session.events] == ["compaction"]
    state = next(m.text for m in context.messages if "## Goal" in m.text)
    found = [(int(n.replace(",", "")), entry) for n, entry in _NOTE.findall(state)]
    shown = state.split("## Goal\n", 1)[1].split("\n[…", 1)[0]
    assert goal.startswith(shown)
    assert found[0] == (len(goal) - len(shown), goal_id) == (7_669, goal_id)
    # the other text cut: the agent's last message summarized, named by its own entry
    (cut, other), by_id = found[1], {e.id: e for e in session.entries}
    message = by_id[other].message
    assert message is not None and message.role == "assistant"
    work = state.split("## Current work\n", 1)[1].split("\n[…", 1)[0]
    assert message.text.startswith("Working on part 38. ") and message.text.startswith(work)
    head, rest = current_work_items(message.text.strip())  # split at a space
    assert (work, cut) == (head.text, len(rest.text)) and cut == 41
    index = HistoryIndex(HandEstimator())
    index.update(session.entries)
    for entry, text in ((goal_id, goal), (other, message.text)):
        answer, is_error = run_recall_tool(index, {"entry": entry})
        assert not is_error and answer.startswith(f"1 match for entry {entry} ")
        shown = [line.split(": ", 1)[1] for line in answer.split("\n")[3:]]
        assert shown == whole_lines(text)  # every character, a long line in pieces
