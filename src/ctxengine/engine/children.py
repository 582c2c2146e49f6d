"""Child sessions (subagent contexts): the entries a fork or a spawn starts with, and the one
evidence entry a child's run hands back to its parent.

Three ways to start a child (seed 004, "Subagent: how it starts and what it costs"):

* a **fork** copies the parent's context at the fork point: its history up to an entry, so
  its first request repeats the parent's (and may reuse the parent's prompt cache);
* a **spawn** is a fresh context: only the parent's stable head (its assembled head, else
  the system and developer messages the log opens with) and the task packet;
* **resume** opens a child again from the store and continues its history.

A child's run ends with one evidence entry in the parent (the task packet goes out, the
evidence packet comes back: "the main context keeps only the conclusion and pointers to the
evidence"): the summary the child wrote, and pointers into its work (its entry ids, the files
it changed and read, the commands it ran). The parent's entry names the child that produced
it (:data:`CHILD_META`). Work of the child (file bodies, logs, retries) stays in the child.

Pure helpers: the :class:`~ctxengine.engine.Session` methods do the I/O.
"""

from __future__ import annotations

import copy
from collections.abc import Sequence
from dataclasses import dataclass, replace
from datetime import UTC, datetime
from typing import TYPE_CHECKING, Any

from ctxengine.model import Entry, Message, TextPart, ToolResultPart
from ctxengine.model.codec import body_hash
from ctxengine.model.entries import Body
from ctxengine.policy.defaults import CHILD_POINTER_COMMANDS, CHILD_POINTER_FILES

if TYPE_CHECKING:
    from ctxengine.assembly.head import ContextAssembler

#: ``Entry.meta`` key of an entry copied into a child: the session it was copied from.
COPIED_FROM = "copied_from"
#: ``Message.meta["synthetic"]`` of a parent's evidence entry.
SYNTHETIC_CHILD_RESULT = "child_result"
#: ``Message.meta["synthetic"]`` of the results a fork gives the calls pending at its fork
#: point (the call that started it, and any call made beside it).
SYNTHETIC_FORK_POINT = "fork_point"
#: Keys of an evidence entry's ``Message.meta`` naming the child that produced it: the
#: child's session id, its relation, the run's number (1 for the first) and the first and
#: last entry of the child that the run covers.
CHILD_META: tuple[str, ...] = (
    "child_session",
    "child_relation",
    "child_run",
    "child_first",
    "child_last",
)
#: The result a fork gives, in its own history, to a call pending at its fork point.
FORK_POINT_RESULT = "[this call goes on in the forked session {child}: its work follows]"
#: The first line of an evidence entry.
EVIDENCE_HEADER = (
    "Result of child session {child} ({relation}, run {run}; entries {first} to {last}):"
)


@dataclass(frozen=True, slots=True)
class Pointers:
    """Where the evidence of a child's run is, for the parent to look up.

    Attributes:
        entries: entry ids of the child (by default the run's first and last).
        files: file paths (by default those the run modified, then those it read).
        commands: shell commands (by default those the run ran, newest last).
    """

    entries: tuple[str, ...] = ()
    files: tuple[str, ...] = ()
    commands: tuple[str, ...] = ()

    def lines(self) -> list[str]:
        """One ``- entries: …`` / ``- files: …`` / ``- commands: …`` line per list given."""
        out: list[str] = []
        if self.entries:
            out.append("- entries: " + ", ".join(self.entries))
        if self.files:
            out.append("- files: " + ", ".join(self.files))
        if self.commands:
            out.append("- commands: " + "; ".join(f"`{c}`" for c in self.commands))
        return out


@dataclass(frozen=True, slots=True)
class Run:
    """One run of a child: the entries since its previous result, and its number.

    Attributes:
        number: 1 for the first run, 2 for the first after a resume …
        entries: the child's entries of the run (its own, not copied; shown), in log order.
    """

    number: int
    entries: tuple[Entry, ...]


def now() -> str:
    """The current time, ISO-8601 UTC with milliseconds (as entries are stamped)."""
    return datetime.now(UTC).isoformat(timespec="milliseconds")


def head_copy(head: ContextAssembler | None) -> ContextAssembler | None:
    """An assembler for a child: the same sections and the same snapshot of the volatile
    ones (so a child's head is byte-identical to the parent's within the parent's epoch),
    with a cache-break list of its own. ``None`` for ``None``."""
    if head is None:
        return None
    child = copy.copy(head)
    child.breaks = []
    return child


def copies(entries: Sequence[Entry], session_id: str, source: str) -> list[Entry]:
    """``entries`` as the first entries of the child ``session_id``: numbered from seq 0,
    ids, parents, bodies and times unchanged, ``meta[COPIED_FROM]`` = ``source``."""
    return [
        replace(e, session_id=session_id, seq=i, meta={**e.meta, COPIED_FROM: source})
        for i, e in enumerate(entries)
    ]


def next_entry(body: Body, session_id: str, after: Sequence[Entry]) -> Entry:
    """The entry ``body`` would be appended as after ``after`` (content-hash id chained to
    the last one, stamped now)."""
    parent = after[-1].id if after else None
    return Entry(
        id=body_hash(body, parent),
        session_id=session_id,
        seq=len(after),
        body=body,
        parent_id=parent,
        created_at=now(),
    )


def task_message(task: str | Message) -> Message:
    """The task packet as a user message.

    Raises:
        ValueError: an empty task, or a message that is not a user message.
    """
    if isinstance(task, Message):
        if task.role != "user":
            raise ValueError(f"a task packet is a user message, got role {task.role!r}")
        if not task.parts:
            raise ValueError("the task packet is empty")
        return task
    if not task.strip():
        raise ValueError("the task packet is empty")
    return Message("user", (TextPart(task),))


def fork_point_results(calls: Sequence[str], child: str) -> Message:
    """The tool message a fork appends for the calls pending at its fork point, in call
    order: each answered by :data:`FORK_POINT_RESULT`."""
    text = FORK_POINT_RESULT.format(child=child)
    results = tuple(ToolResultPart(cid, (TextPart(text),)) for cid in calls)
    return Message("tool", results, meta={"synthetic": SYNTHETIC_FORK_POINT})


def child_results(parent: Sequence[Entry], child: str) -> list[Message]:
    """The evidence messages of the child ``child`` in the parent's log, oldest first."""
    return [
        m
        for e in parent
        if (m := e.message) is not None
        and m.meta.get("synthetic") == SYNTHETIC_CHILD_RESULT
        and m.meta.get("child_session") == child
    ]


def current_run(child: Sequence[Entry], hidden: set[int], parent: Sequence[Entry], sid: str) -> Run:
    """The child's run not reported yet: its own (not copied), shown entries after the last
    entry the parent's latest evidence entry of it covers.

    Args:
        child: the child's log; ``hidden``: positions withdrawn from it.
        parent: the parent's log; ``sid``: the child's session id.
    """
    reported = child_results(parent, sid)
    start = 0
    if reported:
        last = reported[-1].meta.get("child_last")
        start = next((i + 1 for i, e in enumerate(child) if e.id == last), 0)
    own = tuple(
        e
        for i, e in enumerate(child[start:], start)
        if i not in hidden and COPIED_FROM not in e.meta
    )
    return Run(len(reported) + 1, own)


def run_pointers(run: Sequence[Entry]) -> Pointers:
    """The pointers of a run taken from its entries: its first and last entry ids, the files
    it modified then read (:data:`CHILD_POINTER_FILES` at most), the commands it ran (the
    newest :data:`CHILD_POINTER_COMMANDS`), as :func:`~ctxengine.summarizers.ledgers.
    extract_ledgers` finds them in its tool calls."""
    if not run:
        return Pointers()
    ids = (run[0].id,) if len(run) == 1 else (run[0].id, run[-1].id)
    from ctxengine.summarizers.ledgers import extract_ledgers

    ledgers = extract_ledgers([m for e in run if (m := e.message) is not None])
    files = (*ledgers.files_modified, *ledgers.files_read)[:CHILD_POINTER_FILES]
    return Pointers(ids, files, ledgers.commands[-CHILD_POINTER_COMMANDS:])


def evidence(
    child: str,
    relation: str,
    run: Run,
    summary: str,
    pointers: Pointers,
    call_id: str | None,
) -> Message:
    """The evidence entry's message: :data:`EVIDENCE_HEADER`, the summary, the pointers; a
    tool result of ``call_id`` (the parent's call that started the run), else a user-role
    message marked synthetic (not a person's request). Its meta names the child
    (:data:`CHILD_META`)."""
    first, last = run.entries[0].id, run.entries[-1].id
    head = EVIDENCE_HEADER.format(
        child=child, relation=relation, run=run.number, first=first, last=last
    )
    lines = pointers.lines()
    text = f"{head}\n\n{summary.strip()}"
    if lines:
        text += "\n\nPointers:\n" + "\n".join(lines)
    meta: dict[str, Any] = {
        "synthetic": SYNTHETIC_CHILD_RESULT,
        "child_session": child,
        "child_relation": relation,
        "child_run": run.number,
        "child_first": first,
        "child_last": last,
    }
    if call_id is not None:
        return Message("tool", (ToolResultPart(call_id, (TextPart(text),)),), meta=meta)
    return Message("user", (TextPart(text),), meta=meta)
