"""The same plants inserted into real transcripts.

A corpus transcript is imported (:func:`ctxengine.importers.read_transcript`); the plants of
the generator (rules and the superseded pair, the Chinese rule and identifier, identifiers
with their distractors, exact errors, decisions, the adversarial output, direct and indirect
file edits) are inserted as whole turns before real user messages, at the same shares of the
session's size as in generated sessions; the session then ends with the user's "continue".
Next steps are not planted: the transcript's own later requests are the latest ones.

The transcript's own file changes are not known, so only the planted files' recall is
measured (no artifact precision). Paths are compared relative to the transcript's working
directory (its ``cwd``) as well as the planted project's root.
"""

from __future__ import annotations

import random
from collections.abc import Iterable
from dataclasses import dataclass, replace
from pathlib import Path

from ctxengine.bench.facts import PlantedSession
from ctxengine.bench.generator.builder import INJECTION, PLANTS, POSITIONS, Builder, verify
from ctxengine.bench.generator.worlds import PY, identifiers
from ctxengine.errors import TranscriptError
from ctxengine.importers import read_transcript
from ctxengine.model import Message, TextPart
from ctxengine.replay import source_messages
from ctxengine.tokens import HeuristicEstimator

#: Plants inserted into corpus sessions, in order (see :data:`POSITIONS`).
CORPUS_PLANTS: tuple[str, ...] = tuple(
    name for name in POSITIONS if not name.startswith(("next-", "ack-", "tee"))
)
#: Transcript files larger than this are not considered (bytes): keeps the corpus run cheap.
MAX_FILE_BYTES = 1_500_000
#: Sizes of a usable corpus session, in estimated tokens.
MIN_TOKENS = 20_000
MAX_TOKENS = 300_000
#: A usable corpus session has at least this many real user messages (insertion points).
MIN_USER_MESSAGES = 4
#: The user message put before an inserted turn that starts with the agent's own work.
LEAD_IN = "Please also check this."


def _real_user(message: Message) -> bool:
    """A user message a person typed (roughly: text, no tool results, not an injected
    ``<tag>`` block)."""
    if message.role != "user" or message.tool_results:
        return False
    text = message.text.strip()
    return bool(text) and not text.startswith(("<", "[Request interrupted", "# AGENTS.md"))


def _complete(messages: list[Message]) -> list[Message]:
    """``messages`` without trailing assistant messages whose tool calls are unanswered."""
    out = list(messages)
    while out and out[-1].role == "assistant" and out[-1].tool_calls:
        out.pop()
    return out


def _roots(cwd: object) -> tuple[str, ...]:
    """Roots stripped from paths: the transcript's working directory (the state may give the
    planted relative paths under it), then the planted world's root."""
    return ((cwd,) if isinstance(cwd, str) and cwd.startswith("/") else ()) + (PY.root,)


@dataclass(frozen=True, slots=True)
class CorpusScan:
    """The transcripts a corpus folder gives the benchmark.

    Attributes:
        used: up to the limit, the usable transcripts (sorted by path).
        skipped: ``(path, kind, reason)`` of every file looked at before the limit was
            reached and not used; ``kind`` is ``"too_large"`` (over :data:`MAX_FILE_BYTES`
            or :data:`MAX_TOKENS`), ``"unreadable"`` (not a transcript ctxengine reads),
            ``"too_small"`` (under :data:`MIN_TOKENS`) or ``"few_users"`` (fewer than
            :data:`MIN_USER_MESSAGES` real user messages); ``reason`` says it with the
            figures. Files after the limit are not looked at.
    """

    used: tuple[Path, ...]
    skipped: tuple[tuple[Path, str, str], ...]


def _unusable(path: Path, estimator: HeuristicEstimator) -> tuple[str, str] | None:
    """``(kind, reason)`` when ``path`` is not a usable corpus session (see
    :class:`CorpusScan`), ``None`` when it is."""
    size = path.stat().st_size
    if size > MAX_FILE_BYTES:
        return "too_large", f"{size:,} bytes, over the {MAX_FILE_BYTES:,}-byte limit"
    try:
        imported = read_transcript(path)
    except (TranscriptError, ValueError, OSError) as exc:
        return "unreadable", f"not a transcript ctxengine reads ({type(exc).__name__})"
    messages = source_messages(imported.entries)
    tokens = sum(estimator.message(m) for m in messages)
    if tokens > MAX_TOKENS:
        return "too_large", f"{tokens:,} estimated tokens, over {MAX_TOKENS:,}"
    if tokens < MIN_TOKENS:
        return "too_small", f"{tokens:,} estimated tokens, under {MIN_TOKENS:,}"
    users = sum(1 for m in messages if _real_user(m))
    if users < MIN_USER_MESSAGES:
        return "few_users", f"{users} real user messages, fewer than {MIN_USER_MESSAGES}"
    return None


def scan_corpus(directory: Path, limit: int) -> CorpusScan:
    """Up to ``limit`` usable transcript files under ``directory`` (sorted by path; hidden
    files are not looked at), and why each file looked at before them was not used (see
    :class:`CorpusScan`)."""
    estimator = HeuristicEstimator()
    used: list[Path] = []
    skipped: list[tuple[Path, str, str]] = []
    for path in sorted(p for p in directory.rglob("*") if p.is_file()):
        if len(used) >= limit:
            break
        if path.name.startswith("."):
            continue
        why = _unusable(path, estimator)
        if why is None:
            used.append(path)
        else:
            skipped.append((path, *why))
    return CorpusScan(tuple(used), tuple(skipped))


def corpus_files(directory: Path, limit: int) -> list[Path]:
    """Up to ``limit`` transcript files under ``directory`` (sorted by path) that import,
    are between :data:`MIN_TOKENS` and :data:`MAX_TOKENS` and have at least
    :data:`MIN_USER_MESSAGES` real user messages (:func:`scan_corpus`, without the reasons
    for the others)."""
    return list(scan_corpus(directory, limit).used)


def _blocks(b: Builder, names: Iterable[str]) -> list[tuple[str, int, int]]:
    """Run each plant on ``b``; ``(name, start, end)`` of the messages it added."""
    out = []
    for name in names:
        start = len(b.messages)
        PLANTS[name](b)
        out.append((name, start, len(b.messages)))
    return out


def plant_corpus(path: Path, seed: int = 0) -> PlantedSession:
    """The transcript at ``path`` with the plants inserted.

    Raises:
        TranscriptError: the file does not import.
        AssertionError: a planted fact is already in the transcript (see
            :func:`~ctxengine.bench.generator.builder.verify`).
    """
    imported = read_transcript(path)
    base = _complete(source_messages(imported.entries))
    rng = random.Random(f"ctxengine-bench-corpus:{seed}:{path.name}")
    b = Builder(rng, PY, "generic", identifiers(rng, PY.name), injected=True, seed=seed)
    blocks = _blocks(b, CORPUS_PLANTS)
    estimator = HeuristicEstimator()
    sizes = [estimator.message(m) for m in base]
    total = sum(sizes)
    # insertion points: before real user messages (not the first), by cumulative size
    points: list[tuple[int, int]] = []
    running = 0
    for i, m in enumerate(base):
        if i > 0 and _real_user(m) and any(_real_user(x) for x in base[:i]):
            points.append((running, i))
        running += sizes[i]
    if not points:
        raise TranscriptError(str(path), "no real user message to insert plants before")
    where: dict[int, list[tuple[str, int, int]]] = {}
    for name, start, end in blocks:
        target = POSITIONS[name] * total
        at = next((i for tokens, i in points if tokens >= target), points[-1][1])
        where.setdefault(at, []).append((name, start, end))
    messages: list[Message] = []
    local_to_global: dict[int, int] = {}
    for i, m in enumerate(base):
        for _, start, end in where.get(i, ()):
            if b.messages[start].role != "user":
                messages.append(Message("user", (TextPart(LEAD_IN),)))
            for j in range(start, end):
                local_to_global[j] = len(messages)
                messages.append(b.messages[j])
        messages.append(m)
    messages.append(Message("user", (TextPart("continue"),)))
    facts = tuple(replace(f, message=local_to_global[f.message]) for f in b.facts)
    injection = b.injection if b.injection is None else local_to_global[b.injection]
    forged = b.forged if b.forged is None else local_to_global[b.forged]
    session = PlantedSession(
        name=f"corpus:{path.name}",
        seed=seed,
        template="corpus",
        messages=tuple(messages),
        facts=facts,
        modified=None,
        not_modified=frozenset(b.not_modified),
        roots=_roots(imported.meta.get("cwd")),
        injection=injection,
        injection_text=INJECTION if injection is not None else "",
        forged_frame=forged,
        meta={"world": PY.name, "dialect": "generic", "source": str(path)},
    )
    verify(session)
    return session
