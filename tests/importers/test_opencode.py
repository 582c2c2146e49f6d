"""OpenCode: the SQLite store, the JSON storage folders and ``opencode export`` documents."""

from __future__ import annotations

import json
import shutil
import sqlite3
from pathlib import Path
from typing import Any

import pytest

from compact_check import counts, problems_after_compact
from corpus import require_corpus
from ctxengine.engine import Session
from ctxengine.importers import detect, read_transcript
from ctxengine.model import CompactionRecord, Message, ReasoningPart, Usage
from import_drift import LONE_SURROGATE_ERROR, LONE_SURROGATE_JSON, LONE_SURROGATE_TEXT, tolerated

OPENCODE = "opencode"

#: The tables OpenCode ≥ 1.2 keeps sessions in (``session.sql.ts``), the columns read.
SCHEMA = """
CREATE TABLE project (id TEXT PRIMARY KEY);
CREATE TABLE session (
  id TEXT PRIMARY KEY, project_id TEXT NOT NULL, parent_id TEXT, slug TEXT NOT NULL,
  directory TEXT NOT NULL, title TEXT NOT NULL, version TEXT NOT NULL,
  time_created INTEGER NOT NULL, time_updated INTEGER NOT NULL
);
CREATE TABLE message (
  id TEXT PRIMARY KEY, session_id TEXT NOT NULL, time_created INTEGER NOT NULL,
  time_updated INTEGER NOT NULL, data TEXT NOT NULL
);
CREATE TABLE part (
  id TEXT PRIMARY KEY, message_id TEXT NOT NULL, session_id TEXT NOT NULL,
  time_created INTEGER NOT NULL, time_updated INTEGER NOT NULL, data TEXT NOT NULL
);
"""


def messages(session: Any) -> list[Message]:
    return [e.body for e in session.entries if isinstance(e.body, Message)]


def storage() -> Path:
    return require_corpus("format-fixtures", "opencode", "storage_v2")


def database_from_storage(root: Path, db: Path) -> Path:
    """An OpenCode database holding the rows of the storage folder ``root``: sessions as
    columns, messages and parts as JSON ``data`` (without the ids the columns hold). Part ids
    are ``<message id>-<file name>`` so that ordering by id keeps the folder's order."""
    con = sqlite3.connect(db)
    con.executescript(SCHEMA)
    for file in sorted((root / "session").rglob("*.json")):
        s = json.loads(file.read_text(encoding="utf-8"))
        t = s["time"]
        con.execute(
            "INSERT INTO session VALUES (?,?,?,?,?,?,?,?,?)",
            (s["id"], s["projectID"], s.get("parentID"), s.get("slug", s["id"]),
             s["directory"], s["title"], s["version"], t["created"], t["updated"]),
        )  # fmt: skip
        for msg_file in sorted((root / "message" / s["id"]).glob("*.json")):
            m = json.loads(msg_file.read_text(encoding="utf-8"))
            data = {k: v for k, v in m.items() if k not in ("id", "sessionID")}
            created = m["time"]["created"]
            con.execute(
                "INSERT INTO message VALUES (?,?,?,?,?)",
                (m["id"], s["id"], created, created, json.dumps(data)),
            )
            for part_file in sorted((root / "part" / m["id"]).glob("*.json")):
                p = json.loads(part_file.read_text(encoding="utf-8"))
                pdata = {k: v for k, v in p.items() if k not in ("id", "sessionID", "messageID")}
                con.execute(
                    "INSERT INTO part VALUES (?,?,?,?,?,?)",
                    (f"{m['id']}-{part_file.stem}", m["id"], s["id"], created, created,
                     json.dumps(pdata)),
                )  # fmt: skip
    con.commit()
    con.close()
    return db


def bodies(session: Any) -> list[Any]:
    return [e.body for e in session.entries]


class TestFixtures:
    def test_folder_imports_the_latest_main_session(self) -> None:
        session = read_transcript(storage())
        assert detect(storage()).name == OPENCODE
        assert session.session_id == "s_stage0_large"
        assert counts(session) == ({"assistant": 2, "tool": 1, "user": 2}, 1, 1, 0)
        assert session.report.summary() == ""
        assert session.report.counts("ignored") == {
            "other session": 1,
            "part:compaction": 1,
            "part:file": 1,
            "part:patch": 1,
        }
        assert session.meta["sessions"] == ["s_stage0_small"]
        assert session.title == "OpenCode Large"
        found = messages(session)
        reply = found[1]
        # aborted after a tool call and text: sent, and ends "aborted"
        assert reply.stop_reason == "aborted"
        assert [p.kind for p in reply.parts] == ["tool_call", "text", "reasoning"]
        assert reply.usage == Usage(120, 16, 0, 0)
        assert found[2].tool_results[0].text == (
            "ls: /non-existent-directory: No such file or directory\n"
        )
        assert problems_after_compact(session) == []

    def test_session_file_imports_that_session(self) -> None:
        path = storage() / "session" / "proj_test" / "ses_s_stage0_small.json"
        session = read_transcript(path)
        assert detect(path).name == OPENCODE
        assert session.session_id == "s_stage0_small"
        assert counts(session) == ({"assistant": 1, "tool": 1, "user": 1}, 1, 1, 0)
        assert session.report.summary() == ""
        found = messages(session)
        assert [(c.id, c.name, c.arguments) for c in found[1].tool_calls] == [
            ("call_1", "bash", '{"command":"ls","cwd":"/tmp/repo"}')
        ]
        assert found[1].text == "Found 2 files."
        assert found[2].tool_results[0].text == "a.txt\nb.txt\n"
        assert problems_after_compact(session) == []

    def test_database_gives_the_same_log_as_the_folder(self, tmp_path: Path) -> None:
        db = database_from_storage(storage(), tmp_path / "opencode.db")
        from_db = read_transcript(db)
        assert detect(db).name == OPENCODE
        from_folder = read_transcript(storage())
        assert bodies(from_db) == bodies(from_folder)
        assert [e.id for e in from_db.entries] == [e.id for e in from_folder.entries]
        assert from_db.meta["store"] == "sqlite"
        assert from_db.meta["sessions"] == ["s_stage0_small"]
        # a folder holding opencode.db is the same target
        assert bodies(read_transcript(tmp_path)) == bodies(from_db)


def info(msg_id: str, role: str, created: int, **extra: Any) -> dict[str, Any]:
    return {"id": msg_id, "sessionID": "ses_1", "role": role, "time": {"created": created}, **extra}


def text(part_id: str, value: str, **extra: Any) -> dict[str, Any]:
    return {"id": part_id, "type": "text", "text": value, **extra}


def tool(call_id: str | None = "c1", state: dict[str, Any] | None = None) -> dict[str, Any]:
    part: dict[str, Any] = {"id": "p_tool", "type": "tool", "tool": "bash"}
    if call_id is not None:
        part["callID"] = call_id
    part["state"] = state or {
        "status": "completed",
        "input": {"command": "ls"},
        "output": "a.py",
        "title": "ls",
        "metadata": {},
        "time": {"start": 1, "end": 2},
    }
    return part


def export(tmp_path: Path, items: list[tuple[dict[str, Any], list[dict[str, Any]]]]) -> Path:
    doc = {
        "info": {"id": "ses_1", "title": "t", "directory": "/w", "time": {"created": 1}},
        "messages": [{"info": i, "parts": p} for i, p in items],
    }
    path = tmp_path / "export.json"
    path.write_text(json.dumps(doc, indent=1), encoding="utf-8")
    return path


def turn() -> list[tuple[dict[str, Any], list[dict[str, Any]]]]:
    return [
        (info("m1", "user", 1), [text("p1", "list files")]),
        (info("m2", "assistant", 2, modelID="gpt"), [{"id": "s", "type": "step-start"}, tool()]),
    ]


class TestMapping:
    def test_steps_split_an_assistant_message(self, tmp_path: Path) -> None:
        finish = {
            "id": "f",
            "type": "step-finish",
            "reason": "tool-calls",
            "cost": 0,
            "tokens": {"input": 10, "output": 2, "reasoning": 3, "cache": {"read": 5, "write": 1}},
        }
        parts = [
            {"id": "a", "type": "step-start"},
            {
                "id": "b",
                "type": "reasoning",
                "text": "hm",
                "time": {"start": 1},
                "metadata": {"anthropic": {"signature": "sig"}},
            },
            tool(),
            finish,
            {"id": "c", "type": "step-start"},
            text("d", "Done."),
        ]
        items = [(info("m1", "user", 1), [text("p1", "go")]), (info("m2", "assistant", 2), parts)]
        found = messages(read_transcript(export(tmp_path, items)))
        assert [m.role for m in found] == ["user", "assistant", "tool", "assistant"]
        assert found[1].usage == Usage(10, 5, 5, 1)
        assert found[1].parts[0] == ReasoningPart("hm", signature="sig")
        assert found[1].stop_reason == "tool_use"
        assert (found[3].text, found[3].stop_reason) == ("Done.", "stop")

    def test_compaction_request_and_summary_become_a_record(self, tmp_path: Path) -> None:
        items = [
            *turn(),
            (info("m3", "user", 3), [text("p3", "next")]),
            (info("m4", "assistant", 4), [text("p4", "ok")]),
            (
                info("m5", "user", 5),
                [{"id": "p5", "type": "compaction", "auto": True, "tail_start_id": "m3"}],
            ),
            (
                info("m6", "assistant", 6, summary=True, finish="stop", parentID="m5"),
                [text("p6", "We listed files.")],
            ),
            (info("m7", "user", 7), [text("p7", "continue")]),
        ]
        session = read_transcript(export(tmp_path, items))
        record = session.entries[5].body
        assert isinstance(record, CompactionRecord)
        assert record.summary == "We listed files."
        assert record.first_kept_id == "m3"
        context = Session(100_000, entries=session.entries).project().messages
        assert [m.text for m in context][1:] == ["next", "ok", "continue"]

    def test_errored_reply_is_not_sent(self, tmp_path: Path) -> None:
        failed = info("m2", "assistant", 2, error={"name": "APIError", "data": {}})
        items = [
            (info("m1", "user", 1), [text("p1", "go")]),
            (failed, [{"id": "s", "type": "step-start"}]),
        ]
        session = read_transcript(export(tmp_path, items))
        assert [m.role for m in messages(session)] == ["user"]
        assert session.report.counts("ignored") == {"assistant with error": 1}

    def test_pending_call_and_compacted_output(self, tmp_path: Path) -> None:
        done = tool("c1")
        done["state"]["time"]["compacted"] = 3
        pending = tool("c2", {"status": "running", "input": {}, "time": {"start": 1}})
        items = [
            (info("m1", "user", 1), [text("p1", "go")]),
            (info("m2", "assistant", 2), [done, pending]),
        ]
        found = messages(read_transcript(export(tmp_path, items)))
        results = found[2].tool_results
        assert [(r.text, r.is_error) for r in results] == [
            ("[Old tool result content cleared]", False),
            ("[Tool execution was interrupted]", True),
        ]

    def test_child_sessions_are_linked(self, tmp_path: Path) -> None:
        root = tmp_path / "storage"
        shutil.copytree(storage(), root)
        child = {
            "id": "ses_child",
            "projectID": "proj_test",
            "directory": "/tmp",
            "title": "sub",
            "version": "1",
            "parentID": "s_stage0_small",
            "time": {"created": 1, "updated": 9e12},
        }
        (root / "session" / "proj_test" / "ses_child.json").write_text(json.dumps(child))
        (root / "message" / "ses_child").mkdir()
        (root / "message" / "ses_child" / "m.json").write_text(
            json.dumps(info("mc", "user", 1, sessionID="ses_child"))
        )
        (root / "part" / "mc").mkdir()
        (root / "part" / "mc" / "p.json").write_text(json.dumps(text("pc", "look")))
        parent = read_transcript(root / "session" / "proj_test" / "ses_s_stage0_small.json")
        assert parent.meta["child_sessions"] == ["ses_child"]
        sub = read_transcript(root / "session" / "proj_test" / "ses_child.json")
        assert sub.meta["parent_session_id"] == "s_stage0_small"
        # the folder still picks the latest session that is no subagent's
        assert read_transcript(root).session_id == "s_stage0_large"


class TestDrift:
    """Each drift is tolerated with an exact report, and refused at its place when strict."""

    def test_tool_part_without_call_id(self, tmp_path: Path) -> None:
        items = turn()
        items[1][1][1] = tool(None)
        session = tolerated(
            export(tmp_path, items),
            OPENCODE,
            "repaired 1: tool part without callID ×1 ($.messages[1].parts[1])",
            " at $.messages[1].parts[1]: expected a string `callID` on a tool part",
        )
        found = messages(session)
        assert found[1].tool_calls[0].id == found[2].tool_results[0].call_id == "call_gen_1"

    def test_structured_output(self, tmp_path: Path) -> None:
        items = turn()
        items[1][1][1]["state"]["output"] = {"files": ["a.py"]}
        session = tolerated(
            export(tmp_path, items),
            OPENCODE,
            "repaired 1: structured tool output ×1 ($.messages[1].parts[1])",
            " at $.messages[1].parts[1]: expected a string `state.output`, got dict",
        )
        assert messages(session)[2].tool_results[0].text == '{"files":["a.py"]}'

    def test_null_input(self, tmp_path: Path) -> None:
        items = turn()
        items[1][1][1]["state"]["input"] = None
        session = tolerated(
            export(tmp_path, items),
            OPENCODE,
            "repaired 1: null arguments ×1 ($.messages[1].parts[1])",
            " at $.messages[1].parts[1]: expected a tool `state.input` object, got null",
        )
        assert messages(session)[1].tool_calls[0].arguments == "{}"

    def test_unknown_part_type(self, tmp_path: Path) -> None:
        items = turn()
        items[0][1].append({"id": "p9", "type": "hologram"})
        tolerated(
            export(tmp_path, items),
            OPENCODE,
            "skipped 1: part:hologram ×1 ($.messages[0].parts[1])",
            " at $.messages[0].parts[1]: expected a known OpenCode part type, got 'hologram'",
        )

    def test_message_file_without_id_and_a_part_file_being_written(self, tmp_path: Path) -> None:
        root = tmp_path / "storage"
        shutil.copytree(storage(), root)
        msg = root / "message" / "s_stage0_small" / "msg_0001.json"
        data = json.loads(msg.read_text())
        del data["id"]
        msg.write_text(json.dumps(data))
        (root / "part" / "m_assistant_small" / "003.json").write_text('{"id": "p_cut", "ty')
        path = root / "session" / "proj_test" / "ses_s_stage0_small.json"
        session = tolerated(
            path,
            OPENCODE,
            "skipped 1: invalid JSON file ×1 (part/m_assistant_small/003.json); "
            "repaired 1: message without id ×1 (message/s_stage0_small/msg_0001.json)",
            " at message/s_stage0_small/msg_0001.json: expected a string `id` on a message",
        )
        # the user message took its file name; its parts (under its real id) are not found
        assert [m.role for m in messages(session)] == ["assistant", "tool"]

    def test_lone_surrogate_in_a_database_row(self, tmp_path: Path) -> None:
        db = database_from_storage(storage(), tmp_path / "opencode.db")
        con = sqlite3.connect(db)
        data = json.dumps({"type": "text", "text": "SURROGATE"}).replace(
            "SURROGATE", LONE_SURROGATE_JSON
        )
        con.execute("UPDATE part SET data = ? WHERE id = 'm_user_large_2-001'", (data,))
        con.commit()
        con.close()
        session = tolerated(
            db,
            OPENCODE,
            "repaired 1: lone surrogate ×1 (part[m_user_large_2-001].data)",
            f" at part[m_user_large_2-001].data: {LONE_SURROGATE_ERROR}",
        )
        assert messages(session)[3].text == LONE_SURROGATE_TEXT


@pytest.mark.parametrize("name", ["opencode.db", "storage"])
def test_an_empty_store_is_refused(tmp_path: Path, name: str) -> None:
    from ctxengine.errors import TranscriptError

    target = tmp_path / name
    if name == "opencode.db":
        con = sqlite3.connect(target)
        con.executescript(SCHEMA)
        con.close()
    else:
        (target / "session").mkdir(parents=True)
        (target / "message").mkdir()
    with pytest.raises(TranscriptError) as err:
        read_transcript(target)
    assert str(err.value) == f"{target}: expected at least one session, found none"
