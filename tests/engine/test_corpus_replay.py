"""Replay every corpus transcript under a window small enough to force compactions.

For each file whose format imports, the window is a quarter of the file's estimated size
(never below :data:`MIN_WINDOW`), so a big file crosses the trigger several times. Checked:

- every request prepared during the replay validates for OpenAI and Anthropic;
- the file is compacted at least twice (or, for a few tiny files, the number their size
  and number of model calls allow: see :data:`FEWER_COMPACTIONS`);
- the final projected request, rendered for each provider, still holds the first 500
  characters of the first user request (verbatim, or as the state quotes a request that
  holds a line starting with ``#``: its later lines indented) and every path the source
  modified, both read from the raw file by :mod:`corpus_facts` (not by our importers).
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from corpus_facts import READERS, raw_facts

from corpus import replayable_names, require_corpus
from ctxengine.engine import Session
from ctxengine.importers import read_transcript
from ctxengine.model import CompactionRecord
from ctxengine.replay import RENDERERS, ReplayResult, replay
from ctxengine.summarizers.sections import needs_quoting, quoted_block
from ctxengine.tokens.estimate import HeuristicEstimator

#: Smallest window replayed, in tokens: its continuation-state budget (15 %, 600 tokens)
#: still holds a 500-character request and a list of paths.
MIN_WINDOW = 4_000
#: Windows chosen by hand (tokens) for files too small for the quarter-of-the-file rule.
WINDOWS: dict[str, int] = {
    "spotter-tool-heavy.jsonl": 1_000,
    # its task, the newest user message of the first call, is 2,678 tokens and is never
    # truncated: at 3,000 (trigger 2,400) the first call is refused (ContextFloorError)
    "mini-swe-agent-deepseek-reasoner-pvlib-1606-aborted.traj.json": 3_500,
    "swe-agent-test-repo-i1-gpt4.traj": 3_000,
    # at 1,050 (1,000 before blank runs inside lines had a cost) the continuation state's
    # required items exceed the summary budget (15 % of the window) and the compaction at
    # the 4th call fails
    "openhands-traj-vue-todo-gui.json": 1_100,
}
#: Files that cannot be compacted twice: the exact number of compactions, and why. A replay
#: prepares one request per model call and runs the ladder at most once per request.
FEWER_COMPACTIONS: dict[str, tuple[int, str]] = {
    "openhands-traj-vue-todo-gui.json": (
        1,
        "5 model calls at a 1,100-token window (trigger 880): the compaction at the 4th call "
        "leaves 636 tokens and the 5th call, 726, stays under the trigger",
    ),
    "spotter-long-a0y-agent-acompact.jsonl": (
        1,
        "one model call (14 user messages, then the only reply)",
    ),
    "spotter-long-dov-agent-acompact.jsonl": (
        0,
        "one model call of 1,878 tokens, under the 3,200-token trigger at 4,000 (its task is "
        "kept verbatim up to 60 % of the 1,440-token target, 864 tokens)",
    ),
    "spotter-short.jsonl": (0, "278 tokens in all"),
    "openhands-traj-basic.json": (
        0,
        "2 model calls, 2,089 tokens in all: every request stays under the trigger (the "
        "largest, 1,899 tokens at 4,000; a smaller window truncates its 969-token call)",
    ),
    "aider-dev-chat-history-first-sessions.aider.chat.history.md": (
        0,
        "2 model calls, 1,056 tokens in all: under the 3,200-token trigger at 4,000",
    ),
    "spotter-tool-heavy.jsonl": (
        0,
        "2,597 tokens and 4 calls at a 1,000-token window (trigger 800): the largest request, "
        "771 tokens (o200k_base: 733), stays under the trigger",
    ),
    "swe-agent-function-calling-simple.traj": (
        0,
        "1,935 tokens: every request is under the 3,200-token trigger at 4,000 (the largest, "
        "1,688 tokens, with its 964-token task kept verbatim up to 864 tokens)",
    ),
}


def _window(name: str, entries: tuple[object, ...], estimator: HeuristicEstimator) -> int:
    if name in WINDOWS:
        return WINDOWS[name]
    total = sum(
        estimator.message(e.message)  # type: ignore[attr-defined]
        for e in entries
        if e.message is not None  # type: ignore[attr-defined]
    )
    return max(MIN_WINDOW, total // 4)


def _in_json(needle: str, body: dict[str, object]) -> bool:
    """``needle`` occurs in the JSON text of ``body`` (both encoded the same way)."""
    text = json.dumps(body, ensure_ascii=False)
    return json.dumps(needle, ensure_ascii=False)[1:-1] in text


@pytest.mark.parametrize("name", replayable_names())
def test_every_corpus_transcript_replays_into_valid_requests_that_keep_the_task(
    name: str,
) -> None:
    path = require_corpus(name)
    assert path.parent.name in READERS
    imported = read_transcript(path)
    window = _window(path.name, imported.entries, HeuristicEstimator())
    result = replay(imported.entries, window=window)
    _check(name, path, result)


def _check(name: str, path: Path, result: ReplayResult) -> None:
    assert result.invalid == 0, [s.problems for s in result.steps if any(s.problems.values())]
    assert result.max_tokens <= result.window, (name, result.window, result.max_tokens)
    if path.name in FEWER_COMPACTIONS:
        expected, _why = FEWER_COMPACTIONS[path.name]
        assert result.compactions == expected, (name, result.window, result.compactions)
    else:
        assert result.compactions >= 2, (name, result.window, result.compactions)
    assert result.session is not None
    final = result.session.project()
    first, modified = raw_facts(path)
    assert first.strip()
    for provider, render in RENDERERS.items():
        body = render(final)
        # verbatim in the kept messages or in the state, or quoted (its later lines indented)
        # in the state when a line of the request starts with "#"
        head = first[:500]
        quoted = quoted_block(head) if needs_quoting(first) else head
        assert _in_json(head, body) or _in_json(quoted, body), (provider, head)
        missing = [p for p in modified if not _in_json(p, body)]
        assert missing == [], (provider, missing)


def test_a_swe_agent_demonstration_is_never_taken_for_the_goal() -> None:
    path = require_corpus("swe-agent", "swe-agent-pydicom-1458-gpt4.traj")
    imported = read_transcript(path)
    demo = imported.entries[1].message
    assert demo is not None and demo.meta["synthetic"] == "is_demo"
    assert demo.text.startswith("Here is a demonstration of how to correctly accomplish")
    outcome = Session(32_000, entries=imported.entries).compact()
    record = outcome.entry.body
    assert isinstance(record, CompactionRecord)
    first, _ = raw_facts(path)
    assert first.startswith("We're currently solving the following issue within our repository.")
    assert record.ledgers.goal == first
    assert not needs_quoting(first)  # no line of it starts with "#": written verbatim
    assert record.summary.startswith("## Goal\n" + first[:500])
