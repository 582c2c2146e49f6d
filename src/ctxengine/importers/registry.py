"""The one place where importers are registered, plus format detection."""

from __future__ import annotations

from pathlib import Path

from ctxengine._runtime import collector_paused
from ctxengine.errors import TranscriptError, UnknownFormat
from ctxengine.importers._build import BOM, NotJSON, located
from ctxengine.importers._lines import after_bad_lines
from ctxengine.importers._peek import peek
from ctxengine.importers.base import SNIFF_BYTES, ImportedSession, Importer
from ctxengine.importers.report import ImportReport
from ctxengine.model import Message

#: Importers in sniffing order (most specific first). Each module exposes ``IMPORTER``.
_MODULES: tuple[str, ...] = (
    "ctxengine.importers.native",
    "ctxengine.importers.qwen",
    "ctxengine.importers.gemini_cli",
    "ctxengine.importers.claude_code",
    "ctxengine.importers.claude_code_stream",
    "ctxengine.importers.codex",
    "ctxengine.importers.openclaw",
    "ctxengine.importers.pi",
    "ctxengine.importers.swe_agent",
    "ctxengine.importers.copilot",
    "ctxengine.importers.cursor",
    "ctxengine.importers.kimi",
    "ctxengine.importers.droid",
    "ctxengine.importers.grok",
    "ctxengine.importers.hermes",
    "ctxengine.importers.cline",
    "ctxengine.importers.roo_code",
    "ctxengine.importers.openhands",
    "ctxengine.importers.opencode",
    "ctxengine.importers.aider",
    "ctxengine.importers.anthropic_messages",
    "ctxengine.importers.chat_completions",
    "ctxengine.importers.unsupported",
)


def _load(modules: tuple[str, ...] = _MODULES) -> tuple[Importer, ...]:
    """The ``IMPORTER`` of each module in ``modules``, in order.

    Raises:
        ImportError: a listed module does not exist (renamed or deleted: fix
            :data:`_MODULES`), or a module it imports is missing.
        AttributeError: a listed module has no ``IMPORTER``.
    """
    import importlib

    found: list[Importer] = []
    for name in modules:
        try:
            module = importlib.import_module(name)
        except ModuleNotFoundError as exc:
            if exc.name != name:
                raise  # the module exists but needs one that is missing
            raise ImportError(
                f"importer module {name!r} listed in ctxengine.importers.registry._MODULES "
                "does not exist (renamed or deleted?)"
            ) from exc
        found.append(module.IMPORTER)
    return tuple(found)


IMPORTERS: tuple[Importer, ...] = _load()

#: The importer that only recognises formats without an importer; sniffing uses it, users
#: cannot choose it.
_UNSUPPORTED = "unsupported"


def formats() -> tuple[str, ...]:
    """Names a user can pass as ``format`` (every importer but the unsupported-format one)."""
    return tuple(i.name for i in IMPORTERS if i.name != _UNSUPPORTED)


def get_importer(name: str) -> Importer:
    """The importer named ``name`` (one of :func:`formats`).

    Raises:
        UnknownFormat: no such format; the message lists :func:`formats`.
    """
    for imp in IMPORTERS:
        if imp.name == name and name != _UNSUPPORTED:
            return imp
    raise UnknownFormat(name, formats())


def detect(path: Path) -> Importer:
    """Sniff ``path`` (its first :data:`SNIFF_BYTES`, without a UTF-8 byte order mark; a
    folder with an empty head) and return its importer.

    Raises:
        TranscriptError: the file cannot be read or matches no known format.
    """
    try:
        head = b""
        if not path.is_dir():  # a folder is a store (OpenCode storage): sniffed by its path
            with path.open("rb") as fh:
                head = fh.read(SNIFF_BYTES).removeprefix(BOM)
    except OSError as exc:
        raise TranscriptError(str(path), f"cannot read file: {exc.strerror}") from exc
    for sniffed in _heads(head):
        for imp in IMPORTERS:
            if imp.sniff(path, sniffed):
                return imp
    raise TranscriptError(
        str(path),
        f"unrecognised transcript format: {looks(path, head)} (known: {', '.join(formats())})",
    )


def _heads(head: bytes) -> tuple[bytes, ...]:
    """The heads to sniff, in order: ``head``, then the JSON lines found after its first
    lines (:func:`after_bad_lines`), when there are such."""
    later = after_bad_lines(head)
    return (head,) if later is None else (head, later)


def _wide_text(head: bytes) -> str:
    """``"UTF-16"`` or ``"UTF-32"`` (with the byte order) when ``head`` starts with that
    encoding's byte order mark, or is ASCII text with every other (or every fourth) byte
    zero; ``""`` otherwise."""
    for bom, name in (
        (b"\xff\xfe\x00\x00", "UTF-32 (little-endian)"),
        (b"\x00\x00\xfe\xff", "UTF-32 (big-endian)"),
        (b"\xff\xfe", "UTF-16 (little-endian)"),
        (b"\xfe\xff", "UTF-16 (big-endian)"),
    ):
        if head.startswith(bom):
            return name
    sample = head[:256]
    if len(sample) >= 8 and sample[1::2].count(0) == len(sample[1::2]) and 0 not in sample[::2]:
        return "UTF-16 (little-endian)"
    if len(sample) >= 8 and sample[0::2].count(0) == len(sample[0::2]) and 0 not in sample[1::2]:
        return "UTF-16 (big-endian)"
    return ""


def looks(path: Path, head: bytes) -> str:
    """What a file no importer recognises looks like, from its first bytes ``head``: an
    empty file or folder, a JSON object or array (its first keys), JSON lines (the first
    record's keys), binary data, or text (its first line)."""
    if path.is_dir():
        return "a folder that holds no transcript ctxengine reads"
    stripped = head.strip()
    if not stripped:
        return "an empty file"
    wide = _wide_text(head)
    if wide:
        return f"{wide} text (transcripts are read as UTF-8: convert it, e.g. with iconv)"
    if b"\0" in head[:1024]:
        return "binary data"
    first = stripped.split(b"\n", 1)[0]
    p = peek(first) if len(first) < len(stripped) else peek(stripped)
    keys = ", ".join(p.keys[:6]) + (", …" if len(p.keys) > 6 else "")
    if len(first) < len(stripped) and p.kind == "object" and first.rstrip().endswith(b"}"):
        return f"JSON lines (first record's keys: {keys})"
    if p.kind == "object":
        return f"a JSON object (keys: {keys})" if keys else "a JSON object"
    if p.kind == "array":
        return "a JSON array"
    text = first.decode("utf-8", errors="replace")
    return f"text (first line: {text[:60]!r})"


def read_transcript(
    path: Path | str, format: str | None = None, *, strict: bool = False
) -> ImportedSession:
    """Import one transcript file, sniffing its format unless ``format`` is given.

    Tolerant by default: what the importer skips, repairs or ignores is in the session's
    ``report`` (:mod:`ctxengine.importers.base`). With ``strict`` the first skipped or
    repaired item raises instead, naming the file and line.

    Raises:
        TranscriptError: unreadable or unrecognised input; JSON nested too deeply or an
            integer too long to process; a file from which no message could be read
            (``"looks like a Codex rollout, but …"``, or ``"read as …"`` when ``format``
            was given); a JSON file that does not parse, naming the format its start looked
            like; in strict mode, the first item skipped or repaired.
        UnsupportedFormatError: a recognised format with no importer yet.
        UnknownFormat: ``format`` names no importer.
    """
    p = Path(path)
    imp = get_importer(format) if format else detect(p)
    report = ImportReport(p, strict=strict)
    try:
        with located(p), collector_paused():
            session = imp.read(p, report)
    except NotJSON as exc:
        seen = "read as" if format else "looks like"
        raise TranscriptError(
            str(p), f"{seen} {imp.label}, but it is not valid JSON ({exc.detail})"
        ) from None
    if not any(isinstance(e.body, Message) for e in session.entries):
        raise TranscriptError(str(p), _nothing_usable(imp, report, forced=format is not None))
    return session


def _nothing_usable(imp: Importer, report: ImportReport, *, forced: bool) -> str:
    """Why a file that gave no message is refused: the format it was read as and what was
    in it."""
    seen = "read as" if forced else "looks like"
    found = report.summary()
    ignored = report.of("ignored")
    if ignored:
        total = sum(i.count for i in ignored)
        kinds = ", ".join(f"{i.kind} ×{i.count}" for i in ignored[:5])
        more = ", …" if len(ignored) > 5 else ""
        found = "; ".join(x for x in (found, f"ignored {total}: {kinds}{more}") if x)
    return f"{seen} {imp.label}, but no message could be read from it" + (
        f" ({found})" if found else " (it is empty)"
    )
