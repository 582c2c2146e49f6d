"""Importing the largest corpus transcript of each format gives exactly the entries it gave
before the importers were made faster: the same session id, entry ids (content hashes, so a
re-import dedupes against a store filled earlier), parents, times, seqs and bodies.

Each file's import is pinned as its entry count and a SHA-256 over the session id and, per
entry, ``[id, parent_id, created_at, seq]`` and the stored form of its body
(:func:`~ctxengine.model.codec.body_json`: every part, usage and meta field). The values were
computed from the importers as they were before their hot paths were rewritten.
"""

from __future__ import annotations

import hashlib

import orjson
import pytest

from corpus import CORPUS, require_corpus
from ctxengine.importers import read_transcript
from ctxengine.model.codec import body_json

#: Corpus-relative path → (entries, SHA-256 of the import).
PINNED: dict[str, tuple[int, str]] = {
    "aider/aider-dev-chat-history-full.aider.chat.history.md": (
        1736,
        "402fb98b6b64a640d40322d60b502f295057b951d2a87cc01a86acc2816cec7c",
    ),
    "gemini-cli/go-ai-agent-chat-share-long-2025-11-09.md": (
        1574,
        "619455f497b4a2e6006f2406d2d5eefa16c3e3bec05c6ab499f34e7b40e38943",
    ),
    "pi/pi-mono-before-compaction.jsonl": (
        992,
        "96e6316841751f990c0b0acd8d57cc533dced7764c629797e2a354be20bd8859",
    ),
    "pi/pi-mono-large-session.jsonl": (
        914,
        "d9f49e6208b23dafb3a3f79335206e5b182f4dd874631f12ff9723fe4a966315",
    ),
    "codex/codex-openprintkit-2025-10-31-long.jsonl": (
        920,
        "caec6d53e41d705fc0a9c8fde97adaf9403ab495b7eff54917c88aed1663314c",
    ),
    "openai-messages/mini-swe-agent-deepseek-chat-django-13265.traj.json": (
        314,
        "a3a0b8f6d619b899e3ed24434f6674ef8a644afafba3c09401180ad6cf93f69b",
    ),
    "openhands/openhands-multi-swe-bench-ponyc-3runs.jsonl": (
        214,
        "5ecc889780d41441d970102ec2407266ffce5db4009ff158e44c4d7401790c0b",
    ),
    "swe-agent/swe-agent-marshmallow-1867-function-calling.traj": (
        28,
        "b9de01826dcf51950ac21a4ea889b9c92185162987daf837189f5a1ec734917a",
    ),
    "live-agents/claude-code-2.1.328/headless-stream-json.jsonl": (
        40,
        "417c5f2387b67eb2843a3f5c258a412e9ea06a4ef14dd730511919371bb4d8f2",
    ),
}


def import_digest(relative: str) -> tuple[int, str]:
    """``(entries, SHA-256)`` of importing the corpus file ``relative`` (module docstring)."""
    session = read_transcript(CORPUS / relative)
    h = hashlib.sha256(session.session_id.encode() + b"\n")
    for e in session.entries:
        h.update(orjson.dumps([e.id, e.parent_id, e.created_at, e.seq]))
        h.update(body_json(e.body) + b"\n")
    return len(session.entries), h.hexdigest()


@pytest.mark.parametrize("relative", sorted(PINNED))
def test_import_is_unchanged(relative: str) -> None:
    require_corpus()
    assert import_digest(relative) == PINNED[relative]
