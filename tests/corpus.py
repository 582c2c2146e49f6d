"""Location of the shared transcript corpus (``../shared/corpus`` next to the repository, or
``$CTXENGINE_CORPUS``).

Tests that read it call :func:`require_corpus` first: it skips when the corpus is absent on a
developer machine and fails under CI (``CI=true``), where the corpus must be present.
"""

from __future__ import annotations

import os
from pathlib import Path

import pytest

#: Environment variable naming the corpus folder when it is not ``../shared/corpus``.
CORPUS_ENV_VAR = "CTXENGINE_CORPUS"
CORPUS: Path = (
    Path(os.environ[CORPUS_ENV_VAR]).expanduser()
    if os.environ.get(CORPUS_ENV_VAR)
    else Path(__file__).resolve().parents[1].parent / "shared" / "corpus"
)
#: The skip reason of a test that needs the corpus, saying how to get it.
MISSING = (
    f"{CORPUS} not found: put the shared transcript corpus at ../shared/corpus beside the "
    "clone or name it with CTXENGINE_CORPUS (README.md, 'The transcript corpus')"
)

#: Top-level corpus folders that hold whole native-format transcripts, one agent each. The
#: other folders (``format-fixtures/``: short per-agent samples; ``live-agents/``: sessions with
#: the requests each agent sent) are read by the tests written for them.
TRANSCRIPT_DIRS: tuple[str, ...] = (
    "aider",
    "claude-code",
    "codex",
    "gemini-cli",
    "openai-messages",
    "openhands",
    "pi",
    "swe-agent",
)


def transcript_files() -> list[Path]:
    """Every file directly inside a :data:`TRANSCRIPT_DIRS` folder, sorted by path."""
    return sorted(
        p
        for d in TRANSCRIPT_DIRS
        if (CORPUS / d).is_dir()
        for p in (CORPUS / d).iterdir()
        if p.is_file()
    )


#: Agents whose ``format-fixtures/<agent>/`` samples have an importer.
FIXTURE_AGENTS: tuple[str, ...] = (
    "claude",
    "codex",
    "pi",
    "copilot",
    "cursor",
    "droid",
    "grok",
    "hermes",
    "kimi",
    "openclaw",
    "qwen",
)
#: JSON (not JSONL) format fixtures that are transcripts (the other ``.json`` samples are
#: metadata files, refused on purpose).
FIXTURE_JSON: tuple[str, ...] = ("hermes/large.json", "hermes/small.json")
#: The live-agent runs: folder under ``live-agents/`` → its importable transcripts.
LIVE_AGENTS: dict[str, tuple[str, ...]] = {
    "claude-code-2.1.328": (
        "session.jsonl",
        "subagent.jsonl",
        "session/subagents/agent-a73f6f8bdab2fbcaf.jsonl",
        "headless-stream-json.jsonl",
    ),
    "codex-0.169.0": ("rollout.jsonl",),
}


def fixture_files(agents: tuple[str, ...] = FIXTURE_AGENTS) -> list[Path]:
    """Every ``.jsonl`` file under ``format-fixtures/<agent>/`` (subfolders included) for
    ``agents``, and the :data:`FIXTURE_JSON` files of those agents, sorted by path."""
    root = CORPUS / "format-fixtures"
    jsonl = [p for a in agents if (root / a).is_dir() for p in (root / a).rglob("*.jsonl")]
    json = [root / f for f in FIXTURE_JSON if f.split("/")[0] in agents and (root / f).is_file()]
    return sorted([*jsonl, *json])


def live_agent_files() -> list[Path]:
    """The importable transcripts of :data:`LIVE_AGENTS`, in that order."""
    root = CORPUS / "live-agents"
    return [root / agent / name for agent, names in LIVE_AGENTS.items() for name in names]


def require_corpus(*parts: str) -> Path:
    """``CORPUS`` joined with ``parts``; skips (or fails under CI) when it does not exist."""
    path = CORPUS.joinpath(*parts)
    if not path.exists():
        if os.environ.get("CI", "").lower() == "true":
            pytest.fail(f"{path} not found (the corpus is required under CI)")
        pytest.skip(MISSING)
    return path


def replayable_names() -> list[str]:
    """Corpus-relative paths of the transcripts the replay tests read: every file of a
    transcript folder, Markdown only for Gemini CLI and aider (``["(corpus missing)"]``
    without the corpus, so that the parametrized test still runs and skips or fails)."""
    if not CORPUS.exists():
        return ["(corpus missing)"]
    return sorted(
        str(p.relative_to(CORPUS))
        for p in transcript_files()
        if p.suffix != ".md" or p.parent.name in ("gemini-cli", "aider")
    )
