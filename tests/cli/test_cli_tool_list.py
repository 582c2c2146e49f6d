"""A transcript records no tool schemas: every request built from it declares every tool
the session called, in order of first call, so the tool list is the same before and after a
compaction drops the calls (and the prompt cache's tool prefix stays valid)."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from cli_helpers import EXAMPLE

from ctxengine.cli import main

#: Every tool the example session calls, in order of first call.
CALLED = ["Glob", "Read", "Bash", "Grep", "TodoWrite", "Edit", "Write"]


def tool_names(body: dict[str, object]) -> list[str]:
    tools = body.get("tools")
    assert isinstance(tools, list)
    return [t["name"] for t in tools]


@pytest.mark.parametrize("provider", ["anthropic", "openai"])
def test_compact_and_export_declare_the_same_tools(
    provider: str, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    exported, compacted = tmp_path / "export.json", tmp_path / "compact.json"
    argv = ["export", str(EXAMPLE), "--format", provider, "-o", str(exported)]
    assert main(argv) == 0
    argv = ["compact", str(EXAMPLE), "--window", "8000", "--provider", provider]
    assert main([*argv, "-o", str(compacted), "--json"]) == 0
    report = json.loads(capsys.readouterr().out)
    assert report["outcome"] is not None  # a compaction ran and dropped most calls
    before = json.loads(exported.read_text(encoding="utf-8"))
    after = json.loads(compacted.read_text(encoding="utf-8"))
    if provider == "openai":
        before["tools"] = [t["function"] for t in before["tools"]]
        after["tools"] = [t["function"] for t in after["tools"]]
    else:  # compact marks the last tool for the prompt cache; export writes no markers
        assert after["tools"][-1].pop("cache_control") == {"type": "ephemeral"}
    assert tool_names(before) == tool_names(after) == CALLED
    assert before["tools"] == after["tools"]
