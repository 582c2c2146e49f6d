"""SWE-agent importer: corpus counts, reused call ids, actions in text, trajectory steps, errors."""

from __future__ import annotations

import json
from itertools import pairwise
from pathlib import Path
from typing import Any

import pytest

from corpus import require_corpus, transcript_files
from ctxengine.errors import TranscriptError
from ctxengine.importers import read_transcript
from ctxengine.importers.swe_agent import IMPORTER
from ctxengine.model import Message, TextPart, ToolCallPart, ToolResultPart
from import_drift import tolerated

FILES = (
    "swe-agent-ctf-web-i-got-id.traj",
    "swe-agent-function-calling-simple.traj",
    "swe-agent-marshmallow-1867-function-calling.traj",
    "swe-agent-pydicom-1458-gpt4.traj",
    "swe-agent-test-repo-i1-gpt4.traj",
)
MARSHMALLOW = "swe-agent-marshmallow-1867-function-calling.traj"


def messages_of(path: Path) -> list[Message]:
    return [e.body for e in IMPORTER.read(path).entries if isinstance(e.body, Message)]


def raw_counts(path: Path) -> dict[str, int]:
    """Counts straight from ``history``. Function calling: ``tool_calls`` and
    ``tool_call_ids``. Actions in text: one call per assistant ``action``, one result per
    user message right after such an assistant message. A history that ends with an action
    gets one more message and result: the last trajectory step's observation."""
    data = json.loads(path.read_text(encoding="utf-8"))
    history = data["history"]
    closed = int(history[-1]["role"] == "assistant" and bool(data.get("trajectory")))
    if any("tool_calls" in m for m in history):
        calls = sum(len(m.get("tool_calls") or []) for m in history)
        results = sum(len(m["tool_call_ids"]) for m in history if m["role"] == "tool")
    else:
        calls = sum(1 for m in history if m["role"] == "assistant" and m["action"].strip())
        results = sum(
            1
            for prev, m in pairwise(history)
            if m["role"] == "user" and prev["role"] == "assistant" and prev["action"].strip()
        )
    return {"messages": len(history) + closed, "calls": calls, "results": results + closed}


class TestCorpus:
    @pytest.mark.parametrize("name", FILES)
    def test_counts_match_the_raw_json(self, name: str) -> None:
        path = require_corpus("swe-agent", name)
        session = read_transcript(path)
        msgs = [e.body for e in session.entries if isinstance(e.body, Message)]
        raw = raw_counts(path)
        assert session.format == "swe-agent"
        assert len(msgs) == raw["messages"]
        assert sum(len(m.tool_calls) for m in msgs) == raw["calls"]
        assert sum(len(m.tool_results) for m in msgs) == raw["results"]

    @pytest.mark.parametrize(
        ("name", "counts"),
        [
            ("swe-agent-ctf-web-i-got-id.traj", (44, 21, 21)),
            ("swe-agent-function-calling-simple.traj", (12, 5, 5)),
            (MARSHMALLOW, (28, 13, 13)),
            ("swe-agent-pydicom-1458-gpt4.traj", (27, 12, 12)),
            ("swe-agent-test-repo-i1-gpt4.traj", (13, 5, 5)),
        ],
    )
    def test_exact_counts(self, name: str, counts: tuple[int, int, int]) -> None:
        msgs = messages_of(require_corpus("swe-agent", name))
        calls = sum(len(m.tool_calls) for m in msgs)
        results = sum(len(m.tool_results) for m in msgs)
        assert (len(msgs), calls, results) == counts

    def test_reused_ids_are_made_unique_and_pair_with_their_own_call(self) -> None:
        msgs = messages_of(require_corpus("swe-agent", MARSHMALLOW))
        calls = [c.id for m in msgs for c in m.tool_calls]
        assert calls == [
            "call_9diWc1DYm4RLmPfHgIaP2wd",
            "call_m6a0mcd6137L21vgVmR0DQaU",
            "call_xK8mN2pQr5vSjTyL9hB3zWc",
            "call_cyI71DYnRdoLHWwtZgIaW2wr",
            "call_q3VsBszvsntfyPkxeHq4i5N1",
            "call_5iDdbOYybq7L19vqXmR0DPaU",
            "call_5iDdbOYybq7L19vqXmR0DPaU#2",
            "call_ahToD2vM0aQWJPkRmy5cumru",
            "call_ahToD2vM0aQWJPkRmy5cumru#2",
            "call_w3V11DzvRdoLHWwtZgIaW2wr",
            "call_5iDdbOYybq7L19vqXmR0DPaU#3",
            "call_5iDdbOYybq7L19vqXmR0DPaU#4",
            "call_submit",
        ]
        assert len(set(calls)) == 13
        # each tool message answers the call of the assistant message just before it
        for prev, m in pairwise(msgs):
            if m.role == "tool":
                assert [r.call_id for r in m.tool_results] == [c.id for c in prev.tool_calls]
        reran = msgs[23]
        assert reran.tool_results[0].call_id == "call_5iDdbOYybq7L19vqXmR0DPaU#3"
        assert reran.tool_results[0].text.startswith("345\n")
        assert msgs[22].tool_calls[0].arguments == '{"command":"python reproduce.py"}'

    def test_actions_in_text_become_bash_calls_answered_by_the_next_user_message(self) -> None:
        path = require_corpus("swe-agent", "swe-agent-pydicom-1458-gpt4.traj")
        session = IMPORTER.read(path)
        msgs = [e.body for e in session.entries if isinstance(e.body, Message)]
        assert [m.role for m in msgs[:5]] == ["system", "user", "user", "assistant", "tool"]
        assert msgs[1].meta["is_demo"] is True
        first = msgs[3]
        assert first.parts[0] == TextPart(
            "First, I'll create a new Python script to reproduce the bug as described in the "
            "issue. This script will attempt to create a `Dataset` object with Float Pixel Data "
            "and then access the `pixel_array` property to see if it fails due to the absence "
            "of the Pixel Representation attribute.\n\n"
        )
        assert first.parts[1] == ToolCallPart(
            "action-3", "bash", '{"command":"create reproduce_bug.py\\n"}'
        )
        assert first.meta["content"].endswith("```\ncreate reproduce_bug.py\n```")
        assert msgs[4].tool_results[0].call_id == "action-3"
        assert msgs[4].tool_results[0].text.startswith("[File: /pydicom__pydicom/reproduce_bug.py")
        # the final submit has no observation in the history: the trajectory's last step
        # gives it (the submitted diff)
        assert msgs[-2].tool_calls == (
            ToolCallPart("action-25", "bash", '{"command":"submit\\n"}'),
        )
        final = msgs[-1]
        assert (final.role, final.meta) == ("tool", {"source": "trajectory"})
        assert final.tool_results[0].call_id == "action-25"
        assert final.tool_results[0].text.startswith(
            "\ndiff --git a/pydicom/pixel_data_handlers/numpy_handler.py "
            "b/pydicom/pixel_data_handlers/numpy_handler.py\n"
        )
        assert len(final.tool_results[0].text) == 803
        assert session.meta["function_calling"] is False
        assert session.meta["exit_status"] == "submitted"

    def test_only_swe_agent_files_are_sniffed(self) -> None:
        require_corpus()
        sniffed = [p.name for p in transcript_files() if IMPORTER.sniff(p, p.read_bytes()[:65536])]
        assert sniffed == sorted(FILES)


def write(tmp_path: Path, value: Any) -> Path:
    path = tmp_path / "run.traj"
    path.write_text(json.dumps(value), encoding="utf-8")
    return path


class TestTrajectoryOnly:
    def test_steps_become_call_and_result_pairs(self, tmp_path: Path) -> None:
        steps = [
            {"action": "ls\n", "observation": "a.py\n", "thought": "Look around.\n"},
            {"action": "cat a.py\n", "observation": "print(1)\n", "response": "Read it."},
        ]
        path = write(tmp_path, {"trajectory": steps, "info": {"exit_status": "submitted"}})
        assert IMPORTER.sniff(path, path.read_bytes()) is True
        msgs = messages_of(path)
        assert [m.role for m in msgs] == ["assistant", "tool", "assistant", "tool"]
        assert msgs[0].parts == (
            TextPart("Look around.\n"),
            ToolCallPart("step-0", "bash", '{"command":"ls\\n"}'),
        )
        assert msgs[2].text == "Read it."
        assert [(r.call_id, r.text) for m in msgs for r in m.tool_results] == [
            ("step-0", "a.py\n"),
            ("step-1", "print(1)\n"),
        ]


FINAL_HISTORY: list[dict[str, Any]] = [
    {"role": "system", "content": "s", "agent": "main"},
    {"role": "user", "content": "fix it", "agent": "main"},
    {"role": "assistant", "content": "t\n```\nls\n```", "thought": "t", "action": "ls\n"},
    {"role": "user", "content": "a.py", "agent": "main"},
    {
        "role": "assistant",
        "content": "d\n```\nsubmit\n```",
        "thought": "d",
        "action": "submit\n",
    },
]
FINAL_STEPS: list[dict[str, Any]] = [
    {"action": "ls\n", "observation": "a.py", "thought": "t"},
    {"action": "submit\n", "observation": "diff --git a/a.py b/a.py\n", "thought": "d"},
]


class TestFinalObservation:
    def test_the_last_step_answers_the_final_action(self, tmp_path: Path) -> None:
        path = write(tmp_path, {"history": FINAL_HISTORY, "trajectory": FINAL_STEPS})
        msgs = messages_of(path)
        assert [m.role for m in msgs] == [
            "system",
            "user",
            "assistant",
            "tool",
            "assistant",
            "tool",
        ]
        assert msgs[5] == Message(
            "tool",
            (ToolResultPart("action-4", (TextPart("diff --git a/a.py b/a.py\n"),)),),
            meta={"source": "trajectory"},
        )

    def test_a_last_step_with_another_action_is_not_used(self, tmp_path: Path) -> None:
        steps = [FINAL_STEPS[0], {**FINAL_STEPS[1], "action": "exit_cost"}]
        msgs = messages_of(write(tmp_path, {"history": FINAL_HISTORY, "trajectory": steps}))
        assert [m.role for m in msgs][-2:] == ["tool", "assistant"]
        assert msgs[-1].tool_calls == (ToolCallPart("action-4", "bash", '{"command":"submit\\n"}'),)

    def test_function_calling_matches_on_the_action_meta(self, tmp_path: Path) -> None:
        call = {
            "id": "call_s",
            "type": "function",
            "function": {"name": "submit", "arguments": "{}"},
        }
        history = [
            {"role": "user", "content": "fix it", "agent": "main"},
            {"role": "assistant", "content": "done", "action": "submit", "tool_calls": [call]},
        ]
        steps = [{"action": "submit", "observation": "the diff", "thought": "done"}]
        msgs = messages_of(write(tmp_path, {"history": history, "trajectory": steps}))
        assert [(r.call_id, r.text) for m in msgs for r in m.tool_results] == [
            ("call_s", "the diff")
        ]
        assert msgs[-1].meta == {"source": "trajectory"}


class TestErrors:
    def error(self, tmp_path: Path, value: Any) -> str:
        path = write(tmp_path, value)
        with pytest.raises(TranscriptError) as info:
            IMPORTER.read(path)
        return str(info.value).removeprefix(f"{path} at ")

    def test_no_history_and_no_steps(self, tmp_path: Path) -> None:
        msg = self.error(tmp_path, {"history": [], "info": {}})
        assert msg == "$.history: expected a non-empty `history` or `trajectory` list"

    def test_step_without_observation(self, tmp_path: Path) -> None:
        msg = self.error(tmp_path, {"trajectory": [{"action": "ls", "thought": "t"}]})
        assert msg == "$.trajectory[0].observation: expected a string `observation`"


FC_CALL = {"id": "c1", "type": "function", "function": {"name": "bash", "arguments": "{}"}}


class TestDrift:
    """Each drift is tolerated with an exact report, and refused at its JSON path when
    strict."""

    def test_unknown_role(self, tmp_path: Path) -> None:
        history = [
            {"role": "system", "content": "s"},
            {"role": "user", "content": "u"},
            {"role": "robot", "content": "x"},
        ]
        session = tolerated(
            write(tmp_path, {"history": history}),
            "swe-agent",
            "skipped 1: message role robot ×1 ($.history[2].role)",
            " at $.history[2].role: expected one of system, user, assistant, tool",
        )
        assert len(session.entries) == 2

    def test_tool_message_without_ids_answers_the_open_call(self, tmp_path: Path) -> None:
        history = [
            {"role": "user", "content": "u"},
            {"role": "assistant", "content": "", "tool_calls": [FC_CALL]},
            {"role": "tool", "content": "ok"},
        ]
        session = tolerated(
            write(tmp_path, {"history": history}),
            "swe-agent",
            "repaired 1: tool message without call id ×1 ($.history[2].tool_call_ids)",
            " at $.history[2].tool_call_ids: expected a string call id on a tool message",
        )
        tool = session.entries[2].message
        assert tool is not None and [r.call_id for r in tool.tool_results] == ["c1"]

    def test_null_arguments(self, tmp_path: Path) -> None:
        call = {"id": "c1", "type": "function", "function": {"name": "bash", "arguments": None}}
        history = [
            {"role": "user", "content": "u"},
            {"role": "assistant", "content": "", "tool_calls": [call]},
            {"role": "tool", "content": "ok", "tool_call_ids": ["c1"]},
        ]
        session = tolerated(
            write(tmp_path, {"history": history}),
            "swe-agent",
            "repaired 1: null arguments ×1 ($.history[1].tool_calls[0].function)",
            " at $.history[1].tool_calls[0].function: expected tool-call arguments, got null",
        )
        msg = session.entries[1].message
        assert msg is not None and msg.tool_calls[0].arguments == "{}"

    def test_structured_output(self, tmp_path: Path) -> None:
        history = [
            {"role": "user", "content": "u"},
            {"role": "assistant", "content": "", "tool_calls": [FC_CALL]},
            {"role": "tool", "content": {"type": "text", "text": "x"}, "tool_call_ids": ["c1"]},
        ]
        session = tolerated(
            write(tmp_path, {"history": history}),
            "swe-agent",
            "repaired 1: structured content ×1 ($.history[2].content)",
            " at $.history[2].content: expected `content` to be a string, null or a list of "
            "parts, got one part object",
        )
        tool = session.entries[2].message
        assert tool is not None and tool.tool_results[0].text == "x"
