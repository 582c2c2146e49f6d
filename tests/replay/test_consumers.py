"""Top token consumers: by tool, and by file from a path argument or a shell read."""

from __future__ import annotations

from ctxengine.model import Entry, ToolCallPart, assistant, tool_result
from ctxengine.replay.consumers import Consumer, token_consumers
from hand_estimator import HandEstimator


def test_a_file_read_through_the_shell_counts_for_that_file() -> None:
    hand = HandEstimator()
    messages = [
        assistant("", ToolCallPart("a", "Read", '{"file_path": "src/a.py"}')),
        tool_result("a", "x" * 400),
        assistant(
            "", ToolCallPart("b", "shell", '{"command": ["bash", "-lc", "sed -n 1,80p src/b.py"]}')
        ),
        tool_result("b", "y" * 800),
        assistant(
            "", ToolCallPart("c", "shell", '{"command": ["bash", "-lc", "cat src/a.py src/b.py"]}')
        ),
        tool_result("c", "z" * 1200),
        assistant("", ToolCallPart("d", "shell", '{"command": ["bash", "-lc", "ls"]}')),
        tool_result("d", "a.py b.py"),
    ]
    entries = [Entry(f"e{i}", "s", i, m) for i, m in enumerate(messages)]
    tools, files = token_consumers(entries, hand)
    sizes = [hand.part(m.parts[0]) for m in messages[1::2]]
    assert tools == [
        Consumer("shell", 3, sizes[1] + sizes[2] + sizes[3]),
        Consumer("Read", 1, sizes[0]),
    ]
    # The cat of two files names no one file: it counts for the tool only.
    assert files == [Consumer("src/b.py", 1, sizes[1]), Consumer("src/a.py", 1, sizes[0])]
