"""An earlier summary carried into the continuation state, split into its sections so that it
is shortened by section priority, never head-first.

A carried summary is another system's compaction text (Claude Code's ``compact_boundary``
summary, a pi or Codex compaction) or a model's narrative of ours. Each writes headed
sections; what the agent needs most to go on — current work, next step, pending tasks,
errors, the user's requests — often comes last (Claude Code's template ends with "Current
Work" and "Optional Next Step"), so cutting the text from its end loses exactly that.

Section starts (:func:`split_sections`), at column 0:

- Markdown headings (``## Goal``), at the outermost level the text uses (a single ``#`` title
  line opening the text belongs to the preamble);
- numbered headings that end with a colon (``8. Current Work:``);
- label lines (``Analysis:``, ``Errors encountered:``): a capitalised phrase of at most 40
  characters ending with a colon.

Text before the first heading is the preamble. Each section's priority
(:func:`section_priority`) comes from the first keyword of :data:`SECTION_PRIORITIES` its
title contains (case-insensitive); :data:`DEFAULT_PRIORITY` otherwise.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

#: (keyword, priority) in the order they are tried; higher is kept longer. Current work and
#: next steps first, then pending tasks, errors and the user's requests, then decisions and
#: files, then finished work, then background (concepts, analysis).
SECTION_PRIORITIES: tuple[tuple[str, int], ...] = (
    ("current work", 100),
    ("current state", 100),
    ("current task", 100),
    ("in progress", 100),
    ("next step", 98),
    ("next action", 98),
    ("pending", 96),
    ("remaining", 96),
    ("todo", 96),
    ("to do", 96),
    ("blocked", 96),
    ("error", 94),
    ("fix", 94),
    ("user message", 90),
    ("request", 90),
    ("intent", 90),
    ("goal", 90),
    ("task", 88),
    ("constraint", 88),
    ("preference", 88),
    ("rule", 88),
    ("decision", 70),
    ("file", 60),
    ("code", 60),
    ("command", 55),
    ("progress", 50),
    ("done", 50),
    ("completed", 50),
    ("test", 50),
    ("problem solving", 30),
    ("concept", 25),
    ("background", 25),
    ("analysis", 15),
)
#: Priority of a section whose title names none of the keywords.
DEFAULT_PRIORITY = 40
#: Priority of the text before the first heading (Claude Code's "This session is being
#: continued …" line, a title).
PREAMBLE_PRIORITY = 10

_MD_HEADING = re.compile(r"^(#{1,6})[ \t]+\S")
_NUMBERED = re.compile(r"^\d{1,2}\.[ \t]+[^\n]{1,80}:[ \t]*$")
_LABEL = re.compile(r"^[A-Z][\w /&()'-]{0,39}:[ \t]*$")


#: Paragraphs an imported summary's harness wraps it in to instruct the agent itself (Claude
#: Code: "Please continue the conversation from where we left off without asking the user any
#: further questions …", and its note on the messages it kept after the summary): neither a
#: user request nor a fact of the session, and wrong once the messages after it are ours.
WRAPPER_PARAGRAPHS: tuple[re.Pattern[str], ...] = (
    re.compile(
        r"^[ \t]*(?:please )?continue the conversation from where (?:we|it|you) left off "
        r"without asking the user any further questions\b[^\n]*(?:\n(?![ \t]*\n)[^\n]*)*",
        re.IGNORECASE | re.MULTILINE,
    ),
    re.compile(
        r"^[ \t]*The messages after this summary are the most recent messages from before "
        r"compaction, kept verbatim\b[^\n]*(?:\n(?![ \t]*\n)[^\n]*)*",
        re.MULTILINE,
    ),
)


def without_wrapper(text: str) -> str:
    """``text`` (an imported summary) without the paragraphs of :data:`WRAPPER_PARAGRAPHS`,
    blank lines around them collapsed; the rest verbatim."""
    for pattern in WRAPPER_PARAGRAPHS:
        text = pattern.sub("", text)
    return re.sub(r"\n{3,}", "\n\n", text).strip()


@dataclass(frozen=True, slots=True)
class CarriedSection:
    """One section of a carried summary.

    Attributes:
        title: its heading line without ``#`` marks and surrounding spaces (``""`` for the
            preamble).
        text: its exact text, heading line included; the sections' texts joined give the
            summary back.
        priority: see :func:`section_priority`.
    """

    title: str
    text: str
    priority: int


def section_priority(title: str) -> int:
    """The priority of a section titled ``title`` (see :data:`SECTION_PRIORITIES`)."""
    lowered = title.lower()
    for keyword, priority in SECTION_PRIORITIES:
        if keyword in lowered:
            return priority
    return DEFAULT_PRIORITY


def _markdown_level(lines: list[str]) -> int | None:
    """The heading level sections start at: the outermost level, or the next one when the
    outermost is a single title line that opens the text."""
    levels = [len(m.group(1)) for line in lines if (m := _MD_HEADING.match(line))]
    if not levels:
        return None
    top = min(levels)
    deeper = [level for level in levels if level > top]
    first = next(i for i, line in enumerate(lines) if line.strip())
    if levels.count(top) == 1 and deeper and _MD_HEADING.match(lines[first]):
        return min(deeper)
    return top


def _is_start(line: str, level: int | None) -> bool:
    heading = _MD_HEADING.match(line)
    if heading is not None:
        return level is not None and len(heading.group(1)) == level
    return bool(_NUMBERED.match(line) or _LABEL.match(line))


def _title(line: str) -> str:
    return line.lstrip("#").strip()


def split_sections(text: str) -> tuple[CarriedSection, ...]:
    """``text`` split into its sections (see the module docstring), in order; joined, their
    texts give ``text`` back. A text without headings is one preamble section."""
    if not text:
        return ()
    lines = text.splitlines(keepends=True)
    level = _markdown_level(lines)
    starts = [i for i, line in enumerate(lines) if _is_start(line.rstrip("\r\n"), level)]
    if not starts or starts[0] != 0:
        starts.insert(0, 0)
    out: list[CarriedSection] = []
    for n, start in enumerate(starts):
        end = starts[n + 1] if n + 1 < len(starts) else len(lines)
        body = "".join(lines[start:end])
        first = lines[start].rstrip("\r\n")
        if n == 0 and not _is_start(first, level):
            out.append(CarriedSection("", body, PREAMBLE_PRIORITY))
        else:
            title = _title(first)
            out.append(CarriedSection(title, body, section_priority(title)))
    return tuple(out)


__all__ = [
    "DEFAULT_PRIORITY",
    "PREAMBLE_PRIORITY",
    "SECTION_PRIORITIES",
    "WRAPPER_PARAGRAPHS",
    "CarriedSection",
    "section_priority",
    "split_sections",
    "without_wrapper",
]
