"""The check every importer's samples pass: ``compact`` at 8,000 and 32,000 tokens (the
engine's compaction handed off as the CLI does) gives requests that validate for OpenAI and
for Anthropic."""

from __future__ import annotations

from collections import Counter

from ctxengine.cli.handoff import RequestOptions, hand_off
from ctxengine.engine import Session
from ctxengine.errors import NothingToCompact, SummaryRejected
from ctxengine.importers.base import ImportedSession
from ctxengine.model import CompactionRecord, Message
from ctxengine.projection.validate import validate

WINDOWS = (8_000, 32_000)


def problems_after_compact(session: ImportedSession) -> list[tuple[int, str, list[str]]]:
    """``(window, provider, problems)`` for every request that does not validate (``[]``
    when all do)."""
    found: list[tuple[int, str, list[str]]] = []
    for window in WINDOWS:
        engine = Session(window, session_id=session.session_id, entries=session.entries)
        try:
            ctx = engine.compact().context
        except NothingToCompact:
            ctx = engine.project()
        except SummaryRejected as exc:  # as ``compact`` does: the context stays as it was
            assert exc.reason == "inflated"
            ctx = engine.project()
        for provider in ("openai", "anthropic"):
            sent = hand_off(
                ctx,
                engine.estimator,
                engine.budget.reserve,
                RequestOptions(provider, next_user="continue"),
            )
            issues = validate(sent.body, provider)
            if issues:
                found.append((window, provider, issues))
    return found


def counts(session: ImportedSession) -> tuple[dict[str, int], int, int, int]:
    """Messages by role, tool calls, tool results and compaction records of ``session``."""
    msgs = [e.body for e in session.entries if isinstance(e.body, Message)]
    return (
        dict(sorted(Counter(m.role for m in msgs).items())),
        sum(len(m.tool_calls) for m in msgs),
        sum(len(m.tool_results) for m in msgs),
        sum(isinstance(e.body, CompactionRecord) for e in session.entries),
    )
