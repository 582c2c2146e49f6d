"""Summary-request sizes and model calls per compaction on corpus transcripts.

Each file is replayed as a live agent would run it (``prepare()`` before every assistant
message) with the hybrid summarizer; the summary model is a local OpenAI-compatible server
(``tests/providers/servers.py``) that answers every request with a short valid summary, so no
network is used. For every compaction the script records the summary calls made (purpose,
transcript mode, our estimate of the request input) and prints, per file: compactions, calls
per compaction, the input size of the summary requests (p50 / max, tokens and characters),
the transcript modes used and how many compactions needed chunking or fell back.

Usage::

    .venv/bin/python benchmarks/summary_sizes.py [--window 32000] [--summary-window 32000]
        [files relative to ../shared/corpus …]
"""

from __future__ import annotations

import argparse
import statistics
import sys
import time
from collections import Counter
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "tests" / "providers"))

from _common import CORPUS, require_corpus  # noqa: E402
from servers import Received, ScriptedServer, Step, chat_reply, chat_stream  # noqa: E402

from ctxengine.engine import Session  # noqa: E402
from ctxengine.importers import read_transcript  # noqa: E402
from ctxengine.model import CompactionRecord, Message  # noqa: E402
from ctxengine.providers import OpenAIProvider  # noqa: E402
from ctxengine.summarizers import HybridSummarizer, LLMSummarizer  # noqa: E402
from ctxengine.summarizers.calls import SummaryCall  # noqa: E402

DEFAULT_FILES = (
    "claude-code/spotter-tool-heavy.jsonl",
    "claude-code/spotter-long-dov-subagent-a2898e3.jsonl",
    "swe-agent/swe-agent-marshmallow-1867-function-calling.traj",
    "codex/codex-cpolar-connect-2025-09-16-a.jsonl",
    "openai-messages/mini-swe-agent-deepseek-chat-django-13265.traj.json",
    "pi/pi-mono-large-session.jsonl",
    "codex/codex-openprintkit-2025-10-31-long.jsonl",
    "claude-code/spotter-long-a0y-main.jsonl",
)
SUMMARY = """## Goal
Continue the task described in the first user request.
## Constraints and preferences
- Follow the user's stated rules.
## Progress
### Done
- Earlier steps completed as recorded.
### In progress
- The current step.
### Blocked
(none)
## Key decisions
(none)
## Files and code
- See the ledgers below.
## Errors and fixes
(none)
## User requests
- The first request (in progress)
## Next step
Carry on with the current step."""


class SummaryServer(ScriptedServer):
    """Answers every request with :data:`SUMMARY` (streamed when asked)."""

    def next_step(self, req: Received) -> Step | None:
        with self._lock:
            self.received.append(req)
        body = req.body if isinstance(req.body, dict) else {}
        if body.get("stream"):
            pieces = [SUMMARY[i : i + 200] for i in range(0, len(SUMMARY), 200)]
            return Step(events=chat_stream(pieces, prompt_tokens=1))
        return Step(body=chat_reply(SUMMARY))


@dataclass
class FileResult:
    name: str
    entries: int
    seconds: float = 0.0
    compactions: int = 0
    per_compaction: list[list[SummaryCall]] = field(default_factory=list)
    fallbacks: int = 0
    summarizers: Counter[str] = field(default_factory=Counter)


def replay(path: Path, url: str, window: int, summary_window: int) -> FileResult:
    imported = read_transcript(path)
    provider = OpenAIProvider("gpt-4o-mini", base_url=url)
    llm = LLMSummarizer(
        provider, max_output_tokens=min(8_000, summary_window // 4), window=summary_window
    )
    session = Session(window, summarizer=HybridSummarizer(llm))
    out = FileResult(path.relative_to(CORPUS).as_posix(), len(imported.entries))
    started = time.perf_counter()
    for entry in imported.entries:
        body = entry.body
        if not isinstance(body, Message):
            continue
        if body.role == "assistant":
            before_calls = len(llm.calls)
            before = len(session.entries)
            session.prepare()
            for new in session.entries[before:]:
                if isinstance(new.body, CompactionRecord):
                    out.compactions += 1
                    out.summarizers[new.body.summarizer] += 1
                    out.per_compaction.append(llm.calls[before_calls:])
        body = Message(body.role, body.parts, None, body.model, body.stop_reason, body.meta)
        session.append(body)
    out.fallbacks = sum(1 for e in session.events if e.step == "fallback")
    out.seconds = time.perf_counter() - started
    return out


def _p50(values: list[int]) -> int:
    return int(statistics.median(values)) if values else 0


def report(results: list[FileResult], window: int, summary_window: int) -> None:
    print(
        f"agent window {window:,} tokens; summary model window {summary_window:,} tokens; "
        "hybrid summarizer against a local scripted server\n"
    )
    head = (
        f"{'file':58} {'entries':>7} {'compact':>7} {'calls/c':>7} {'max':>3} "
        f"{'in tok p50':>10} {'in tok max':>10} {'chars max':>10} {'chunked':>7}  modes"
    )
    print(head)
    print("-" * len(head))
    totals: list[int] = []
    for r in results:
        calls = [c for group in r.per_compaction for c in group]
        per = [len(g) for g in r.per_compaction]
        tokens = [c.input_tokens for c in calls]
        chars = [c.input_chars for c in calls]
        chunked = sum(1 for g in r.per_compaction if any(c.purpose == "chunk" for c in g))
        modes = Counter(c.mode for c in calls)
        totals += tokens
        print(
            f"{r.name[:58]:58} {r.entries:>7,} {r.compactions:>7} "
            f"{(statistics.mean(per) if per else 0):>7.2f} {max(per, default=0):>3} "
            f"{_p50(tokens):>10,} {max(tokens, default=0):>10,} {max(chars, default=0):>10,} "
            f"{chunked:>7}  {dict(modes)}"
        )
        if r.fallbacks or set(r.summarizers) - {"hybrid"}:
            print(f"{'':58} summarizers {dict(r.summarizers)}; breaker fallbacks {r.fallbacks}")
    print(
        f"\nall summary requests: {len(totals)}; input p50 {_p50(totals):,} tokens, "
        f"max {max(totals, default=0):,} tokens (limit {summary_window:,} minus output)"
    )


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("files", nargs="*", help="corpus files (relative to ../shared/corpus)")
    parser.add_argument("--window", type=int, default=32_000)
    parser.add_argument("--summary-window", type=int, default=32_000)
    args = parser.parse_args(argv)
    require_corpus()
    results: list[Any] = []
    with SummaryServer() as server:
        url = server.url + "/v1"
        for name in args.files or DEFAULT_FILES:
            path = CORPUS / name
            if not path.is_file():
                print(f"skipped (missing): {name}", file=sys.stderr)
                continue
            results.append(replay(path, url, args.window, args.summary_window))
    report(results, args.window, args.summary_window)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
