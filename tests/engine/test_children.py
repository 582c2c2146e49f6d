"""Child sessions (subagent contexts): ``Session.fork`` / ``spawn`` / ``resume`` and
``finish``, round-tripped through real SQLite files: a fork's first request repeats its
parent's, a spawned context holds the stable head and the task packet only, and every run of
a child returns exactly one evidence entry to its parent, naming the child."""

from __future__ import annotations

import hashlib
import json
from pathlib import Path

import orjson
import pytest

from ctxengine.assembly import ContextAssembler
from ctxengine.engine import Pointers, Session
from ctxengine.engine.children import (
    COPIED_FROM,
    EVIDENCE_HEADER,
    FORK_POINT_RESULT,
    SYNTHETIC_CHILD_RESULT,
)
from ctxengine.errors import ConfigError
from ctxengine.model import (
    Entry,
    Message,
    ToolCallPart,
    assistant,
    system,
    tool_result,
    user,
)
from ctxengine.projection.render import render_anthropic, render_openai
from ctxengine.projection.validate import validate
from ctxengine.stores import SessionLink
from ctxengine.stores.sqlite import SQLiteStore
from hand_estimator import HandEstimator

EST = HandEstimator()


def opened(db: Path | None, session_id: str = "main") -> Session:
    store = SQLiteStore(db) if db is not None else None
    return Session(50_000, estimator=EST, store=store, session_id=session_id)


def started(db: Path | None) -> Session:
    s = opened(db)
    s.append(system("You are careful."))
    s.append(user("speed up the parser"))
    s.append(assistant("reading it", ToolCallPart("r1", "read", '{"path": "src/parse.py"}')))
    s.append(tool_result("r1", "def parse(text): ..."))
    s.append(assistant("it re-reads the file on every call"))
    return s


def request_hash(ctx: object) -> str:
    body = render_anthropic(ctx)  # type: ignore[arg-type]
    return hashlib.sha256(orjson.dumps(body, option=orjson.OPT_SORT_KEYS)).hexdigest()


def evidence_of(s: Session, child: str) -> list[Entry]:
    return [
        e
        for e in s.entries
        if (m := e.message) is not None and m.meta.get("child_session") == child
    ]


def work(child: Session) -> None:
    """A run of a child: a tool call that edits a file and one that runs the tests."""
    child.append(
        assistant(
            "",
            ToolCallPart("e1", "edit", '{"path": "src/parse.py", "old": "a", "new": "b"}'),
        )
    )
    child.append(tool_result("e1", "edited"))
    child.append(assistant("", ToolCallPart("b1", "bash", '{"command": "pytest -q"}')))
    child.append(tool_result("b1", "3 passed"))
    child.append(assistant("cached the file; tests pass"))


def test_spawn_gives_a_fresh_context_of_the_stable_head_and_the_task(tmp_path: Path) -> None:
    db = tmp_path / "ctx.db"
    parent = started(db)
    child = parent.spawn("Find why parse() is slow. Report the cause and the fix.")
    assert child.session_id == "spawn-1.main"
    assert [(m.role, m.text) for m in child.prepare().messages] == [
        ("system", "You are careful."),
        ("user", "Find why parse() is slow. Report the cause and the fix."),
    ]
    # The head is a copy of the parent's (same id), the task packet the child's own entry.
    assert child.entries[0].id == parent.entries[0].id
    assert child.entries[0].meta == {COPIED_FROM: "main"}
    assert COPIED_FROM not in child.entries[1].meta
    link = child.link
    assert link is not None
    assert (link.session_id, link.parent_id, link.parent_entry_id, link.relation) == (
        "spawn-1.main",
        "main",
        parent.entries[-1].id,
        "spawn",
    )
    # Stored: a new store on the same file reads the same child and link.
    again = opened(db, "spawn-1.main")
    assert again.entries == child.entries
    assert again.link == link
    assert opened(db).children() == [link]


def test_spawn_with_an_assembled_head_sends_the_same_head_and_no_history() -> None:
    head = ContextAssembler(base="You are careful.", tools=[{"name": "read", "parameters": {}}])
    parent = Session(50_000, estimator=EST, head=head)
    parent.append(user("speed up the parser"))
    parent.append(assistant("on it"))
    first = parent.prepare()
    child = parent.spawn("Profile parse().")
    ctx = child.prepare()
    assert [m.text for m in ctx.messages] == ["You are careful.", "Profile parse()."]
    assert ctx.messages[0] == first.messages[0]
    assert ctx.tools == first.tools
    assert child.head is not parent.head
    assert child.entries[0].meta == {}  # no history copied: only the task packet
    with pytest.raises(ConfigError, match="spawn: the child's tools are the assembled head's"):
        parent.spawn("x", tools=[{"name": "grep"}])


def test_a_fork_repeats_the_parent_s_request_at_the_fork_point(tmp_path: Path) -> None:
    db = tmp_path / "ctx.db"
    parent = started(db)
    at = parent.entries[3]  # the read's result
    before = parent.project()
    parent.append(assistant("more work after the fork point"))
    child = parent.fork(at.id)
    # The parent's context when ``at`` was its newest entry: the first 4 messages.
    assert [m.text for m in child.project().messages] == [m.text for m in before.messages[:4]]
    assert [e.id for e in child.entries] == [e.id for e in parent.entries[:4]]
    assert [e.parent_id for e in child.entries] == [e.parent_id for e in parent.entries[:4]]
    assert all(e.meta[COPIED_FROM] == "main" for e in child.entries)
    assert child.link == opened(db, child.session_id).link
    assert child.link is not None and child.link.parent_entry_id == at.id
    # A fork at the newest entry sends the parent's exact request.
    whole = parent.fork()
    assert request_hash(whole.project()) == request_hash(parent.project())
    assert whole.session_id == "fork-2.main"


def test_a_fork_at_a_pending_call_answers_it_and_takes_the_task(tmp_path: Path) -> None:
    parent = started(tmp_path / "ctx.db")
    call = parent.append(assistant("", ToolCallPart("t1", "task", '{"prompt": "try caching"}')))
    child = parent.fork(task="Try caching the file.", call_id="t1")
    text = FORK_POINT_RESULT.format(child=child.session_id)
    tail = child.prepare().messages[-3:]
    assert [m.role for m in tail] == ["assistant", "tool", "user"]
    assert [(r.call_id, r.text) for r in tail[1].tool_results] == [("t1", text)]
    assert tail[2].text == "Try caching the file."
    assert child.entries[-3].id == call.id
    for provider, body in (
        ("openai", render_openai(child.prepare())),
        ("anthropic", render_anthropic(child.prepare())),
    ):
        assert validate(body, provider) == []
    # The child's result answers the call in the parent.
    work(child)
    entry = child.finish("Caching the file makes parse() 4x faster.")
    message = entry.message
    assert message is not None and message.role == "tool"
    assert message.tool_results[0].call_id == "t1"
    assert validate(render_anthropic(parent.prepare()), "anthropic") == []


def test_each_run_returns_exactly_one_evidence_entry_through_the_store(tmp_path: Path) -> None:
    db = tmp_path / "ctx.db"
    parent = started(db)
    child = parent.spawn("Make parse() fast.")
    work(child)
    before = len(parent.entries)
    entry = child.finish("parse() now caches the file.")
    assert len(parent.entries) == before + 1
    run = [e.id for e in child.entries[1:]]  # the task packet and the run's work
    header = EVIDENCE_HEADER.format(
        child="spawn-1.main", relation="spawn", run=1, first=run[0], last=run[-1]
    )
    assert entry.message is not None
    assert entry.message.text == (
        f"{header}\n\nparse() now caches the file.\n\nPointers:\n"
        f"- entries: {run[0]}, {run[-1]}\n- files: src/parse.py\n- commands: `pytest -q`"
    )
    assert entry.message.meta == {
        "synthetic": SYNTHETIC_CHILD_RESULT,
        "child_session": "spawn-1.main",
        "child_relation": "spawn",
        "child_run": 1,
        "child_first": run[0],
        "child_last": run[-1],
    }
    # Finishing again with nothing new adds nothing.
    with pytest.raises(ValueError, match=r"finish: nothing new in 'spawn-1\.main' since run 1"):
        child.finish("again")
    assert len(parent.entries) == before + 1

    # Another process: both sessions opened again from the file; the child resumed.
    parent2 = opened(db)
    assert [e.id for e in evidence_of(parent2, "spawn-1.main")] == [entry.id]
    resumed = parent2.resume("spawn-1.main")
    assert resumed.entries == child.entries
    resumed.append(user("Also handle an empty file."))
    resumed.append(assistant("empty files return []"))
    second = resumed.finish("Empty files return [].", pointers=Pointers(files=("src/parse.py",)))
    assert second.message is not None and second.message.meta["child_run"] == 2
    assert second.message.meta["child_first"] == resumed.entries[-2].id
    assert second.message.text.endswith("Pointers:\n- files: src/parse.py")
    parent3 = opened(db)
    assert [e.id for e in evidence_of(parent3, "spawn-1.main")] == [entry.id, second.id]
    assert len(parent3.entries) == before + 2


def test_children_without_a_store_live_in_their_parent() -> None:
    parent = started(None)
    one = parent.spawn("a")
    two = parent.fork()
    assert [x.session_id for x in parent.children()] == ["spawn-1.main", "fork-2.main"]
    assert all(isinstance(x, SessionLink) and x.created_at for x in parent.children())
    assert parent.resume("fork-2.main") is two
    one.append(assistant("done a"))
    one.finish("a is done")
    assert evidence_of(parent, "spawn-1.main") == [parent.entries[-1]]
    assert evidence_of(parent, "fork-2.main") == []
    with pytest.raises(ValueError, match="resume: 'nope' is not a child of this session"):
        parent.resume("nope")


def test_parallel_children_answer_their_own_calls() -> None:
    parent = started(None)
    parent.append(
        assistant(
            "",
            ToolCallPart("t1", "task", '{"prompt": "a"}'),
            ToolCallPart("t2", "task", '{"prompt": "b"}'),
        )
    )
    a = parent.spawn("look at a", call_id="t1")
    b = parent.spawn("look at b", call_id="t2")
    b.append(assistant("b is fine"))
    a.append(assistant("a is broken"))
    with pytest.raises(ValueError) as info:
        a.finish("a is broken", call_id="t9")
    assert str(info.value) == "finish: session 'main' does not await a result of call 't9'"
    b.finish("b is fine")
    a.finish("a is broken")
    tail = [m for e in parent.entries[-2:] if (m := e.message) is not None]
    assert [m.tool_results[0].call_id for m in tail] == ["t2", "t1"]
    for provider, body in (
        ("openai", render_openai(parent.prepare())),
        ("anthropic", render_anthropic(parent.prepare())),
    ):
        assert validate(body, provider) == []


def test_finish_refuses_what_it_cannot_return(tmp_path: Path) -> None:
    db = tmp_path / "ctx.db"
    parent = started(db)
    with pytest.raises(ValueError, match="finish: session 'main' is not a child session"):
        parent.finish("x")
    child = parent.spawn("task")
    child.append(assistant("done"))
    alone = opened(db, child.session_id)
    with pytest.raises(ValueError) as info:
        alone.finish("done")
    assert str(info.value) == (
        "finish: open 'spawn-1.main' with its parent's Session.resume() to return its result "
        "to 'main'"
    )
    with pytest.raises(ValueError, match="finish: the summary is empty"):
        child.finish("  ")
    parent.append(assistant("", ToolCallPart("t1", "task", "{}")))
    with pytest.raises(ValueError) as info:
        child.finish("done")
    assert str(info.value) == (
        "finish: session 'main' awaits results of calls t1: give the call_id this result answers"
    )
    other = opened(db, "other")
    with pytest.raises(ValueError, match=r"resume: session 'spawn-1\.main' was not started from"):
        other.resume("spawn-1.main")


def test_fork_and_spawn_errors() -> None:
    parent = started(None)
    with pytest.raises(ValueError, match="fork: no entry 'nope' in this session"):
        parent.fork("nope")
    with pytest.raises(ValueError, match="the task packet is empty"):
        parent.spawn(" ")
    with pytest.raises(ValueError, match="a task packet is a user message, got role 'assistant'"):
        parent.spawn(assistant("x"))
    parent.spawn("a", session_id="helper")
    with pytest.raises(ValueError, match="spawn: session 'helper' exists already"):
        parent.spawn("b", session_id="helper")
    with pytest.raises(ValueError, match="fork: the session has no entry to fork at"):
        Session(8_000).fork()


def test_the_evidence_entry_is_no_person_s_request() -> None:
    parent = started(None)
    child = parent.spawn("task")
    child.append(assistant("done"))
    entry = child.finish("done")
    assert isinstance(entry.body, Message)
    # Not a real user message: it opens no turn and is not the goal.
    from ctxengine.model.roles import is_real_user_message

    assert not is_real_user_message(entry.body)
    assert json.loads(json.dumps(entry.body.meta))["synthetic"] == "child_result"
