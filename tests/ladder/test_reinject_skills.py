"""The ``skills`` item of the durable state on hand-built histories: which messages carry a
skill body (ctxengine's tool results and activation messages, re-injected texts, Claude
Code's ``isMeta`` body messages), a body cut to its top when over its budget, the most
recently used first, the oldest dropped past the total, and what the kept tail shows."""

from __future__ import annotations

import json
from typing import Any

from ladder_helpers import EST

from ctxengine.ladder.reinject import (
    DurableItem,
    durable_items,
    item_label,
    skill_items,
    skill_text,
)
from ctxengine.model import Message, TextPart, ToolCallPart, ToolResultPart
from ctxengine.policy import Policy
from ctxengine.projection.injection import reinjected_message
from ctxengine.projection.skills import (
    SkillLoad,
    activation_text,
    notice_text,
    reinjected_text,
    skill_loads,
    skill_notices,
)


def user(text: str, **meta: Any) -> Message:
    return Message("user", (TextPart(text),), meta=meta)


def calling(cid: str, tool: str, **args: Any) -> Message:
    return Message("assistant", (ToolCallPart(cid, tool, json.dumps(args)),))


def answer(cid: str, text: str, *, is_error: bool = False) -> Message:
    return Message("tool", (ToolResultPart(cid, (TextPart(text),), is_error=is_error),))


def lines(n: int, width: int = 79) -> str:
    return "\n".join(f"line {i:03d} ".ljust(width, "x") for i in range(n))


def activated(cid: str, name: str, body: str) -> list[Message]:
    """The skill tool called for ``name`` and answered with its activation."""
    path = f"s/{name}/SKILL.md"
    return [calling(cid, "skill", name=name), answer(cid, activation_text(name, path, body))]


class TestFound:
    def test_every_kind_of_body_message(self) -> None:
        pdf = activation_text("pdf", "s/pdf/SKILL.md", "Fill it.", ("s/pdf/scripts/f.py",))
        cut = reinjected_text("big", "s/big/SKILL.md", "top", 9)
        claude = (
            "Base directory for this skill: /home/u/.claude/plugins/docs/skills/pdf\n\n"
            "# PDF\nRead the form.\n\nARGUMENTS: form.pdf"
        )
        messages = [
            user("fill the form"),
            calling("c1", "skill", name="pdf"),
            answer("c1", pdf),
            user(activation_text("csv", "s/csv/SKILL.md", "Strip."), synthetic="skill"),
            user(reinjected_text("lint", "s/lint/SKILL.md", "Run ruff.")),  # no meta: not one
            reinjected_message(reinjected_text("lint", "s/lint/SKILL.md", "Run ruff.")),
            reinjected_message(cut),
            calling("c2", "Skill", skill="docs:pdf", args="form.pdf"),
            answer("c2", "Launching skill: docs:pdf"),
            user(claude, isMeta=True),
            user(claude),  # a person pasting it: not one
            calling("c3", "Read", file_path="notes.md"),
            answer("c3", pdf),  # a file that holds the text: not a skill call
            calling("c4", "skill", name="pdf"),
            answer("c4", pdf, is_error=True),
            calling("c5", "skill", name="pdf"),
            answer("c5", notice_text("pdf", "s/pdf/SKILL.md")),
            user(notice_text("csv", "s/csv/SKILL.md"), synthetic="skill_notice"),
        ]
        assert skill_loads(messages) == [
            SkillLoad("pdf", "s/pdf/SKILL.md", "Fill it.", 2, True, "tool"),
            SkillLoad("csv", "s/csv/SKILL.md", "Strip.", 3, True, "message"),
            SkillLoad("lint", "s/lint/SKILL.md", "Run ruff.", 5, True, "reinjected"),
            SkillLoad("big", "s/big/SKILL.md", "top", 6, False, "reinjected"),
            SkillLoad(
                "docs:pdf",
                "/home/u/.claude/plugins/docs/skills/pdf/SKILL.md",
                "# PDF\nRead the form.",
                9,
                True,
                "claude-code",
            ),
        ]
        assert skill_notices(messages) == [("pdf", 16), ("csv", 17)]

    def test_a_claude_code_body_typed_as_a_command_is_named_by_its_folder(self) -> None:
        messages = [
            # A skill call answered without a body (it ran as a subagent), then a reply: its
            # name does not carry over to a body that comes later.
            calling("c0", "Skill", skill="review"),
            answer("c0", "Agent review finished."),
            Message("assistant", (TextPart("Reviewed."),)),
            user("<command-name>/pdf</command-name>"),
            user("Base directory for this skill: C:\\skills\\pdf\\\n\nBody.", isMeta=True),
        ]
        assert skill_loads(messages) == [
            SkillLoad("pdf", "C:/skills/pdf/SKILL.md", "Body.", 4, True, "claude-code")
        ]


class TestSkillText:
    def test_a_body_within_its_budget_whole(self) -> None:
        load = SkillLoad("big", "s/big/SKILL.md", lines(3), 0, True, "tool")
        text, tokens = skill_text(load, EST, 500) or ("", 0)
        assert text == reinjected_text("big", "s/big/SKILL.md", lines(3))
        # The frame is 289 characters, the body 3 × 80 − 1: 528 → 4 + 132 + 1.
        assert (len(text), tokens) == (528, 137)

    def test_a_longer_body_keeps_its_top_and_names_its_file(self) -> None:
        load = SkillLoad("big", "s/big/SKILL.md", lines(300), 0, True, "tool")
        text, tokens = skill_text(load, EST, 500) or ("", 0)
        # 289 + (80·k − 1) + 1 + 79 (the rest line) = 368 + 80·k → 4 + 92 + 20·k + 1 ≤ 500:
        # k = 20, 497 tokens.
        assert text == reinjected_text("big", "s/big/SKILL.md", lines(20), 280)
        assert (len(text), tokens) == (1_968, 497)
        assert text.endswith(
            "</skill>\n[280 more lines of this skill are not shown: read s/big/SKILL.md for "
            "the rest.]"
        )

    def test_a_first_line_too_long_is_cut_by_characters(self) -> None:
        body = "y" * 4_000 + "\nsecond"
        load = SkillLoad("big", "s/big/SKILL.md", body, 0, True, "tool")
        text, tokens = skill_text(load, EST, 300) or ("", 0)
        # 289 + c + 1 + 77 (the rest line, "2 more lines") = 367 + c → 5 + (367 + c) // 4
        # ≤ 300: c = 816 (the longest), 300 tokens.
        assert text == reinjected_text("big", "s/big/SKILL.md", "y" * 816, 2)
        assert (len(text), tokens) == (1_183, 300)
        assert skill_text(load, EST, 90) is None  # not even the frame fits


class TestItems:
    def test_the_most_recent_first_and_the_oldest_dropped_past_the_total(self) -> None:
        messages = [
            user("go"),
            *activated("c1", "a", lines(20)),
            *activated("c2", "b", lines(20)),
            *activated("c3", "c", lines(20)),
            calling("c4", "skill", name="a"),
            answer("c4", notice_text("a", "s/a/SKILL.md")),
        ]
        # Each: a frame of 289 − 8 (a name of 1 and a path of 12 instead of 3 and 14, each
        # shown twice) + 80·20 − 1 = 1,880 characters → 4 + 470 + 1 = 475 tokens.
        size = 475
        items = skill_items(messages, EST, each_max=5_000, total_max=3 * size)
        assert [item_label(i.kind, i.text or "") for i in items] == [
            "re-injected skill a",
            "re-injected skill c",
            "re-injected skill b",
        ]
        assert [i.tokens for i in items] == [size] * 3
        # One token less: b, the oldest, is dropped; so would be anything older than it.
        fewer = skill_items(messages, EST, each_max=5_000, total_max=3 * size - 1)
        assert [i.text for i in fewer] == [items[0].text, items[1].text]

    def test_what_the_kept_tail_shows_is_left_out_and_a_notice_there_counts_as_a_use(self) -> None:
        messages = [user("go"), *activated("c1", "a", "A."), *activated("c2", "b", "B.")]
        kept = [*activated("c3", "b", "B."), calling("c4", "skill", name="a")]
        kept.append(answer("c4", notice_text("a", "s/a/SKILL.md")))
        items = skill_items(messages, EST, each_max=5_000, total_max=25_000, kept=kept)
        assert items == [
            DurableItem(
                "skills", reinjected_text("a", "s/a/SKILL.md", "A."), 4 + (281 + 2) // 4 + 1
            )
        ]
        # Without the notice in the tail, b (loaded later) would come first: it is in the tail.
        assert [i.text for i in skill_items(messages, EST, each_max=5_000, total_max=25_000)] == [
            reinjected_text("b", "s/b/SKILL.md", "B."),
            reinjected_text("a", "s/a/SKILL.md", "A."),
        ]

    def test_durable_items_place_skills_after_the_plan_and_before_the_files(self) -> None:
        messages = [
            user("go"),
            *activated("c1", "a", "A."),
            calling("p1", "ExitPlanMode", plan="1. Do it."),
            answer("p1", "ok"),
            calling("r1", "Read", file_path="/repo/x.py"),
            answer("r1", "x = 1"),
        ]
        everything = Policy(reinject=("rules", "todos", "background", "plan", "skills", "files"))
        assert [i.kind for i in durable_items(messages, everything, EST)] == [
            "plan",
            "skills",
            "files",
        ]
        without = Policy(reinject=("plan", "files"))
        assert [i.kind for i in durable_items(messages, without, EST)] == ["plan", "files"]
        assert not any(i.required for i in durable_items(messages, everything, EST))
