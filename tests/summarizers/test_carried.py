"""A carried summary split into its sections, each with its priority: Claude Code's numbered
template, pi's Markdown checkpoint (its title line is the preamble), our own headings."""

from __future__ import annotations

import pytest

from ctxengine.summarizers.carried import (
    DEFAULT_PRIORITY,
    PREAMBLE_PRIORITY,
    CarriedSection,
    section_priority,
    split_sections,
)

CLAUDE_CODE = (
    "This session is being continued from a previous conversation.\n\n"
    "Analysis:\n1. User asked to work on bead a0y.\n**Task a0y.1** (COMPLETED)\n\n"
    "Summary:\n"
    "1. Primary Request and Intent:\n   Work on bead a0y.\n\n"
    "2. Key Technical Concepts:\n   - GenServer\n\n"
    "4. Errors and Fixes:\n   - credo nesting: extracted a helper\n\n"
    "7. Pending Tasks:\n   - a0y.4\n\n"
    "8. Current Work:\n   Wiring PubSub.\n\n"
    "9. Optional Next Step:\n   Compile and test.\n"
)

PI = (
    "# Context Checkpoint: Refactoring\n\n"
    "## Goal\nUntangle main.ts.\n\n"
    "## Key Decisions Made\n1. **Keep old code** - new files\n\n"
    "## Next Steps (WP14-WP20)\n### WP14: Create main-new.ts (NEXT)\n- do it\n\n"
    "## Commands\n- npm run check\n"
)


def test_claude_codes_template() -> None:
    sections = split_sections(CLAUDE_CODE)
    assert sections == (
        CarriedSection("", "This session is being continued from a previous conversation.\n\n", 10),
        CarriedSection(
            "Analysis:",
            "Analysis:\n1. User asked to work on bead a0y.\n**Task a0y.1** (COMPLETED)\n\n",
            15,
        ),
        CarriedSection("Summary:", "Summary:\n", 40),
        CarriedSection(
            "1. Primary Request and Intent:",
            "1. Primary Request and Intent:\n   Work on bead a0y.\n\n",
            90,
        ),
        CarriedSection(
            "2. Key Technical Concepts:", "2. Key Technical Concepts:\n   - GenServer\n\n", 25
        ),
        CarriedSection(
            "4. Errors and Fixes:",
            "4. Errors and Fixes:\n   - credo nesting: extracted a helper\n\n",
            94,
        ),
        CarriedSection("7. Pending Tasks:", "7. Pending Tasks:\n   - a0y.4\n\n", 96),
        CarriedSection("8. Current Work:", "8. Current Work:\n   Wiring PubSub.\n\n", 100),
        CarriedSection(
            "9. Optional Next Step:", "9. Optional Next Step:\n   Compile and test.\n", 98
        ),
    )
    assert "".join(s.text for s in sections) == CLAUDE_CODE


def test_pi_checkpoint_sections_at_the_second_level_and_its_subsections_inside() -> None:
    sections = split_sections(PI)
    assert [(s.title, s.priority) for s in sections] == [
        ("", PREAMBLE_PRIORITY),
        ("Goal", 90),
        ("Key Decisions Made", 70),
        ("Next Steps (WP14-WP20)", 98),
        ("Commands", 55),
    ]
    assert sections[3].text == (
        "## Next Steps (WP14-WP20)\n### WP14: Create main-new.ts (NEXT)\n- do it\n\n"
    )
    assert "".join(s.text for s in sections) == PI


def test_a_text_without_headings_is_one_preamble() -> None:
    assert split_sections("Did X, then Y.\nNext: Z.") == (
        CarriedSection("", "Did X, then Y.\nNext: Z.", PREAMBLE_PRIORITY),
    )
    assert split_sections("") == ()


def test_numbered_lines_without_a_colon_and_indented_labels_start_no_section() -> None:
    text = "## Progress\n1. Ran the tests.\n   Note:\n2. Fixed it\n"
    assert [s.title for s in split_sections(text)] == ["Progress"]


@pytest.mark.parametrize(
    ("title", "priority"),
    [
        ("8. Current Work:", 100),
        ("Next step", 98),
        ("7. Pending Tasks:", 96),
        ("Errors and fixes", 94),
        ("6. All User Messages:", 90),
        ("Constraints and preferences", 88),
        ("Key decisions", 70),
        ("Files and code", 60),
        ("Progress", 50),
        ("5. Problem Solving:", 30),
        ("2. Key Technical Concepts:", 25),
        ("Analysis:", 15),
        ("AgentSession Key API", DEFAULT_PRIORITY),
    ],
)
def test_section_priority(title: str, priority: int) -> None:
    assert section_priority(title) == priority
