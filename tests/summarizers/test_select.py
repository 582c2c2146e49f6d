"""Items of every type compete for one budget by value: the rendered text fits, what is left
out is the least valuable, a closing note says what and where only when the budget is spent,
the focus text ranks first, texts are shortened to the room left, and required items that do
not fit give the same result whatever the budget. Sizes by :class:`QuarterEstimator` (one
token per started 4 characters)."""

from __future__ import annotations

from summarizer_helpers import QuarterEstimator

from ctxengine.model import ErrorFact, Ledgers
from ctxengine.summarizers.items import (
    FOCUS_BONUS,
    FOCUS_CORE_VALUE,
    RECENCY_WEIGHT,
    VALUES,
    Item,
    counts_only,
    error_items,
    with_focus,
)
from ctxengine.summarizers.sections import StateLayout, notes
from ctxengine.summarizers.select import Selection, Shown, select

EST = QuarterEstimator()
LAYOUT = StateLayout(entries=(3, 40))
COMMANDS = tuple(f"pytest tests/test_{n}.py" for n in ("lexer", "parser", "ast", "eval"))
FULL = (
    "## Goal\nFix the parser.\n\n"
    "## Files modified\n- src/parser.py\n\n"
    "## Files read\n- src/lexer.py\n\n"
    "## Errors\n- fixed: E1: old failure\n- open: E2: new failure\n\n"
    "## Commands run\n" + "\n".join(f"- {c}" for c in COMMANDS)
)


def items() -> list[Item]:
    return [
        Item("goal", "goal", "Fix the parser.", recency=1.0, required=True, cut_floor=500),
        Item("files_modified", "file.modified", "src/parser.py", required=True),
        Item("files_read", "file.read", "src/lexer.py"),
        Item("errors", "error.fixed", "fixed: E1: old failure", order=0, recency=0.0),
        Item("errors", "error.open", "open: E2: new failure", order=1, recency=1.0),
        *[Item("commands", "command", c, order=k, recency=k / 3) for k, c in enumerate(COMMANDS)],
    ]


def text(chosen: Selection) -> str:
    return LAYOUT.render(chosen)


def test_the_score_table() -> None:
    open_error = Item("errors", "error.open", "x", recency=0.5)
    assert open_error.score == VALUES["error.open"] + RECENCY_WEIGHT * 0.5 == 80
    # a matching item of the core outranks everything; one below the core ranks just below
    # the core, above every item that does not match
    assert Item("errors", "error.open", "x", focus=True).score == 75 + FOCUS_BONUS
    assert Item("commands", "command", "x", focus=True).score == FOCUS_CORE_VALUE - 1 + 0.15
    assert (
        VALUES["identifier"]
        < Item("files_read", "file.read", "x", recency=1.0, focus=True).score
        < VALUES["identifier.stated"]
    )
    assert Item("earlier_summary", "carried", "x", value=62.0).score == 62
    ranked = sorted(VALUES, key=lambda k: -VALUES[k])
    assert ranked.index("rule") < ranked.index("error.open") < ranked.index("error.fixed")
    assert ranked.index("file.modified") < ranked.index("file.read")
    assert ranked.index("user_message") < ranked.index("user_message.older")


def test_with_room_everything_is_shown_and_nothing_is_said_left_out() -> None:
    chosen = select(items(), 1_000, EST, LAYOUT)
    assert text(chosen) == FULL
    assert EST.text(FULL) == 70
    assert chosen.omitted == () and notes(chosen) == ()
    # the budget of exactly the text's size shows it all too
    assert text(select(items(), 70, EST, LAYOUT)) == FULL


def test_the_oldest_commands_go_first_and_the_closing_note_says_where_they_are() -> None:
    chosen = select(items(), 69, EST, LAYOUT)
    assert text(chosen) == (
        "## Goal\nFix the parser.\n\n"
        "## Files modified\n- src/parser.py\n\n"
        "## Files read\n- src/lexer.py\n\n"
        "## Errors\n- fixed: E1: old failure\n- open: E2: new failure\n\n"
        "## Commands run\n- pytest tests/test_eval.py\n\n"
        "## Not shown (no room left)\n- 3 more commands run: entries 3–40 of the history"
    )
    assert EST.text(text(chosen)) == 69
    assert notes(chosen) == ("commands: 3 not shown",)
    # one token less and the newest command does not fit either: 56 tokens, and the next
    # item (the heading, the line, "4" → "3 more" in the note) would need 13 more
    chosen = select(items(), 68, EST, LAYOUT)
    assert text(chosen).endswith(
        "## Not shown (no room left)\n- 4 commands run: entries 3–40 of the history"
    )
    assert EST.text(text(chosen)) == 56


def test_an_open_error_stays_when_a_fixed_one_and_a_read_file_go() -> None:
    chosen = select(items(), 49, EST, LAYOUT)
    assert text(chosen) == (
        "## Goal\nFix the parser.\n\n"
        "## Files modified\n- src/parser.py\n\n"
        "## Errors\n- open: E2: new failure\n\n"
        "## Not shown (no room left)\n"
        "- 1 file read, 1 more error, 4 commands run: entries 3–40 of the history"
    )
    assert EST.text(text(chosen)) == 49


def test_items_matching_the_focus_rank_first_after_the_open_errors() -> None:
    focused = with_focus(items(), "AST")
    # the goal and the open error rank with the matching items: focus never displaces them
    assert [i.text for i in focused if i.focus] == [
        "Fix the parser.",
        "open: E2: new failure",
        "pytest tests/test_ast.py",
    ]
    chosen = select(focused, 62, EST, LAYOUT)
    # the matching command before the fixed error and the read file; the open error (the
    # core) stays
    assert text(chosen) == (
        "## Goal\nFix the parser.\n\n"
        "## Files modified\n- src/parser.py\n\n"
        "## Errors\n- open: E2: new failure\n\n"
        "## Commands run\n- pytest tests/test_ast.py\n\n"
        "## Not shown (no room left)\n"
        "- 1 file read, 1 more error, 3 more commands run: entries 3–40 of the history"
    )
    assert EST.text(text(chosen)) == 61
    # without the focus, the fixed error and the read file come before any command
    assert text(select(items(), 62, EST, LAYOUT)) == (
        "## Goal\nFix the parser.\n\n"
        "## Files modified\n- src/parser.py\n\n"
        "## Files read\n- src/lexer.py\n\n"
        "## Errors\n- fixed: E1: old failure\n- open: E2: new failure\n\n"
        "## Not shown (no room left)\n- 4 commands run: entries 3–40 of the history"
    )


SLOW = "since rebuilding it takes a minute"


def test_a_matching_item_never_displaces_the_current_work_or_an_open_error() -> None:
    core = [
        Item("goal", "goal", "Fix the parser.", recency=1.0, required=True, cut_floor=500),
        Item("decisions", "decision", f"agent: keep the AST cache between runs, {SLOW}"),
        Item("errors", "error.open", "open: E2: new failure", recency=1.0),
        Item("current_work", "current_work", "Rewriting the lexer.", cut_floor=0),
    ]
    focused = with_focus(core, "AST")
    assert all(i.focus for i in focused)
    # the decision matches (70 + the bonus) but the open error (85) and the current work
    # (80) get the bonus too: they stay, the decision goes
    chosen = select(focused, 45, EST, LAYOUT)
    assert text(chosen) == (
        "## Goal\nFix the parser.\n\n"
        "## Errors\n- open: E2: new failure\n\n"
        "## Current work\nRewriting the lexer.\n\n"
        "## Not shown (no room left)\n- 1 decision: entries 3–40 of the history"
    )
    assert EST.text(text(chosen)) == 42


def test_a_text_is_shortened_to_the_room_left() -> None:
    message = "word " * 40  # 200 characters
    chosen = select(
        [
            Item("goal", "goal", "Fix the parser.", required=True, cut_floor=500),
            Item("user_messages", "user_message", message.strip(), cut_floor=0),
        ],
        60,
        EST,
        LAYOUT,
    )
    assert text(chosen) == (
        "## Goal\nFix the parser.\n\n## User messages (newest first)\n- "
        + "word " * 28
        + "word [… 55 more characters not shown]"
    )
    # 236 characters: 59 tokens (the cut is sized on the line's estimated cost)
    assert EST.text(text(chosen)) == 59


def test_required_items_over_the_budget_sit_at_their_floors_whatever_the_budget() -> None:
    goal = "".join(f"{i:04d} " for i in range(200))  # 1,000 characters
    made = [
        Item("goal", "goal", goal, required=True, cut_floor=500),
        Item("files_modified", "file.modified", "src/parser.py", required=True),
        Item("commands", "command", "make"),
    ]
    first, second = select(made, 100, EST, LAYOUT), select(made, 150, EST, LAYOUT)
    assert first == second
    assert text(first) == (
        f"## Goal\n{goal[:499]}\n[… 501 more characters not shown]\n\n"
        "## Files modified\n- src/parser.py\n\n"
        "## Not shown (no room left)\n- 1 command run: entries 3–40 of the history"
    )
    assert EST.text(text(first)) == 163
    # with room for more of the goal, it is lengthened by measure
    wider = select(made, 200, EST, LAYOUT)
    assert EST.text(text(wider)) == 200
    assert text(wider).count("[… ") == 1


def test_a_line_that_only_counts_failures_is_worth_less_than_one_that_says_what_failed() -> None:
    failing = (
        ErrorFact("1 failed, 7 passed in 0.93s", "fixed", 3, "pytest -q"),
        ErrorFact("E   KeyError: 'refresh_token'", "fixed", 3, "pytest -q"),
        ErrorFact("Found 2 errors.", "open", 5, "ruff check"),
        ErrorFact("src/a.py:3:1: F401 unused import", "open", 5, "ruff check"),
    )
    assert [(i.kind, i.text) for i in error_items(Ledgers(error_facts=failing))] == [
        ("error.fixed.count", "fixed: 1 failed, 7 passed in 0.93s — `pytest -q`"),
        ("error.fixed", "fixed: E   KeyError: 'refresh_token' — `pytest -q`"),
        ("error.open.count", "open: Found 2 errors. — `ruff check`"),
        ("error.open", "open: src/a.py:3:1: F401 unused import — `ruff check`"),
    ]
    assert VALUES["error.open.count"] < VALUES["error.fixed"] < VALUES["error.open"]
    assert VALUES["error.fixed.count"] < VALUES["file.read"]
    assert [counts_only(t) for t in ("Tests:  1 failed, 4 passed", "make: *** [all] Error 2")] == [
        True,
        False,
    ]


def test_a_text_group_shows_its_parts_in_order_and_notes_what_it_left_out() -> None:
    head = Item("current_work", "current_work", "First part.", order=0)
    rest = Item("current_work", "current_work.more", "Second part, longer.", order=1)
    layout = StateLayout()
    both = Selection((Shown(head, head.text), Shown(rest, rest.text)))
    assert layout.render(both) == "## Current work\nFirst part.\nSecond part, longer."
    first = Selection((Shown(head, head.text),), (rest,))
    assert layout.render(first) == (
        "## Current work\nFirst part.\n[… 20 more characters not shown]"
    )
    # a later part is never shown without the earlier one
    assert layout.render(Selection((Shown(rest, rest.text),), (head,))) == ""
