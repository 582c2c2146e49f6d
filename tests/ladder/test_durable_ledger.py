"""The durable ledger (``ladder/durable_ledger.py``) answers exactly what
:func:`~ctxengine.ladder.reinject.durable_items` reads from the whole history, for every cut:
on histories drawn by hypothesis from the vocabularies durable state is made of (rules
blocks, todo and plan calls, background shells with polls, stops and notifications,
subagents, skill activations and notices, reads and edits with their results, duplicated
call ids, results before their calls), on the corpus transcripts, and inside a session
(:meth:`~ctxengine.engine.compactor.Compactor.durable` at every cut of every compaction)."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from ladder_helpers import EST

from corpus import CORPUS, MISSING, transcript_files
from ctxengine.engine import Session
from ctxengine.errors import TranscriptError, UnsupportedFormatError
from ctxengine.importers.registry import read_transcript
from ctxengine.ladder.durable_ledger import DurableLedger
from ctxengine.ladder.reinject import durable_items
from ctxengine.model import Message, TextPart, ToolCallPart, ToolResultPart
from ctxengine.policy import Policy
from ctxengine.policy.presets import preset
from ctxengine.projection.skills import (
    SYNTHETIC_SKILL,
    SYNTHETIC_SKILL_NOTICE,
    activation_text,
    notice_text,
)

#: Re-injects every kind (rules, todos, background, plan, skills, files), three files.
EVERY_KIND = Policy(
    reinject=("rules", "todos", "background", "plan", "skills", "files"),
    reinject_files=3,
    reinject_file_max_tokens=60,
    reinject_skill_max_tokens=150,
    reinject_skills_max_tokens=250,
)
RULES = (
    "<system-reminder>\nContents of /repo/CLAUDE.md (project instructions):\n\nRun the "
    "tests.\n</system-reminder>",
    "# AGENTS.md instructions for /repo\n\n<INSTRUCTIONS>\nUse uv.\n</INSTRUCTIONS>",
)
IDS = ("c1", "c2", "c3", "c4", "c5", "c6")
TASKS = ("bash_1", "bash_2", "7", "a1b2")
PATHS = ("src/a.py", "src/b.py", "/repo/src/a.py", "docs/c.md", "d.txt")
SKILLS = ("pdf", "csv", "lint")


def _call(cid: str, tool: str, **args: Any) -> ToolCallPart:
    return ToolCallPart(cid, tool, json.dumps(args))


def _answer(cid: str, text: str, *, is_error: bool = False) -> Message:
    return Message("tool", (ToolResultPart(cid, (TextPart(text),), is_error=is_error),))


def _user(text: str, **meta: Any) -> Message:
    return Message("user", (TextPart(text),), meta=meta)


@st.composite
def calls(draw: st.DrawFn, cid: str) -> ToolCallPart:
    """One call of a tool durable state reads."""
    kind = draw(st.sampled_from(range(12)))
    path = draw(st.sampled_from(PATHS))
    task = draw(st.sampled_from(TASKS))
    if kind == 0:
        items = draw(
            st.lists(
                st.fixed_dictionaries(
                    {
                        "content": st.sampled_from(("fix a", "test b", "ship")),
                        "status": st.sampled_from(("pending", "in_progress", "completed")),
                    }
                ),
                max_size=3,
            )
        )
        return _call(cid, "TodoWrite", todos=items)
    if kind == 1:
        return _call(cid, "ExitPlanMode", plan=draw(st.sampled_from(("Step 1.", "", "Go."))))
    if kind == 2:
        command = draw(st.sampled_from(("make watch", "npm run dev", "pytest")))
        return _call(cid, "Bash", command=command, run_in_background=True)
    if kind == 3:
        return _call(cid, "BashOutput", bash_id=task)
    if kind == 4:
        return _call(cid, "KillShell", shell_id=task)
    if kind == 5:
        background = draw(st.booleans())
        return _call(cid, "Task", description="Review", prompt="Go.", run_in_background=background)
    if kind == 6:
        return _call(cid, "skill", name=draw(st.sampled_from(SKILLS)))
    if kind == 7:
        return _call(cid, "Read", file_path=path)
    if kind == 8:
        return _call(cid, "Edit", file_path=path, old_string="a", new_string="b")
    if kind == 9:
        return _call(cid, "Write", file_path=path, content="x")
    if kind == 10:
        return _call(cid, "exec_command", cmd="npm run dev", yield_time_ms=1000)
    return _call(cid, "bash", command=f"cat {path} && sed -i s/a/b/ {path}")


def _result_text(draw: st.DrawFn, call: ToolCallPart | None) -> str:
    """A result text for ``call`` (``None``: a result whose call is not there)."""
    task = draw(st.sampled_from(TASKS))
    name = call.name if call is not None else ""
    if name == "Bash":
        return f"Command running in background with ID: {task}"
    if name == "exec_command":
        return draw(
            st.sampled_from(
                (f"Process running with session ID {task}", "Process exited with code 0")
            )
        )
    if name == "BashOutput":
        return draw(
            st.sampled_from(("<status>running</status>", "<status>completed</status>", "x"))
        )
    if name == "Task":
        return draw(st.sampled_from((f"agentId: {task}", "Done.")))
    if name == "skill":
        skill = draw(st.sampled_from(SKILLS))
        body = draw(st.sampled_from(("Fill it.", "line\n" * 40)))
        path = f"s/{skill}/SKILL.md"
        return draw(st.sampled_from((activation_text(skill, path, body), notice_text(skill, path))))
    return draw(st.sampled_from(("file contents\nline 2", "y" * 400, "ok")))


@st.composite
def histories(draw: st.DrawFn) -> list[Message]:
    """A history of assistant calls, their results (some missing, some failed, some before
    their call), injected rules blocks, task notifications and skill messages."""
    out: list[Message] = []
    made: dict[str, ToolCallPart] = {}
    for _ in range(draw(st.integers(0, 24))):
        step = draw(st.sampled_from(range(8)))
        if step <= 2:
            cids = draw(st.lists(st.sampled_from(IDS), min_size=1, max_size=2))
            parts = tuple(draw(calls(cid)) for cid in cids)
            made.update((p.id, p) for p in parts)
            out.append(Message("assistant", (TextPart("working"), *parts)))
        elif step <= 4:
            cid = draw(st.sampled_from(IDS))
            failed = draw(st.booleans()) and draw(st.booleans())
            out.append(_answer(cid, _result_text(draw, made.get(cid)), is_error=failed))
        elif step == 5:
            out.append(_user(draw(st.sampled_from(RULES))))
        elif step == 6:
            task = draw(st.sampled_from(TASKS))
            status = draw(st.sampled_from(("completed", "running", "failed")))
            note = (
                f"<task-notification><task-id>{task}</task-id><status>{status}</status>"
                "</task-notification>"
            )
            out.append(_user(note))
        else:
            skill = draw(st.sampled_from(SKILLS))
            path = f"s/{skill}/SKILL.md"
            text, synthetic = draw(
                st.sampled_from(
                    (
                        (activation_text(skill, path, "Do it."), SYNTHETIC_SKILL),
                        (notice_text(skill, path), SYNTHETIC_SKILL_NOTICE),
                        ("Please fix the bug.", None),
                    )
                )
            )
            out.append(_user(text, synthetic=synthetic) if synthetic else _user(text))
    return out


def _ledger(messages: list[Message]) -> DurableLedger:
    ledger = DurableLedger()
    for m in messages:
        ledger.observe(m)
    return ledger


def _check_every_cut(messages: list[Message], policy: Policy) -> int:
    """Assert the ledger's answer equals the full read at every cut; returns how many
    items the cuts gave in all."""
    ledger = _ledger(messages)
    found = 0
    for cut in range(len(messages) + 1):
        expected = durable_items(messages[:cut], policy, EST, messages[cut:])
        assert ledger.items(cut, messages[cut:], policy, EST) == expected, cut
        found += len(expected)
    return found


@settings(max_examples=300, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(histories())
def test_every_cut_of_a_drawn_history_matches_the_full_read(messages: list[Message]) -> None:
    _check_every_cut(messages, EVERY_KIND)


def test_the_drawn_histories_reach_every_kind() -> None:
    """The strategy draws histories where each kind is re-injected (so the property above
    compares real items, not empty answers)."""
    seen: set[str] = set()

    @settings(max_examples=200, deadline=None, database=None)
    @given(histories())
    def collect(messages: list[Message]) -> None:
        ledger = _ledger(messages)
        for cut in range(len(messages) + 1):
            seen.update(i.kind for i in ledger.items(cut, messages[cut:], EVERY_KIND, EST))

    collect()
    assert seen == {"rules", "todos", "background", "plan", "skills", "files"}


def test_a_hand_built_history_at_each_cut() -> None:
    """Rules seen again in the tail leave; the newest todo call in the tail hides the list;
    a shell started before the cut and stopped after it is not running; the latest read
    answered before the cut is the file's text."""
    messages = [
        _user(RULES[0]),
        Message("assistant", (_call("t1", "TodoWrite", todos=[{"content": "a"}]),)),
        _answer("t1", "ok"),
        Message("assistant", (_call("b1", "Bash", command="make watch", run_in_background=True),)),
        _answer("b1", "Command running in background with ID: bash_1"),
        Message("assistant", (_call("r1", "Read", file_path="src/a.py"),)),
        _answer("r1", "print(1)"),
        _user(RULES[0]),
        Message("assistant", (_call("k1", "KillShell", shell_id="bash_1"),)),
        _answer("k1", "killed"),
    ]
    ledger = _ledger(messages)
    at_7 = ledger.items(7, messages[7:], EVERY_KIND, EST)
    assert [i.kind for i in at_7] == ["todos", "files"]
    assert at_7[1].text == "Contents of src/a.py as last read before the compaction:\nprint(1)"
    assert [i.kind for i in ledger.items(5, messages[5:], EVERY_KIND, EST)] == ["todos"]
    assert ledger.rules(7) == [] and ledger.rules(8) == [RULES[0]]
    assert [t.id for t in ledger.running(5)] == []  # stopped in the kept tail
    with pytest.raises(ValueError, match="does not split"):
        ledger.items(3, messages[4:], EVERY_KIND, EST)


def _corpus_files() -> list[Path]:
    if not CORPUS.exists():
        return []
    live = sorted((CORPUS / "live-agents").rglob("*.jsonl"))
    return [*transcript_files(), *live]


def test_every_corpus_transcript_matches_the_full_read() -> None:
    """Cuts at every tenth of each transcript (and both ends), under the Claude Code preset
    (rules, todos, background tasks, plan, skills, five files)."""
    files = _corpus_files()
    if not files:
        pytest.skip(MISSING)
    policy = preset("claude-code")
    kinds: set[str] = set()
    compared = 0
    for path in files:
        try:
            session = read_transcript(path)
        except (TranscriptError, UnsupportedFormatError):
            continue  # formats without an importer are other tests' matter
        messages = [e.body for e in session.entries if isinstance(e.body, Message)]
        ledger = _ledger(messages)
        n = len(messages)
        for cut in sorted({0, n, *range(0, n, max(1, n // 10))}):
            expected = durable_items(messages[:cut], policy, EST, messages[cut:])
            assert ledger.items(cut, messages[cut:], policy, EST) == expected, (path, cut)
            kinds.update(i.kind for i in expected)
            compared += 1
    assert compared > 100
    assert {"files", "background", "todos"} <= kinds


def _full_read(session: Session, first_kept_id: str | None) -> tuple[Any, ...]:
    """:func:`durable_items` of a session's whole history split before ``first_kept_id``
    (how the compactor read it before the ledger)."""
    h = session.log.history
    end = len(h) if first_kept_id is None else h.index.get(first_kept_id, len(h))
    before: list[Message] = []
    kept: list[Message] = []
    for n, e in enumerate(h.entries):
        if (m := e.message) is not None:
            (before if n < end else kept).append(m)
    return durable_items(before, session.policy, session.log.estimator, kept)


def test_a_session_answers_every_cut_as_the_full_read() -> None:
    """A live session that compacts (its records between the messages, the ledger caught up
    at each compaction and at each question): the compactor's durable state at every entry
    of the history equals the full read, at several moments of its growth."""
    policy = Policy(reinject=("rules", "todos", "background", "plan", "skills", "files"))
    session = Session(4_000, policy=policy, estimator=EST)
    checked = 0
    for n in range(60):
        path = PATHS[n % len(PATHS)]
        step = [
            Message("assistant", (TextPart(f"step {n}"), _call(f"r{n}", "Read", file_path=path))),
            _answer(f"r{n}", f"contents of {path} at step {n}\n" + "x " * 400),
        ]
        if n % 7 == 0:
            step.append(_user(RULES[n % 2]))
        if n % 11 == 3:
            step += [
                Message(
                    "assistant",
                    (_call(f"b{n}", "Bash", command="make watch", run_in_background=True),),
                ),
                _answer(f"b{n}", f"Command running in background with ID: bash_{n}"),
            ]
        if n % 5 == 0:
            step.append(_user(f"Now do part {n}."))
        for m in step:
            session.append(m)
        session.prepare()
        if n % 15 == 14:
            ids = [None, *(e.id for e in session.log.history.entries)]
            for eid in ids:
                assert session.compactor.durable(eid) == _full_read(session, eid), (n, eid)
                checked += 1
    compactions = sum(1 for e in session.events if e.step == "compaction")
    assert compactions >= 3
    assert checked > 300
