"""Claude Code ``-p --output-format stream-json`` output: read with the session-file mapping
after renaming; the live run's stream holds the same messages as its session file."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from corpus import require_corpus
from ctxengine.importers import detect, read_transcript
from ctxengine.model import CompactionRecord

LIVE = ("live-agents", "claude-code-2.1.328")


def write(tmp_path: Path, *records: dict[str, Any]) -> Path:
    path = tmp_path / "out.jsonl"
    path.write_text("".join(json.dumps(r) + "\n" for r in records), encoding="utf-8")
    return path


def assistant(
    uuid: str, msg_id: str, block: dict[str, Any], parent: str | None = None
) -> dict[str, Any]:
    message = {"id": msg_id, "role": "assistant", "content": [block]}
    return {
        "type": "assistant",
        "message": message,
        "parent_tool_use_id": parent,
        "session_id": "s1",
        "uuid": uuid,
    }


def user(uuid: str, content: Any, parent: str | None = None, **extra: Any) -> dict[str, Any]:
    return {
        "type": "user",
        "message": {"role": "user", "content": content},
        "parent_tool_use_id": parent,
        "session_id": "s1",
        "uuid": uuid,
        **extra,
    }


class TestLiveRun:
    def test_counts_and_what_is_ignored(self) -> None:
        path = require_corpus(*LIVE, "headless-stream-json.jsonl")
        assert detect(path).name == "claude-code-stream"
        session = read_transcript(path)
        assert (session.session_id, session.format) == (
            "b24a12be-80f5-468d-9deb-8bc36259ce0d",
            "claude-code-stream",
        )
        assert len(session.entries) == 40
        assert session.meta["skipped"] == {
            "result": 1,
            "sidechain": 5,
            "system:init": 1,
            "system:status": 4,
            "system:task_notification": 1,
            "system:task_progress": 2,
            "system:task_started": 1,
            "system:task_updated": 1,
            "system:thinking_tokens": 6,
        }
        assert (session.meta["model"], session.meta["cwd"], session.meta["version"]) == (
            "claude-opus-5-5",
            "/home/user/calc-project",
            "2.1.328",
        )

    def test_every_message_is_the_session_file_s_with_the_same_id_and_parts(self) -> None:
        """The session file of the same run has more (the prompt, attachments, a later
        resumed part); every message of the stream is in it, with the same parts (usage
        differs: the stream logs a reply's lines before its last token)."""
        folder = require_corpus(*LIVE)
        stream = read_transcript(folder / "headless-stream-json.jsonl")
        stored = {e.id: e for e in read_transcript(folder / "session.jsonl").entries}
        messages = [e for e in stream.entries if e.message is not None]
        assert len(messages) == 38
        for entry in messages:
            twin = stored[entry.id].message
            assert twin is not None and entry.message is not None
            assert (twin.role, twin.parts) == (entry.message.role, entry.message.parts), entry.id

    def test_compactions_keep_their_segment_and_summary(self) -> None:
        session = read_transcript(require_corpus(*LIVE, "headless-stream-json.jsonl"))
        records = [e.body for e in session.entries if isinstance(e.body, CompactionRecord)]
        assert [(r.tokens_before, r.first_kept_id) for r in records] == [
            (29033, "7da0f31b-f39e-4715-a2b3-0fc310861aa6..e4a3bc64-b549-411a-a50c-cf7c9b8b6d08"),
            (29312, None),
        ]
        assert all(r.summary.startswith("This session is being continued") for r in records)


class TestMapping:
    def test_subagent_turns_are_left_out_and_a_synthetic_summary_follows_its_boundary(
        self, tmp_path: Path
    ) -> None:
        path = write(
            tmp_path,
            {"type": "system", "subtype": "init", "session_id": "s1", "cwd": "/w",
             "model": "m", "claude_code_version": "2.9"},
            assistant("a1", "m1", {"type": "tool_use", "id": "t1", "name": "Agent", "input": {}}),
            user("x1", "sub task", parent="t1"),
            assistant("x2", "m9", {"type": "text", "text": "sub reply"}, parent="t1"),
            user("r1", [{"type": "tool_result", "tool_use_id": "t1", "content": "done"}]),
            {"type": "system", "subtype": "compact_boundary", "session_id": "s1", "uuid": "b1",
             "compact_metadata": {"trigger": "auto", "pre_tokens": 900}},
            user("u2", [{"type": "text", "text": "SUMMARY"}], isSynthetic=True),
            assistant("a3", "m3", {"type": "text", "text": "carry on"}),
            {"type": "result", "subtype": "success", "session_id": "s1", "result": "carry on"},
        )  # fmt: skip
        session = read_transcript(path)
        assert [e.id for e in session.entries] == ["a1", "r1", "b1", "a3"]
        record = session.entries[2].body
        assert isinstance(record, CompactionRecord)
        assert (record.summary, record.tokens_before, record.first_kept_id) == (
            "SUMMARY",
            900,
            None,
        )
        assert session.meta["skipped"] == {"result": 1, "sidechain": 2, "system:init": 1}
        assert (session.meta["cwd"], session.meta["version"]) == ("/w", "2.9")
