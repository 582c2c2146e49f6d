"""A short budget leaves every long list its newest items (balancing pass of shrink)."""

from ctxengine.summarizers.sections import BALANCED_ITEMS, Section, render, shrink


def test_a_long_done_list_no_longer_empties_commands_and_errors() -> None:
    commands = tuple(f"pytest -k case_{i}" for i in range(50))
    errors = tuple(f"E{i}: assertion failed" for i in range(30))
    done = tuple(f"edited src/module_{i}.py" for i in range(200))
    sections = (
        Section("goal", "Goal", "text", ("Fix the flaky tests.",)),
        Section("done", "Done", "list", done, "steps"),
        Section("errors", "Errors", "list", errors, "errors"),
        Section("commands", "Commands run", "list", commands, "commands"),
    )
    budget = len(render(sections)) // 4  # characters: about a quarter of the full text

    def fits(candidate: tuple[Section, ...]) -> bool:
        return len(render(candidate)) <= budget

    out, notes = shrink(sections, fits)
    by_key = {s.key: s for s in out}
    assert fits(out)
    assert by_key["commands"].items == commands[-BALANCED_ITEMS:]
    assert by_key["errors"].items == errors[-BALANCED_ITEMS:]
    assert by_key["done"].items == done[-2 * BALANCED_ITEMS :]
    assert notes == [
        "commands: 38 commands not shown",
        "errors: 18 errors not shown",
        "done: 176 steps not shown",
    ]
