"""OpenClaw sessions: pi's mapping, read in file order when the ``parentId`` links do not form
a tree, as pi's active branch when they do; sniffed by folder or content."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from corpus import require_corpus
from ctxengine.importers import detect, read_transcript
from ctxengine.importers.base import ImportedSession
from ctxengine.model import Message

HEADER = {"type": "session", "id": "s-1", "version": 3, "timestamp": "t", "cwd": "/w"}


def messages(session: ImportedSession) -> list[Message]:
    return [e.body for e in session.entries if isinstance(e.body, Message)]


def entry(entry_id: str, parent: str | None, role: str, text: str) -> dict[str, Any]:
    return {"type": "message", "id": entry_id, "parentId": parent, "timestamp": "t",
            "message": {"role": role, "content": [{"type": "text", "text": text}]}}  # fmt: skip


def write(path: Path, *lines: dict[str, Any]) -> Path:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text("".join(json.dumps(x) + "\n" for x in lines), encoding="utf-8")
    return path


def test_large_sample_in_file_order() -> None:
    session = read_transcript(require_corpus("format-fixtures", "openclaw", "large.jsonl"))
    assert session.format == "openclaw"
    assert [e.id for e in session.entries] == [
        "oc-custom-message-1", "m1", "m2", "m3", "m4", "m5", "m6",
    ]  # fmt: skip
    found = messages(session)
    assert found[0].meta == {"synthetic": "custom:openclaw.runtime-context"}
    assert [(r.call_id, r.text) for m in found for r in m.tool_results] == [
        ("tc-status", "M file1\nM file2"),
        ("tc-write", "file written"),
    ]


def test_a_tree_is_read_as_its_active_branch(tmp_path: Path) -> None:
    path = write(
        tmp_path / ".openclaw" / "agents" / "main" / "sessions" / "s-1.jsonl",
        HEADER,
        entry("a", None, "user", "first"),
        entry("b", "a", "assistant", "abandoned"),
        entry("c", "a", "assistant", "kept"),
    )
    assert detect(path).name == "openclaw"
    session = read_transcript(path)
    assert [m.text for m in messages(session)] == ["first", "kept"]
    assert session.meta["off_branch"] == 1


def test_a_pi_session_elsewhere_stays_pi(tmp_path: Path) -> None:
    path = write(tmp_path / "s.jsonl", HEADER, entry("a", None, "user", "first"))
    assert detect(path).name == "pi"
