"""``Session.checkout``: the head moves back to an earlier entry (pi's session tree), an
append-only record withdraws the branch left, and an optional summary of it opens the new
branch (pi's branch summarization)."""

from __future__ import annotations

import hashlib
import json
from pathlib import Path
from typing import Any

import orjson
import pytest

from ctxengine.engine import Session
from ctxengine.engine.branches import BRANCH_SUMMARY_CARRIED, BRANCH_SUMMARY_HEADER
from ctxengine.errors import SummaryRejected
from ctxengine.model import (
    Entry,
    Message,
    SupersedeRecord,
    TextPart,
    ToolCallPart,
    assistant,
    current_entries,
    system,
    tool_result,
    user,
)
from ctxengine.projection.render import render_anthropic, render_openai
from ctxengine.projection.validate import validate
from ctxengine.recall import RecallQuery
from ctxengine.stores.sqlite import SQLiteStore
from ctxengine.summarizers.base import Summary, SummaryRequest
from ctxengine.tokens.base import Estimator
from hand_estimator import HandEstimator

EST = HandEstimator()


def started(store: SQLiteStore | None = None) -> tuple[Session, list[Entry]]:
    """A session of a system prompt and four turns: entries 0 (system) … 8."""
    s = Session(8_000, estimator=EST, store=store, session_id="tree")
    made = [s.append(system("You are careful."))]
    for k in range(4):
        made.append(s.append(user(f"request {k}")))
        made.append(s.append(assistant(f"answer {k}")))
    return s, made


def texts(s: Session) -> list[str]:
    return [m.text for m in s.prepare().messages]


def request_hash(s: Session) -> str:
    body = render_anthropic(s.project())
    return hashlib.sha256(orjson.dumps(body, option=orjson.OPT_SORT_KEYS)).hexdigest()


def test_the_new_branch_s_first_request_holds_the_summary_and_nothing_of_the_branch_left() -> None:
    s, made = started()
    target = made[4]  # answer 1
    done = s.checkout(target.id, summary="Tried a cache in front of the parser; too slow.")
    left = tuple(e.id for e in made[5:])
    assert done.abandoned == left
    assert done.record.body == SupersedeRecord(left, f"checkout of {target.id}", target.id)
    assert done.summary is not None
    header = BRANCH_SUMMARY_HEADER.format(count=4, first=made[5].id, last=made[8].id)
    s.append(user("request 2b"))
    assert texts(s) == [
        "You are careful.",
        "request 0",
        "answer 0",
        "request 1",
        "answer 1",
        f"{header}\n\nTried a cache in front of the parser; too slow.",
        "request 2b",
    ]
    body = json.dumps(render_openai(s.prepare()))
    for gone in ('request 2"', "answer 2", "request 3", "answer 3"):
        assert gone not in body
    assert validate(render_anthropic(s.prepare()), "anthropic") == []


def test_the_new_branch_continues_from_the_target_in_the_tree() -> None:
    s, made = started()
    done = s.checkout(made[2].id, summary="Went another way.")
    assert done.summary is not None
    assert done.record.parent_id == made[8].id  # the record is logged where the head was
    assert done.summary.parent_id == made[2].id
    new = s.append(user("request 1b"))
    assert new.parent_id == done.summary.id
    # Walking the parents from the newest entry gives the current log: the active branch.
    by_id = {e.id: e for e in s.entries}
    path: list[str] = []
    at: str | None = new.id
    while at is not None:
        path.append(at)
        at = by_id[at].parent_id
    assert path[::-1] == [e.id for e in current_entries(list(s.entries))]
    assert path[::-1] == [made[0].id, made[1].id, made[2].id, done.summary.id, new.id]


def test_without_a_summary_the_next_entry_hangs_off_the_target() -> None:
    s, made = started()
    done = s.checkout(made[6].id)
    assert done.summary is None
    new = s.append(user("request 3b"))
    assert new.parent_id == made[6].id
    assert texts(s)[-3:] == ["request 2", "answer 2", "request 3b"]


def test_a_compaction_on_the_branch_left_is_withdrawn_with_it() -> None:
    s, made = started()
    at_target = request_hash(s)
    for k in range(4, 10):
        s.append(user(f"request {k} " + "word " * 60))
        s.append(assistant(f"answer {k} " + "done " * 80))
    s.compact()
    assert s.project().compaction_id is not None
    s.checkout(made[8].id)
    assert s.project().compaction_id is None
    assert request_hash(s) == at_target


def test_a_checkout_is_stored_and_read_back(tmp_path: Path) -> None:
    db = tmp_path / "s.db"
    s, made = started(SQLiteStore(db))
    s.checkout(made[4].id, summary="Left the parser alone.")
    expected = texts(s)
    again = Session(8_000, estimator=EST, store=SQLiteStore(db), session_id="tree")
    assert texts(again) == expected
    new = again.append(user("request 2b"))
    summary = again.entries[-2]
    assert summary.message is not None and summary.message.meta == {"synthetic": "branch_summary"}
    assert new.parent_id == summary.id


def test_the_summarizer_writes_the_summary_when_asked() -> None:
    s, made = started()
    s.append(
        assistant("", ToolCallPart("c1", "bash", json.dumps({"command": "pytest -q tests/a"})))
    )
    s.append(tool_result("c1", "FAILED tests/a.py::test_x - AssertionError: 3 != 4", is_error=True))
    done = s.checkout(made[4].id, summary=True)
    assert done.summary is not None
    text = done.summary.body.text if isinstance(done.summary.body, Message) else ""
    header = BRANCH_SUMMARY_HEADER.format(count=6, first=made[5].id, last=s.entries[-3].id)
    assert text.startswith(f"{header}\n\n")
    # The extractive state of the branch left: its requests and the exact error line.
    assert "request 3" in text
    assert "FAILED tests/a.py::test_x - AssertionError: 3 != 4" in text
    assert "request 1" not in text.split("\n\n", 1)[1].replace("request 1b", "")


def test_a_failed_summary_appends_nothing() -> None:
    class Failing:
        name = "failing"

        def summarize(self, request: object, estimator: object) -> object:
            raise SummaryRejected("empty", "nothing")

    s, made = started()
    s.summarizer = Failing()  # type: ignore[assignment]
    before = len(s.entries)
    with pytest.raises(SummaryRejected):
        s.checkout(made[4].id, summary=True)
    assert len(s.entries) == before


def test_recall_still_finds_the_branch_left() -> None:
    s, made = started()
    s.checkout(made[2].id)
    hits = s.recall(RecallQuery(text="answer 3")).hits
    assert [h.entry_id for h in hits] == [made[8].id]


def test_prepare_takes_the_shorter_context_as_a_new_baseline() -> None:
    s, made = started()
    assert len(s.prepare().messages) == 9
    s.checkout(made[4].id)
    assert len(s.prepare().messages) == 5
    s.append(user("request 2b"))
    assert len(s.prepare().messages) == 6


@pytest.mark.parametrize(
    ("which", "message"),
    [
        ("nope", "checkout: no entry 'nope' in this session"),
        ("newest", "checkout: entry '{id}' is the newest entry already"),
        ("withdrawn", "checkout: entry '{id}' is withdrawn (on a branch left before, or "),
        ("empty", "checkout: the branch summary is empty"),
    ],
)
def test_errors_name_the_entry(which: str, message: str) -> None:
    s, made = started()
    summary: str | None = None
    target = made[8].id
    if which == "nope":
        target = "nope"
    elif which == "withdrawn":
        s.checkout(made[4].id)
        target = made[6].id
    elif which == "empty":
        target, summary = made[4].id, "  "
    before = len(s.entries)
    with pytest.raises(ValueError) as info:
        s.checkout(target, summary=summary)
    assert str(info.value).startswith(message.format(id=target))
    assert len(s.entries) == before


def test_a_checkout_that_leaves_calls_unanswered_is_refused() -> None:
    s, _ = started()
    reply = s.append(
        assistant(
            "",
            ToolCallPart("c1", "read", '{"path": "a.py"}'),
            ToolCallPart("c2", "read", '{"path": "b.py"}'),
        )
    )
    first = s.append(tool_result("c1", "a"))
    s.append(tool_result("c2", "b"))
    s.append(Message("user", (TextPart("thanks"),)))
    for target, calls in ((reply.id, "c1, c2"), (first.id, "c2")):
        with pytest.raises(ValueError) as info:
            s.checkout(target)
        assert str(info.value) == (
            f"checkout: entry {target!r} leaves tool calls unanswered ({calls}); check out "
            "the entry of their last result, or an entry before the call"
        )
    second, thanks = s.entries[-2].id, s.entries[-1].id
    done = s.checkout(second)
    assert done.abandoned == (thanks,)


class Recording:
    """The session's summarizer, keeping the messages of every request it gets."""

    def __init__(self, inner: Any) -> None:
        self.inner = inner
        self.name = inner.name
        self.seen: list[tuple[Message, ...]] = []
        self.written: list[str] = []

    def summarize(self, request: SummaryRequest, estimator: Estimator) -> Summary:
        self.seen.append(tuple(request.messages))
        out: Summary = self.inner.summarize(request, estimator)
        self.written.append(out.text)
        return out


def body_text(entry: Entry | None) -> str:
    assert entry is not None and isinstance(entry.body, Message)
    return entry.body.text


def test_a_second_checkout_to_the_same_point_carries_the_first_summary_forward() -> None:
    s, made = started()
    target = made[4]  # answer 1
    first = s.checkout(target.id, summary="Tried X and Y; both slower than A (99s).")
    s1 = first.summary
    assert s1 is not None and first.carried == ()
    r2b = s.append(user("request 2b"))
    a2b = s.append(assistant("B is slower too"))
    second = s.checkout(target.id, summary="B was slower as well.")
    assert second.abandoned == (s1.id, r2b.id, a2b.id)
    assert second.carried == (s1.id,)
    header = BRANCH_SUMMARY_HEADER.format(count=3, first=s1.id, last=a2b.id)
    assert body_text(second.summary) == (
        f"{header}\n\nB was slower as well.\n\n{BRANCH_SUMMARY_CARRIED}\n\n{body_text(s1)}"
    )
    assert texts(s)[-1] == body_text(second.summary)
    assert "Tried X and Y; both slower than A (99s)." in texts(s)[-1]
    # A third one, to an earlier point and written by the summarizer: the summarizer gets
    # the branch's own messages, the earlier summary (holding the first) follows verbatim.
    r2c = s.append(user("request 2c"))
    recording = Recording(s.summarizer)
    s.summarizer = recording  # type: ignore[assignment]
    third = s.checkout(made[2].id, summary=True)  # answer 0
    s2 = second.summary
    assert s2 is not None
    assert third.abandoned == (made[3].id, made[4].id, s2.id, r2c.id)
    assert third.carried == (s2.id,)
    assert recording.seen == [
        tuple(e.body for e in (made[3], made[4], r2c) if isinstance(e.body, Message))
    ]
    written = body_text(third.summary)
    header = BRANCH_SUMMARY_HEADER.format(count=4, first=made[3].id, last=r2c.id)
    own, carried = written.split(f"\n\n{BRANCH_SUMMARY_CARRIED}\n\n", 1)
    assert own == f"{header}\n\n{recording.written[0].strip()}"
    assert "request 2c" in own
    assert carried == body_text(s2)
    assert written.count("Tried X and Y; both slower than A (99s).") == 1
    assert texts(s)[-3:] == ["request 0", "answer 0", written]


def test_a_branch_of_nothing_but_a_summary_is_carried_without_the_summarizer() -> None:
    class Failing:
        name = "failing"

        def summarize(self, request: object, estimator: object) -> object:
            raise AssertionError("the summarizer is not called")

    s, made = started()
    first = s.checkout(made[4].id, summary="Tried X; too slow.")
    s1 = first.summary
    assert s1 is not None
    s.summarizer = Failing()  # type: ignore[assignment]
    again = s.checkout(made[4].id, summary=True)
    assert (again.abandoned, again.carried) == ((s1.id,), (s1.id,))
    header = BRANCH_SUMMARY_HEADER.format(count=1, first=s1.id, last=s1.id)
    assert body_text(again.summary) == f"{header}\n\n{BRANCH_SUMMARY_CARRIED}\n\n{body_text(s1)}"


def test_a_checkout_without_a_summary_carries_nothing() -> None:
    s, made = started()
    first = s.checkout(made[4].id, summary="Tried X; too slow.")
    bare = s.checkout(made[2].id)
    assert first.summary is not None and first.summary.id in bare.abandoned
    assert (bare.summary, bare.carried) == (None, ())
    assert texts(s) == ["You are careful.", "request 0", "answer 0"]
