"""OpenHands event streams: trajectories (a JSON list), evaluation outputs (JSONL of runs)
and the older event stream without ``source`` and function calling."""

from __future__ import annotations

import hashlib
import json
from pathlib import Path
from typing import Any

import pytest

from compact_check import counts
from corpus import require_corpus
from ctxengine.engine import Session
from ctxengine.errors import TranscriptError
from ctxengine.importers import detect, read_transcript
from ctxengine.model import CompactionRecord, Message, Usage
from ctxengine.stores import SQLiteStore
from import_drift import LONE_SURROGATE_ERROR, LONE_SURROGATE_JSON, LONE_SURROGATE_TEXT, tolerated

OPENHANDS = "openhands"

CORPUS_FILES = {
    # (messages by role, calls, results, compactions), ignored records
    "openhands-multi-swe-bench-ponyc-3runs.jsonl": (
        ({"assistant": 105, "system": 1, "tool": 103, "user": 5}, 103, 103, 0),
        {"action:recall": 3, "observation:recall": 3, "repeated system prompt": 2},
    ),
    "openhands-resolver-mock-output.jsonl": (
        ({"assistant": 26, "tool": 24, "user": 2}, 24, 24, 0),
        {},
    ),
    "openhands-traj-basic.json": (({"assistant": 2, "tool": 1, "user": 1}, 1, 1, 0), {}),
    "openhands-traj-vue-todo-gui.json": (
        ({"assistant": 5, "tool": 4, "user": 1}, 4, 4, 0),
        {
            "action:change_agent_state": 1,
            "observation:agent_state_changed": 4,
            "observation:null": 3,
        },
    ),
}


def messages(session: Any) -> list[Message]:
    return [e.body for e in session.entries if isinstance(e.body, Message)]


def raw_events(path: Path) -> list[dict[str, Any]]:
    text = path.read_text(encoding="utf-8")
    if text.lstrip().startswith("["):
        return list(json.loads(text))
    found: list[dict[str, Any]] = []
    for line in text.splitlines():
        found.extend(json.loads(line)["history"])
    return found


class TestCorpus:
    @pytest.mark.parametrize("name", sorted(CORPUS_FILES))
    def test_counts_and_report(self, name: str) -> None:
        path = require_corpus("openhands", name)
        session = read_transcript(path)
        assert detect(path).name == OPENHANDS
        expected, ignored = CORPUS_FILES[name]
        assert counts(session) == expected
        assert session.report.summary() == ""
        assert session.report.counts("ignored") == ignored

    @pytest.mark.parametrize("name", sorted(CORPUS_FILES))
    def test_calls_and_results_match_an_independent_count_of_the_events(self, name: str) -> None:
        """Every agent action but ``finish``, ``message``, ``system`` and ``recall`` is one
        call; every observation that is not a state change, a null or a recall answers one,
        except the ``error`` observations that answer nothing (ponyc's invalid calls)."""
        events = raw_events(require_corpus("openhands", name))
        actions = [e for e in events if "action" in e and e.get("source") != "user"]
        calls = [e for e in actions if e["action"] not in ("finish", "message", "system", "recall",
                                                              "change_agent_state")]  # fmt: skip
        observed = [
            e
            for e in events
            if e.get("observation") not in (None, "agent_state_changed", "null", "recall")
            and (e.get("observation") != "error" or e.get("tool_call_metadata"))
        ]
        (_, n_calls, n_results, _), _ = CORPUS_FILES[name]
        assert (len(calls), len(observed)) == (n_calls, n_results)

    def test_evaluation_runs_follow_each_other_and_are_named(self) -> None:
        path = require_corpus("openhands", "openhands-multi-swe-bench-ponyc-3runs.jsonl")
        session = read_transcript(path)
        assert session.meta["runs"] == [
            "ponylang__ponyc-4595",
            "ponylang__ponyc-4593",
            "ponylang__ponyc-4588",
        ]
        found = messages(session)
        assert found[0].role == "system"
        assert found[0].text.startswith("You are OpenHands agent, a helpful AI assistant")
        assert found[1].text.startswith("<uploaded_files>\n/workspace/ponylang__ponyc__0.1")
        assert [e.meta["run"] for e in session.entries[:2]] == ["ponylang__ponyc-4595"] * 2
        reply = found[2]
        assert reply.usage == Usage(5920, 128, 0, 0)
        assert reply.model == "meta-llama/llama-4-maverick"
        assert reply.tool_calls[0].id == "toolu_01"
        assert (
            reply.tool_calls[0].arguments == '{"command": "ls -l /workspace/ponylang__ponyc__0.1"}'
        )
        assert found[3].tool_results[0].call_id == "toolu_01"
        # the second run reuses call ids: they are made unique and still pair
        second = [m for m in found if m.tool_calls and m.tool_calls[0].id.startswith("toolu_01#")]
        assert [m.tool_calls[0].id for m in second] == ["toolu_01#2", "toolu_01#3"]

    def test_invalid_call_error_is_a_user_message(self) -> None:
        path = require_corpus("openhands", "openhands-multi-swe-bench-ponyc-3runs.jsonl")
        errors = [m for m in messages(read_transcript(path)) if m.meta.get("synthetic")]
        assert [m.meta["synthetic"] for m in errors] == ["observation:error"] * 2
        assert errors[0].text == (
            "Parameter 'command' is expected to be one of ['view', 'create', 'str_replace', "
            "'insert', 'undo_edit']."
        )

    def test_finish_is_its_thought_without_a_call(self) -> None:
        path = require_corpus("openhands", "openhands-traj-basic.json")
        found = messages(read_transcript(path))
        assert [m.role for m in found] == ["user", "assistant", "tool", "assistant"]
        assert found[-1].tool_calls == ()
        assert found[-1].text.startswith("I've created a simple implementation of the 2048 game")
        assert found[1].usage == Usage(4, 1135, 0, 3482)

    def test_older_events_become_calls_answered_in_order(self) -> None:
        path = require_corpus("openhands", "openhands-resolver-mock-output.jsonl")
        session = read_transcript(path)
        found = messages(session)
        assert session.meta["runs"] == ["neubig/pr-viewer#5", "neubig/pr-viewer#1"]
        first = found[1]
        assert first.text.startswith("Certainly! I'll add the MIT license")
        assert [(c.id, c.name, c.arguments) for c in first.tool_calls] == [
            ("event-1", "execute_bash", '{"command":"touch LICENSE"}')
        ]
        assert found[2].tool_results[0].call_id == "event-1"
        assert found[3].tool_calls[0].name == "execute_ipython_cell"


def write_events(tmp_path: Path, events: list[Any]) -> Path:
    path = tmp_path / "trajectory.json"
    path.write_text(json.dumps(events, indent=1), encoding="utf-8")
    return path


def user_event(text: str = "fix it") -> dict[str, Any]:
    return {"id": 0, "source": "user", "action": "message", "args": {"content": text}}


def response(call_id: Any = "call_1", arguments: Any = '{"command": "ls"}') -> dict[str, Any]:
    tool_call: dict[str, Any] = {"function": {"name": "execute_bash", "arguments": arguments}}
    if call_id is not None:
        tool_call["id"] = call_id
    message = {"role": "assistant", "content": "Listing.", "tool_calls": [tool_call]}
    return {
        "id": "resp-1",
        "model": "m",
        "choices": [{"finish_reason": "tool_calls", "message": message}],
        "usage": {"prompt_tokens": 100, "completion_tokens": 5},
    }


def run_event(call_id: Any = "call_1", **extra: Any) -> dict[str, Any]:
    tcm = {"function_name": "execute_bash", "model_response": response(call_id, **extra)}
    if call_id is not None:
        tcm["tool_call_id"] = call_id
    return {"id": 1, "source": "agent", "action": "run", "args": {"command": "ls"},
            "tool_call_metadata": tcm}  # fmt: skip


def obs_event(call_id: Any = "call_1", content: Any = "a.py") -> dict[str, Any]:
    tcm = {"function_name": "execute_bash"}
    if call_id is not None:
        tcm["tool_call_id"] = call_id
    return {"id": 2, "source": "agent", "observation": "run", "cause": 1, "content": content,
            "extras": {"metadata": {"exit_code": 0}}, "tool_call_metadata": tcm}  # fmt: skip


class TestMapping:
    def test_condensation_becomes_a_compaction_record(self, tmp_path: Path) -> None:
        events = [
            user_event(),
            run_event(),
            obs_event(),
            {"id": 3, "source": "agent", "action": "message", "args": {"content": "Done."}},
            {"id": 4, "source": "user", "action": "message", "args": {"content": "more"}},
            {
                "id": 5,
                "source": "agent",
                "action": "condensation",
                "args": {"forgotten_event_ids": [1, 2], "summary": "Listed the files."},
            },
            {"id": 6, "source": "agent", "action": "message", "args": {"content": "Next."}},
        ]
        session = read_transcript(write_events(tmp_path, events))
        record = session.entries[5].body
        assert isinstance(record, CompactionRecord)
        assert record.summary == "Listed the files."
        assert record.first_kept_id == session.entries[3].id  # the message after event 2
        context = Session(100_000, entries=session.entries).project().messages
        assert [m.text for m in context][1:] == ["Done.", "more", "Next."]

    def test_exit_code_and_error_marker_flag_results(self, tmp_path: Path) -> None:
        failed = obs_event(content="boom")
        failed["extras"] = {"metadata": {"exit_code": 2}}
        session = read_transcript(write_events(tmp_path, [user_event(), run_event(), failed]))
        assert messages(session)[2].tool_results[0].is_error is True


class TestDrift:
    """Each drift is tolerated with an exact report, and refused at its event when strict."""

    def test_calls_and_observations_without_ids(self, tmp_path: Path) -> None:
        path = write_events(tmp_path, [user_event(), run_event(None), obs_event(None)])
        session = tolerated(
            path,
            OPENHANDS,
            "repaired 2: tool call without id ×1 ($[1]), observation without tool_call_id ×1 "
            "($[2])",
            " at $[1]: expected a string `tool_call_id` on a tool call",
        )
        found = messages(session)
        assert found[1].tool_calls[0].id == found[2].tool_results[0].call_id == "call_gen_1"

    def test_structured_observation_content(self, tmp_path: Path) -> None:
        content = [{"type": "text", "text": "a.py"}, {"type": "text", "text": "b.py"}]
        path = write_events(tmp_path, [user_event(), run_event(), obs_event(content=content)])
        session = tolerated(
            path,
            OPENHANDS,
            "repaired 1: structured observation content ×1 ($[2])",
            " at $[2]: expected observation `content` to be a string, got list",
        )
        assert messages(session)[2].tool_results[0].text == "a.py\nb.py"

    def test_null_arguments(self, tmp_path: Path) -> None:
        path = write_events(tmp_path, [user_event(), run_event(arguments=None), obs_event()])
        session = tolerated(
            path,
            OPENHANDS,
            "repaired 1: null arguments ×1 ($[1])",
            " at $[1]: expected tool-call arguments, got null",
        )
        assert messages(session)[1].tool_calls[0].arguments == "{}"

    def test_arguments_that_are_not_json_are_kept_as_text(self, tmp_path: Path) -> None:
        broken = '{"command": "ls'
        path = write_events(tmp_path, [user_event(), run_event(arguments=broken), obs_event()])
        session = tolerated(
            path,
            OPENHANDS,
            "repaired 1: tool call arguments not JSON (kept as text) ×1 ($[1])",
            " at $[1]: expected `function.arguments` to be JSON text, got text that is not JSON "
            "(kept as text)",
        )
        assert messages(session)[1].tool_calls[0].arguments == broken

    def test_empty_arguments_are_not_flagged(self, tmp_path: Path) -> None:
        path = write_events(tmp_path, [user_event(), run_event(arguments=""), obs_event()])
        session = read_transcript(path, OPENHANDS, strict=True)
        assert session.report.clean and messages(session)[1].tool_calls[0].arguments == ""

    def test_unknown_action_and_observation(self, tmp_path: Path) -> None:
        events = [
            user_event(),
            {"id": 1, "source": "agent", "action": "hologram", "args": {}},
            {"id": 2, "source": "agent", "observation": "hologram", "content": ""},
        ]
        session = tolerated(
            write_events(tmp_path, events),
            OPENHANDS,
            "skipped 2: action:hologram ×1 ($[1]), observation:hologram ×1 ($[2])",
            " at $[1]: expected a known OpenHands action, got 'hologram'",
        )
        assert [m.text for m in messages(session)] == ["fix it"]

    def test_partial_last_line_of_an_event_stream(self, tmp_path: Path) -> None:
        path = tmp_path / "events.jsonl"
        lines = [json.dumps(user_event()), json.dumps(run_event()), '{"id": 2, "source": "ag']
        path.write_text("\n".join(lines), encoding="utf-8")
        session = tolerated(
            path,
            OPENHANDS,
            "skipped 1: partial last line ×1 (line 3)",
            ":3: expected a complete JSON object, got a line cut short "
            "(unexpected end of data: line 1 column 24 (char 23))",
        )
        assert [m.role for m in messages(session)] == ["user", "assistant"]

    def test_lone_surrogate(self, tmp_path: Path) -> None:
        path = tmp_path / "events.jsonl"
        obs = json.dumps(obs_event(content="SURROGATE")).replace("SURROGATE", LONE_SURROGATE_JSON)
        path.write_text(
            "\n".join([json.dumps(user_event()), json.dumps(run_event()), obs]) + "\n",
            encoding="utf-8",
        )
        session = tolerated(
            path, OPENHANDS, "repaired 1: lone surrogate ×1 (line 3)", f":3: {LONE_SURROGATE_ERROR}"
        )
        assert messages(session)[2].tool_results[0].text == LONE_SURROGATE_TEXT


def b2(data: bytes) -> bytes:
    """The 16-byte blake2b digest of ``data``."""
    return hashlib.blake2b(data, digest_size=16).digest()


def keyed(parent: str | None, key: bytes) -> str:
    """The id of an entry made from an event whose key is ``key``, after ``parent``."""
    data = (parent.encode() if parent else b"") + b"\0" + key
    return "b2:" + hashlib.blake2b(data, digest_size=16).hexdigest()


def chain(keys: list[bytes]) -> list[str]:
    """The ids of entries made from events with ``keys``, one entry each, in order."""
    ids: list[str] = []
    for key in keys:
        ids.append(keyed(ids[-1] if ids else None, key))
    return ids


def canonical(value: Any) -> bytes:
    return json.dumps(value, sort_keys=True, separators=(",", ":"), ensure_ascii=False).encode()


def eval_line(name: str, history: list[dict[str, Any]]) -> dict[str, Any]:
    return {"instance_id": name, "instruction": "fix it", "history": history, "metrics": {}}


class TestIds:
    def test_an_event_stream_entry_id_hashes_its_line(self, tmp_path: Path) -> None:
        events = [user_event(), run_event(), obs_event()]
        path = tmp_path / "events.jsonl"
        path.write_text("".join(json.dumps(e) + "\n" for e in events), encoding="utf-8")
        lines = path.read_bytes().splitlines(keepends=True)
        session = read_transcript(path)
        assert session.session_id == "f:" + b2(lines[0])[:8].hex()
        assert [e.id for e in session.entries] == chain([b2(line) for line in lines])

    def test_a_document_entry_id_hashes_its_event(self, tmp_path: Path) -> None:
        events = [user_event(), run_event(), obs_event()]
        session = read_transcript(write_events(tmp_path, events))
        assert session.session_id == "f:" + b2(canonical(events[0]))[:8].hex()
        assert [e.id for e in session.entries] == chain([b2(canonical(e)) for e in events])

    def test_an_evaluation_entry_id_hashes_its_run_place_id_and_time(self, tmp_path: Path) -> None:
        first = [user_event(), run_event(), obs_event()]
        first[0]["timestamp"] = "2025-04-30T16:32:54.707474"
        second = [user_event("again")]
        path = tmp_path / "output.jsonl"
        lines = [json.dumps(eval_line("a-1", first)), json.dumps(eval_line("a-2", second))]
        path.write_text("\n".join(lines) + "\n", encoding="utf-8")
        session = read_transcript(path)
        assert session.session_id == "f:" + b2(lines[0].encode() + b"\n")[:8].hex()
        keys = [
            b"a-1\x000\x000\x00'2025-04-30T16:32:54.707474'",
            b"a-1\x001\x001\x00None",
            b"a-1\x002\x002\x00None",
            b"a-2\x000\x000\x00None",
        ]
        assert [e.id for e in session.entries] == chain(keys)

    def test_a_grown_evaluation_output_adds_its_new_runs_to_the_same_session(
        self, tmp_path: Path
    ) -> None:
        source = require_corpus("openhands", "openhands-multi-swe-bench-ponyc-3runs.jsonl")
        lines = source.read_bytes().splitlines(keepends=True)
        live = tmp_path / "output.jsonl"
        live.write_bytes(b"".join(lines[:2]))
        head = read_transcript(live)
        live.write_bytes(source.read_bytes())
        fresh = read_transcript(live)
        assert head.session_id == fresh.session_id
        assert [e.id for e in fresh.entries[: len(head.entries)]] == [e.id for e in head.entries]
        with SQLiteStore(tmp_path / "ctx.db") as store:
            first = store.import_session(head)
            second = store.import_session(fresh)
            stored = store.entries(fresh.session_id)
        n, m = len(head.entries), len(fresh.entries)
        assert (n, m) == (47 + 67, 47 + 67 + 100)  # the entries of each run
        assert {e.meta["run"] for e in fresh.entries[n:]} == {"ponylang__ponyc-4588"}
        assert (first.added, second.added, second.skipped, second.superseded) == (n, m - n, n, 0)
        assert [e.id for e in stored] == [e.id for e in fresh.entries]

    def test_a_grown_event_stream_keeps_its_session_and_ids(self, tmp_path: Path) -> None:
        events = [user_event(), run_event(), obs_event()]
        path = tmp_path / "events.jsonl"
        path.write_text(json.dumps(events[0]) + "\n", encoding="utf-8")
        head = read_transcript(path)
        path.write_text("".join(json.dumps(e) + "\n" for e in events), encoding="utf-8")
        fresh = read_transcript(path)
        assert head.session_id == fresh.session_id
        assert head.entries[0].id == fresh.entries[0].id
        assert len(fresh.entries) == 3

    def test_a_json_object_without_history_is_refused(self, tmp_path: Path) -> None:
        path = tmp_path / "event.json"
        path.write_text(json.dumps(user_event(), indent=1), encoding="utf-8")
        with pytest.raises(TranscriptError) as info:
            read_transcript(path, OPENHANDS)
        assert (info.value.expected, info.value.json_path) == ("expected a `history` list", "$")
