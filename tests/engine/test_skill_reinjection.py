"""Invoked skill bodies come back after every compaction, as context and not as a request:
each within 5,000 tokens (a longer one keeps its top and names its file), 25,000 in all, the
oldest dropped first; checked over 3 compactions (default policy and the claude-code preset,
exact token counts) and over the replay of a Claude Code transcript that invoked a skill
(``Skill`` call, "Launching skill" result, ``isMeta`` body with the call's arguments).

Bodies are lines of 79 characters, so sizes are computed by hand (:class:`HandEstimator`:
a message is 4 + len(text) // 4 + 1). A skill's re-injected text is its frame (header, the
``<skill>`` block's tags: 311 characters for a name of 2 and a path of 26) plus its body
(80·k − 1 characters for k lines).
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
from engine_helpers import EST, filler

from ctxengine.assembly import SKILL_TOOL, ContextAssembler, Skill
from ctxengine.engine import Session
from ctxengine.importers import read_transcript
from ctxengine.model import CompactionRecord, Message, TextPart, ToolCallPart, ToolResultPart
from ctxengine.model import assistant as assistant_msg
from ctxengine.model import user as user_msg
from ctxengine.policy import DEFAULT_POLICY, Policy
from ctxengine.policy.presets import preset
from ctxengine.projection.skills import reinjected_text
from ctxengine.replay.loop import replay
from ctxengine.summarizers.extractive import ExtractiveSummarizer

LINES = {"s1": 20, "s2": 400, "s3": 230, "s4": 230, "s5": 230, "s6": 230, "s7": 230}


def body(name: str, lines: int) -> str:
    return "\n".join(f"{name} step {i:04d}: " + "x" * 65 for i in range(lines))


def path(name: str) -> str:
    return f".claude/skills/{name}/SKILL.md"


SKILLS = {n: Skill(n, f"Skill {n}.", path(n), body(n, k)) for n, k in LINES.items()}


def whole(name: str) -> str:
    return reinjected_text(name, path(name), SKILLS[name].body)


#: s2 (400 lines) cut to its top: 311 + (80·k − 1) + 1 + 91 (the rest line, 3 digits)
#: = 402 + 80·k characters → 4 + 100 + 20·k + 1 tokens ≤ 5,000: k = 244, 4,985 tokens.
S2_TOP = reinjected_text("s2", path("s2"), "\n".join(SKILLS["s2"].body.split("\n")[:244]), 156)
#: Whole: 311 + 80·20 − 1 = 1,910 characters → 482 tokens; 311 + 80·230 − 1 = 18,710 → 4,682.
SIZES = {"s1": 482, "s2": 4_985, "s3": 4_682, "s4": 4_682, "s5": 4_682, "s6": 4_682, "s7": 4_682}


def expected(*names: str) -> tuple[str, ...]:
    return tuple(S2_TOP if n == "s2" else whole(n) for n in names)


class Agent:
    """A session whose agent activates skills by the tool or by a user message, and chats."""

    def __init__(self, policy: Policy) -> None:
        head = ContextAssembler(base="Be brief.", skills=list(SKILLS.values()), tools=[SKILL_TOOL])
        self.s = Session(
            200_000,
            estimator=EST,
            policy=policy,
            head=head,
            summarizer=ExtractiveSummarizer(2_000),
        )
        self.calls = 0
        self.s.append(user_msg("Prepare the quarterly report."))

    def tool(self, name: str) -> str:
        self.calls += 1
        cid = f"call-{self.calls}"
        self.s.append(
            Message("assistant", (ToolCallPart(cid, "skill", json.dumps({"name": name})),))
        )
        text, is_error = self.s.run_skill_tool({"name": name})
        assert not is_error
        self.s.append(Message("tool", (ToolResultPart(cid, (TextPart(text),)),)))
        return text

    def message(self, name: str) -> None:
        self.s.activate_skill(name)

    def chat(self, label: str) -> None:
        """8 turns of 4,000 tokens: more than the kept tail, so the skills leave it."""
        for i in range(8):
            self.s.append(user_msg(filler(f"{label} request {i}", 2_000)))
            self.s.append(assistant_msg(filler(f"{label} answer {i}", 2_000)))

    def compact(self) -> CompactionRecord:
        self.s.compact()
        records = [e.body for e in self.s.entries if isinstance(e.body, CompactionRecord)]
        return records[-1]

    def reinjected(self) -> list[tuple[str, int]]:
        """The re-injected skill messages of the current context: (name, tokens)."""
        return [
            (m.text.split('"')[1], EST.message(m))
            for m in self.s.project().messages
            if m.meta.get("synthetic") == "reinjected" and m.text.startswith('The "')
        ]


@pytest.mark.parametrize("policy", [DEFAULT_POLICY, preset("claude-code")], ids=lambda p: p.name)
def test_three_compactions_bring_the_bodies_back_within_their_budgets(policy: Policy) -> None:
    assert "skills" in policy.reinject
    assert (policy.reinject_skill_max_tokens, policy.reinject_skills_max_tokens) == (5_000, 25_000)
    a = Agent(policy)
    a.tool("s1")
    a.message("s2")
    a.tool("s3")
    a.chat("first")
    first = a.compact()
    skills = tuple(t for t in first.reinjected or () if t.startswith('The "s'))
    assert skills == expected("s3", "s2", "s1")  # the most recently used first
    assert a.reinjected() == [("s3", 4_682), ("s2", 4_985), ("s1", 482)]
    assert len(S2_TOP) == 402 + 80 * 244
    assert S2_TOP.endswith(
        "\n</skill>\n[156 more lines of this skill are not shown: read "
        ".claude/skills/s2/SKILL.md for the rest.]"
    )

    a.tool("s4")
    a.message("s5")
    a.chat("second")
    a.compact()
    assert a.reinjected() == [(n, SIZES[n]) for n in ("s5", "s4", "s3", "s2", "s1")]
    assert sum(SIZES[n] for n in ("s5", "s4", "s3", "s2", "s1")) == 19_513

    a.tool("s6")
    a.tool("s7")
    # s1 is back whole in the context: activating it again adds a notice and makes it the
    # most recently used.
    assert a.tool("s1").startswith('The "s1" skill is already loaded above')
    a.chat("third")
    third = a.compact()
    names = ("s1", "s7", "s6", "s5", "s4", "s3")
    assert tuple(t for t in third.reinjected or () if t.startswith('The "s')) == expected(*names)
    assert a.reinjected() == [(n, SIZES[n]) for n in names]
    # 482 + 5 × 4,682 = 23,892; the oldest, s2 (4,985 more: 28,877 > 25,000), is dropped.
    assert sum(SIZES[n] for n in names) == 23_892
    assert all(n <= 5_000 for n in SIZES.values())
    # Framed as context, never as a request.
    for text in third.reinjected or ():
        if text.startswith('The "s'):
            assert "not as a new request: do not run the skill again" in text.split("\n")[0]


def test_a_policy_without_skills_reinjects_none() -> None:
    a = Agent(Policy(reinject=("rules", "todos", "background")))
    a.tool("s1")
    a.chat("first")
    assert not [t for t in a.compact().reinjected or () if t.startswith('The "s')]
    assert a.s.loaded_skills() == {}


def write_jsonl(path: Path, lines: list[dict[str, Any]]) -> Path:
    path.write_text(
        "\n".join(json.dumps({"sessionId": "cc", **x}) for x in lines) + "\n", encoding="utf-8"
    )
    return path


PDF_BODY = "# PDF forms\n\n1. Read the form with scripts/read.py.\n2. Fill every field."


def claude_code_session(tmp_path: Path) -> Path:
    """Claude Code invokes the pdf skill with arguments, then works through 30 long turns."""
    lines: list[dict[str, Any]] = [
        {"type": "user", "uuid": "u0", "message": {"role": "user", "content": "fill form.pdf"}},
        {
            "type": "assistant",
            "uuid": "a0",
            "message": {
                "id": "m0",
                "role": "assistant",
                "content": [
                    {
                        "type": "tool_use",
                        "id": "toolu_1",
                        "name": "Skill",
                        "input": {"skill": "pdf", "args": "form.pdf"},
                    }
                ],
            },
        },
        {
            "type": "user",
            "uuid": "r0",
            "message": {
                "role": "user",
                "content": [
                    {
                        "type": "tool_result",
                        "tool_use_id": "toolu_1",
                        "content": "Launching skill: pdf",
                    }
                ],
            },
        },
        {
            "type": "user",
            "uuid": "b0",
            "isMeta": True,
            "sourceToolUseID": "toolu_1",
            "message": {
                "role": "user",
                "content": [
                    {
                        "type": "text",
                        "text": "Base directory for this skill: /home/u/.claude/skills/pdf\n\n"
                        + PDF_BODY
                        + "\n\nARGUMENTS: form.pdf",
                    }
                ],
            },
        },
    ]
    for i in range(30):
        lines.append(
            {
                "type": "assistant",
                "uuid": f"a{i + 1}",
                "message": {
                    "id": f"m{i + 1}",
                    "role": "assistant",
                    "content": [{"type": "text", "text": filler(f"answer {i}", 1_500)}],
                },
            }
        )
        lines.append(
            {
                "type": "user",
                "uuid": f"u{i + 1}",
                "message": {"role": "user", "content": filler(f"request {i}", 1_500)},
            }
        )
    return write_jsonl(tmp_path / "cc.jsonl", lines)


def test_a_replayed_claude_code_session_reinjects_the_invoked_skill(tmp_path: Path) -> None:
    imported = read_transcript(claude_code_session(tmp_path))
    result = replay(imported.entries, window=20_000, estimator=EST, providers=())
    assert result.compactions == 8
    assert result.final is not None
    text = reinjected_text("pdf", "/home/u/.claude/skills/pdf/SKILL.md", PDF_BODY)
    reinjected = [m.text for m in result.final.messages if m.meta.get("synthetic") == "reinjected"]
    assert reinjected == [text]
    assert "ARGUMENTS" not in text and "form.pdf" not in text
    session = result.session
    assert session is not None
    records = [e.body for e in session.entries if isinstance(e.body, CompactionRecord)]
    assert len(records) == result.compactions
    assert all(r.reinjected == (text,) for r in records)
