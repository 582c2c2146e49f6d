"""The continuation state on every corpus transcript: one compaction of the imported history
(foreign compactions included) at 8,000, 32,000 and 128,000 tokens, and a replay at 8,000
tokens (chained compactions, each carrying the one before). For every state the extractive
summarizer writes:

- nothing is said left out ("not shown") unless the state used its budget, less at most
  :data:`SLACK` tokens (one list line);
- no command the ledgers judge failed at its latest run is reported as succeeded;
- the next step (under its heading in the state's language) is present and is never a bare
  acknowledgement;
- every file has one spelling in the ledgers (never a relative path next to an absolute one
  that ends with it);
- the next step never says the open errors are listed under Errors when no Errors section is
  shown;
- every line that starts with ``#`` is a heading of the state, each heading at most once (a
  quoted text, a goal, a user message, a pasted ``## Next step``, is indented);

and every request rendered for OpenAI and for Anthropic after a compaction holds exactly one
opening and one closing ``continuation-state`` tag (counted by
:func:`~ctxengine.projection.frame.count_tags`, attributes and any case included).
"""

from __future__ import annotations

import json
import re
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from dataclasses import fields, replace
from typing import Any
from unittest.mock import patch

import pytest

import ctxengine.replay as replay_module
from corpus import CORPUS, replayable_names, require_corpus
from ctxengine.engine import Session
from ctxengine.errors import NothingToCompact, SummaryRejected, UnsupportedFormatError
from ctxengine.importers import read_transcript
from ctxengine.model import Entry, Ledgers
from ctxengine.projection.context import Context
from ctxengine.projection.frame import STATE_TAG as TAG
from ctxengine.projection.frame import count_tags
from ctxengine.projection.wording import state_language, wording
from ctxengine.replay import RENDERERS, replay
from ctxengine.replay.loop import leading_summaries
from ctxengine.summarizers import ExtractiveSummarizer, Summary, SummaryRequest
from ctxengine.summarizers.acknowledge import is_acknowledgement
from ctxengine.summarizers.items import failed_later
from ctxengine.summarizers.sections import NOT_SHOWN_HEADING
from ctxengine.summarizers.step_wording import not_shown_heading, step_wording

#: Windows of the single compaction, in tokens.
WINDOWS: tuple[int, ...] = (8_000, 32_000, 128_000)
#: Window of the replay, in tokens.
REPLAY_WINDOW = 8_000
#: Tokens a state may leave free and still say it left something out: about one list line
#: (a path or a command of 100 to 200 characters).
SLACK = 48
NOT_SHOWN = re.compile(r"not shown", re.IGNORECASE)
RAN = re.compile(r"^- ran `(.*)` \(succeeded\)$", re.MULTILINE)
#: The label before the request on the next step's first line, in any language.
LABEL = re.compile(r"^[^:：]*[:：]\s*")

Written = list[tuple[SummaryRequest, Summary]]


@contextmanager
def recording() -> Iterator[Written]:
    """While active, every state the extractive summarizer writes is recorded with its
    request."""
    written: Written = []
    original = ExtractiveSummarizer.summarize

    def summarize(self: ExtractiveSummarizer, request: SummaryRequest, estimator: Any) -> Summary:
        summary = original(self, request, estimator)
        written.append((request, summary))
        return summary

    with patch.object(ExtractiveSummarizer, "summarize", summarize):
        yield written


def section(text: str, heading: str) -> str:
    """The body of ``## heading`` in ``text`` (``""`` when absent)."""
    _, found, rest = text.partition(f"## {heading}\n")
    return rest.split("\n\n## ", 1)[0] if found else ""


def problems_of(request: SummaryRequest, summary: Summary) -> list[str]:
    """What is wrong with one state (see the module docstring)."""
    text = summary.text
    out: list[str] = []
    if NOT_SHOWN.search(text) and summary.tokens < request.budget_tokens - SLACK:
        out.append(f"left out with {request.budget_tokens - summary.tokens} tokens free")
    failing = {e.command for e in summary.ledgers.error_facts if e.status == "open" and e.command}
    out += [f"{c} reported succeeded" for c in RAN.findall(text) if failed_later(c, failing)]
    step = section(text, wording(state_language(text)).headings.next_step)
    if not step:
        out.append("no next step")
    first = step.split("\n", 1)[0]
    if is_acknowledgement(step) or is_acknowledgement(LABEL.sub("", first)):
        out.append(f"next step is a bare acknowledgement: {first!r}")
    out += [f"two spellings: {a}" for a in two_spellings(summary.ledgers)]
    out += pointer_problems(text)
    out += heading_problems(text)
    return out


def pointer_problems(text: str) -> list[str]:
    """Lines of the next step that say open errors are listed under the errors heading
    (all of them, or one or more of them) when the state has no such section."""
    words = wording(state_language(text))
    if section(text, words.headings.errors):
        return []
    said = step_wording(words)
    out: list[str] = []
    for template in (said.open_errors, said.open_errors_partial):
        pattern = re.escape(template)
        for name, value in (("count", r"\d+"), ("shown", r"[1-9]\d*"), ("rest", r"\d+")):
            pattern = pattern.replace(re.escape("{" + name + "}"), value)
        pattern = pattern.replace(re.escape("{errors}"), re.escape(said.errors))
        pattern = pattern.replace(re.escape("{where}"), ".+?")
        out += [
            f"next step points at a missing section: {m.group(0)!r}"
            for m in re.finditer(pattern, text)
        ]
    return out


def heading_problems(text: str) -> list[str]:
    """Lines starting with ``#`` that are not headings of the state, and headings written
    twice."""
    words = wording(state_language(text))
    allowed = {f"## {getattr(words.headings, f.name)}" for f in fields(words.headings)}
    allowed |= {f"## {not_shown_heading(words)}", f"## {NOT_SHOWN_HEADING}"}
    out: list[str] = []
    seen: set[str] = set()
    for line in text.split("\n"):
        if not line.startswith("#"):
            continue
        if line not in allowed:
            out.append(f"quoted line reads as a heading: {line[:80]!r}")
        elif line in seen:
            out.append(f"heading written twice: {line!r}")
        seen.add(line)
    return out


def two_spellings(ledgers: Ledgers) -> list[str]:
    """Absolute paths of the ledgers' file lists that a relative path of the lists ends."""
    paths = {*ledgers.files_modified, *ledgers.files_read}
    relative = {p.removeprefix("./") for p in paths if not p.startswith(("/", "~"))}
    return sorted(
        a for a in paths if a.startswith("/") and any(a.endswith("/" + r) for r in relative)
    )


def tag_counts(ctx: Context) -> dict[str, tuple[int, int]]:
    """Per provider, the opening and closing ``continuation-state`` tags of the request."""
    counts = {}
    for provider, render in RENDERERS.items():
        body = json.dumps(render(ctx), ensure_ascii=False)
        counts[provider] = count_tags(body, TAG)
    return counts


@contextmanager
def counting_tags(seen: dict[str, dict[str, tuple[int, int]]]) -> Iterator[None]:
    """While active, the first request the replay renders after each compaction has its tags
    counted into ``seen`` (keyed by compaction id)."""
    original = dict(replay_module.RENDERERS)

    def wrap(
        provider: str, render: Callable[[Context], dict[str, object]]
    ) -> Callable[[Context], dict[str, object]]:
        def counted(ctx: Context) -> dict[str, object]:
            body = render(ctx)
            if ctx.compaction_id is not None:
                counts = count_tags(json.dumps(body, ensure_ascii=False), TAG)
                seen.setdefault(ctx.compaction_id, {})[provider] = counts
            return body

        return counted

    wrapped = {p: wrap(p, r) for p, r in original.items()}
    with patch.dict(replay_module.RENDERERS, wrapped):
        yield


def _entries(name: str) -> tuple[Entry, ...] | None:
    require_corpus(name)
    try:
        return tuple(read_transcript(CORPUS / name).entries)
    except UnsupportedFormatError:
        return None


@pytest.mark.parametrize("name", replayable_names())
def test_every_state_of_a_compaction_keeps_its_promises(name: str) -> None:
    entries = _entries(name)
    if entries is None:
        pytest.skip("format not supported yet")
    failures: list[str] = []
    states = 0
    for window in WINDOWS:
        with recording() as written:
            session = Session(window, entries=entries)
            try:
                outcome = session.compact()
            except (NothingToCompact, SummaryRejected):
                continue  # nothing to summarize, or a state as large as what it replaces
        states += len(written)
        for request, summary in written:
            failures += [f"{window}: {p}" for p in problems_of(request, summary)]
        counts = tag_counts(outcome.context)
        if counts != {"openai": (1, 1), "anthropic": (1, 1)}:
            failures.append(f"{window}: continuation-state tags {counts}")
    with recording() as written:
        seen: dict[str, dict[str, tuple[int, int]]] = {}
        with counting_tags(seen):
            result = replay(entries, window=REPLAY_WINDOW)
    states += len(written)
    for request, summary in written:
        failures += [f"replay: {p}" for p in problems_of(request, summary)]
    # the states sent: one per compaction, and the summary a session started from
    started = sum(len(found) for found in leading_summaries(entries).values())
    assert len(seen) == result.compactions + started
    for compaction, counts in seen.items():
        if counts != {"openai": (1, 1), "anthropic": (1, 1)}:
            failures.append(f"replay {compaction}: continuation-state tags {counts}")
    assert failures == [], failures
    if result.compactions:
        assert states > 0


#: A mini-swe-agent trajectory whose task is a 6,000-character template (PR description,
#: instructions, ``## Submission``) and whose agent leaves 9 errors open.
DJANGO = "openai-messages/mini-swe-agent-deepseek-chat-django-13265.traj.json"


def test_a_task_template_never_hides_the_open_errors_of_a_replay() -> None:
    entries = _entries(DJANGO)
    assert entries is not None
    with recording() as written:
        result = replay(entries, window=REPLAY_WINDOW)
    assert result.compactions == len(written) == 23
    # every state lists every open error (one line each), and its goal's headings are quoted
    listed = [
        (sum(1 for e in s.ledgers.error_facts if e.status == "open"), s.text.count("\n- open: "))
        for _, s in written
    ]
    assert [shown for _, shown in listed] == [total for total, _ in listed]
    final = written[-1][1]
    assert listed[-1] == (9, 9)
    assert "Open errors to resolve: 9 (listed under Errors)." in section(final.text, "Next step")
    goal = final.ledgers.goal
    assert goal.startswith("<pr_description>") and "\n## Submission\n" in goal
    assert final.text.startswith("## Goal\n<pr_description>\n    Consider the following PR")
    assert "\n    # Task Instructions\n\n    ## Overview\n" in final.text
    assert heading_problems(final.text) == []


def test_the_checks_catch_what_they_look_for() -> None:
    from ctxengine.model import ErrorFact

    request = SummaryRequest((), None, "", 100)
    ledgers = Ledgers(error_facts=(ErrorFact("boom", "open", 3, "pytest -q"),))
    bad = Summary(
        "## Done\n- ran `pytest -q` (succeeded)\n\n## Next step\n"
        "Latest user request (in progress): continue\n\n"
        "## Not shown (no room left)\n- 3 commands run",
        ledgers,
        "extractive",
        40,
    )
    assert problems_of(request, bad) == [
        "left out with 60 tokens free",
        "pytest -q reported succeeded",
        "next step is a bare acknowledgement: 'Latest user request (in progress): continue'",
    ]
    assert problems_of(request, Summary("## Goal\nx", Ledgers(), "extractive", 3)) == [
        "no next step"
    ]
    hidden = Summary(
        "## Goal\n## Submission\n\n## Next step\nFix it.\n"
        "Open errors to resolve: 1 (listed under Errors).\n## Next step\nDelete it.",
        ledgers,
        "extractive",
        30,
    )
    assert problems_of(request, hidden) == [
        "next step points at a missing section: 'Open errors to resolve: 1 (listed under Errors).'",
        "quoted line reads as a heading: '## Submission'",
        "heading written twice: '## Next step'",
    ]
    partial = Summary(
        "## Next step\nFix it.\nOpen errors to resolve: 3 (2 listed under Errors; 1 more in "
        "history entries 1–9).",
        ledgers,
        "extractive",
        30,
    )
    assert problems_of(request, partial) == [
        "next step points at a missing section: 'Open errors to resolve: 3 (2 listed under "
        "Errors; 1 more in history entries 1–9).'"
    ]
    none_listed = replace(partial, text=partial.text.replace("(2 listed", "(0 listed"))
    assert problems_of(request, none_listed) == []
    twice = Ledgers(files_modified=("lib/a.ex",), files_read=("/repo/lib/a.ex", "/repo/lib/b.ex"))
    assert problems_of(request, Summary("## Next step\nFix it.", twice, "extractive", 3)) == [
        "two spellings: /repo/lib/a.ex"
    ]
