"""Activating a skill through a ``Session``: the body enters the conversation only then, as
the ``skill`` tool's result or as a user message; activating it again while the body is
still in the context adds one line, not a second copy; once the body has left the context
(compacted away, not re-injected) an activation sends it again."""

from __future__ import annotations

import json

import pytest
from engine_helpers import EST, filler

from ctxengine.assembly import SKILL_TOOL, ContextAssembler, Skill
from ctxengine.engine import Session
from ctxengine.errors import ConfigError
from ctxengine.model import Message, TextPart, ToolCallPart, ToolResultPart, assistant, user
from ctxengine.policy import Policy
from ctxengine.projection.render import render_anthropic

PDF = Skill(
    "pdf",
    "Fill PDF forms.",
    ".claude/skills/pdf/SKILL.md",
    "# PDF\n\n1. Read the form.\n2. Fill every field.",
    files=(".claude/skills/pdf/references/forms.md", ".claude/skills/pdf/scripts/fill.py"),
)
CSV = Skill("csv", "Clean CSV files.", ".claude/skills/csv/SKILL.md", "Strip spaces.")
ACTIVATED = (
    'The "pdf" skill is loaded (.claude/skills/pdf/SKILL.md): follow its instructions below '
    "for the task at hand.\n\n"
    '<skill name="pdf" path=".claude/skills/pdf/SKILL.md">\n'
    "# PDF\n\n1. Read the form.\n2. Fill every field.\n"
    "</skill>\n\n"
    "Files of this skill, not shown here (read a reference when the instructions call for it; "
    "run a script rather than reading it):\n"
    "- .claude/skills/pdf/references/forms.md\n"
    "- .claude/skills/pdf/scripts/fill.py"
)
NOTICE = (
    'The "pdf" skill is already loaded above (.claude/skills/pdf/SKILL.md); follow those '
    "instructions, they are not repeated here."
)


def session(policy: Policy | None = None, window: int = 20_000) -> Session:
    head = ContextAssembler(base="Be brief.", skills=[PDF, CSV], tools=[SKILL_TOOL])
    s = Session(window, estimator=EST, head=head, **({"policy": policy} if policy else {}))
    s.append(user("fill in the tax form"))
    return s


def tool_step(s: Session, cid: str, name: str) -> tuple[str, bool]:
    """The agent calls the skill tool; its answer is appended as the tool result."""
    s.append(Message("assistant", (ToolCallPart(cid, "skill", json.dumps({"name": name})),)))
    text, is_error = s.run_skill_tool({"name": name})
    s.append(Message("tool", (ToolResultPart(cid, (TextPart(text),), is_error=is_error),)))
    return text, is_error


def request_text(s: Session) -> str:
    body = render_anthropic(s.prepare())
    return json.dumps(body)


def test_the_tool_definition() -> None:
    assert SKILL_TOOL["name"] == "skill"
    assert SKILL_TOOL["parameters"]["required"] == ["name"]
    head = ContextAssembler(skills=[PDF], tools=[SKILL_TOOL]).build(None, EST)
    assert head.section("tools").sources == ("skill",)


def test_as_a_tool_result_once_then_a_one_line_notice() -> None:
    s = session()
    assert "1. Read the form." not in request_text(s)  # the catalog only
    assert tool_step(s, "c1", "pdf") == (ACTIVATED, False)
    assert s.loaded_skills() == {"pdf": PDF.body}
    assert tool_step(s, "c2", "pdf") == (NOTICE, False)
    assert "\n" not in NOTICE
    s.append(assistant("Done."))
    assert request_text(s).count("2. Fill every field.") == 1
    # A tool message: 4 + the result (1 + its text's len // 4 + 1): 4 + 1 + 107, 4 + 1 + 32.
    results = [m for m in s.prepare().messages if m.role == "tool"]
    assert (len(ACTIVATED), len(NOTICE)) == (424, 125)
    assert [EST.message(m) for m in results] == [112, 37]


def test_as_a_user_message_once_then_a_one_line_notice() -> None:
    s = session()
    first = s.activate_skill("pdf")
    second = s.activate_skill("/pdf")
    assert isinstance(first.body, Message) and isinstance(second.body, Message)
    assert (first.body.text, first.body.meta) == (ACTIVATED, {"synthetic": "skill", "skill": "pdf"})
    assert (second.body.text, second.body.meta) == (
        NOTICE,
        {"synthetic": "skill_notice", "skill": "pdf"},
    )
    assert request_text(s).count("2. Fill every field.") == 1
    # A tool activation after a message activation: the notice again.
    assert tool_step(s, "c1", "pdf") == (NOTICE, False)
    # Another skill is still sent whole.
    assert tool_step(s, "c2", "csv")[0].startswith('The "csv" skill is loaded')
    assert s.loaded_skills() == {"pdf": PDF.body, "csv": "Strip spaces."}


def test_a_changed_body_is_sent_again() -> None:
    s = session()
    s.activate_skill("pdf")
    head = s.head
    assert head is not None
    newer = Skill(PDF.name, PDF.description, PDF.path, PDF.body + "\n3. Sign it.", PDF.files)
    head.set_skills([newer, CSV])
    assert s.activate_skill("pdf").body.text == newer.activation()  # type: ignore[union-attr]


def test_after_a_compaction_that_drops_it_the_body_is_sent_again() -> None:
    s = session(Policy(reinject=()), window=8_000)
    tool_step(s, "c1", "pdf")
    for i in range(6):
        s.append(assistant(filler(f"reply {i}", 600)))
        s.append(user(filler(f"next {i}", 600)))
    s.compact()
    assert s.loaded_skills() == {}
    assert tool_step(s, "c2", "pdf") == (ACTIVATED, False)


def test_after_a_compaction_that_reinjects_it_a_notice() -> None:
    s = session(window=8_000)
    tool_step(s, "c1", "pdf")
    for i in range(6):
        s.append(assistant(filler(f"reply {i}", 600)))
        s.append(user(filler(f"next {i}", 600)))
    s.compact()
    reinjected = [m for m in s.project().messages if m.meta.get("synthetic") == "reinjected"]
    assert [m.text.splitlines()[0][:44] for m in reinjected] == [
        'The "pdf" skill was loaded earlier in this s'
    ]
    assert s.loaded_skills() == {"pdf": PDF.body}
    assert s.activate_skill("pdf").body.text == NOTICE  # type: ignore[union-attr]


def test_errors() -> None:
    s = session()
    assert s.run_skill_tool({"name": "nope"}) == (
        "skill: no skill named 'nope'; the skills available are: csv, pdf",
        True,
    )
    assert s.run_skill_tool('{"skill": "pdf"}') == (
        "skill: unknown field 'skill'; expected 'name'",
        True,
    )
    assert s.run_skill_tool("{}") == ("skill: field 'name' must be a skill's name, got None", True)
    assert s.run_skill_tool("[1]") == ("skill: arguments must be a JSON object", True)
    with pytest.raises(ConfigError) as caught:
        s.activate_skill("nope")
    assert str(caught.value) == "no skill named 'nope'; the skills available are: csv, pdf"
    bare = Session(8_000, estimator=EST)
    with pytest.raises(ConfigError, match="no skills to activate"):
        bare.activate_skill("pdf")
    assert bare.run_skill_tool({"name": "pdf"}) == (
        "skill: no skill named 'pdf'; the skills available are: none",
        True,
    )
    # An error result never counts as a loaded body.
    tool_step(s, "c9", "nope")
    assert s.loaded_skills() == {}
