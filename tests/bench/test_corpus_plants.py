"""The plants inserted into real corpus transcripts."""

from __future__ import annotations

from corpus import require_corpus
from ctxengine.bench.corpus import CORPUS_PLANTS, LEAD_IN, corpus_files, plant_corpus, scan_corpus
from ctxengine.bench.drive import replay_to_end
from ctxengine.bench.generator import INJECTION
from ctxengine.bench.text import has_token, message_texts
from ctxengine.importers import read_transcript
from ctxengine.policy import DEFAULT_POLICY
from ctxengine.replay import source_messages

CODEX = ("codex", "codex-cpolar-connect-2025-09-16-a.jsonl")


def test_corpus_files_are_chosen_by_size_and_user_messages() -> None:
    root = require_corpus()
    found = corpus_files(root, 3)
    assert [p.relative_to(root).as_posix() for p in found] == [
        "codex/codex-cpolar-connect-2025-09-16-a.jsonl",
        "codex/codex-cpolar-connect-2025-09-16-b.jsonl",
        "gemini-cli/gemini-cli-chat-share-2025-11-05.md",
    ]


def test_plants_are_whole_turns_around_the_original_messages() -> None:
    path = require_corpus(*CODEX)
    base = source_messages(read_transcript(path).entries)
    planted = plant_corpus(path)
    assert planted.template == "corpus" and planted.modified is None
    assert planted.roots == ("/home/user/Downloads/CpolarAutoUpdater", "/home/dev/payments-api")
    assert "next-step" not in {f.id for f in planted.facts}
    assert len(planted.facts) == 24  # the generator's facts but the next step
    # the original messages are all still there, in order (a subsequence)
    rest = iter(planted.messages)
    assert all(any(m == original for m in rest) for original in base)
    assert planted.messages[-1].text == "continue"
    # every planted turn starts with a user message
    inserted = len(planted.messages) - len(base) - 1
    assert inserted > len(CORPUS_PLANTS)
    leads = sum(1 for m in planted.messages if m.role == "user" and m.text == LEAD_IN)
    assert leads > 0
    for f in planted.facts:
        text = "\n".join(message_texts(planted.messages[f.message]))
        assert has_token(text, f.surface) or f.surface in text, f.id
    assert planted.injection is not None
    assert INJECTION in "\n".join(message_texts(planted.messages[planted.injection]))


def test_a_planted_corpus_session_replays_into_valid_requests() -> None:
    planted = plant_corpus(require_corpus(*CODEX))
    replayed = replay_to_end(planted.name, planted.messages, 30_000, DEFAULT_POLICY)
    assert replayed.compactions >= 1
    assert all(not any(s.problems.values()) for s in replayed.steps)


def test_the_files_looked_at_and_not_used_are_named_with_their_reason() -> None:
    root = require_corpus()
    scan = scan_corpus(root, 3)
    assert list(scan.used) == corpus_files(root, 3)
    skipped = {p.relative_to(root).as_posix(): (kind, why) for p, kind, why in scan.skipped}
    assert skipped["claude-code/spotter-long-a0y-main.jsonl"] == (
        "too_large",
        "3,465,496 bytes, over the 1,500,000-byte limit",
    )
    assert skipped["claude-code/spotter-long-dov-subagent-a2898e3.jsonl"] == (
        "few_users",
        "1 real user messages, fewer than 4",
    )
    assert skipped["SOURCES.md"] == (
        "unreadable",
        "not a transcript ctxengine reads (TranscriptError)",
    )
    assert skipped["claude-code/spotter-short.jsonl"] == (
        "too_small",
        "273 estimated tokens, under 20,000",
    )
    # files after the last one used are not looked at
    last = scan.used[-1]
    assert all(p < last for p, _, _ in scan.skipped)
