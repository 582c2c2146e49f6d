"""Helpers shared by the benchmark scripts: the corpus location, percentiles, tables.

Not a benchmark itself. The scripts import it as ``_common`` (Python puts the script's own
folder first on ``sys.path``).
"""

from __future__ import annotations

import math
import os
import sys
from collections.abc import Sequence
from pathlib import Path

from ctxengine.errors import TranscriptError
from ctxengine.importers import detect, read_transcript
from ctxengine.model import Message

#: ``$CTXENGINE_CORPUS``, else ``../shared/corpus`` next to the repository.
CORPUS = (
    Path(os.environ["CTXENGINE_CORPUS"]).expanduser()
    if os.environ.get("CTXENGINE_CORPUS")
    else Path(__file__).resolve().parents[1].parent / "shared" / "corpus"
)


def require_corpus() -> Path:
    """The corpus folder; exits with status 2 and a one-line message when it is missing."""
    if not CORPUS.is_dir():
        _fail(
            f"corpus not found at {CORPUS}: these benchmarks read the shared transcript "
            "corpus; put it at ../shared/corpus beside the clone or name it with "
            "CTXENGINE_CORPUS (README.md, 'The transcript corpus')"
        )
    return CORPUS


def require_file(relative: str) -> Path:
    """A corpus file by its path inside the corpus; exits with status 2 when missing."""
    path = require_corpus() / relative
    if not path.is_file():
        _fail(f"corpus file missing: {path}")
    return path


def _fail(message: str) -> None:
    print(message, file=sys.stderr)
    raise SystemExit(2)


#: Top-level corpus folders that hold whole native-format transcripts (the folders the
#: corpus tests replay, ``tests/corpus.py``); ``format-fixtures/`` and ``live-agents/`` hold
#: samples and directories instead.
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


def transcript_files(corpus: Path) -> list[Path]:
    """Every file directly inside a :data:`TRANSCRIPT_DIRS` folder of ``corpus``, sorted by
    path (formats without an importer included: ``read_transcript`` raises
    ``UnsupportedFormatError`` for them)."""
    return sorted(
        p
        for d in TRANSCRIPT_DIRS
        if (corpus / d).is_dir()
        for p in (corpus / d).iterdir()
        if p.is_file()
    )


def size_of(path: Path) -> int:
    """Bytes of a file, or of every file under a folder (a store such as OpenCode's)."""
    if path.is_dir():
        return sum(p.stat().st_size for p in path.rglob("*") if p.is_file())
    return path.stat().st_size


def largest_per_format(corpus: Path, *, conversations: bool = False) -> dict[str, Path]:
    """The largest file (or store folder) of each format ctxengine imports, by format name
    (files of formats recognised but not imported yet, unrecognised files and the corpus's
    own notes at its top level are skipped). ``conversations``: only files whose import holds
    a user and an assistant message count (not, say, Qwen Code's telemetry sample); each
    candidate larger than the best so far is imported once to tell."""
    best: dict[str, Path] = {}
    for path in sorted(p for p in corpus.rglob("*") if p.parent != corpus or p.is_dir()):
        try:
            name = detect(path).name
        except TranscriptError:
            continue
        if name == "unsupported":
            continue
        if name in best and size_of(path) <= size_of(best[name]):
            continue
        if conversations and not is_conversation(path):
            continue
        best[name] = path
    return best


def importable(corpus: Path) -> list[tuple[Path, str]]:
    """Every file or store folder under ``corpus`` of a format ctxengine imports, with the
    format's name, sorted by path (the corpus's own notes at its top level, unrecognised
    files and formats recognised but not imported are left out). A store folder and the
    files inside it may both be listed."""
    found: list[tuple[Path, str]] = []
    for path in sorted(p for p in corpus.rglob("*") if p.parent != corpus or p.is_dir()):
        try:
            name = detect(path).name
        except TranscriptError:
            continue
        if name != "unsupported":
            found.append((path, name))
    return found


def is_conversation(path: Path) -> bool:
    """True when ``path`` imports with at least one user and one assistant message."""
    try:
        entries = read_transcript(path).entries
    except TranscriptError:
        return False
    roles = {e.body.role for e in entries if isinstance(e.body, Message)}
    return {"user", "assistant"} <= roles


def percentile(values: Sequence[float], q: float) -> float:
    """Nearest-rank percentile (``q`` in 0..100) of ``values``; ``nan`` when empty."""
    if not values:
        return math.nan
    ordered = sorted(values)
    rank = max(1, math.ceil(q / 100 * len(ordered)))
    return ordered[min(rank, len(ordered)) - 1]


def median(values: Sequence[float]) -> float:
    """Median of ``values`` (mean of the middle two for an even count); ``nan`` when empty."""
    if not values:
        return math.nan
    ordered = sorted(values)
    mid = len(ordered) // 2
    if len(ordered) % 2:
        return ordered[mid]
    return (ordered[mid - 1] + ordered[mid]) / 2


def pct(part: int, whole: int) -> str:
    """``part / whole`` as a percentage with one decimal (``"-"`` when ``whole`` is 0)."""
    return "-" if whole == 0 else f"{100 * part / whole:.1f}"


def table(headers: Sequence[str], rows: Sequence[Sequence[object]], title: str = "") -> None:
    """Print a Markdown table (columns padded for reading in a terminal)."""
    cells = [[str(h) for h in headers]] + [[str(c) for c in row] for row in rows]
    widths = [max(len(r[i]) for r in cells) for i in range(len(headers))]
    if title:
        print(f"\n{title}\n")
    for n, row in enumerate(cells):
        print("| " + " | ".join(c.ljust(w) for c, w in zip(row, widths, strict=True)) + " |")
        if n == 0:
            print("|" + "|".join("-" * (w + 2) for w in widths) + "|")
