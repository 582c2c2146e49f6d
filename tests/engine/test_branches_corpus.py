"""The pi corpus sessions as trees: each file rewritten as a version 3 pi session (ids and
parent ids) with a branch the user left, imported on its active branch (exact entry ids),
replayed on it, stored, and checked out to an earlier entry with a branch summary."""

from __future__ import annotations

import json
from collections.abc import Sequence
from dataclasses import replace
from pathlib import Path
from typing import Any

import pytest

from corpus import require_corpus
from ctxengine.engine import Session
from ctxengine.engine.branches import BRANCH_SUMMARY_HEADER
from ctxengine.importers.pi import IMPORTER
from ctxengine.model import CompactionRecord, Entry, current_entries, user
from ctxengine.projection.render import render_openai
from ctxengine.replay import replay
from ctxengine.stores.sqlite import SQLiteStore
from hand_estimator import HandEstimator

FILES = ("pi-mono-before-compaction.jsonl", "pi-mono-large-session.jsonl")
#: The branch left: written right after the branch point, before the rest of the main line.
LEFT = (
    {"role": "user", "content": [{"type": "text", "text": "LEFT-BRANCH try the other parser"}]},
    {
        "role": "assistant",
        "content": [{"type": "text", "text": "LEFT-BRANCH the other parser is slower"}],
        "stopReason": "stop",
    },
)


def as_tree(path: Path, out: Path) -> tuple[list[str], list[str]]:
    """Write ``path`` (a linear version 1 pi file) to ``out`` as a version 3 tree: entry n
    gets id ``p<n>`` and the previous main-line entry as parent; two entries on a branch off
    the middle entry (``x1``, ``x2``) are written after it. Returns the ids of the main-line
    message and compaction entries (what the active branch imports), and the branch's ids."""
    rows = [json.loads(line) for line in path.read_text(encoding="utf-8").splitlines() if line]
    header, entries = rows[0], rows[1:]
    header = {**header, "version": 3}
    ids = [f"p{n:05d}" for n in range(len(entries))]
    fork = len(entries) // 2
    lines: list[dict[str, Any]] = [header]
    kept: list[str] = []
    for n, (entry_id, obj) in enumerate(zip(ids, entries, strict=True)):
        obj = {**obj, "id": entry_id, "parentId": ids[n - 1] if n else None}
        if obj["type"] == "compaction":
            index = obj.pop("firstKeptEntryIndex")
            obj["firstKeptEntryId"] = ids[index - 1]
        lines.append(obj)
        if obj["type"] in ("message", "compaction"):
            kept.append(entry_id)
        if n == fork:
            parent = entry_id
            for k, message in enumerate(LEFT, 1):
                lines.append(
                    {"type": "message", "id": f"x{k}", "parentId": parent, "message": message}
                )
                parent = f"x{k}"
    out.write_text("\n".join(json.dumps(x) for x in lines) + "\n", encoding="utf-8")
    return kept, ["x1", "x2"]


def comparable(entries: Sequence[Entry]) -> list[object]:
    """The bodies of ``entries``, a compaction's ``first_kept_id`` replaced by the position
    of the entry it names."""
    where = {e.id: i for i, e in enumerate(entries)}
    return [
        (replace(e.body, first_kept_id=None), where.get(e.body.first_kept_id or ""))
        if isinstance(e.body, CompactionRecord)
        else e.body
        for e in entries
    ]


@pytest.mark.parametrize("name", FILES)
def test_a_pi_tree_imports_and_replays_on_its_active_branch(name: str, tmp_path: Path) -> None:
    source = require_corpus("pi", name)
    tree = tmp_path / "tree.jsonl"
    kept, left = as_tree(source, tree)
    session = IMPORTER.read(tree)
    assert [e.id for e in session.entries] == kept
    assert session.meta["off_branch"] == len(left)
    # The same messages and records, in the same order, as the linear file (a compaction's
    # first kept entry named by its position: the ids differ).
    linear = IMPORTER.read(source)
    assert comparable(session.entries) == comparable(linear.entries)
    # Replayed, the tree makes the requests the linear file makes: the branch left is in none.
    result = replay(session.entries, window=200_000, estimator=HandEstimator(), sample=50)
    again = replay(linear.entries, window=200_000, estimator=HandEstimator(), sample=50)
    assert result.invalid == again.invalid == 0
    assert [(x.tokens, x.messages) for x in result.steps] == [
        (x.tokens, x.messages) for x in again.steps
    ]
    assert result.final is not None and again.final is not None
    assert result.final.messages == again.final.messages
    assert "LEFT-BRANCH" not in json.dumps(render_openai(result.final))


@pytest.mark.parametrize("name", FILES)
def test_a_stored_pi_session_checked_out_to_an_earlier_entry(name: str, tmp_path: Path) -> None:
    tree = tmp_path / "tree.jsonl"
    kept, _ = as_tree(require_corpus("pi", name), tree)
    imported = IMPORTER.read(tree)
    db = tmp_path / "ctx.db"
    with SQLiteStore(db) as store:
        store.import_session(imported)
    s = Session(
        200_000,
        estimator=HandEstimator(),
        store=SQLiteStore(db),
        session_id=imported.session_id,
    )
    # Back to the reply before the last real user request: the last turn is left.
    users = [
        i
        for i, e in enumerate(s.entries)
        if (m := e.message) is not None and m.role == "user" and not m.tool_results
    ]
    target = s.entries[users[-1] - 1]
    left = [e.id for e in s.entries[users[-1] :]]
    done = s.checkout(target.id, summary="The last request was tried and dropped.")
    assert list(done.abandoned) == left
    s.append(user("a different last request"))
    ctx = s.prepare()
    header = BRANCH_SUMMARY_HEADER.format(count=len(left), first=left[0], last=left[-1])
    assert [m.text for m in ctx.messages[-2:]] == [
        f"{header}\n\nThe last request was tried and dropped.",
        "a different last request",
    ]
    assert not set(left) & set(ctx.sources)
    assert target.id in ctx.sources
    # The current log is the active branch up to the target, then the new branch.
    current = [e.id for e in current_entries(list(s.entries))]
    assert current[: kept.index(target.id) + 1] == kept[: kept.index(target.id) + 1]
    assert len(current) == kept.index(target.id) + 3
