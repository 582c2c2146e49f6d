"""The one place where importers are registered, plus format detection."""

from __future__ import annotations

from pathlib import Path

from ctxengine.errors import TranscriptError
from ctxengine.importers.base import SNIFF_BYTES, ImportedSession, Importer

#: Importers in sniffing order (most specific first). Each module exposes ``IMPORTER``.
_MODULES: tuple[str, ...] = (
    "ctxengine.importers.claude_code",
    "ctxengine.importers.codex",
    "ctxengine.importers.pi",
    "ctxengine.importers.swe_agent",
    "ctxengine.importers.anthropic_messages",
    "ctxengine.importers.chat_completions",
    "ctxengine.importers.unsupported",
)


def _load() -> tuple[Importer, ...]:
    import importlib

    found: list[Importer] = []
    for name in _MODULES:
        try:
            module = importlib.import_module(name)
        except ModuleNotFoundError as exc:
            if exc.name == name:
                continue
            raise
        found.append(module.IMPORTER)
    return tuple(found)


IMPORTERS: tuple[Importer, ...] = _load()


def get_importer(name: str) -> Importer:
    """The importer named ``name``. Raises ``KeyError`` listing the known names."""
    for imp in IMPORTERS:
        if imp.name == name:
            return imp
    known = ", ".join(i.name for i in IMPORTERS)
    raise KeyError(f"unknown format {name!r}; known formats: {known}")


def detect(path: Path) -> Importer:
    """Sniff ``path`` and return its importer.

    Raises:
        TranscriptError: the file cannot be read or matches no known format.
    """
    try:
        with path.open("rb") as fh:
            head = fh.read(SNIFF_BYTES)
    except OSError as exc:
        raise TranscriptError(str(path), f"cannot read file: {exc.strerror}") from exc
    for imp in IMPORTERS:
        if imp.sniff(path, head):
            return imp
    known = ", ".join(i.name for i in IMPORTERS if i.name != "unsupported")
    raise TranscriptError(str(path), f"unrecognised transcript format (known: {known})")


def read_transcript(path: Path | str, format: str | None = None) -> ImportedSession:
    """Import one transcript file, sniffing its format unless ``format`` is given.

    Raises:
        TranscriptError: unreadable, malformed or unrecognised input.
        UnsupportedFormatError: a recognised format with no importer yet.
        KeyError: ``format`` names no importer.
    """
    p = Path(path)
    imp = get_importer(format) if format else detect(p)
    return imp.read(p)
