"""The summary templates a model summarizer may write to: ctxengine's own and those of the
known systems (``Policy.summary_template``). A template is the text that describes each
section to the model and the headings a reply must hold (validated; one nudge when one is
missing).

==============  =============================================================  ============
name            sections (the system's own names; the descriptions are ours)   source
==============  =============================================================  ============
default         Goal, Constraints and preferences, Progress (Done, In          ctxengine
                progress, Blocked), Key decisions, Files and code, Errors and
                fixes, User requests, Next step
pi              Goal, Constraints & Preferences, Progress (Done, In Progress,  reference §1
                Blocked), Key Decisions, Next Steps, Critical Context
codex           a free-form hand-off checkpoint: no heading is required         reference §3
gemini-cli      the ``<state_snapshot>`` sections as headings: Overall goal,    reference §4
                Active constraints, Key knowledge, Artifact trail, File system
                state, Recent actions, Task state
opencode        Objective, Important Details, Work State (Completed, Active,    reference §2
                Blocked), Next Move, Relevant Files; every heading required,
                "(none)" when empty (``validateSummary``)
claude-code     the 9 sections Claude Code and Roo Code write: Primary Request  reference §5,
                and Intent, Key Technical Concepts, Files and Code Sections,    §7
                Errors and fixes, Problem Solving, All user messages, Pending
                Tasks, Current Work, Optional Next Step
==============  =============================================================  ============
"""

from __future__ import annotations

from dataclasses import dataclass

from ctxengine.errors import ConfigError
from ctxengine.summarizers.prompts import EMPTY_MARK, REQUIRED_HEADINGS, TEMPLATE

_CLOSING = (
    f"Write {EMPTY_MARK} under a section that has nothing to report. Keep every heading, in "
    "this order, spelled as above."
)


@dataclass(frozen=True, slots=True)
class SummaryTemplate:
    """One template.

    Attributes:
        name: its name (``Policy.summary_template``).
        text: the template as the prompt shows it.
        headings: the headings a reply must hold, in order (empty: free form).
    """

    name: str
    text: str
    headings: tuple[str, ...]


DEFAULT_TEMPLATE = SummaryTemplate("default", TEMPLATE, REQUIRED_HEADINGS)

PI_TEMPLATE = SummaryTemplate(
    "pi",
    f"""\
## Goal
What the user wants to achieve, in one to three sentences.

## Constraints & Preferences
Every rule and preference the user stated, one bullet each.

## Progress
### Done
Finished work, one bullet per step.
### In Progress
Work started and where it stands.
### Blocked
What cannot go on, and why.

## Key Decisions
Choices made and the reason for each.

## Next Steps
What comes next, in order.

## Critical Context
Exact paths, identifiers, commands and error messages needed to carry on.

{_CLOSING}""",
    (
        "Goal",
        "Constraints & Preferences",
        "Progress",
        "Done",
        "In Progress",
        "Blocked",
        "Key Decisions",
        "Next Steps",
        "Critical Context",
    ),
)

CODEX_TEMPLATE = SummaryTemplate(
    "codex",
    """\
Write a hand-off checkpoint for another model that will carry on this task without the \
history: the goal, the progress so far and the decisions taken, the user's constraints and \
preferences, the steps that remain, and the critical data and references (exact paths, \
identifiers, commands, error messages). Use whatever headings help; be concise and \
complete.""",
    (),
)

GEMINI_TEMPLATE = SummaryTemplate(
    "gemini-cli",
    f"""\
## Overall goal
The user's high-level objective, in one sentence.

## Active constraints
Rules, preferences and limits in force, one bullet each.

## Key knowledge
Facts learned that the work depends on (build commands, versions, conventions).

## Artifact trail
Files and other artifacts changed, and why.

## File system state
Files and directories read, created or deleted, with what matters about each.

## Recent actions
The last significant actions and their outcomes.

## Task state
The plan, each step marked done, in progress or to do; the current step first.

{_CLOSING}""",
    (
        "Overall goal",
        "Active constraints",
        "Key knowledge",
        "Artifact trail",
        "File system state",
        "Recent actions",
        "Task state",
    ),
)

OPENCODE_TEMPLATE = SummaryTemplate(
    "opencode",
    f"""\
## Objective
What the user asked for and why.

## Important Details
Constraints, decisions and facts the next steps depend on.

## Work State
### Completed
Finished work.
### Active
Work in progress and where it stands.
### Blocked
What cannot go on, and why.

## Next Move
The single next action.

## Relevant Files
Paths that matter, with one line on each.

{_CLOSING}""",
    (
        "Objective",
        "Important Details",
        "Work State",
        "Completed",
        "Active",
        "Blocked",
        "Next Move",
        "Relevant Files",
    ),
)

CLAUDE_CODE_TEMPLATE = SummaryTemplate(
    "claude-code",
    f"""\
## Primary Request and Intent
Every explicit request of the user, in detail.

## Key Technical Concepts
Technologies, frameworks and ideas the work involves.

## Files and Code Sections
Files read, changed or created, with why each matters and the important snippets.

## Errors and fixes
Errors met (exact message) and how each was fixed, with the user's feedback on them.

## Problem Solving
Problems solved and troubleshooting still going on.

## All user messages
Every user message that is not a tool result, in order.

## Pending Tasks
Tasks the user asked for that are not done.

## Current Work
What was being worked on just before this summary, in detail.

## Optional Next Step
The next step, in line with the user's latest request, quoting it where it helps.

{_CLOSING}""",
    (
        "Primary Request and Intent",
        "Key Technical Concepts",
        "Files and Code Sections",
        "Errors and fixes",
        "Problem Solving",
        "All user messages",
        "Pending Tasks",
        "Current Work",
        "Optional Next Step",
    ),
)

#: Every template by name.
TEMPLATES: dict[str, SummaryTemplate] = {
    t.name: t
    for t in (
        DEFAULT_TEMPLATE,
        PI_TEMPLATE,
        CODEX_TEMPLATE,
        GEMINI_TEMPLATE,
        OPENCODE_TEMPLATE,
        CLAUDE_CODE_TEMPLATE,
    )
}


def template_named(name: str) -> SummaryTemplate:
    """The template called ``name``.

    Raises:
        ConfigError: an unknown name.
    """
    found = TEMPLATES.get(name)
    if found is None:
        raise ConfigError(f"unknown summary template {name!r}; expected one of {tuple(TEMPLATES)}")
    return found


__all__ = ["DEFAULT_TEMPLATE", "TEMPLATES", "SummaryTemplate", "template_named"]
