"""Which importer claims each format sample of the agents added with the Copilot CLI, Cursor,
Kimi, Qwen Code, droid, Grok, Hermes, OpenClaw, Cline and Roo Code importers, and the samples
refused on purpose.

- every file of ``format-fixtures/{antigravity,copilot,cursor,droid,grok,hermes,kimi,openclaw,
  qwen}/`` is detected as the format listed in :data:`DETECTED`;
- each of these importers sniffs exactly its own agent's files among every file of the
  corpus (native transcripts, all format fixtures, live-agent runs): none claims another
  agent's file;
- the refused samples raise ``UnsupportedFormatError`` naming the format and why.
"""

from __future__ import annotations

from pathlib import Path

import pytest

from corpus import CORPUS, live_agent_files, require_corpus, transcript_files
from ctxengine.errors import UnsupportedFormatError
from ctxengine.importers import detect, get_importer, read_transcript
from ctxengine.importers.base import SNIFF_BYTES
from ctxengine.importers.registry import IMPORTERS

FIXTURES = "format-fixtures"
#: Fixture folders covered here.
AGENTS = ("antigravity", "copilot", "cursor", "droid", "grok", "hermes", "kimi", "openclaw", "qwen")
#: The importer each sample is detected as (``unsupported``: refused on purpose).
DETECTED: dict[str, str] = {
    "antigravity/cli_small.jsonl": "unsupported",
    "antigravity/small.md": "unsupported",
    "copilot/large.jsonl": "copilot",
    "copilot/subdir_v1/aaaabbbb-1111-2222-3333-ccccddddeeee/events.jsonl": "copilot",
    "cursor/large.jsonl": "cursor",
    "cursor/small.jsonl": "cursor",
    "cursor/subagent/parent.jsonl": "cursor",
    "cursor/subagent/subagents/child.jsonl": "cursor",
    "droid/session_store_large.jsonl": "droid",
    "droid/session_store_small.jsonl": "droid",
    "droid/stream_json_large.jsonl": "droid",
    "droid/stream_json_small.jsonl": "droid",
    "grok/chat_history.jsonl": "grok",
    "grok/summary.json": "unsupported",
    "grok/subagent/chat_history.jsonl": "grok",
    "grok/subagent/summary.json": "unsupported",
    "hermes/large.json": "hermes",
    "hermes/small.json": "hermes",
    "kimi/assistant_tools.jsonl": "kimi",
    "kimi/assistant_tools.state.json": "unsupported",
    "kimi/small.jsonl": "kimi",
    "kimi/state.json": "unsupported",
    "kimi/subagent_agent-0.jsonl": "kimi",
    "openclaw/large.jsonl": "openclaw",
    "openclaw/small.jsonl": "openclaw",
    "qwen/019f0000-0000-7000-8000-000000000001.jsonl": "qwen",
    "qwen/019f0000-0000-7000-8000-000000000002.jsonl": "qwen",
    "qwen/019f0000-0000-7000-8000-000000000004.jsonl": "qwen",
    "qwen/019f0000-0000-7000-8000-000000000005.jsonl": "qwen",
    "qwen/019f0000000070008000000000000003.jsonl": "qwen",
    "qwen/system_telemetry.jsonl": "qwen",
}
STEPS = (
    "Antigravity trajectory steps (tool steps name no call, so tool exchanges cannot be rebuilt)"
)
GROK = "Grok session summary (metadata only; import chat_history.jsonl beside it)"
REFUSED: dict[str, str] = {
    "antigravity/cli_small.jsonl": STEPS,
    "antigravity/small.md": "Antigravity brain artifact (Markdown notes, not a conversation)",
    "grok/summary.json": GROK,
    "grok/subagent/summary.json": GROK,
    "kimi/assistant_tools.state.json": (
        "Kimi Code session state (metadata only; import the agents' JSONL logs)"
    ),
    "kimi/state.json": "Kimi Code session state (metadata only; import the agents' JSONL logs)",
}
#: Importer name → its fixture folder.
OWN_FOLDER = {
    "copilot": "copilot",
    "cursor": "cursor",
    "droid": "droid",
    "grok": "grok",
    "hermes": "hermes",
    "kimi": "kimi",
    "openclaw": "openclaw",
    "qwen": "qwen",
    "cline": None,
    "roo-code": None,
}


def corpus_files() -> list[Path]:
    """Every transcript, every format fixture and every live-agent file of the corpus."""
    fixtures = sorted(p for p in (CORPUS / FIXTURES).rglob("*") if p.is_file())
    live = sorted(p for p in (CORPUS / "live-agents").rglob("*") if p.is_file())
    return [*transcript_files(), *fixtures, *live, *live_agent_files()]


def test_every_sample_of_these_agents_is_listed() -> None:
    root = require_corpus(FIXTURES)
    on_disk = {
        str(p.relative_to(root)) for a in AGENTS for p in (root / a).rglob("*") if p.is_file()
    }
    assert on_disk == set(DETECTED)


@pytest.mark.parametrize(("rel", "name"), sorted(DETECTED.items()))
def test_each_sample_is_detected_as_its_format(rel: str, name: str) -> None:
    assert detect(require_corpus(FIXTURES, *rel.split("/"))).name == name


@pytest.mark.parametrize(("rel", "format_name"), sorted(REFUSED.items()))
def test_refused_samples_name_the_format_and_why(rel: str, format_name: str) -> None:
    path = require_corpus(FIXTURES, *rel.split("/"))
    with pytest.raises(UnsupportedFormatError) as info:
        read_transcript(path)
    assert info.value.format_name == format_name
    assert str(info.value) == f"{path}: format not supported yet: {format_name}"


@pytest.mark.parametrize("name", sorted(OWN_FOLDER))
def test_no_corpus_file_of_another_agent_is_sniffed(name: str) -> None:
    require_corpus(FIXTURES)
    importer = get_importer(name)
    claimed = set()
    for path in corpus_files():
        if importer.sniff(path, path.read_bytes()[:SNIFF_BYTES]):
            claimed.add(str(path.relative_to(CORPUS)))
    folder = OWN_FOLDER[name]
    expected = {
        f"{FIXTURES}/{rel}"
        for rel, detected in DETECTED.items()
        if detected == name and rel.split("/")[0] == folder
    }
    assert claimed == expected


def test_these_importers_come_before_the_ones_that_would_claim_their_samples() -> None:
    """Qwen records look like Claude Code's, OpenClaw sessions are pi sessions, Hermes
    sessions hold chat-completions messages and a Cline task is a list of Anthropic messages:
    the more specific importer is sniffed first."""
    order = [i.name for i in IMPORTERS]
    assert order.index("qwen") < order.index("claude-code")
    assert order.index("openclaw") < order.index("pi")
    assert order.index("hermes") < order.index("chat-completions")
    assert order.index("cline") < order.index("anthropic-messages")
    assert order.index("roo-code") < order.index("anthropic-messages")
