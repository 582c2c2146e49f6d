"""The sessions written by the real Claude Code 2.1.328 and Codex 0.169 project to what each
agent sent its model.

``../shared/corpus/live-agents/<agent>/model-requests.jsonl`` holds every request the agent
sent. For each request that a message of the session answers, the imported log up to that
message is projected (no truncation) and compared with the request's messages in the
canonical form of :mod:`live_requests`: same roles, same tool calls (id, name, arguments)
and results (id, text), same texts up to whitespace, attachments and base instructions
included.

What cannot match exactly, and why:

- A compaction summary: ctxengine frames every summary in its own continuation message
  (:data:`~ctxengine.projection.project.CONTINUATION_PREFIX` and ``<continuation-state>``
  tags) placed right after the head; Claude Code sends its summary as the last text of its
  first user message, Codex as the last message of its replacement history. The summary
  texts are compared on their own (equal up to whitespace, once the agent's is quoted as data
  the way ctxengine shows an imported summary: its tags written with guillemets, lines giving
  orders replaced, :func:`~ctxengine.projection.frame.quote_imported`), the rest in order.
- The top-level ``system`` prompt and ``tools`` of Claude Code's requests, and the ``tools``
  of Codex's: a Claude Code session file records its system prompt only in request-log
  records (``api-request-shape``, ``prompt_snapshot``), which are not imported, and no
  importer imports tool schemas. Codex's base prompt is an input item and is compared.
- The agents' own summarization requests (``kind: compact``) and Claude Code's token count
  request are not turns of the session: nothing in it answers them.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Any

import pytest

from corpus import require_corpus
from ctxengine.importers import read_transcript
from ctxengine.importers.base import ImportedSession
from ctxengine.model import CompactionRecord, Message, TextPart
from ctxengine.projection.frame import quote_imported
from live_requests import (
    Canonical,
    Request,
    anthropic_request,
    entries_before,
    first_difference,
    norm,
    projected,
    requests,
    responses_request,
    split_summaries,
    summaries_of,
)

CLAUDE = ("live-agents", "claude-code-2.1.328")
CODEX = ("live-agents", "codex-0.169.0")


Matcher = Callable[[Message], bool]


def answered_by(reply: Sequence[dict[str, Any]], call_kinds: tuple[str, ...]) -> Matcher:
    """Whether an assistant message is the reply ``reply``: the same call ids when it made
    calls, else the same texts."""
    ids = [b.get("call_id", b.get("id")) for b in reply if b.get("type") in call_kinds]
    texts = [
        norm(t)
        for b in reply
        for t in ([b["text"]] if "text" in b else [c["text"] for c in b.get("content") or ()])
        if b.get("type") in ("text", "message")
    ]

    def found(msg: Message) -> bool:
        if ids:
            return [c.id for c in msg.tool_calls] == ids
        return [norm(p.text) for p in msg.parts if isinstance(p, TextPart)] == texts

    return found


def compare(
    session: ImportedSession,
    request: Request,
    to_canonical: Callable[[dict[str, Any], Sequence[str]], Canonical],
    tool_role: str,
    call_kinds: tuple[str, ...],
) -> tuple[Canonical, Canonical, list[str], list[str]]:
    """(projection, request) without summaries, and their summaries."""
    at = entries_before(session.entries, answered_by(request.reply, call_kinds))
    assert at is not None, f"request {request.number}: no message of the session answers it"
    mine, mine_summaries = split_summaries(projected(session.entries[:at], tool_role=tool_role))
    theirs, their_summaries = split_summaries(
        to_canonical(request.body, summaries_of(session.entries))
    )
    quoted = {
        norm(e.body.summary): norm(quote_imported(e.body.summary))
        for e in session.entries
        if isinstance(e.body, CompactionRecord)
    }
    return mine, theirs, mine_summaries, [quoted.get(t, t) for t in their_summaries]


@pytest.fixture(scope="module")
def claude_sessions() -> dict[str, ImportedSession]:
    folder = require_corpus(*CLAUDE)
    return {
        "main": read_transcript(folder / "session.jsonl"),
        "subagent": read_transcript(folder / "subagent.jsonl"),
    }


@pytest.fixture(scope="module")
def claude_requests() -> list[Request]:
    return requests(require_corpus(*CLAUDE, "model-requests.jsonl"))


@pytest.fixture(scope="module")
def codex_session() -> ImportedSession:
    return read_transcript(require_corpus(*CODEX, "rollout.jsonl"))


@pytest.fixture(scope="module")
def codex_requests() -> list[Request]:
    return requests(require_corpus(*CODEX, "model-requests.jsonl"))


class TestClaudeCode:
    def test_the_requests_compared_and_those_that_are_not_turns(
        self, claude_requests: list[Request]
    ) -> None:
        kinds = {r.number: r.kind for r in claude_requests if r.kind not in ("main", "subagent")}
        assert kinds == {12: "count_tokens", 13: "compact", 15: "compact", 25: "compact"}
        assert sum(r.kind in ("main", "subagent") for r in claude_requests) == 28

    def test_every_request_matches_the_projection(
        self, claude_sessions: dict[str, ImportedSession], claude_requests: list[Request]
    ) -> None:
        """Request 14, the first after the compaction that kept a segment verbatim
        (``compactMetadata.preservedSegment``), sends the attachments logged between the
        compact boundary and the summary (the git status context, the date) before the kept
        segment and the later ones after it; the projection shows them in that order."""
        compared = []
        for request in claude_requests:
            if request.kind not in ("main", "subagent"):
                continue
            mine, theirs, mine_sum, their_sum = compare(
                claude_sessions[request.kind], request, anthropic_request, "user", ("tool_use",)
            )
            assert mine_sum == their_sum, f"request {request.number}: summaries differ"
            assert mine == theirs, f"request {request.number}: " + first_difference(mine, theirs)
            compared.append((request.number, len(mine_sum)))
        assert len(compared) == 28
        # Requests after each of the three compactions carry its summary.
        assert [n for n, summaries in compared if summaries] == [
            14,
            *range(16, 25),
            *range(26, 33),
        ]

    def test_the_kept_segment_follows_the_attachments_sent_before_it(
        self, claude_sessions: dict[str, ImportedSession], claude_requests: list[Request]
    ) -> None:
        [request] = [r for r in claude_requests if r.number == 14]
        mine, theirs, _, _ = compare(
            claude_sessions["main"], request, anthropic_request, "user", ("tool_use",)
        )
        assert [role for role, _ in mine] == ["user", "system", "assistant", "user", "system"]
        assert mine == theirs
        assert mine[1][1][0][1] == "Today's date is 2026-12-01."
        kept = [
            e.body.lead_ids
            for e in claude_sessions["main"].entries
            if isinstance(e.body, CompactionRecord) and e.body.first_kept_id is not None
        ]
        # the third compaction logged no attachment between its boundary and its summary
        assert kept == [
            ("ce9eab40-b045-45f5-b32b-7434bc0c6ea1", "d67c1cf0-7908-4222-8d6b-145e253b5dda"),
            None,
        ]


class TestCodex:
    def test_every_request_matches_the_projection(
        self, codex_session: ImportedSession, codex_requests: list[Request]
    ) -> None:
        assert {r.number: r.kind for r in codex_requests if r.kind != "main"} == {8: "compact"}
        compared = []
        for request in codex_requests:
            if request.kind != "main":
                continue
            mine, theirs, mine_sum, their_sum = compare(
                codex_session,
                request,
                responses_request,
                "tool",
                ("function_call", "custom_tool_call"),
            )
            assert mine_sum == their_sum, f"request {request.number}: summaries differ"
            assert mine == theirs, f"request {request.number}: " + first_difference(mine, theirs)
            compared.append((request.number, len(mine_sum)))
        assert [n for n, _ in compared] == [*range(1, 8), *range(9, 23)]
        assert [n for n, summaries in compared if summaries] == list(range(9, 23))

    def test_the_base_instructions_head_every_request(
        self, codex_session: ImportedSession, codex_requests: list[Request]
    ) -> None:
        first = codex_session.entries[0].message
        assert first is not None and first.role == "developer"
        assert first.meta == {"source": "base_instructions"}
        for request in codex_requests:
            if request.kind == "main":
                head = request.body["input"][0]
                assert (head["role"], head["content"][0]["text"]) == ("developer", first.text)

    def test_freeform_patches_are_carried_as_text(self, codex_session: ImportedSession) -> None:
        patches = [
            c for e in codex_session.entries if e.message for c in e.message.tool_calls
            if c.name == "apply_patch"
        ]  # fmt: skip
        assert len(patches) == 4
        for call in patches:
            assert call.meta == {"freeform": True}
            assert call.arguments.startswith('{"input":"*** Begin Patch\\n')
